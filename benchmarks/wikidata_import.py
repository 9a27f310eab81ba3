"""Wikidata import (issue 19): throughput and peak memory of ``kbx gazetteer import
--format wikidata`` on a synthetic dump in Wikidata's JSON dump layout.

Writes a dump of ``--n`` entities into a temporary folder (``[``, one entity per line with a comma,
``]``; labels in en/de/fr, 0-4 aliases, one or two P31 classes of which about a fifth are
not in the table, descriptions and a few other claims so that lines weigh about what
small items do), plain and bz2, and plain ones of ``--big`` and ``--import-n`` entities.
Then, each in a fresh process so that its peak RSS is its own, side by side in one run:

- ``json.loads`` over every line of the plain file: the floor any Python reader pays;
- the reader alone (``gazetteer.wikidata.records``) on the plain and the bz2 file;
- the reader with a ``--qid`` filter of 1,000 QIDs (lines passed over unparsed);
- the reader on the ``--big`` file: the same memory at five times the entities;
- the whole import (``entities.imports.import_file``) of ``--import-n`` entities into an
  index of three small documents: reading, spooling, the transaction, the log, the re-run
  of the gazetteer and the entity layer's rebuild; then what the next writing command pays
  for a gazetteer that large (the log's check against the store, the automaton's build).

    .venv/bin/python benchmarks/wikidata_import.py [--n 200000] [--big 1000000]
        [--import-n 100000]
"""

from __future__ import annotations

import argparse
import bz2
import contextlib
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLASSES = ["Q5"] * 4 + ["Q4830453", "Q783794", "Q43229", "Q515", "Q6256", "Q7397", "Q571"]
UNMAPPED = ["Q1364", "Q16521", "Q13442814"]  # fruit, taxon, scholarly article: not mapped
WORDS = [
    "north",
    "river",
    "stone",
    "apple",
    "cedar",
    "lumen",
    "vale",
    "ridge",
    "harbor",
    "quartz",
    "maple",
    "orbit",
]


def _claim(prop: str, qid: str) -> dict:
    return {
        "mainsnak": {
            "snaktype": "value",
            "property": prop,
            "datavalue": {"value": {"entity-type": "item", "id": qid}, "type": "wikibase-entityid"},
        },
        "type": "statement",
        "rank": "normal",
    }


def _entity(i: int, rng: random.Random) -> dict:
    name = f"{rng.choice(WORDS).title()} {rng.choice(WORDS).title()} {i}"
    classes = [rng.choice(UNMAPPED if rng.random() < 0.2 else CLASSES)]
    if rng.random() < 0.3:
        classes.append(rng.choice(CLASSES + UNMAPPED))
    aliases = [f"{name.split()[0]} {j} {i}" for j in range(rng.randint(0, 4))]
    return {
        "type": "item",
        "id": f"Q{i}",
        "labels": {
            k: {"language": k, "value": f"{name} ({k})" if k != "en" else name}
            for k in ("en", "de", "fr")
        },  # fmt: skip
        "descriptions": {"en": {"language": "en", "value": f"synthetic entity number {i}"}},
        "aliases": {"en": [{"language": "en", "value": a} for a in aliases]},
        "claims": {
            "P31": [_claim("P31", c) for c in classes],
            "P17": [_claim("P17", f"Q{rng.randint(1, 300)}")],
            "P279": [_claim("P279", f"Q{rng.randint(1, 10**6)}")],
        },
        "sitelinks": {},
        "lastrevid": 2_000_000_000 + i,
    }


def generate(folder: Path, n: int, packed: bool = True) -> tuple[Path, Path | None]:
    """The plain (and bz2) dumps of ``n`` entities: 997 varied entities made once, then
    written with each line's own QID and numbered names (string substitution, so that
    writing a million lines costs seconds, not the benchmark's time)."""
    rng = random.Random(19)
    templates = [json.dumps(_entity(10**9 + k, rng), ensure_ascii=False) for k in range(997)]
    plain, zipped = folder / "dump.json", folder / "dump.json.bz2"
    with (
        open(plain, "w", encoding="utf-8") as f,
        bz2.open(zipped, "wt", encoding="utf-8") if packed else contextlib.nullcontext() as z,
    ):
        outs = [o for o in (f, z) if o]
        for out in outs:
            out.write("[\n")
        for i in range(1, n + 1):
            k = i % 997
            line = templates[k].replace(str(10**9 + k), str(i)) + (",\n" if i < n else "\n")
            for out in outs:
                out.write(line)
        for out in outs:
            out.write("]\n")
    return plain, zipped if packed else None


