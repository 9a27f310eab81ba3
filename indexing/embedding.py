"""``kbx embed``: the vectors stage (vectors/run.py), on the Dask cluster ``kbx.toml``
names (``[engine]``) when it names one, as the recognizer pass of ``kbx reprocess`` and
``kbx index`` is; on this machine otherwise. Here, not in ``vectors/``, because choosing an
engine is annotate's business and the vectors stage stands apart from it."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext

from kbx.annotate.engine import connect
from kbx.config import load_config
from kbx.store.db import Index
from kbx.vectors import run
from kbx.vectors.setup import encoder_or_why


def embed(index: Index, progress: Callable[[int, int], None] | None = None) -> run.VectorReport:
    """Vectors for every unit that lacks them; without a model, the line that says why.
    An engine that cannot run is one ``EngineUnavailable`` line before anything is written."""
    enc, why = encoder_or_why(index.root)
    if enc is None:
        return run.VectorReport(off=why)
    with connect(load_config(index.root).engine) or nullcontext() as engine:
        return run.embed(index, enc, progress=progress, workers=engine)
