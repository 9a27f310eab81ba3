"""Date/time recognition on TempEval-3 training data: kbx's recognizer vs dateparser.

What is compared, in one run, on the TempEval-3 training set (TimeBank + AQUAINT, TimeML
``.tml`` files under ``<eval>/tempeval3/tbaq-cleaned``; 256 documents, 1,822 TIMEX3s
besides the document creation times):

- **kbx**: ``DateRecognizer().recognize([text])`` over each document's whole plain text, then
  ``resolve(mention.value, dct)`` turns each mention's value into a TIMEX3 value, given the
  document creation time (DCT).
- **dateparser**: plain ``dateparser.search_dates`` (English, ``RELATIVE_BASE`` = the DCT).
  Each returned substring is located in the text in order (searching forward from the previous
  match); every hit is typed DATE and valued ``YYYY-MM-DD``.

How: the plain text is the ``<TEXT>`` element with all tags removed (text kept exactly,
newlines included); gold spans are the TIMEX3s in it, as character offsets into that text.
The DCT (``functionInDocument="CREATION_TIME"``, inside ``<DCT>``) is neither gold nor scored.
Scores, per system, overall and by gold type (DATE, TIME, DURATION, SET):

- relaxed span P/R/F1: a prediction overlapping a gold span counts (one-to-one greedy
  matching, largest overlap first);
- strict span P/R/F1: exactly the same offsets;
- value F1: a relaxed match counts only if the predicted value equals the gold TIMEX3 value
  (precision over all predictions, recall over all gold);
- by type: recall over gold of that type, precision over predictions of that type.

By source: the same scores on TimeBank (183 documents) and AQUAINT (73), as shipped and
"tuned on one half, tested on the other": tuning keeps, of the recognizer's patterns, those
whose removal would not raise value F1 on the tuning half (greedy, one pattern at a time), so
a pattern that helps one half only shows up as dropped there and as a loss on the other.

Error lists, most frequent first: misses (gold TIMEX3s no prediction overlaps) and value
errors (overlapped, wrong value), grouped by gold type and pattern shape (digits as 9, month
names as MONTH, weekdays as DAY, number words as NUM, other words kept), each with an example.

Throughput is characters per CPU second over all documents, timing only the
recognize/resolve calls (kbx, median of ``--repeats`` runs) and the ``search_dates`` calls
(one run when slow); CPU seconds, as the machine is shared.

Anchors: plain ``search_dates`` scores value F1 ~0.27 here; published value F1 on the
TempEval-3 *test* set: HeidelTime 0.776, SUTime 0.674 (UzZaman et al., SemEval-2013).

Run from the repository root::

    .venv/bin/python benchmarks/dates.py [--eval ../shared/eval] [--before DIR] [--nodejs]

The prefilter (a unit with no date-like word, year, slashed date or clock time is not
scanned) is proved on the documents, on their paragraphs and, with ``--nodejs``, on the
units of a fresh rules-only index of ``corpora/nodejs``: the same mentions with and without
it, with the seconds each way beside plain ``search_dates`` on a sample of the same units.

``--before DIR`` runs another version side by side (``DIR/dates.py`` and ``DIR/timex.py``,
e.g. from ``git show HEAD:recognizers/dates.py``), as system "kbx before".
"""

from __future__ import annotations

import importlib.util
import re
import statistics
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import eval_arg, relaxed_match, table  # noqa: E402

DATA = Path("tempeval3") / "tbaq-cleaned"
TYPES = ("DATE", "TIME", "DURATION", "SET")
EXPECTED_DOCS = 256
EXPECTED_TIMEX = 1822
SLOW_S = 10.0  # a dateparser run slower than this is not repeated
TOP = 15


@dataclass(frozen=True)
class Span:
    """A temporal expression: character offsets (end exclusive), TIMEX3 type and value."""

    start: int
    end: int
    type: str
    value: str | None
    text: str
    kind: str = ""  # the recognizer's pattern that found it, where it says


