"""Serving: warm search latency through ``kbx serve`` (HTTP and MCP) beside a ``kbx search``
process and FTS5 in process, throughput under concurrent clients, and the server's memory.

What runs, on a copy of the Node.js corpus indexed with the rule-based recognizers:

* **Latency** - the same queries, in one loop that visits every system in turn per query
  (so noise hits all alike): ``GET /api/search`` of a ``kbx serve`` process; the ``search``
  tool over MCP, through the SDK's client, both over stdio (``kbx mcp``, as agent clients
  launch it) and over streamable HTTP (``/mcp`` of the same server); ``kbx search Q
  --json`` as a fresh process (on every ``--cli-every``-th query: each costs a start);
  ``serve.commands.search`` in this process on a warm index (the work without the
  transport); and FTS5 top 8 over the same unit texts (an in-memory table). Each system
  does what ``kbx search --json`` does (k=8, exact phrase matches, facets), and HTTP once
  more without facets (``facets=0``); FTS5 its bare ranking. Queries are drawn with a
  fixed seed from the corpus vocabulary, one-word and two-to-three-word sets apart: a
  query of several words adds the exact-phrase pass.
  After a warm-up pass, each query's latency is the median of ``--repeat`` runs; the table
  gives p50 and p90 over queries, in milliseconds.
* **Throughput** - ``--clients`` threads, each with its own HTTP connection, searching
  the mixed query set for ``--seconds``: requests per second, p50 and p99, errors.
* **Memory** - the server's resident set: started and idle, after ``--searches`` searches,
  after as many again (growth between the two is what a leak would show), and after the
  throughput run.

    .venv/bin/python benchmarks/serve.py [--eval ../shared/eval] [--seconds 60] [--clients 8]

A script, not a test: it asserts nothing about speed.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import httpx
import psutil
from common import KBX_BIN, NODEJS, REPO, build_kbx, eval_arg, fts5_or_query, percentile, table
from common import write_section as write_doc_section
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from serve_parts import parts

from kbx import api
from kbx.serve import commands
from kbx.serve.live import LiveIndex

SEED = 20261201
READING = (
    "The aim (issue 16) is an HTTP p50 under 10 ms and at least 20x faster than the CLI "
    "process. What the server saves is the process start, imports and opening the file; "
    "the rest is the search itself: the ranking, each hit's text, the facets (the "
    "`facets=0` row) and, for queries of several words, the exact-phrase pass over the "
    "units that index the phrase's words. FTS5's bare ranking is the floor. A server's "
    "figures are only as good as the search path beneath it; the load average above says "
    "how far to trust its milliseconds.\n"
)
NAMES = (  # the systems timed on every query, in the order they run
    "HTTP GET /api/search",
    "HTTP GET /api/search, facets=0 (less work)",
    "MCP search, stdio (kbx mcp)",
    "MCP search, HTTP (/mcp)",
    "the same call in process (warm index)",
    "FTS5 top 8 in process (bare ranking)",
)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def queries(texts: list[str], n: int) -> dict[str, list[str]]:
    """``n`` one-word and ``n`` two-to-three-word queries from the words (3+ letters) found
    in at least two units."""
    df: dict[str, int] = {}
    for t in texts:
        for w in set(re.findall(r"[a-z]{3,}", t.lower())):
            df[w] = df.get(w, 0) + 1
    vocab = sorted(w for w, c in df.items() if c >= 2)
    rng = random.Random(SEED)
    return {
        f"1 word ({n})": [rng.choice(vocab) for _ in range(n)],
        f"2-3 words ({n})": [" ".join(rng.sample(vocab, rng.randint(2, 3))) for _ in range(n)],
    }


class Server:
    """A ``kbx serve`` process on a free port, and its base URL."""

    def __init__(self, root: Path):
        # No watcher (here or in `kbx mcp`): its first pass would run the installed
        # recognizers (spaCy included) over an index built with the rule-based ones,
        # holding the file for minutes.
        self.proc = subprocess.Popen(
            [str(KBX_BIN), "serve", "--port", "0", "--no-watch"],
            cwd=root,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stderr.readline()
        m = re.match(r"kbx serve: (http://\S+)/api", line)
        if not m:
            raise RuntimeError(f"kbx serve did not start: {line}{self.proc.stderr.read()}")
        self.url = m.group(1)
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()  # drain

    def rss_mb(self) -> float:
        return psutil.Process(self.proc.pid).memory_info().rss / 2**20

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


def fts5_of(texts: list[str]) -> Callable[[str], object]:
    con = sqlite3.connect(":memory:", check_same_thread=False)
    con.execute("CREATE VIRTUAL TABLE u USING fts5(text, tokenize='porter unicode61')")
    with con:
        con.executemany("INSERT INTO u(text) VALUES (?)", ((t,) for t in texts))

    def search(q: str) -> object:
        m = fts5_or_query(q)
        sql = "SELECT rowid FROM u WHERE u MATCH ? ORDER BY rank LIMIT 8"
        return con.execute(sql, [m]).fetchall() if m else []

    return search


def ms(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


async def ams(fn) -> float:
    t = time.perf_counter()
    await fn()
    return (time.perf_counter() - t) * 1000


async def latency(server: Server, root: Path, live: LiveIndex, fts5, sets, repeat, cli_every):
    """Per system and query set, each query's median milliseconds over ``repeat`` runs."""
    http = httpx.Client(base_url=server.url, timeout=120)

    def via_http(q: str, **more: str) -> None:
        http.get("/api/search", params={"q": q, **more}).raise_for_status()

    def via_cli(q: str) -> None:
        subprocess.run(
            [str(KBX_BIN), "search", q, "--json"], cwd=root, check=True, stdout=subprocess.DEVNULL
        )

    launch = StdioServerParameters(command=str(KBX_BIN), args=["mcp", "--no-watch"], cwd=root)
    cli = "kbx search --json, a process"
    out: dict[str, dict[str, list[float]]] = {n: {s: [] for s in sets} for n in (*NAMES, cli)}
    with tempfile.TemporaryFile("w+") as errlog:
        async with (
            Client(stdio_client(launch, errlog=errlog)) as stdio,
            Client(f"{server.url}/mcp") as streamed,
        ):

            async def tool(agent: Client, q: str) -> None:
                r = await agent.call_tool("search", {"query": q, "facets": True})
                if r.is_error:
                    raise RuntimeError(r.content[0].text)

            for s, qs in sets.items():
                for i, q in enumerate(qs):
                    runs: dict[str, list[float]] = {n: [] for n in out}
                    for rep in range(repeat + 1):  # the first is the warm-up
                        times = dict(
                            zip(
                                NAMES,
                                [
                                    ms(lambda q=q: via_http(q)),
                                    ms(lambda q=q: via_http(q, facets="0")),
                                    await ams(lambda q=q: tool(stdio, q)),
                                    await ams(lambda q=q: tool(streamed, q)),
                                    ms(lambda q=q: commands.search(live, q)),
                                    ms(lambda q=q: fts5(q)),
                                ],
                                strict=True,
                            )
                        )
                        if i % cli_every == 0 and rep:
                            times[cli] = ms(lambda q=q: via_cli(q))
                        if rep:
                            for n, t in times.items():
                                runs[n].append(t)
                    for n, ts in runs.items():
                        if ts:
                            out[n][s].append(statistics.median(ts))
                log(f"latency: {s} done")
    http.close()
    return out


