"""Worker processes that die with their parent and give each file a time and memory budget.

Workers are forked (they start at once, need no ``__main__`` guard, and share the models
loaded before the fork) and never touch DuckDB. A ``kill -9`` of the parent takes them
with it (Linux's parent-death signal), so no orphan keeps computing or holds the write
lock. A file that makes its reader run past its time budget, grow past its memory
budget, or die, is a failed file with that reason: never a hung or failed run.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import resource
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool

from kbx.errors import OverBudget

FILE_SECONDS = 60  # a file's time budget
GRACE_SECONDS = 10  # past twice the budget and this, a worker is taken as stuck in native code
HUNG = "took longer than the time budget"  # how a job over its budget is failed
FILE_MEMORY = 4 * 1024**3  # bytes of address space a reader may add while reading one file
_PR_SET_PDEATHSIG = 1
KILL_SECONDS = 5  # a killed worker is reaped within this (it cannot block a SIGKILL)


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the signal was set
        os._exit(1)


def _budgeted(parent: int) -> None:
    _die_with_parent(parent)
    used = _address_space()
    if used is not None:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = used + FILE_MEMORY
        if hard == resource.RLIM_INFINITY or cap < hard:
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _over_time(signum, frame) -> None:
    raise OverBudget(f"{HUNG} ({FILE_SECONDS} s)")


def _address_space() -> int | None:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return None


def timed(fn: Callable, *args):
    """Call ``fn`` with the time budget armed (in a worker, or in the main thread)."""
    armed = threading.current_thread() is threading.main_thread()
    if armed:
        previous = signal.signal(signal.SIGALRM, _over_time)
        signal.alarm(FILE_SECONDS)
    try:
        return fn(*args)
    finally:
        if armed:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)


class _Context(multiprocessing.context.ForkContext):
    """The fork context of one pool, keeping the worker processes and the result queue it
    makes for that pool: ``kill`` needs every worker, even one forked a moment before an
    interrupt (before it could say its pid), and needs to end a read of a result that a
    killed worker left half written."""

    def __init__(self) -> None:
        self.made: list[multiprocessing.process.BaseProcess] = []
        self.results: list = []

    def Process(self, *args, **kwargs) -> multiprocessing.process.BaseProcess:  # noqa: N802
        made = _Worker(*args, **kwargs)
        self.made.append(made)  # before it starts: an interrupt cannot come in between
        return made

    def SimpleQueue(self):  # noqa: N802
        made = super().SimpleQueue()
        self.results.append(made)
        return made


class _Worker(multiprocessing.context.ForkProcess):
    """A worker forked with Ctrl-C held back: one that came between the fork and the
    worker's ``_started`` (which ignores it) printed a traceback from Python's own
    after-fork code. The child lets it through once it ignores it; this process, at once."""

    def start(self) -> None:
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            super().start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)


class Pool(ProcessPoolExecutor):
    """Forked workers that die with this process (and, with ``budgets``, run under the
    per-file memory cap). Workers ignore Ctrl-C (the terminal signals the whole process
    group): one interrupted while it writes a result would leave a message cut short that
    the executor's thread waits on forever. This process stops them instead: leaving the
    pool by an exception (Ctrl-C included) kills them rather than waiting for their jobs."""

    def __init__(self, workers: int, budgets: bool = False):
        self._context = _Context()
        super().__init__(
            workers,
            mp_context=self._context,
            initializer=_started,
            initargs=(os.getpid(), budgets),
        )

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is None:
            self.shutdown(wait=True)
        else:  # an interrupt may have left the executor half started: wait on nothing
            self.kill()
        return False

    def kill(self) -> None:
        """Kill this pool's workers (where no signal handler runs) and shut it down without
        waiting. Only this pool's own children are signalled, never a pid a gone worker
        freed (a child's pid is not reused before this process reaps it)."""
        for worker in self._context.made:
            if worker.pid is not None:  # None: not forked (an interrupt in its start)
                worker.kill()
        for worker in self._context.made:
            if worker.pid is not None:
                worker.join(timeout=KILL_SECONDS)
        # the executor's thread may be reading a result a killed worker left half written.
        # Closing this process's end for writing leaves no writer: the read ends, the
        # thread takes the pool as broken and exits, and Python's exit, which joins it,
        # does not wait forever. The end it reads stays open until it has gone: closed
        # under it, its next wait on the queue raised "handle is closed" in that thread.
        for results in self._context.results:
            results._writer.close()
        manager = self._executor_manager_thread
        self.shutdown(wait=False, cancel_futures=True)
        if manager is not None:
            manager.join(timeout=KILL_SECONDS)
        if manager is None or not manager.is_alive():
            for results in self._context.results:
                results.close()


def _started(parent: int, budgets: bool) -> None:
    """A worker's start: it ignores Ctrl-C (see ``Pool``), dies with ``parent``, and is
    capped (with ``budgets``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # held back by _Worker.start
    (_budgeted if budgets else _die_with_parent)(parent)


def pool(workers: int, budgets: bool = False) -> Pool:
    """Forked workers that die with this process (see ``Pool``)."""
    return Pool(workers, budgets)


def each_in_order(
    fn: Callable,
    jobs: list[tuple],
    workers: int,
    failed: Callable[[tuple, str], object],
    size: Callable[[tuple], int] | None = None,
    ahead: int = 0,
    again: Callable | None = None,
) -> Iterator:
    """``fn(*job)`` for every job, in order, over budgeted workers. A job whose worker dies
    or hangs past twice its budget is retried alone; if it does that alone too, it yields
    ``again(*job, why)`` run alone in a fresh worker (a simpler reading of the same job),
    or ``failed(job, why)`` when there is none or it fails too; the rest go on.

    Jobs run ahead of the one yielded next, so workers keep busy while the caller works
    (a writer committing a batch): ``4 * workers`` of them, or with ``size``, as many as
    fit in ``ahead`` (bytes of input, say), and never fewer than two per worker."""
    todo = deque(jobs)
    while todo:
        suspects: list[tuple] = []
        with pool(workers, budgets=True) as p:
            window: deque = deque()
            held = 0
            try:
                while todo or window:
                    while todo and _room(window, held, todo[0], workers, size, ahead):
                        job = todo.popleft()
                        held += size(job) if size else 0
                        window.append((job, p.submit(fn, *job)))
                    job, future = window[0]
                    result = future.result(timeout=_stuck_after())
                    window.popleft()
                    held -= size(job) if size else 0
                    yield result
            except (BrokenProcessPool, FutureTimeout):
                suspects = [job for job, _ in window]
                p.kill()
        for job in suspects:
            yield _alone(fn, job, failed, again)


def _stuck_after() -> float:
    """Seconds after which a job's worker is stuck where its alarm cannot reach (C code)."""
    return 2 * FILE_SECONDS + GRACE_SECONDS


def _room(window: deque, held: int, job: tuple, workers: int, size, ahead: int) -> bool:
    if len(window) < 2 * workers:
        return True
    if size is None:
        return len(window) < 4 * workers
    return held + size(job) <= ahead


def _alone(fn: Callable, job: tuple, failed: Callable[[tuple, str], object], again=None):
    done, got = _run_alone(fn, job)
    if not done and again is not None:
        done, result = _run_alone(again, (*job, got))
        got = result if done else got
    return got if done else failed(job, got)


def _run_alone(fn: Callable, args: tuple) -> tuple[bool, object]:
    """``(True, fn(*args))`` from a fresh worker, or ``(False, why)`` when it died or hung."""
    with pool(1, budgets=True) as p:
        try:
            return True, p.submit(fn, *args).result(timeout=_stuck_after())
        except BrokenProcessPool:
            return False, "its reader process died (a crash in a parser, or out of memory)"
        except FutureTimeout:
            p.kill()
            return False, f"{HUNG} ({FILE_SECONDS} s)"
