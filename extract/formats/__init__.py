"""One parser per format, each turning decoded text (or PDF bytes) into blocks and metadata."""
