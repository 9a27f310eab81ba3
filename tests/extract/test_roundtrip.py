"""The offset map round-trips: every word of every unit is found at the original place it names."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kbx.extract import extract, source_text
from kbx.extract.textmap import locate

WORD = st.from_regex(
    r"[A-Za-z][A-Za-z0-9]{0,9}|[0-9]{1,4}|seL4|ERR_4021|v18\.2\.0|café", fullmatch=True
)
WORDS = st.lists(WORD, min_size=1, max_size=12).map(" ".join)


def _inline(words: str, style: int) -> str:
    return [words, f"**{words}**", f"*{words}*", f"`{words}`", f"[{words}](https://x.org/a)"][style]


MD_BLOCK = st.one_of(
    st.tuples(st.integers(1, 4), WORDS).map(lambda t: "#" * t[0] + " " + t[1]),
    st.lists(st.tuples(WORDS, st.integers(0, 4)), min_size=1, max_size=4).map(
        lambda parts: " ".join(_inline(w, s) for w, s in parts)
    ),
    st.lists(WORDS, min_size=1, max_size=4).map(lambda items: "\n".join(f"- {i}" for i in items)),
    st.lists(WORDS, min_size=1, max_size=4).map(lambda ls: "```\n" + "\n".join(ls) + "\n```"),
    st.lists(st.tuples(WORD, WORD), min_size=1, max_size=4).map(
        lambda rows: "| a | b |\n|---|---|\n" + "\n".join(f"| {x} | {y} |" for x, y in rows)
    ),
    st.lists(WORDS, min_size=2, max_size=4).map(lambda ls: "> " + "\n> ".join(ls)),
    # a list item's continuation indented by a tab, a nested quote, an ordered sub-list
    st.tuples(WORDS, WORDS, st.sampled_from(["\t", "  \t", "    "])).map(
        lambda t: f"- {t[0]}\n{t[2]}{t[1]}\n- {t[1]}"
    ),
    st.tuples(st.integers(1, 25), WORDS).map(lambda t: "> " * t[0] + t[1]),
    st.tuples(WORDS, WORDS).map(lambda t: f"1. {t[0]}\n   1) {t[1]}\n\n   {t[0]}"),
)
HTML_BLOCK = st.one_of(
    st.tuples(st.integers(1, 3), WORDS).map(lambda t: f"<h{t[0]}>{t[1]}</h{t[0]}>"),
    st.tuples(WORDS, WORDS).map(lambda t: f"<p>{t[0]} <b>{t[1]}</b>\n  {t[0]}</p>"),
    st.lists(WORDS, min_size=1, max_size=3).map(
        lambda ls: "<ul>" + "".join(f"<li>{x}</li>" for x in ls) + "</ul>"
    ),
    st.lists(WORDS, min_size=1, max_size=3).map(lambda ls: "<pre>" + "\n".join(ls) + "</pre>"),
)
NEWLINE = st.sampled_from(["\n", "\r\n"])


def _check(path: str, data: bytes) -> None:
    doc = extract(path, data)
    lines = source_text(path, data)[0].replace("\r\n", "\n").split("\n")
    for u in doc.units:
        for (cs, line, col, _, verb), (nxt, line2, col2, _, verb2) in zip(
            u.segments, u.segments[1:], strict=False
        ):  # the builder extends a run that goes on, so a map is never longer than needed
            assert (
                not (verb and verb2 and line == line2 and col2 == col + nxt - cs)
                or "\n" in u.text[cs:nxt]
            ), (cs, nxt)
        start, end = u.lines
        window = "\n".join(lines[start - 1 : end])
        for m in re.finditer(r"\w+", u.text):
            assert m.group() in window, (m.group(), start, end)
            for i in range(m.start(), m.end()):
                p = locate(u.segments, u.text, i, doc.encoding)
                assert lines[p.line - 1][p.col] == u.text[i], (u.text[i], p)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(MD_BLOCK, min_size=1, max_size=12), NEWLINE)
def test_markdown_units_map_back_to_their_words(blocks, nl):
    _check("doc.md", "\n\n".join(blocks).replace("\n", nl).encode())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(HTML_BLOCK, min_size=1, max_size=10))
def test_html_units_map_back_to_their_words(blocks):
    _check("doc.html", ("<html><body>\n" + "\n".join(blocks) + "\n</body></html>").encode())


@settings(max_examples=40, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=30), st.sampled_from(["\n", "\n\n", "\r\n\r\n"]))
def test_text_units_map_back_to_their_words(paragraphs, sep):
    _check("doc.txt", sep.join(paragraphs).encode("utf-8"))
