"""Standoff out: the passages and mentions the filters choose, in the formats the field reads
(brat, W3C Web Annotation, spaCy DocBin, Parquet, JSONL)."""