@dataclass(frozen=True)
class Doc:
    """One TimeML document: plain text, creation time and gold TIMEX3s (DCT excluded)."""

    name: str
    text: str
    dct: datetime
    gold: tuple[Span, ...]
    source: str = ""  # TimeBank or AQUAINT


Predictor = Callable[[Doc], list[Span]]


# --- data ------------------------------------------------------------------------------------


def parse_tml(path: Path, source: str = "") -> Doc:
    """Plain text of ``<TEXT>``, its TIMEX3 spans, and the document creation time."""
    root = ET.parse(path).getroot()
    dct_el = root.find("DCT/TIMEX3[@functionInDocument='CREATION_TIME']")
    if dct_el is None:
        raise ValueError(f"{path}: no creation time")
    text_el = root.find("TEXT")
    if text_el is None:
        raise ValueError(f"{path}: no <TEXT>")
    parts: list[str] = []
    gold: list[Span] = []
    size = 0

    def add(s: str | None) -> None:
        nonlocal size
        if s:
            parts.append(s)
            size += len(s)

    def walk(el: ET.Element) -> None:
        start = size
        add(el.text)
        for child in el:
            walk(child)
            add(child.tail)
        if el.tag == "TIMEX3" and el.get("functionInDocument") != "CREATION_TIME":
            text = "".join(parts)[start:size]
            gold.append(Span(start, size, el.get("type", ""), el.get("value"), text))

    walk(text_el)
    dct = datetime.fromisoformat(dct_el.get("value", ""))
    gold.sort(key=lambda s: (s.start, s.end))
    return Doc(path.stem, "".join(parts), dct, tuple(gold), source)


def load_docs(eval_dir: Path) -> list[Doc]:
    """All ``.tml`` documents of the training set, sorted by path, each with its source (the
    folder under the data set: TimeBank or AQUAINT)."""
    root = eval_dir / DATA
    return [parse_tml(p, p.relative_to(root).parts[0]) for p in sorted(root.rglob("*.tml"))]


# --- systems ---------------------------------------------------------------------------------


def kbx_predictor(module: ModuleType | None = None) -> Predictor:
    """kbx's recognizer (or another version's ``module``), each mention resolved by the
    recognizer's ``resolve`` against the document creation date; with the pattern that
    found it where the module says (``candidates``)."""
    if module is None:
        from kbx.recognizers import dates as module
    recognizer = module.DateRecognizer()
    found = getattr(module, "candidates", None)

    def predict(doc: Doc) -> list[Span]:
        if found is None:
            (mentions,) = recognizer.recognize([doc.text])
            pairs = [("", m) for m in mentions]
        else:
            pairs = list(found(doc.text))
        day = doc.dct.date()
        return [
            Span(m.start, m.end, m.type, recognizer.resolve(m.value, day), m.text, kind)
            for kind, m in pairs
        ]

    return predict


