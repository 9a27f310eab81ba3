"""``kbx embed``: the vectors stage (vectors/run.py), on the Dask cluster ``kbx.toml``
names (``[engine]``) when it names one, as the recognizer pass of ``kbx reprocess`` and
``kbx index`` is; on this machine otherwise. Here, not in ``vectors/``, because choosing an
engine is annotate's business and the vectors stage stands apart from it."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext

from kbx.annotate.engine import connect
from kbx.config import load_config
from kbx.errors import EngineUnavailable
from kbx.store.db import Index, WriterLease
from kbx.vectors import run
from kbx.vectors.setup import encoder_or_why


def embed(
    index: Index,
    progress: Callable[[int, int], None] | None = None,
    *,
    lease: WriterLease | None = None,
    added_after: int | None = None,
) -> run.VectorReport:
    """Vectors for every unit that lacks them; without a model, the line that says why.
    An engine that cannot run is one ``EngineUnavailable`` line before anything is written.
    With ``added_after``, the pass that ends a ``kbx index`` run (on its ``lease``) on an
    embedded index: the units whose id is past it, those the run added, and nothing where
    the index's vectors are of another model or version (``kbx embed`` embeds every
    passage anew then) or the engine cannot run: its report says why, since the files are
    in and searchable all the same."""
    enc, why = encoder_or_why(index.root)
    if enc is None:
        return run.VectorReport(off=why)
    keeping_up = added_after is not None
    if keeping_up and lease is not None and not run.has_vectors(lease.con(), enc):
        return run.VectorReport(
            enc.name,
            enc.version,
            off=f"the index's vectors are not of {enc.name} {enc.version}: `kbx embed` "
            "embeds every passage with it",
        )
    try:
        engine = connect(load_config(index.root).engine)
    except EngineUnavailable as e:
        if not keeping_up:
            raise
        return run.VectorReport(enc.name, enc.version, off=str(e))
    with engine or nullcontext() as engine:
        return run.embed(
            index, enc, progress=progress, lease=lease, workers=engine, added_after=added_after
        )
