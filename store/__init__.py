"""The DuckDB store: schema, ingest, and every read."""