def searches(url: str, qs: list[str], n: int, clients: int = 2) -> None:
    """``n`` searches, ``clients`` at a time."""
    todo = iter(range(n))
    lock = threading.Lock()

    def client() -> None:
        with httpx.Client(base_url=url, timeout=120) as c:
            while True:
                with lock:
                    i = next(todo, None)
                if i is None:
                    return
                c.get("/api/search", params={"q": qs[i % len(qs)]}).raise_for_status()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def throughput(url: str, qs: list[str], clients: int, seconds: float) -> dict:
    """``clients`` threads searching for ``seconds``: count, latencies, errors."""
    lat: list[float] = []
    errors: list[str] = []
    stop = time.monotonic() + seconds

    def client(k: int) -> None:
        rng = random.Random(SEED + k)
        with httpx.Client(base_url=url, timeout=120) as c:
            while time.monotonic() < stop:
                t = time.perf_counter()
                try:
                    r = c.get("/api/search", params={"q": rng.choice(qs)})
                    if r.status_code != 200:
                        errors.append(f"{r.status_code} {r.text[:120]}")
                except httpx.HTTPError as e:
                    errors.append(repr(e))
                lat.append((time.perf_counter() - t) * 1000)

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - started
    return {"n": len(lat), "wall": wall, "lat": lat, "errors": errors}


