"""Files to Documents: clean text, offset maps back to the original, and units.

The names load on first use: a module that needs only the offset maps (``textmap``) or
the model does not pay for every format's parser.
"""

from __future__ import annotations

import importlib

_WHERE = {
    "FORMATS": "kbx.extract.document",
    "extract": "kbx.extract.document",
    "format_of": "kbx.extract.document",
    "source_text": "kbx.extract.document",
    "Document": "kbx.extract.model",
    "Metadata": "kbx.extract.model",
    "Unit": "kbx.extract.model",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> object:
    if name not in _WHERE:
        raise AttributeError(f"module 'kbx.extract' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