def load_version(folder: Path) -> ModuleType:
    """Another version of the recognizer: ``folder/dates.py`` importing ``folder/timex.py``
    as ``kbx.timex`` (restored afterwards), so both run in one process."""
    import kbx.timex as saved

    def load(name: str, path: Path) -> ModuleType:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise SystemExit(f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module

    try:
        load("kbx.timex", folder / "timex.py")
        return load("kbx_dates_before", folder / "dates.py")
    finally:
        sys.modules["kbx.timex"] = saved


def locate(text: str, found: Sequence[tuple[str, datetime]]) -> tuple[list[Span], int]:
    """Spans of ``search_dates`` results, found in order; also the count not found."""
    spans: list[Span] = []
    missing = 0
    pos = 0
    for sub, when in found:
        i = text.find(sub, pos)
        if i < 0:
            missing += 1
            continue
        pos = i + len(sub)
        spans.append(Span(i, pos, "DATE", when.strftime("%Y-%m-%d"), sub))
    return spans, missing


def dateparser_predictor(unlocated: Counter[str]) -> Predictor:
    """Plain ``dateparser.search_dates``; counts substrings it could not locate."""
    from dateparser.search import search_dates

    def predict(doc: Doc) -> list[Span]:
        found = search_dates(doc.text, languages=["en"], settings={"RELATIVE_BASE": doc.dct})
        spans, missing = locate(doc.text, found or [])
        unlocated[doc.name] = missing
        return spans

    return predict


def run_system(predict: Predictor, docs: Sequence[Doc]) -> tuple[list[list[Span]], float]:
    """Predictions for every document and the CPU seconds spent in ``predict`` alone (CPU,
    not wall: the machine is shared, and a loaded one stretches wall time unevenly)."""
    out: list[list[Span]] = []
    spent = 0.0
    for doc in docs:
        t = time.process_time()
        spans = predict(doc)
        spent += time.process_time() - t
        out.append(spans)
    return out, spent


def timed_runs(
    predict: Predictor, docs: Sequence[Doc], repeats: int, slow_s: float = float("inf")
) -> tuple[list[list[Span]], float]:
    """Predictions of the first run and the median seconds over up to ``repeats`` runs
    (just one if the first takes longer than ``slow_s``)."""
    preds, first = run_system(predict, docs)
    times = [first]
    if first <= slow_s:
        times += [run_system(predict, docs)[1] for _ in range(repeats - 1)]
    return preds, statistics.median(times)


# --- matching and scores ---------------------------------------------------------------------


@dataclass
class Tally:
    """Counts behind P/R/F1 for one row (a system overall, or one type)."""

    n_gold: int = 0
    n_pred: int = 0
    gold_relaxed: int = 0  # gold spans matched (recall numerators)
    gold_strict: int = 0
    gold_value: int = 0
    pred_relaxed: int = 0  # predictions matched (precision numerators)
    pred_strict: int = 0
    pred_value: int = 0
    type_ok: int = 0  # relaxed matches whose predicted type equals the gold type


def prf(p_num: int, n_pred: int, r_num: int, n_gold: int) -> tuple[float, float, float]:
    p = p_num / n_pred if n_pred else float("nan")
    r = r_num / n_gold if n_gold else float("nan")
    f = 2 * p * r / (p + r) if n_pred and n_gold and p + r else 0.0
    return p, r, f


@dataclass
class Errors:
    """What to look at next: wrong values, misses and spurious predictions."""

    wrong_value: Counter[tuple[str, str, str]]
    missed: Counter[tuple[str, str, str]]
    spurious: Counter[tuple[str, str, str]]


def score(docs: Sequence[Doc], preds: Sequence[Sequence[Span]]) -> tuple[dict[str, Tally], Errors]:
    """Tallies overall (key "all") and per type, and the error counters."""
    tallies = {k: Tally() for k in ("all", *TYPES)}
    errors = Errors(Counter(), Counter(), Counter())
    for doc, pred in zip(docs, preds, strict=True):
        match = relaxed_match(doc.gold, pred)
        strict = Counter((p.start, p.end) for p in pred)
        for gi, g in enumerate(doc.gold):
            rows = [tallies["all"], tallies[g.type]]
            exact = strict[(g.start, g.end)] > 0
            strict[(g.start, g.end)] -= exact
            p = pred[match[gi]] if gi in match else None
            for t in rows:
                t.n_gold += 1
                t.gold_relaxed += p is not None
                t.gold_strict += exact
                t.gold_value += p is not None and p.value == g.value
                t.type_ok += p is not None and p.type == g.type
            if p is None:
                errors.missed[(g.text, g.type, str(g.value))] += 1
            elif p.value != g.value:
                errors.wrong_value[(g.text, str(g.value), str(p.value))] += 1
        score_predictions(doc, pred, match, tallies, errors)
    return tallies, errors


def score_predictions(
    doc: Doc,
    pred: Sequence[Span],
    match: dict[int, int],
    tallies: dict[str, Tally],
    errors: Errors,
) -> None:
    """Precision numerators: each prediction counted under "all" and its own type."""
    matched = {pi: doc.gold[gi] for gi, pi in match.items()}
    gold_spans = Counter((g.start, g.end) for g in doc.gold)
    for pi, p in enumerate(pred):
        g = matched.get(pi)
        exact = gold_spans[(p.start, p.end)] > 0
        gold_spans[(p.start, p.end)] -= exact
        for key in {"all", p.type}:
            t = tallies.setdefault(key, Tally())
            t.n_pred += 1
            t.pred_relaxed += g is not None
            t.pred_strict += exact
            t.pred_value += g is not None and p.value == g.value
        if g is None:
            errors.spurious[(p.text, p.type, str(p.value))] += 1


def score_rows(system: str, tallies: dict[str, Tally]) -> list[list[object]]:
    """Table rows: overall, then each gold type."""
    rows: list[list[object]] = []
    for key in ("all", *TYPES):
        t = tallies[key]
        rp, rr, rf = prf(t.pred_relaxed, t.n_pred, t.gold_relaxed, t.n_gold)
        sp, sr, sf = prf(t.pred_strict, t.n_pred, t.gold_strict, t.n_gold)
        vp, vr, vf = prf(t.pred_value, t.n_pred, t.gold_value, t.n_gold)
        type_acc = t.type_ok / t.gold_relaxed if t.gold_relaxed else float("nan")
        rows.append([system, key, t.n_gold, t.n_pred, rp, rr, rf, sp, sr, sf, vp, vr, vf, type_acc])
    return rows


SCORE_HEADERS = (
    "system",
    "type",
    "gold",
    "pred",
    "relaxed P",
    "relaxed R",
    "relaxed F1",
    "strict P",
    "strict R",
    "strict F1",
    "value P",
    "value R",
    "value F1",
    "type acc",
)


# --- by source: as shipped, and tuned on one half --------------------------------------------


def value_f1(docs: Sequence[Doc], preds: Sequence[Sequence[Span]]) -> float:
    t = score(docs, preds)[0]["all"]
    return prf(t.pred_value, t.n_pred, t.gold_value, t.n_gold)[2]


def without(preds: Sequence[Sequence[Span]], dropped: set[str]) -> list[list[Span]]:
    return [[p for p in ps if p.kind not in dropped] for ps in preds]


def tune(docs: Sequence[Doc], preds: Sequence[Sequence[Span]]) -> set[str]:
    """The patterns to drop for the best value F1 on ``docs``: greedily, the one whose
    removal raises it most, until none does."""
    dropped: set[str] = set()
    best = value_f1(docs, preds)
    kinds = {p.kind for ps in preds for p in ps}
    while True:
        gains = {k: value_f1(docs, without(preds, dropped | {k})) for k in kinds - dropped}
        kind = max(gains, key=lambda k: (gains[k], k), default=None)
        if kind is None or gains[kind] <= best:
            return dropped
        dropped.add(kind)
        best = gains[kind]


SOURCES = ("TimeBank", "AQUAINT")
SPLIT_HEADERS = (
    "system",
    "tuned on",
    "tested on",
    "patterns dropped",
    "gold",
    "value P",
    "value R",
    "value F1",
    "extent P",
    "extent R",
    "extent F1",
    "strict F1",
)


def split_rows(
    system: str, docs: Sequence[Doc], preds: Sequence[Sequence[Span]]
) -> list[list[object]]:
    """Scores on each source and on all, as shipped; then, where predictions carry their
    pattern, tuned on each source (and on all) and tested on the other (and on itself)."""
    halves = {src: [i for i, d in enumerate(docs) if d.source == src] for src in SOURCES}
    halves["all"] = list(range(len(docs)))

    def row(tuned: str, tested: str, dropped: set[str]) -> list[object]:
        idx = halves[tested]
        part = [docs[i] for i in idx]
        t = score(part, without([preds[i] for i in idx], dropped))[0]["all"]
        vp, vr, vf = prf(t.pred_value, t.n_pred, t.gold_value, t.n_gold)
        rp, rr, rf = prf(t.pred_relaxed, t.n_pred, t.gold_relaxed, t.n_gold)
        sf = prf(t.pred_strict, t.n_pred, t.gold_strict, t.n_gold)[2]
        shown = ", ".join(sorted(dropped)) or "–"
        return [system, tuned, tested, shown, t.n_gold, vp, vr, vf, rp, rr, rf, sf]

    rows = [row("as shipped", tested, set()) for tested in (*SOURCES, "all")]
    if all(p.kind for ps in preds for p in ps):
        for tuned, tests in (("TimeBank", SOURCES), ("AQUAINT", SOURCES[::-1]), ("all", ["all"])):
            idx = halves[tuned]
            dropped = tune([docs[i] for i in idx], [preds[i] for i in idx])
            rows += [row(tuned, tested, dropped) for tested in tests]
    return rows


# --- error lists by shape ----------------------------------------------------------------------

_SHAPES = (
    (
        re.compile(
            r"\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
            r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?"
        ),
        "MONTH",
    ),
    (re.compile(r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b"), "DAY"),
    (
        re.compile(
            r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
            r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|"
            r"sixty|seventy|eighty|ninety|hundred)\b"
        ),
        "NUM",
    ),
)


def shape(text: str) -> str:
    """A pattern shape: ``Oct. 23, 1998`` is ``MONTH 99, 9999``; ``two years ago`` is
    ``NUM years ago``."""
    out = re.sub(r"\d", "9", " ".join(text.lower().split()))
    for rx, name in _SHAPES:
        out = rx.sub(name, out)
    return out


def by_shape(
    docs: Sequence[Doc], preds: Sequence[Sequence[Span]]
) -> tuple[Counter[tuple[str, str]], Counter[tuple[str, str]], dict[tuple[str, str], str]]:
    """Misses and value errors counted by (gold type, shape), and an example of each."""
    missed: Counter[tuple[str, str]] = Counter()
    wrong: Counter[tuple[str, str]] = Counter()
    example: dict[tuple[str, str], str] = {}
    for doc, pred in zip(docs, preds, strict=True):
        match = relaxed_match(doc.gold, pred)
        for gi, g in enumerate(doc.gold):
            p = pred[match[gi]] if gi in match else None
            if p is not None and p.value == g.value:
                continue
            key = (g.type, shape(g.text))
            (missed if p is None else wrong)[key] += 1
            text = " ".join(g.text.split())
            got = "" if p is None else f" → {p.value} ({' '.join(p.text.split())!r})"
            example.setdefault(key, f"{text!r} {g.value}{got} [{doc.name}]")
    return missed, wrong, example


def shape_table(
    title: str, counts: Counter[tuple[str, str]], example: dict[tuple[str, str], str], top: int
) -> str:
    by_type = Counter({t: 0 for t in TYPES})
    for (t, _), n in counts.items():
        by_type[t] += n
    head = ", ".join(f"{t} {n}" for t, n in by_type.most_common())
    rows = [[t, sh, n, example[(t, sh)]] for (t, sh), n in counts.most_common(top)]
    return f"{title} ({sum(counts.values())} in all: {head}; {len(counts)} shapes)\n\n" + table(
        ("type", "shape", "n", "example (gold text, gold value → kbx) [document]"), rows, 2
    )


def fmt(v: object) -> object:
    """``table`` cell, with undefined ratios shown as a dash."""
    return "–" if isinstance(v, float) and v != v else v


def top_table(title: str, headers: Sequence[str], counts: Counter[tuple[str, str, str]]) -> str:
    rows = [[*(" ".join(x.split()) for x in key), n] for key, n in counts.most_common(TOP)]
    return f"{title} ({sum(counts.values())} in all)\n\n" + table((*headers, "n"), rows, right=3)


# --- the prefilter, on units ------------------------------------------------------------------


def nodejs_units(eval_dir: Path) -> list[str]:
    """The units of a fresh rules-only kbx index of ``corpora/nodejs``, as stored."""
    import tempfile

    import duckdb
    from common import build_kbx

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "nodejs.duckdb"
        build_kbx(eval_dir / "corpora" / "nodejs", db, "snowball")
        con = duckdb.connect(str(db), read_only=True)
        try:
            return [t for (t,) in con.execute("SELECT text FROM units ORDER BY unit_id").fetchall()]
        finally:
            con.close()


def paragraphs(docs: Sequence[Doc]) -> list[str]:
    """The documents cut at blank lines: unit-sized texts, as an index would run them."""
    return [p for d in docs for p in re.split(r"\n\s*\n", d.text) if p.strip()]


def _found(run: Callable[[str], object], texts: Sequence[str]) -> tuple[list[list], float]:
    """Each text's mentions as tuples, and the CPU seconds it took."""
    t = time.process_time()
    out = [[(k, m.start, m.end, m.type, m.value) for k, m in run(x)] for x in texts]
    return out, time.process_time() - t


def prefilter_row(
    name: str,
    texts: Sequence[str],
    repeats: int,
    before: ModuleType | None,
    sample: int,
    dateparser: bool,
) -> list[object]:
    """Units, units the prefilter skips, mentions with and without it (and whether they are
    the same), the median CPU seconds of each way and of another version (the ways taken
    in turn, ``repeats`` times), and plain ``search_dates`` on a sample of the units, scaled
    by characters."""
    from kbx.recognizers import dates

    ways: dict[str, Callable[[str], object]] = {
        "with": lambda x: list(dates.candidates(x)),
        "without": lambda x: list(dates.candidates(x, prefilter=False)),
    }
    if before:
        ways["before"] = lambda x: list(before.candidates(x))
    found: dict[str, list[list]] = {}
    seconds: dict[str, list[float]] = {way: [] for way in ways}
    for _ in range(repeats):
        for way, run in ways.items():
            found[way], s = _found(run, texts)
            seconds[way].append(s)
    with_pf, without = found["with"], found["without"]
    s_with, s_without = (statistics.median(seconds[w]) for w in ("with", "without"))
    s_before = statistics.median(seconds["before"]) if before else None
    skipped = sum(1 for x in texts if len(x.lower()) == len(x) and not dates._has_key(x.lower()))
    chars = sum(map(len, texts))
    s_dp = None
    if dateparser:
        import random

        from dateparser.search import search_dates

        picked = random.Random(7).sample(list(texts), min(sample, len(texts)))
        t = time.process_time()
        for x in picked:
            search_dates(x, languages=["en"])
        s_dp = (time.process_time() - t) / sum(map(len, picked)) * chars
    return [
        name,
        len(texts),
        f"{chars:,}",
        skipped,
        sum(map(len, with_pf)),
        "yes" if with_pf == without else "NO",
        f"{s_with:.2f}",
        f"{s_without:.2f}",
        f"{s_before:.2f}" if s_before is not None else "–",
        f"{s_dp:.1f}" if s_dp is not None else "–",
        f"{s_dp / s_with:.0f}x" if s_dp is not None else "–",
    ]


PREFILTER_HEADERS = (
    "units",
    "n",
    "characters",
    "skipped by the prefilter",
    "mentions",
    "same without it",
    "CPU s with",
    "CPU s without",
    "CPU s before",
    "search_dates CPU s (sample, scaled)",
    "with / search_dates",
)


# --- main ------------------------------------------------------------------------------------


def main() -> None:
    p = eval_arg(__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3, help="kbx timing runs (median)")
    p.add_argument("--no-kbx", action="store_true", help="run the dateparser baseline only")
    p.add_argument(
        "--no-dateparser", action="store_true", help="skip the baseline (no speed ratio)"
    )
    p.add_argument(
        "--before",
        type=Path,
        help="a folder with another version's dates.py and timex.py, run side by side",
    )
    p.add_argument("--top", type=int, default=TOP, help="rows of each error list")
    p.add_argument(
        "--nodejs",
        action="store_true",
        help="also index corpora/nodejs (rules only) and run the prefilter check on its units",
    )
    p.add_argument("--sample", type=int, default=400, help="units search_dates runs on")
    args = p.parse_args()

    docs = load_docs(args.eval)
    n_gold = sum(len(d.gold) for d in docs)
    chars = sum(len(d.text) for d in docs)
    print(
        f"documents: {len(docs)} (expected {EXPECTED_DOCS}); TIMEX3 without creation "
        f"times: {n_gold} (expected {EXPECTED_TIMEX}); characters: {chars:,}"
    )
    kinds = Counter(g.type for d in docs for g in d.gold)
    print("gold by type: " + ", ".join(f"{k} {kinds[k]}" for k in TYPES))
    sources = Counter(d.source for d in docs)
    golds = Counter(d.source for d in docs for _ in d.gold)
    print(
        "by source: "
        + ", ".join(f"{s} {sources[s]} documents, {golds[s]} TIMEX3" for s in SOURCES)
        + "\n"
    )

    systems: dict[str, Predictor] = {}
    unlocated: Counter[str] = Counter()
    if not args.no_dateparser:
        systems["dateparser"] = dateparser_predictor(unlocated)
    before = load_version(args.before) if args.before else None
    if before:
        systems["kbx before"] = kbx_predictor(before)
    if not args.no_kbx:
        systems["kbx"] = kbx_predictor()
    results: dict[str, tuple[dict[str, Tally], Errors, float]] = {}
    predictions: dict[str, list[list[Span]]] = {}
    for name, predict in systems.items():
        slow = SLOW_S if name == "dateparser" else float("inf")
        preds, secs = timed_runs(predict, docs, 3 if name == "dateparser" else args.repeats, slow)
        results[name] = (*score(docs, preds), secs)
        predictions[name] = preds
    if sum(unlocated.values()):
        print(f"dateparser substrings not found in the text: {sum(unlocated.values())}\n")

    rows = [r for name, (t, _, _) in results.items() for r in score_rows(name, t)]
    print(table(SCORE_HEADERS, [[fmt(v) for v in r] for r in rows], right=2) + "\n")

    base = chars / results["dateparser"][2] if "dateparser" in results else None
    speed = [
        [name, f"{s:.2f}", f"{chars / s:,.0f}", f"{chars / s / base:.1f}x" if base else "–"]
        for name, (_, _, s) in results.items()
    ]
    print(table(("system", "CPU seconds", "chars/CPU s", "vs dateparser"), speed) + "\n")

    split = [r for name, preds in predictions.items() for r in split_rows(name, docs, preds)]
    print("By source (value: relaxed match with the gold value; extent: relaxed overlap)\n")
    print(table(SPLIT_HEADERS, [[fmt(v) for v in r] for r in split], right=4) + "\n")

    if "kbx" in results:
        missed, wrong, example = by_shape(docs, predictions["kbx"])
        print(
            shape_table(
                "kbx recall errors (gold no prediction overlaps)", missed, example, args.top
            )
        )
        print()
        print(shape_table("kbx value errors (overlapped, wrong value)", wrong, example, args.top))
        print()
        errors = results["kbx"][1]
        print(top_table("kbx spurious", ("text", "type", "kbx value"), errors.spurious))

        sets = [("TempEval-3 training, documents", [d.text for d in docs], False)]
        sets.append(("TempEval-3 training, paragraphs", paragraphs(docs), True))
        if args.nodejs:
            sets.append(("Node.js, a rules-only index", nodejs_units(args.eval), True))
        rows = [
            prefilter_row(
                name, texts, args.repeats, before, args.sample, dp and not args.no_dateparser
            )
            for name, texts, dp in sets
        ]
        print("\nThe prefilter: the same mentions with and without it, and the seconds each way\n")
        print(table(PREFILTER_HEADERS, rows, right=1))


if __name__ == "__main__":
    main()
