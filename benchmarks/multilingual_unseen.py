"""Known-item probes on manual pages of a kind ``multilingual.py``'s were not: sections 5
(file formats) and 7 (overviews) of Debian's ``manpages-ja``, ``manpages-zh`` and
``manpages-ru``, and the Korean pages installed (sections 1, 5, 8; Korean is in no tuned
set). Writes ``OUT/corpus/LANG/*.txt`` and ``OUT/probes_LANG.jsonl`` in the layout
``multilingual.py`` reads, made as SOURCE.md of the eval set says: pages rendered with
``MANWIDTH=100 man -l PAGE | col -b``, those under 1,500 characters left out, per page one
span of its body (4-8 Han/Kana characters for ja and zh, three words otherwise) that no
other page of its language holds, chosen with a seed.

    apt-get install manpages-ja manpages-zh manpages-ru
    .venv/bin/python benchmarks/multilingual_unseen.py /tmp/unseen [--reuse]
    .venv/bin/python benchmarks/multilingual.py /tmp/unseen --langs ja,zh,ru,ko
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

SETS = {"ja": ("ja", "57"), "zh": ("zh_CN", "57"), "ru": ("ru", "57"), "ko": ("ko", "158")}
CJK_SPAN = re.compile(r"[\u3041-\u30ff\u4e00-\u9fff]{4,}")


def render(page: Path) -> str:
    env = {**os.environ, "MANWIDTH": "100", "LANG": "C.UTF-8"}
    man = subprocess.run(["man", "-l", str(page)], capture_output=True, env=env, timeout=60)
    col = subprocess.run(["col", "-b"], input=man.stdout, capture_output=True, timeout=60)
    return col.stdout.decode("utf-8", "replace")


def probe(lang: str, text: str, rng: random.Random) -> list[str]:
    """Candidate spans of a page's body, in a random order."""
    body = text[len(text) // 10 :]
    if lang in ("ja", "zh"):
        out = []
        for m in CJK_SPAN.finditer(body):
            n = rng.randint(4, 8)
            if len(m.group()) >= n:
                at = rng.randint(0, len(m.group()) - n)
                out.append(m.group()[at : at + n])
    else:
        words = [w for w in body.split() if re.fullmatch(r"[^\W\d_]{3,}", w)]
        out = [" ".join(words[i : i + 3]) for i in range(len(words) - 2)]
    rng.shuffle(out)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("out", type=Path, help="the folder to write the pages and probes into")
    p.add_argument("--reuse", action="store_true", help="the pages an earlier run rendered")
    args = p.parse_args()
    out, reuse = args.out, args.reuse
    for lang, (folder, sections) in SETS.items():
        pages: dict[str, str] = {}
        if reuse:
            for page in sorted((out / "corpus" / lang).glob("*.txt")):
                pages[page.name] = page.read_text(encoding="utf-8")
        for s in sections if not reuse else ():
            for page in sorted(Path(f"/usr/share/man/{folder}/man{s}").glob("*")):
                text = render(page)
                if len(text) >= 1500:
                    pages[page.name.removesuffix(".gz") + ".txt"] = text
        flat = {k: " ".join(v.split()) for k, v in pages.items()}
        (out / "corpus" / lang).mkdir(parents=True, exist_ok=True)
        probes = []
        for name, text in pages.items():
            (out / "corpus" / lang / name).write_text(text, encoding="utf-8")
            rng = random.Random(name)
            for span in probe(lang, text, rng)[:50]:
                # verbatim in the page (not across a line break), in no other page at all
                if span in text and sum(span in t for t in flat.values()) == 1:
                    probes.append({"lang": lang, "query": span, "answer_path": f"{lang}/{name}"})
                    break
        with open(out / f"probes_{lang}.jsonl", "w", encoding="utf-8") as f:
            f.writelines(json.dumps(p, ensure_ascii=False) + "\n" for p in probes)
        print(f"{lang}: {len(pages)} pages, {len(probes)} probes", file=sys.stderr)


if __name__ == "__main__":
    main()