def _child(mode: str, path: Path, extra: str) -> dict:
    """One measurement, in this (fresh) process."""
    started = time.perf_counter()
    if mode == "json.loads":
        n = 0
        with open(path, encoding="utf-8") as f:
            for line in f:
                s = line.strip()
                if s not in ("[", "]"):
                    json.loads(s.removesuffix(","))
                    n += 1
        out = {"entities": n}
    elif mode in ("reader", "reader-qids"):
        from kbx.gazetteer import wikidata

        qids = [f"Q{q}" for q in json.loads(extra)] if mode == "reader-qids" else []
        counts = wikidata.Counts()
        kept = sum(
            1 for _ in wikidata.records(path, "wikidata", wikidata.options(qids=qids), counts)
        )
        out = {"entities": counts.read, "kept": kept}
    else:  # import
        from kbx.annotate.setup import registry_for
        from kbx.entities.build import repair
        from kbx.entities.imports import import_file
        from kbx.store.db import Index

        idx = Index.for_root(Path(extra))
        r = import_file(idx, path)
        out = {"entities": r.read, "kept": r.added, "units_rerun": r.units_rerun}
        out["seconds"] = time.perf_counter() - started
        out["import_peak_mb"] = _peak_mb()
        t = time.perf_counter()  # what every later writer pays for a gazetteer this large:
        with idx.writer() as con:
            repair(con, idx)  # the log checked against the store
        out["next_repair_s"] = time.perf_counter() - t
        t = time.perf_counter()
        registry_for(idx)  # the entries loaded and the automaton built
        out["gazetteer_load_s"] = time.perf_counter() - t
        out["peak_mb"] = out["import_peak_mb"]  # the table's: the import's own
        out["later_peak_mb"] = _peak_mb()
        return out
    out["seconds"] = time.perf_counter() - started
    out["peak_mb"] = _peak_mb()
    return out


def _peak_mb() -> float:
    """This process's peak RSS since its exec (VmHWM; ``ru_maxrss`` would count the
    parent's pages at the fork)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def _run(mode: str, path: Path, extra: str = "") -> dict:
    r = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(path), extra],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(r.stdout.splitlines()[-1])


def _root(folder: Path) -> Path:
    """Three small documents, indexed with the rule-based recognizers."""
    from kbx.indexing.ingest import index

    root = folder / "root"
    root.mkdir()
    (root / "kbx.toml").write_text('[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n')
    for i, w in enumerate(WORDS[:3]):
        (root / f"d{i}.md").write_text(f"# {w}\n\n{w.title()} River {i} met Stone Cedar 7.\n")
    index(root)
    return root


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=200_000, help="entities in the side-by-side dump")
    p.add_argument("--big", type=int, default=1_000_000, help="entities for the memory run")
    p.add_argument("--import-n", type=int, default=100_000, help="entities imported whole")
    p.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        mode, path, extra = args.child
        print(json.dumps(_child(mode, Path(path), extra)))
        return
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        folder = Path(tmp)
        plain, packed = generate(folder, args.n)
        for sub, n in (("small", args.import_n), ("big", args.big)):
            (folder / sub).mkdir()
            generate(folder / sub, n, packed=False)
        mb = plain.stat().st_size / 1e6, packed.stat().st_size / 1e6
        print(f"{args.n:,} entities: {mb[0]:.0f} MB, bz2 {mb[1]:.0f} MB", flush=True)
        wanted = json.dumps(random.Random(1).sample(range(1, args.n + 1), 1000))
        rows = []
        for name, mode, path, extra in [
            (f"json.loads per line (floor), {args.n:,}", "json.loads", plain, ""),
            (f"reader, plain, {args.n:,}", "reader", plain, ""),
            (f"reader, bz2, {args.n:,}", "reader", packed, ""),
            (f"reader, --qid x1000, plain, {args.n:,}", "reader-qids", plain, wanted),
            (f"reader, plain, {args.big:,}", "reader", folder / "big" / "dump.json", ""),
            (
                f"import whole, {args.import_n:,}",
                "import",
                folder / "small" / "dump.json",
                str(_root(folder)),
            ),
        ]:
            r = _run(mode, path, extra)
            rate = r["entities"] / r["seconds"]
            rows.append((name, r["entities"], r.get("kept", ""), r["seconds"], rate, r["peak_mb"]))
            print(f"{name}: {r}", flush=True)
    print()
    print("| measure | entities read | kept | seconds | entities/s | peak RSS MB |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, n, kept, s, rate, mb in rows:
        shown = f"{kept:,}" if kept != "" else ""
        print(f"| {name} | {n:,} | {shown} | {s:.1f} | {rate:,.0f} | {mb:.0f} |")


if __name__ == "__main__":
    main()
