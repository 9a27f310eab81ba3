"""Is extraction unchanged? Every file's Document from this checkout beside another's.

Each checkout extracts the same files in a child process (``extract(path, data)``, what
an index's workers run) and writes, per file, a digest of everything a first index keeps
from it: each unit's text, offset map, kind, heading path, page, token count, inline code,
cell separators, hash and line range, the metadata and the warnings (or the error). The
digests are compared file by file; a difference names the file and its first unit that
differs, so a parser change can be shown to move nothing, or exactly what it moves.

    python benchmarks/extract_compare.py --kbx /tmp/base                 # the nodejs corpus
    python benchmarks/extract_compare.py --kbx /tmp/base --list files.txt  # one path a line

``--kbx DIR`` names the other checkout (DIR holds its ``kbx`` package folder). Also times
each checkout's extraction (CPU seconds of ``extract`` calls in the child, files read
beforehand, digests not counted); ``--rounds N`` runs the two children in turn N times and
gives the median of each.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from ingest import DEFAULT_EVAL

CHILD = r"""
import hashlib, json, sys, time
if sys.argv[1]:
    sys.path.insert(0, sys.argv[1])
from kbx.extract.document import extract
paths = [line for line in open(sys.argv[2], encoding="utf-8").read().split("\n") if line]
datas = [(p, open(p, "rb").read()) for p in paths]
def described(doc):
    units = [(u.text, u.segments, u.kind, u.heading_path, u.page, u.n_tokens, u.code_spans,
              u.breaks, u.hash, u.lines) for u in doc.units]
    m = doc.meta
    return units, (m.title, m.date, m.authors, repr(m.fields)), doc.warnings, doc.encoding
out, units, cpu = {}, {}, 0.0
for path, data in datas:
    started = time.process_time()
    try:
        doc = extract(path, data)
        cpu += time.process_time() - started
        d = described(doc)
    except Exception as e:
        cpu += time.process_time() - started
        d = ("error", type(e).__name__, str(e))
    out[path] = hashlib.sha256(repr(d).encode("utf-8", "surrogatepass")).hexdigest()
    units[path] = [hashlib.sha256(repr(u).encode("utf-8", "surrogatepass")).hexdigest()
                   for u in (d[0] if d[0] != "error" else [])]
print(json.dumps({"cpu": cpu, "files": out, "units": units}))
"""


def run(kbx: str, listing: Path) -> dict:
    """One checkout's digests, from a child process ('' is this checkout)."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, kbx, str(listing)],
        capture_output=True,
        text=True,
        check=True,
        cwd="/",
    )
    return json.loads(done.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kbx", required=True, help="the other checkout (holds its kbx folder)")
    ap.add_argument("--eval", type=Path, default=DEFAULT_EVAL, help="the eval data folder")
    ap.add_argument("--corpus", default="nodejs", help="a folder of EVAL/corpora")
    ap.add_argument("--list", type=Path, help="a file of paths to extract, one a line")
    ap.add_argument("--rounds", type=int, default=1, help="runs of each checkout, in turn")
    args = ap.parse_args()
    if args.list:
        listing = args.list.resolve()
    else:
        root = args.eval / "corpora" / args.corpus
        files = sorted(str(p) for p in root.rglob("*") if p.is_file())
        listing = Path("/tmp") / f"kbx-extract-compare-{args.corpus}.txt"
        listing.write_text("\n".join(files) + "\n", encoding="utf-8")
    rounds = [(run(args.kbx, listing), run("", listing)) for _ in range(args.rounds)]
    other, this = rounds[0]
    differ = [p for p in this["files"] if this["files"][p] != other["files"].get(p)]
    n_units = sum(len(u) for u in this["units"].values())
    cpu = [statistics.median(r[i]["cpu"] for r in rounds) for i in (0, 1)]
    print(
        f"{len(this['files'])} files, {n_units} units; {len(differ)} differ. "
        f"CPU s to extract (median of {args.rounds}): other {cpu[0]:.2f}, this {cpu[1]:.2f}"
    )
    if args.rounds > 1:
        print(
            "  rounds, other vs this: "
            + "; ".join(f"{a['cpu']:.2f} vs {b['cpu']:.2f}" for a, b in rounds)
        )
    for path in differ[:20]:
        a, b = other["units"].get(path, []), this["units"][path]
        first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), len(b))
        print(f"  {path}: units {len(a)} -> {len(b)}, first differing unit {first}")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
