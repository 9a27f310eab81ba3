"""Recognizers: units of clean text to standoff mentions, versioned and pluggable."""
