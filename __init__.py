"""kbx: exact, cited, filterable search over a folder of documents."""

__version__ = "0.1.0"
