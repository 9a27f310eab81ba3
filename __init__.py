"""kbx: exact, cited, filterable search over a folder of documents.

The library is ``kbx.Index`` (its methods are the commands), ``kbx.Filters`` and
``kbx.index(folder)``; each loads what it needs on first use, so ``import kbx`` (and the
``kbx`` command's start) costs nothing. The faces' surface is ``kbx.api``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

if TYPE_CHECKING:
    from kbx.errors import KbxError
    from kbx.library import Index, index
    from kbx.options import Filters

__all__ = ["Filters", "Index", "KbxError", "__version__", "index"]

_WHERE = {
    "Index": "kbx.library",
    "index": "kbx.library",
    "Filters": "kbx.options",
    "KbxError": "kbx.errors",
}


def __getattr__(name: str) -> object:
    if name not in _WHERE:
        raise AttributeError(f"module 'kbx' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value
