"""The read path: query -> passages (BM25, filters, facets, grep, read, listings)."""
