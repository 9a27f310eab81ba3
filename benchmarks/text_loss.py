"""Text that vanishes or turns to source (issue 42): counts over real files, before/after.

For every LaTeX, PDF and text-like file under the folders given, ``extract`` (what an index's
workers run) and count:

- LaTeX: the source's words (letters, 3 or more, outside comments, not a macro's name nor
  a name in an argument: ``\\begin{itemize}``, ``\\label{sec:x}``) that appear nowhere in
  the clean text ("words lost"); structure macros (``\\section``, ``\\begin``, ``\\item``,
  ``\\def``, ``\\[``) left in prose as raw source; kerning left as text (``-.05em``); files
  whose clean text holds no word of the source's last paragraph ("cut short");
- PDF: pdfium's mark of a hyphen at a line's end, ``\\x02``, left in the units' text;
- every format: mojibake of UTF-8 read as a single-byte code page (``Ã©``, ``KÅ‚oczko``,
  ``â€``) and replacement characters (a code page's byte read as UTF-8).

    python benchmarks/text_loss.py ../shared/eval/formats /tmp/tl

Each file's warnings saying it was partly read as plain text are counted too.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from kbx.errors import ExtractError  # noqa: E402
from kbx.extract.document import extract, format_of  # noqa: E402

_COMMENT = re.compile(r"(?<!\\)%[^\n]*")
# arguments that are names, not text: environments, labels, keys, files
_NAMES = re.compile(
    r"\\(?:begin|end|label|[a-z]*ref|cite[a-z]*|nocite|usepackage|documentclass|input|"
    r"include|includegraphics|bibliography(?:style)?|url|href|hypersetup|newcommand|"
    r"renewcommand|newenvironment|setlength|addtolength|pagestyle|thispagestyle)\*?"
    r"(?:\[[^\]]*\])?\{[^}]*\}"
)
_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}")
_MACRO = re.compile(r"\\(?:(?:sub)*section|chapter|begin|end|item|def|newcommand)\b|\\\[")
_KERN = re.compile(r"-?\.\d+em")
_MOJIBAKE = re.compile("[ÃÅ][\u0080-\u00bf\u2018-\u203a]|â€|Â[\u00a0-\u00bf]")


def _prose(unit) -> str:
    """A unit's text without its inline code (where source is expected)."""
    if unit.kind == "code":
        return ""
    text, out, at = unit.text, [], 0
    for a, b in unit.code_spans:
        out.append(text[at:a])
        at = b
    out.append(text[at:])
    return " ".join(out)


def _latex(src: str, doc, c: Counter) -> None:
    body = _NAMES.sub(" ", _COMMENT.sub("", src))
    begin = body.find("\\begin{document}")
    body = body[begin:] if begin >= 0 else body
    clean = "\n".join(u.text for u in doc.units)
    have = {w.lower() for w in re.findall(r"[A-Za-z]{3,}", clean)}
    words = [w.lower() for w in _WORD.findall(body)]
    c["latex words"] += len(words)
    c["latex words lost"] += sum(w not in have for w in words)
    prose = "\n".join(_prose(u) for u in doc.units)
    c["latex structure macros in prose"] += len(_MACRO.findall(prose))
    c["latex kerning as text"] += len(_KERN.findall(prose))
    paragraphs = [p for p in re.split(r"\n\s*\n", body) if _WORD.search(p)]
    last = {w.lower() for w in _WORD.findall(paragraphs[-1])} if paragraphs else set()
    if last and not last & have:
        c["latex files cut short"] += 1


def measure(folders: list[Path]) -> tuple[Counter, Counter]:
    c: Counter = Counter()
    by_file: Counter = Counter()
    for folder in folders:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            fmt = format_of(path.name)
            if fmt not in ("latex", "pdf", "text", "markdown", "html"):
                continue
            data = path.read_bytes()
            try:
                doc = extract(path.name, data)
            except ExtractError:
                continue
            except Exception as e:  # noqa: BLE001 - what the ingest would read as plain text
                c[f"{fmt} parser errors"] += 1
                print(f"{path}: {type(e).__name__}: {e}", file=sys.stderr)
                continue
            c[f"{fmt} files"] += 1
            text = "\n".join(u.text for u in doc.units)
            c[f"{fmt} clean characters"] += len(text)
            if any(w.startswith("partly read as plain text") for w in doc.warnings):
                c[f"{fmt} files partly read as plain text"] += 1
            if fmt == "latex":
                _latex(data.decode("utf-8", "replace"), doc, c)
                by_file[str(path)] = c["latex words lost"] - sum(by_file.values())
            elif fmt == "pdf":
                c["pdf \\x02 left"] += text.count("\x02")
            c[f"{fmt} mojibake"] += len(_MOJIBAKE.findall(text))
            c[f"{fmt} replacement characters"] += text.count("\ufffd")
    return c, by_file


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--worst", type=int, default=0, help="list the N files losing most words")
    args = ap.parse_args()
    c, by_file = measure(args.folders)
    print("| count | value |\n| --- | ---: |")
    for k in sorted(c):
        print(f"| {k} | {c[k]:,} |")
    for path, n in by_file.most_common(args.worst):
        print(f"{n:6d}  {path}")


if __name__ == "__main__":
    main()