def main() -> None:
    p = eval_arg(__doc__.splitlines()[0])
    p.add_argument("--queries", type=int, default=30, help="queries per set")
    p.add_argument("--repeat", type=int, default=2, help="timed runs per query")
    p.add_argument("--cli-every", type=int, default=3, help="time the CLI on every Nth query")
    p.add_argument("--searches", type=int, default=1000, help="searches between memory reads")
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument(
        "--work",
        type=Path,
        help="a folder for the corpus copy and its index "
        "(kept and reused; default: a temporary one)",
    )
    p.add_argument("--out", type=Path, default=REPO / "docs" / "BENCHMARKS.md")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="kbx-serve-") as tmp:
        root = (args.work or Path(tmp)) / "nodejs"
        if not (root / ".kbx" / "index.duckdb").exists():
            shutil.copytree(args.eval.resolve() / NODEJS, root, dirs_exist_ok=True)
            log(f"index: {build_kbx(root, root / '.kbx' / 'index.duckdb', 'snowball'):.0f} s")
        section = run(root, args)
    print(section)
    write_doc_section(args.out, "## Serving (issue 16)", section, "# Benchmarks\n")


def run(root: Path, args) -> str:
    load_start = os.getloadavg()[0]
    live = LiveIndex.of(api.Index.for_root(root))
    with live.reader() as con:
        texts = [t for (t,) in con.execute("SELECT text FROM units ORDER BY unit_id").fetchall()]
    sets = queries(texts, args.queries)
    mixed = [q for qs in sets.values() for q in qs]
    fts5 = fts5_of(texts)
    server = Server(root)
    try:
        time.sleep(2)
        rss = {"started, idle": server.rss_mb()}
        lat = anyio.run(latency, server, root, live, fts5, sets, args.repeat, args.cli_every)
        where = parts(live, sets[next(iter(sets))], args.repeat + 1)
        live.close()
        rss["after the latency runs"] = server.rss_mb()
        for label in ("after", "after another"):
            searches(server.url, sets[next(iter(sets))], args.searches)
            rss[f"{label} {args.searches:,} searches"] = server.rss_mb()
            log(f"memory: {label} {args.searches} searches")
        tp = throughput(server.url, mixed, args.clients, args.seconds)
        rss[f"after {args.seconds:.0f} s of {args.clients} clients"] = server.rss_mb()
    finally:
        server.stop()
    load = (load_start, os.getloadavg()[0])
    return report(args, sets, lat, tp, rss, len(texts), load, where)


def report(args, sets, lat, tp, rss, units, load, where) -> str:
    rows = []
    for name, by_set in lat.items():
        row: list = [name]
        for s in sets:
            v = by_set[s]
            row += [f"{percentile(v, 0.5):.1f}", f"{percentile(v, 0.9):.1f}"] if v else ["-", "-"]
        rows.append(row)
    heads = ["system"] + [f"{s} {q} ms" for s in sets for q in ("p50", "p90")]
    first = next(iter(sets))
    http50, cli50 = (
        percentile(lat["HTTP GET /api/search"][first], 0.5),
        percentile(lat["kbx search --json, a process"][first], 0.5),
    )
    lines = tp["lat"]
    errors = sorted(set(tp["errors"]))[:3]
    return (
        "## Serving (issue 16)\n\n"
        f"`.venv/bin/python benchmarks/serve.py --queries {args.queries} --repeat "
        f"{args.repeat} --clients {args.clients} --seconds {args.seconds:.0f}` on the Node.js "
        f"corpus ({units:,} units, rule-based recognizers; {psutil.cpu_count()} cores shared "
        f"with the clients and whatever else ran: a load average of {load[0]:.1f} at the start, "
        f"{load[1]:.1f} at the end). Every kbx row but `facets=0` does what "
        "`kbx search --json` does: k=8, the exact-phrase pass, facets.\n\n"
        f"### Warm search latency (per-query median of {args.repeat} runs after a warm-up; "
        f"the CLI process on one query in {args.cli_every})\n\n"
        + table(heads, rows)
        + f"\n\nOne-word queries: HTTP p50 {http50:.1f} ms, {cli50 / http50:.1f}x faster than "
        "the `kbx search` process.\n\n"
        f"### Throughput: {args.clients} clients, {args.seconds:.0f} s, the mixed queries\n\n"
        + table(
            ["requests", "requests/s", "p50 ms", "p99 ms", "errors"],
            [
                (
                    len(lines),
                    f"{tp['n'] / tp['wall']:.1f}",
                    f"{percentile(lines, 0.5):.0f}",
                    f"{percentile(lines, 0.99):.0f}",
                    len(tp["errors"]),
                )
            ],
            right=0,
        )
        + ("\n\nErrors seen: " + "; ".join(errors) if errors else "")
        + "\n\n### Where a warm one-word search's time goes (in process, parts timed apart)\n\n"
        + where
        + "\n\n### Server memory (resident set)\n\n"
        + table(["when", "MB"], [(k, f"{v:.0f}") for k, v in rss.items()])
        + "\n\n"
        + READING
    )


if __name__ == "__main__":
    main()
