"""Each test's CPU seconds (this process and the children it reaped, user and system) and
wall seconds, written as TSV to ``$CPU_LOG`` (build/cpu_durations.tsv by default) at the end
of the run: on a shared machine the CPU is the figure its load moves least. Not loaded by
default; ``python -m pytest -p cpu_durations`` (docs/TESTING.md). Under xdist each
worker writes its own file, named with its id (cpu_durations.gw0.tsv)."""

from __future__ import annotations

import os
import resource
import time
from pathlib import Path

import pytest

_ROWS: list[tuple[float, float, str]] = []


def _cpu() -> float:
    own, children = (
        resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    cpu, wall = _cpu(), time.perf_counter()
    yield
    _ROWS.append((_cpu() - cpu, time.perf_counter() - wall, item.nodeid))


def pytest_sessionfinish(session) -> None:
    if not _ROWS:  # xdist's controller runs no test
        return
    path = Path(os.environ.get("CPU_LOG") or session.config.rootpath / "build/cpu_durations.tsv")
    if worker := os.environ.get("PYTEST_XDIST_WORKER"):
        path = path.with_name(f"{path.stem}.{worker}{path.suffix}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{c:.3f}\t{w:.3f}\t{n}\n" for c, w, n in _ROWS))
