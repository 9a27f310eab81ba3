"""Where recognizer batches run: this machine's worker processes (the default), or a Dask
cluster (``kbx reprocess --engine dask``, or ``[engine] kind = "dask"`` in kbx.toml for the
model pass of ``kbx index``).

This module only chooses and connects; kbx.annotate.dask_engine is the engine, imported
when a pass asks for it, so ``kbx search`` never loads Dask.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from kbx.config import EngineConfig
from kbx.errors import EngineUnavailable
from kbx.recognizers.base import Recognizer


class Batch(Protocol):
    """A batch in flight: a local future, or a cluster's."""

    def done(self) -> bool: ...

    def result(self) -> tuple[list, list]:
        """The batch's mention rows and run rows."""
        ...


class Running(Protocol):
    """Another stage's batch in flight (``Engine.submit``)."""

    def done(self) -> bool: ...

    def result(self) -> object: ...


class Pass(Protocol):
    """One pass's batches: each submitted in order, the pass shut down at its end."""

    def submit(self, r: Recognizer, batch: list[tuple]) -> Batch: ...

    def shutdown(self) -> None:
        """Cancel what is still in flight and release the workers."""
        ...


class Engine(Protocol):
    """Where a pass's batches run, beyond this machine's worker processes."""

    @property
    def workers(self) -> int:
        """Batches it recognizes at once."""
        ...

    def start(self, recognizers: Sequence[Recognizer]) -> Pass: ...

    def submit(self, fn: Callable[..., object], *args: object) -> Running:
        """Run ``fn(*args)`` on some worker: another stage's batch (the vectors')."""
        ...

    def close(self) -> None: ...


INSTALL = "pip install 'kbx[cluster]' (it brings dask, distributed and pyarrow)"


def install_line(missing: str) -> str:
    """The one line that says a cluster engine's package is missing, and what to install."""
    return f"the dask engine needs {missing}, which is not installed: {INSTALL}"


def connect(spec: EngineConfig) -> Engine | None:
    """A connected engine for ``spec`` (None for the local one). An engine that cannot be
    used is one ``EngineUnavailable`` line, raised before the caller writes anything."""
    if spec.kind == "local":
        return None
    try:
        from kbx.annotate.dask_engine import DaskEngine
    except ImportError as e:
        raise EngineUnavailable(install_line(e.name or "dask")) from None
    return DaskEngine.connect(spec)
