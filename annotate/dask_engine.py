"""Recognizer batches on a running Dask cluster; only where a batch is recognized changes.

The plan, the batches and the commits are the local pass's (annotate/run.py). A pass
registers its recognizers with the cluster as one worker plugin, pickled unloaded, so a
worker loads a model once, on its first batch, and again only if it is restarted. Each
batch's unit rows go in-band (``client.submit``), or, with ``[engine] spool``, as an Arrow
file in a folder every worker reads (annotate/spool.py), and come back as two Arrow tables,
its mentions and runs, which this process commits as the local pass does. A batch whose worker
dies is recomputed elsewhere by the scheduler (which gives up after
``distributed.scheduler.allowed-failures`` deaths); one that raises is retried.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError
from pathlib import Path

import pyarrow as pa
from distributed import Client, KilledWorker, WorkerPlugin, get_worker

from kbx.annotate import spool
from kbx.annotate.run import recognize_batch
from kbx.config import EngineConfig
from kbx.errors import EngineUnavailable
from kbx.recognizers.base import Recognizer

LOST = (CancelledError, OSError, TimeoutError)  # how a future or call ends when the scheduler goes
RETRIES = 2  # a batch that raised (one whose worker died, the scheduler reruns itself)
PLUGIN = "kbx-pass-"  # a pass's plugin: this, its client's id, "-" and a random part


class DaskEngine:
    """A client of a running Dask cluster; the caller closes it (a context manager)."""

    def __init__(self, client: Client, address: str, spool_root: Path | None = None):
        self.client, self.address, self.spool_root = client, address, spool_root

    @classmethod
    def connect(cls, spec: EngineConfig) -> DaskEngine:
        """Reach the scheduler and wait for a worker, or say in one line what to check."""
        try:
            client = Client(spec.address, timeout=spec.timeout, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as e:
            raise EngineUnavailable(
                f"cannot reach the Dask scheduler at {spec.address} within {spec.timeout:g} s "
                f"({_why(e)}); check that it runs and the address (--address, or [engine] "
                "address in kbx.toml)"
            ) from None
        try:
            client.wait_for_workers(1, timeout=spec.timeout)
        except TimeoutError:
            client.close()
            raise EngineUnavailable(
                f"the Dask scheduler at {spec.address} has no workers; start some "
                f"(dask worker {spec.address})"
            ) from None
        root = Path(spec.spool) if spec.spool else None
        if root:
            try:
                spool.check(root, client.run)
            except EngineUnavailable:
                client.close()
                raise
        return cls(client, spec.address, root)

    @property
    def workers(self) -> int:
        """Threads across the cluster's workers: batches recognized at once."""
        return sum(self.client.nthreads().values()) or 1

    def start(self, recognizers: Sequence[Recognizer]) -> DaskPass:
        """Send the recognizers to every worker, present and future, for one pass."""
        _forget_dead_passes(self.client)
        name = f"{PLUGIN}{self.client.id}-{uuid.uuid4().hex[:8]}"
        try:
            self.client.register_plugin(Recognizers(list(recognizers)), name=name)
        except Exception as e:  # a worker could not unpickle them: kbx or a plugin missing
            raise EngineUnavailable(
                f"the Dask workers at {self.address} cannot take kbx's recognizers "
                f"({type(e).__name__}: {_why(e)}); install kbx, with the recognizers' "
                "packages and models, on every worker"
            ) from None
        if not self.spool_root:
            return DaskPass(self, name)
        try:
            files = spool.Spool(self.spool_root, name)
        except OSError as e:
            self.client.unregister_worker_plugin(name)
            raise EngineUnavailable(
                f"cannot write the spool folder {self.spool_root} ({_why(e)}); give [engine] "
                "spool a folder this process can write and every worker reads"
            ) from None
        return DaskPass(self, name, files)

    def submit(self, fn: Callable[..., object], *args: object) -> Task:
        """Run ``fn(*args)`` on some worker (``fn`` importable there, as kbx is): a stage
        other than the recognizers' (the vectors) sends its batches so, and keeps its own
        model per worker process."""
        return Task(self.client.submit(fn, *args, pure=False, retries=RETRIES), self.address)

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> DaskEngine:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _why(e: BaseException) -> str:
    return " ".join(str(e).split())[:200] or type(e).__name__


def _forget_dead_passes(client: Client) -> None:
    """Unregister the plugins of passes whose client is gone (a killed ``kbx reprocess``),
    so the workers of a long-lived cluster stop holding their models."""

    def left_behind(dask_scheduler) -> list[str]:
        alive = set(dask_scheduler.clients)
        return [
            p
            for p in dask_scheduler.worker_plugins
            if p.startswith(PLUGIN) and p[len(PLUGIN) :].rsplit("-", 1)[0] not in alive
        ]

    for name in client.run_on_scheduler(left_behind):
        client.unregister_worker_plugin(name)


