"""HTTP clients and service JSON (Crossref, OpenAlex): no database here."""
