"""What the time limit on a user's pattern costs ``kbx grep``: the ``regex`` module (with
its ``timeout``) against Python's ``re`` (what grep used before) on the same index and the
same patterns, with ripgrep over the same files as the peer.

Each system runs each pattern in turn, ``--repeat`` rounds, the systems alternating within
a round; figures are medians of CPU seconds (``time.process_time`` for the library calls,
the child's user and system time for ripgrep). kbx's two rows differ only in how the
pattern is compiled: a compiled ``re.Pattern`` takes grep's path for kbx's own phrases
(no limit, as every pattern had before), a string the path with the limit. The matches are
checked equal between the two. ripgrep reads the raw files (markup included), so its
counts differ and are shown for scale only.

    python benchmarks/grep_timeout.py --db INDEX.duckdb [--eval ../shared/eval] [--repeat 5]

``--db`` is an index of ``corpora/nodejs`` (copied to a temporary folder and migrated there,
so the original is left as it is); without it the corpus is indexed first (minutes).
"""

from __future__ import annotations

import re
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from common import NODEJS, eval_arg, table

from kbx import api

PATTERNS = [  # (pattern, ignore case): what users grep a docs folder for
    (r"ERR_[A-Z_]+", False),
    (r"CVE-\d{4}-\d+", False),
    (r"(?:readFile|writeFile)Sync", False),
    (r"\bv\d+\.\d+\.\d+\b", False),
    (r"[A-Z][a-z]+Error\b", False),
    (r"security (?:fix|release)", True),
]
RUNAWAY = r"(a|aa)+$"  # backtracks without end on a long run of a's


def kbx_grep(idx: api.Index, pattern, ignore_case: bool):
    t = time.process_time()
    g = api.grep(idx, pattern, ignore_case=ignore_case, max_matches=500)
    return time.process_time() - t, g


def ripgrep(root: Path, pattern: str, ignore_case: bool) -> tuple[float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    args = ["rg", "--count-matches", "--no-filename", *(["-i"] if ignore_case else []), pattern]
    done = subprocess.run([*args, str(root)], capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, sum(int(n) for n in done.stdout.split())


def main() -> None:
    p = eval_arg(__doc__.split("\n\n")[0])
    p.add_argument("--db", type=Path, help="an index of corpora/nodejs (left as it is)")
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    root = (args.eval / NODEJS).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "index.duckdb"
        if args.db:
            shutil.copy(args.db, db)
            idx = api.Index(db, root)
            with idx.writer():  # any writer migrates an older schema
                pass
        else:
            api.index(root, db=db)
            idx = api.Index(db, root)
        times: dict[tuple[str, str], list[float]] = {}
        counts: dict[tuple[str, str], int] = {}
        for _ in range(args.repeat):
            for pattern, icase in PATTERNS:
                flags = re.IGNORECASE if icase else 0
                cpu_re, g_re = kbx_grep(idx, re.compile(pattern, flags), icase)
                cpu_rx, g_rx = kbx_grep(idx, pattern, icase)
                assert [(m.path, m.start_line, m.match) for m in g_re.matches] == [
                    (m.path, m.start_line, m.match) for m in g_rx.matches
                ] and g_re.total == g_rx.total, pattern
                cpu_rg, n_rg = ripgrep(root, pattern, icase)
                for system, cpu, n in (
                    ("kbx grep, re (no limit)", cpu_re, g_re.total),
                    ("kbx grep, regex (limit)", cpu_rx, g_rx.total),
                    ("ripgrep, raw files", cpu_rg, n_rg),
                ):
                    times.setdefault((system, pattern), []).append(cpu)
                    counts[(system, pattern)] = n
        systems = list(dict.fromkeys(s for s, _ in times))
        rows = []
        for pattern, icase in PATTERNS:
            shown = pattern + (" (-i)" if icase else "")
            med = {s: statistics.median(times[(s, pattern)]) for s in systems}
            rows.append(
                [
                    f"`{shown}`",
                    *(f"{med[s] * 1000:.1f} ({counts[(s, pattern)]})" for s in systems),
                    f"{med[systems[1]] / med[systems[0]]:.2f}",
                ]
            )
        print(table(["pattern", *(f"{s}: CPU ms (matches)" for s in systems), "regex / re"], rows))
        t = time.process_time()
        re.search(RUNAWAY, "a" * 26 + "!")
        took = time.process_time() - t
        hours = took * 1.618 ** (50 - 26) / 3600  # the ways to split the a's: Fibonacci
        print(
            f"\n`{RUNAWAY}` with re on 26 a's and a '!': {took:.2f} CPU s; each a more costs "
            f"1.6 times as much (50 a's: about {hours:.1f} hours)"
        )


if __name__ == "__main__":
    main()