class DaskPass:
    """One pass's batches on the cluster, in the shape of the local pool (annotate/run.py)."""

    def __init__(self, engine: DaskEngine, plugin: str, files: spool.Spool | None = None):
        self.engine, self.plugin, self.files = engine, plugin, files
        self.batches: list[Batch] = []

    def submit(self, r: Recognizer, batch: list[tuple]) -> Batch:
        """Recognize a batch of unit rows on some worker: the rows in the task, or the path
        of the file they were written to."""
        task, payload = (
            (recognize_file_on_worker, self.files.write(batch))
            if self.files
            else (recognize_on_worker, batch)
        )
        f = self.engine.client.submit(
            task, self.plugin, r.info.name, payload, pure=False, retries=RETRIES
        )
        self.batches.append(
            Batch(f, self.engine.address, self.files, payload if self.files else None)
        )
        return self.batches[-1]

    def shutdown(self) -> None:
        """Cancel what is still in flight and let the workers drop the pass's models."""
        client = self.engine.client
        try:
            client.cancel([b.future for b in self.batches if b.future and not b.future.done()])
            if client.status == "running":  # else the scheduler went, its plugins with it
                client.unregister_worker_plugin(self.plugin)
        except LOST:  # it went away just now: the next pass forgets the plugin
            pass
        finally:
            if self.files:
                self.files.close()
        self.batches.clear()


class Batch:
    """A batch in flight, with a local future's ``done()`` and ``result()``. Its result is
    taken once: the future is let go then, so the scheduler keeps no copy, and a worker
    that dies later holding one is not asked to recompute it."""

    def __init__(self, future, address: str, files: spool.Spool | None, path: str | None):
        self.future, self.address, self.files, self.path = future, address, files, path

    def done(self) -> bool:
        return self.future.done()

    def result(self) -> tuple[list, list]:
        """The batch's mentions and runs, as the rows the local pass commits."""
        try:
            mentions, runs = _taken(self.future, self.address)
        except spool.Unreadable as e:
            raise EngineUnavailable(
                f"a Dask worker could not read a batch's file ({_why(e)}); what was committed "
                "stays: give [engine] spool a folder every worker mounts at the same path"
            ) from None
        self.future = None
        if self.files and self.path:
            self.files.done(self.path)
        return rows(mentions), rows(runs)


class Recognizers(WorkerPlugin):
    """The worker plugin: a pass's recognizers, each loaded on a worker at its first batch
    (in a task's thread, not the worker's event loop)."""

    def __init__(self, recognizers: list[Recognizer]):
        self.by_name = {r.info.name: r for r in recognizers}
        self._loaded: set[str] = set()
        self._lock = threading.Lock()

    def __getstate__(self) -> dict:
        return {"by_name": self.by_name}

    def __setstate__(self, state: dict) -> None:
        self.__init__(list(state["by_name"].values()))

    def teardown(self, worker) -> None:
        self.by_name.clear()

    def get(self, name: str) -> Recognizer:
        r = self.by_name[name]
        with self._lock:  # a worker's threads load a model once between them
            if name not in self._loaded:
                if hasattr(r, "load"):
                    r.load()
                self._loaded.add(name)
        return r


def recognize_on_worker(plugin: str, name: str, batch: list[tuple]) -> tuple:
    """On a worker: the batch's mentions and runs, as the local pass makes them, in two
    Arrow tables."""
    mentions, runs = recognize_batch(get_worker().plugins[plugin].get(name), batch)
    return _table(mentions, MENTIONS), _table(runs, RUNS)


def recognize_file_on_worker(plugin: str, name: str, path: str) -> tuple:
    """On a worker: as ``recognize_on_worker``, for the batch written to ``path``."""
    return recognize_on_worker(plugin, name, spool.read(path))


# The store's mention and run columns, in the order the local pass's rows hold them.
MENTIONS = pa.schema(
    [
        ("unit_hash", pa.string()),
        ("recognizer", pa.string()),
        ("version", pa.string()),
        ("start", pa.int64()),
        ("end", pa.int64()),
        ("type", pa.string()),
        ("text", pa.string()),
        ("value", pa.string()),
        ("confidence", pa.float64()),
        ("key", pa.string()),
    ]
)
RUNS = pa.schema(
    [
        ("unit_hash", pa.string()),
        ("recognizer", pa.string()),
        ("version", pa.string()),
        ("n_mentions", pa.int64()),
        ("error", pa.string()),
        ("ran_at", pa.timestamp("us")),
    ]
)


def _table(rows: list[tuple], schema: pa.Schema) -> pa.Table:
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(schema)
    return pa.Table.from_arrays(
        [pa.array(c, t.type) for c, t in zip(columns, schema, strict=True)], schema=schema
    )


def rows(table: pa.Table) -> list[tuple]:
    """An Arrow table back as rows."""
    return list(zip(*(c.to_pylist() for c in table.columns), strict=True))


class Task:
    """Any other stage's batch in flight (``DaskEngine.submit``), taken once as a Batch is."""

    def __init__(self, future, address: str):
        self.future, self.address = future, address

    def done(self) -> bool:
        return self.future.done()

    def result(self) -> object:
        value = _taken(self.future, self.address)
        self.future = None
        return value


def _taken(future, address: str) -> object:
    """A batch's result, or the one line that says why the cluster could not give it."""
    try:
        return future.result()
    except KilledWorker as e:
        raise EngineUnavailable(
            f"a batch killed every Dask worker that took it ({_why(e)}); what was "
            "committed stays, and the next run resumes from it: check the workers' "
            f"memory and logs at {address}"
        ) from None
    except LOST as e:
        raise EngineUnavailable(
            f"lost the Dask scheduler at {address} during the pass ({_why(e)}); what "
            "was committed stays, and the next run resumes from it"
        ) from None
