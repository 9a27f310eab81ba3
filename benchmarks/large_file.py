"""One large file of names (issue 43): ``kbx index`` of a changelog of thousands of signers,
its names pass and entity layer timed, and the peak memory, for this checkout beside
another (``--kbx DIR``, a folder holding its ``kbx`` package).

The file is a generated Debian-style changelog of ``--size`` characters (5 MB by default)
whose entries are signed by ``--signers`` people (``Name <mail>``) and name two others
(``tests/large_files.py``), or a real one (``--file``, e.g. a kernel's
``/usr/share/doc/linux-libc-dev/changelog.Debian.gz``, read as text). Names come from the
byline recognizer and a cheap stand-in for a model (capitalized pairs as PERSON, as spaCy's
arrive); ``--spacy`` runs the installed spaCy pipeline instead (minutes on a few MB). Each
checkout indexes a fresh copy in a child process, under ``--timeout`` seconds and, where
``--memory`` is given, with DuckDB's memory limited to it (a store whose rebuild ran out of
memory says so, instead of taking the machine's). Printed per checkout: the whole index,
the names pass (``annotate/context.document_names``) and the entity layer
(``entities/build.refresh``), each as wall and CPU seconds of the writer, and the peak
resident memory of the writer and of its readers (workers).

    python benchmarks/large_file.py --kbx /tmp/base [--size 5000000] [--file PATH]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = r"""
import functools, json, os, resource, sys, time
from pathlib import Path
if sys.argv[1]:
    sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])  # tests/, for large_files
root, spacy, memory = Path(sys.argv[3]), sys.argv[4] == "1", sys.argv[5]
import duckdb
if memory:  # every DuckDB instance kbx starts, limited
    connect = duckdb.connect
    def limited(database=":memory:", read_only=False, config=None):
        return connect(database, read_only, {**(config or {}), "memory_limit": memory})
    duckdb.connect = limited
from kbx.annotate import context
from kbx.entities import build
from kbx.indexing.ingest import index
import kbx
phases = {}
def timed(module, name):
    real = getattr(module, name)
    @functools.wraps(real)
    def wrapper(*args, **kwargs):
        wall, cpu = time.monotonic(), time.process_time()
        try:
            return real(*args, **kwargs)
        finally:
            w, c = phases.get(name, (0.0, 0.0))
            phases[name] = (w + time.monotonic() - wall, c + time.process_time() - cpu)
    setattr(module, name, wrapper)
timed(context, "document_names")
timed(build, "refresh")
registry = None
if not spacy:
    from large_files import Names
    from kbx.recognizers.bylines import BylineRecognizer
    from kbx.recognizers.registry import Registry
    registry = Registry([Names(), BylineRecognizer()])
wall, cpu, error = time.monotonic(), time.process_time(), None
try:
    index(root, registry=registry)
except Exception as e:
    error = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({
    "kbx": str(Path(kbx.__file__).parent), "error": error,
    "index": (time.monotonic() - wall, time.process_time() - cpu),
    "names": phases.get("document_names"), "layer": phases.get("refresh"),
    "rss_mb": me.ru_maxrss / 1024, "readers_rss_mb": kids.ru_maxrss / 1024,
    "readers_cpu": kids.ru_utime + kids.ru_stime,
}))
"""


def source(args: argparse.Namespace) -> tuple[str, str]:
    """The file's name and text."""
    if args.file:
        path = Path(args.file)
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        return path.name.removesuffix(".gz").removesuffix(".txt") + ".txt", data.decode()
    sys.path.insert(0, str(REPO / "tests"))
    from large_files import changelog

    return "changelog.txt", changelog(args.size, args.signers)


def run(kbx: str, name: str, text: str, args: argparse.Namespace) -> dict:
    """One checkout's index of a fresh folder holding the file, in a child process."""
    folder = Path(tempfile.mkdtemp(prefix="kbx-large-"))
    try:
        (folder / name).write_text(text)
        if args.spacy:
            (folder / "kbx.toml").write_text('[recognizers]\ndisable = ["gliner", "acronyms"]\n')
        command = [sys.executable, "-c", CHILD, kbx, str(REPO / "tests"), str(folder)]
        command += ["1" if args.spacy else "0", args.memory or ""]
        env = {**os.environ, "PYTHONPATH": ""}
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=args.timeout, env=env
            )
        except subprocess.TimeoutExpired:
            return {"kbx": kbx or str(REPO), "error": f"over {args.timeout} s"}
        if done.returncode != 0:
            return {"kbx": kbx or str(REPO), "error": done.stderr.strip().splitlines()[-1]}
        return json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _seconds(pair: list[float] | None) -> str:
    return "-" if not pair else f"{pair[0]:.1f} / {pair[1]:.1f}"


def table(rows: list[dict]) -> str:
    lines = [
        "| kbx | index, s (wall / CPU) | names pass | entity layer | peak RSS, MB | readers' "
        "peak RSS, MB | error |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        rss = f"{r['rss_mb']:.0f}" if "rss_mb" in r else "-"
        readers = f"{r['readers_rss_mb']:.0f}" if "readers_rss_mb" in r else "-"
        lines.append(
            f"| {r['kbx']} | {_seconds(r.get('index'))} | {_seconds(r.get('names'))} | "
            f"{_seconds(r.get('layer'))} | {rss} | {readers} | {r.get('error') or ''} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kbx", help="a folder holding another checkout's kbx package")
    parser.add_argument("--size", type=int, default=5_000_000, help="characters generated")
    parser.add_argument("--signers", type=int, default=20_000, help="people who sign")
    parser.add_argument("--file", help="index this file (.gz read whole) instead")
    parser.add_argument("--spacy", action="store_true", help="names by spaCy (kbx.toml)")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per checkout")
    parser.add_argument("--memory", help="DuckDB's memory limit in the child, e.g. 6GB")
    args = parser.parse_args()
    name, text = source(args)
    print(f"{name}: {len(text):,} characters, {text.count(' <'):,} ' <' (signatures)")
    rows = [run("", name, text, args)]
    if args.kbx:
        rows.append(run(args.kbx, name, text, args))
    print(table(rows))


if __name__ == "__main__":
    main()
