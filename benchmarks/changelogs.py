"""People where they sign: Debian changelogs, scored against every entry's closing line.

Each entry of a Debian changelog closes with `` -- Name <mail>  Day, DD Mon YYYY …``;
``changelogs/trailers.jsonl`` holds those lines parsed (path, line, name, mail, date). The
corpus is copied to a temporary (or ``--keep``) folder with a ``kbx.toml`` that keeps spaCy
on (GLiNER off), indexed, and measured per half of the packages (split by a hash of the
file name: ``tune`` is the half the rules were looked at on, ``held`` the other):

* PERSON recall: closing lines holding a PERSON mention whose text is the name exactly
  (from any recognizer), and the same for the EMAIL mention of the address;
* entities per person: how many PERSON, ORG, GPE, … entities carry the name as label or
  alias (aim: one), and how many of the names ``--entity NAME`` refuses;
* "which packages did NAME write in YEAR" (closed an entry, or headed a ``[ NAME ]``
  block of one, in a file), asked as
  ``kbx grep '<\\S+@\\S+>' --entity NAME --after Y-01-01 --before Y-12-31`` (passages naming
  NAME) and with ``--author NAME`` (passages NAME signed): mean file F1 over the name-years,
  and the refusals (F1 0);
* the 50 PERSON entities in the most documents: how many are a signer of some entry (the
  rest printed, to judge by eye).

    .venv/bin/python benchmarks/changelogs.py [--eval ../shared/eval] [--keep DIR] [--write]
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
import sys
import tempfile
import zlib
from collections import Counter, defaultdict
from datetime import date
from email.utils import parsedate_to_datetime
from pathlib import Path

from common import REPO, eval_arg, table, write_section

from kbx import api
from kbx.errors import KbxError

SETTINGS = '[recognizers]\ndisable = ["gliner", "acronyms"]\n'
TITLE = "## People where they sign: Debian changelogs (issue 40)"
ROLES = ("PERSON", "ORG", "GPE", "LOC", "FAC", "NORP", "PRODUCT", "WORK_OF_ART", "EVENT")


TRAILER = re.compile(r"^ -- (?P<name>.+?) <(?P<mail>[^<>\s]+)>  (?P<date>\w{3}, .+)$")
ENTRY = re.compile(r"^\S.*\(.*\).*;.*urgency=")


def debian_corpus(docs: Path, skip: set[str], n: int, out: Path) -> list[dict]:
    """A held-out corpus of the kind: the changelogs of ``n`` packages installed here that
    the eval set lacks, cut to their newest 25 entries, with their closing lines parsed by
    their fixed syntax as the truth."""
    trailers = []
    for gz in sorted(docs.glob("*/changelog.Debian.gz"))[: n + len(skip)]:
        name = gz.parent.name
        if name in skip or len(trailers) and len({t["path"] for t in trailers}) >= n:
            continue
        lines = gzip.decompress(gz.read_bytes()).decode("utf-8", "replace").splitlines()
        starts = [i for i, line in enumerate(lines) if ENTRY.match(line)]
        lines = lines[: starts[25]] if len(starts) > 25 else lines
        (out / f"{name}.txt").write_text("\n".join(lines) + "\n", "utf-8")
        for i, line in enumerate(lines, start=1):
            if m := TRAILER.match(line):
                trailers.append({"path": f"{name}.txt", "line": i, **m.groupdict()})
    return trailers


def half(path: str) -> str:
    return "tune" if zlib.crc32(path.encode()) % 2 == 0 else "held"


def build(corpus: Path, keep: Path | None) -> Path:
    root = keep or Path(tempfile.mkdtemp(prefix="kbx-changelogs-"))
    if root != corpus and (keep is None or not (root / ".kbx").exists()):
        root.mkdir(parents=True, exist_ok=True)
        for f in corpus.iterdir():
            shutil.copy(f, root / f.name)
    (root / "kbx.toml").write_text(SETTINGS, "utf-8")
    kbx = [str(REPO / ".venv" / "bin" / "kbx"), "index", str(root), "--json"]
    subprocess.run(kbx, check=True, stdout=subprocess.DEVNULL)
    return root


def _f1(truth: set[str], got: set[str]) -> float:
    if not truth and not got:
        return 1.0
    tp = len(truth & got)
    return 2 * tp / (len(truth) + len(got)) if tp else 0.0


_BLOCK = re.compile(r"^\s*\[ ?([^\]\[<>]+?) ?\]\s*$")  # "  [ Pino Toscano ]"
_CLOSING = re.compile(r"^ -- (.+?) <[^<>\s]+>  (\w{3}, .+)$")


def block_writers(root: Path, paths: list[str]) -> dict[tuple[str, int], set[str]]:
    """``(name, year)`` -> the files where NAME heads a ``[ NAME ]`` block of an entry
    closed in YEAR: Debian's team uploads list each member's changes under their name, and
    the closer only uploaded them."""
    out: dict[tuple[str, int], set[str]] = defaultdict(set)
    for path in paths:
        heads: list[str] = []
        for line in (root / path).read_text("utf-8", errors="replace").splitlines():
            if m := _BLOCK.match(line):
                heads.append(m.group(1))
            elif m := _CLOSING.match(line):
                for name in heads:
                    out[(name, parsedate_to_datetime(m.group(2)).year)].add(path)
                heads = []
    return out


def measure(idx, trailers: list[dict], which: str) -> dict:
    rows = [t for t in trailers if which == "all" or half(t["path"]) == which]
    paths = sorted({t["path"] for t in rows})
    found: dict[tuple[str, int], list] = defaultdict(list)
    for p in paths:
        for m in api.mentions(idx, p):
            found[(p, m.line)].append(m)
    person = sum(
        any(m.type == "PERSON" and m.text == t["name"] for m in found[(t["path"], t["line"])])
        for t in rows
    )
    email = sum(
        any(m.type == "EMAIL" and (m.value or "").lower() == t["mail"].lower()
            for m in found[(t["path"], t["line"])])
        for t in rows
    )  # fmt: skip
    names = sorted({t["name"] for t in rows})
    with idx.reader() as con:
        per_name = dict(
            con.execute(
                f"""SELECT n, count(DISTINCT e.entity_id) FROM (SELECT unnest(?) AS n) q
                    JOIN entities e ON e.type IN {ROLES} AND (lower(e.label) = lower(q.n)
                        OR EXISTS (SELECT 1 FROM aliases a WHERE a.entity_id = e.entity_id
                                   AND lower(a.alias) = lower(q.n)))
                    GROUP BY n""",
                [names],
            ).fetchall()
        )
    counts = [per_name.get(n, 0) for n in names]
    years: dict[tuple[str, int], set[str]] = defaultdict(set)
    for t in rows:
        years[(t["name"], parsedate_to_datetime(t["date"]).year)].add(t["path"])
    blocks = block_writers(idx.root, paths)
    for key, truth in years.items():  # a [ NAME ] block's writer wrote its entry's lines too
        truth |= blocks.get(key, set())
    f1s: dict[str, list[float]] = {"entity": [], "author": []}
    refused = Counter()
    for (name, year), truth in sorted(years.items()):
        for role in f1s:
            asked = {"entities" if role == "entity" else "authors": [name]}
            try:
                got = api.grep(
                    idx,
                    r"<\S+@\S+>",
                    max_matches=10_000,
                    filters=api.Filters(after=f"{year}-01-01", before=f"{year}-12-31", **asked),
                )
            except KbxError:
                refused[role] += 1
                f1s[role].append(0.0)
                continue
            got_paths = {p for m in got.matches for p in m.paths}
            f1s[role].append(_f1(truth, got_paths & set(paths)))  # the other half's aside
    return {
        "lines": len(rows),
        "person": person / len(rows),
        "email": email / len(rows),
        "people": len(names),
        "entities/person": sum(counts) / len(names),
        "people with >1": sum(c > 1 for c in counts),
        "people with 0": sum(c == 0 for c in counts),
        "name-years": len(years),
        "F1 --entity": sum(f1s["entity"]) / len(years),
        "refused --entity": refused["entity"],
        "F1 --author": sum(f1s["author"]) / len(years),
        "refused --author": refused["author"],
    }


def top_people(idx, trailers: list[dict], n: int = 50) -> tuple[int, list[str]]:
    signers = {t["name"].lower() for t in trailers}
    rows = api.entities(idx, type_="PERSON", limit=n)
    others = [r.label for r in rows if not ({r.label.lower(), *map(str.lower, r.aliases)}
                                            & signers)]  # fmt: skip
    return len(rows) - len(others), others


def main() -> None:
    p = eval_arg(__doc__.split("\n")[0])
    p.add_argument("--keep", type=Path, help="index here (reused when it exists)")
    p.add_argument("--write", action="store_true", help="write the result to docs/BENCHMARKS.md")
    p.add_argument(
        "--debian", type=int, metavar="N",
        help="also N changelogs of this machine's packages (/usr/share/doc), held out",
    )  # fmt: skip
    a = p.parse_args()
    data = a.eval / "changelogs"
    trailers = [json.loads(x) for x in (data / "trailers.jsonl").read_text("utf-8").splitlines()]
    root = build(data / "corpus", a.keep)
    idx = api.Index.for_root(root)
    results = {w: measure(idx, trailers, w) for w in ("tune", "held")}
    if a.debian:
        local = Path(tempfile.mkdtemp(prefix="kbx-debian-"))
        skip = {f.stem for f in (data / "corpus").iterdir()}
        got = debian_corpus(Path("/usr/share/doc"), skip, a.debian, local)
        results["debian"] = measure(api.Index.for_root(build(local, local)), got, "all")
        shutil.rmtree(local, ignore_errors=True)
    keys = list(results["tune"])
    heads = {"tune": "tune half", "held": "held-out half", "debian": "this machine's"}
    out = table(["", *(heads[w] for w in results)],
                [[k, *(r[k] for r in results.values())] for k in keys])  # fmt: skip
    people, others = top_people(idx, trailers)
    out += f"\n\nOf the 50 PERSON entities in the most documents, {people} sign an entry;"
    out += " the others: " + ", ".join(others) + "\n"
    print(out)
    if a.write:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO
        ).stdout.strip()
        debian = f" --debian {a.debian}" if a.debian else ""
        section = (
            f"{TITLE}\n\n`.venv/bin/python benchmarks/changelogs.py{debian} --write` "
            f"({date.today()}, {commit}; spaCy en_core_web_sm, GLiNER off)\n\n{out}"
        )
        write_section(REPO / "docs" / "BENCHMARKS.md", TITLE, section, "# Benchmarks\n")
    if a.keep is None:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
