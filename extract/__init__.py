"""Files to Documents: clean text, offset maps back to the original, and units."""

from kbx.extract.document import FORMATS, extract, format_of, source_text
from kbx.extract.model import Document, Metadata, Unit

__all__ = ["FORMATS", "Document", "Metadata", "Unit", "extract", "format_of", "source_text"]
