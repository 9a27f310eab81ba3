"""Units -> mentions in the store: which recognizers run, their runs, doc context."""
