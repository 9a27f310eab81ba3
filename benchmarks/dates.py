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

Throughput is characters per second over all documents, timing only the recognize/resolve
calls (kbx, median of ``--repeats`` runs) and the ``search_dates`` calls (one run when slow).

Anchors: plain ``search_dates`` scores value F1 ~0.27 here; published value F1 on the
TempEval-3 *test* set: HeidelTime 0.776, SUTime 0.674 (UzZaman et al., SemEval-2013).

Run from the repository root::

    .venv/bin/python benchmarks/dates.py [--eval ../shared/eval]
"""

from __future__ import annotations

import statistics
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

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


@dataclass(frozen=True)
class Doc:
    """One TimeML document: plain text, creation time and gold TIMEX3s (DCT excluded)."""

    name: str
    text: str
    dct: datetime
    gold: tuple[Span, ...]


Predictor = Callable[[Doc], list[Span]]


# --- data ------------------------------------------------------------------------------------


def parse_tml(path: Path) -> Doc:
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
    return Doc(path.stem, "".join(parts), dct, tuple(gold))


def load_docs(eval_dir: Path) -> list[Doc]:
    """All ``.tml`` documents of the training set, sorted by path."""
    return [parse_tml(p) for p in sorted((eval_dir / DATA).rglob("*.tml"))]


# --- systems ---------------------------------------------------------------------------------


def kbx_predictor() -> Predictor:
    """kbx's recognizer plus ``resolve`` against the document creation date."""
    from kbx.recognizers.dates import DateRecognizer
    from kbx.timex import resolve

    recognizer = DateRecognizer()

    def predict(doc: Doc) -> list[Span]:
        (mentions,) = recognizer.recognize([doc.text])
        day = doc.dct.date()
        return [
            Span(m.start, m.end, m.type, resolve(m.value, day), doc.text[m.start : m.end])
            for m in mentions
        ]

    return predict


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
    """Predictions for every document and the seconds spent in ``predict`` alone."""
    out: list[list[Span]] = []
    spent = 0.0
    for doc in docs:
        t = time.perf_counter()
        spans = predict(doc)
        spent += time.perf_counter() - t
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


def fmt(v: object) -> object:
    """``table`` cell, with undefined ratios shown as a dash."""
    return "–" if isinstance(v, float) and v != v else v


def top_table(title: str, headers: Sequence[str], counts: Counter[tuple[str, str, str]]) -> str:
    rows = [[*(" ".join(x.split()) for x in key), n] for key, n in counts.most_common(TOP)]
    return f"{title} ({sum(counts.values())} in all)\n\n" + table((*headers, "n"), rows, right=3)


# --- main ------------------------------------------------------------------------------------


def main() -> None:
    p = eval_arg(__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3, help="kbx timing runs (median)")
    p.add_argument("--no-kbx", action="store_true", help="run the dateparser baseline only")
    args = p.parse_args()

    docs = load_docs(args.eval)
    n_gold = sum(len(d.gold) for d in docs)
    chars = sum(len(d.text) for d in docs)
    print(
        f"documents: {len(docs)} (expected {EXPECTED_DOCS}); TIMEX3 without creation "
        f"times: {n_gold} (expected {EXPECTED_TIMEX}); characters: {chars:,}"
    )
    kinds = Counter(g.type for d in docs for g in d.gold)
    print("gold by type: " + ", ".join(f"{k} {kinds[k]}" for k in TYPES) + "\n")

    results: dict[str, tuple[dict[str, Tally], Errors, float]] = {}
    unlocated: Counter[str] = Counter()
    preds, secs = timed_runs(dateparser_predictor(unlocated), docs, 3, SLOW_S)
    results["dateparser"] = (*score(docs, preds), secs)
    if sum(unlocated.values()):
        print(f"dateparser substrings not found in the text: {sum(unlocated.values())}\n")
    if not args.no_kbx:
        preds, secs = timed_runs(kbx_predictor(), docs, args.repeats)
        results["kbx"] = (*score(docs, preds), secs)

    rows = [r for name, (t, _, _) in results.items() for r in score_rows(name, t)]
    print(table(SCORE_HEADERS, [[fmt(v) for v in r] for r in rows], right=2) + "\n")

    base = chars / results["dateparser"][2]
    speed = [
        [name, f"{s:.2f}", f"{chars / s:,.0f}", f"{chars / s / base:.1f}x"]
        for name, (_, _, s) in results.items()
    ]
    print(table(("system", "seconds", "chars/s", "vs dateparser"), speed) + "\n")

    if "kbx" in results:
        errors = results["kbx"][1]
        print(
            top_table(
                "kbx value errors", ("gold text", "gold value", "kbx value"), errors.wrong_value
            )
            + "\n"
        )
        print(top_table("kbx misses", ("gold text", "type", "value"), errors.missed) + "\n")
        print(top_table("kbx spurious", ("text", "type", "kbx value"), errors.spurious))


if __name__ == "__main__":
    main()
