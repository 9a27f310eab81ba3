"""kbx search's lean text: each hit cites lines and a hash that `kbx read` takes as they are
(first its focus, the lines of its densest matches, then the passage's), headings are not
repeated, snippets are cut around their matches, and --json keeps all."""

from __future__ import annotations

import json
import re

import pytest
from inprocess import run_cli

from kbx.present import EXACT_TEXT, K_TEXT, LEGEND, MARK, shorten

FILLER = " ".join(f"word{i}" for i in range(250))  # a section a passage of its own
GUIDE = f"""# Pump guide

## Priming

Priming the pump needs a full reservoir. {FILLER} The pump primes in a minute.

## Storage

Store the pump dry. {FILLER} A pump stored wet rusts.

### Winter

In winter drain the pump first. {FILLER} Frost cracks a pump casing.
"""
NOTES = "# Field notes\n\nThe pump at the north well failed twice in spring.\n"
VALVE = (  # one passage; the words asked for meet on one line of it, not its first
    "# Valves\n\n"
    + "".join(f"Line {i} says something about the valve in general.\n" for i in range(8))
    + "Close the bleed valve before the tank is filled.\n"
    + "".join(f"Line {i} is filler of no interest.\n" for i in range(8))
)


@pytest.fixture(scope="module")
def pumps(tmp_path_factory):
    root = tmp_path_factory.mktemp("pumps")
    (root / "kbx.toml").write_text('[recognizers]\ndisable = ["spacy", "gliner", "acronyms"]\n')
    (root / "guide.md").write_text(GUIDE)
    (root / "notes.md").write_text(NOTES)
    (root / "valves.md").write_text(VALVE)
    assert run_cli("index", str(root)).returncode == 0
    return root


def _hits(stdout: str) -> list[tuple[str, str, str, str]]:
    """(path, hash, lines, heading) of each hit printed, read back from the text: its lines
    are those it cites first (its focus)."""
    return [(path, sha, focus, head) for path, sha, focus, _, head in _cited(stdout)]


def _cited(stdout: str) -> list[tuple[str, str, str, str, str]]:
    """(path, hash, focus, passage lines, heading) of each hit printed: ``53 (49-53)
    heading``, or ``49-53 heading`` where the focus is the whole passage."""
    out, path, sha = [], "", ""
    for line in stdout.splitlines()[1:]:
        if m := re.fullmatch(r"(\S+) ([0-9a-f]{12})", line):
            path, sha = m.groups()
        elif m := re.fullmatch(r"  (\d+(?:-\d+)?)(?: \((\d+-\d+)\))? ?(.*)", line):
            focus, whole, head = m.groups()
            out.append((path, sha, focus, whole or focus, head))
    return out


def test_every_hit_cites_lines_and_a_hash_that_kbx_read_takes(pumps):
    r = run_cli("search", "pump", cwd=pumps)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == LEGEND
    hits = _hits(r.stdout)
    assert len(hits) == K_TEXT and {p for p, *_ in hits} <= {"guide.md", "notes.md", "valves.md"}
    assert len(_hits(run_cli("search", "pump", "-k", "2", cwd=pumps).stdout)) == 2
    for path, sha, lines, _ in hits:
        read = run_cli("read", f"{path}:{lines}", "--hash", sha, cwd=pumps)
        assert read.returncode == 0 and read.stderr == ""  # the hash is the file's: no warning
        assert "pump" in read.stdout.lower()


def test_a_hit_cites_first_the_lines_where_the_words_asked_for_meet(pumps):
    out = run_cli("search", "bleed valve tank", cwd=pumps).stdout
    (hit,) = [h for h in _cited(out) if h[0] == "valves.md"]
    path, sha, focus, whole, _ = hit
    assert (path, focus, whole) == ("valves.md", "11", "1-19")  # its 11th line, of 1-19
    read = run_cli("read", f"{path}:{focus}", "--hash", sha, cwd=pumps).stdout
    assert "Close the bleed valve before the tank is filled." in read
    data = json.loads(run_cli("search", "bleed valve tank", "--json", cwd=pumps).stdout)
    (h,) = [h for h in data["hits"] if h["path"] == "valves.md"]
    assert h["focus_lines"] == [11, 11] and (h["start_line"], h["end_line"]) == (1, 19)
    assert "**bleed** **valve**" in h["snippet"]
    text = run_cli("search", "bleed valve tank", "--snippet", "40", cwd=pumps).stdout
    assert "**bleed valve**" in text  # the focus's words, not the passage's start; one mark


def test_a_heading_is_shown_once_per_file_and_a_sibling_by_its_own_name(pumps):
    printed = _hits(run_cli("search", "pump", cwd=pumps).stdout)
    shown = {lines: head for path, _, lines, head in printed if path == "guide.md"}
    first, *rest = shown.values()
    assert first.startswith("Pump guide")  # the document's title, once
    assert rest and not any("Pump guide" in h for h in rest)
    assert "Winter" in shown.values() or "Storage › Winter" in shown.values()


def test_snippets_are_cut_around_their_matches_and_json_keeps_everything(pumps):
    lean = run_cli("search", "reservoir", "--snippet", "40", cwd=pumps).stdout
    (snippet,) = [line.strip() for line in lean.splitlines() if line.startswith("    ")]
    assert "**reservoir**" in snippet and len(MARK.sub(r"\1", snippet)) <= 40 + 2
    none = run_cli("search", "reservoir", "--snippet", "0", cwd=pumps).stdout
    assert not [line for line in none.splitlines() if line.startswith("    ")]
    data = json.loads(run_cli("search", "reservoir", "--json", cwd=pumps).stdout)
    (hit,) = data["hits"]
    assert {"score", "covered", "text", "snippet"} <= set(hit) and "word249" in hit["text"]
    assert data["facets"] is not None


def test_the_exact_phrase_block_shows_as_many_lines_as_asked(pumps):
    def exact_lines(*args: str) -> list[str]:
        out = run_cli("search", "the pump", *args, cwd=pumps).stdout.splitlines()
        at = next((i for i, line in enumerate(out) if line.startswith("exact matches")), None)
        return [] if at is None else out[at + 1 :]

    assert len(exact_lines()) == EXACT_TEXT
    assert len(exact_lines("--exact", "3")) == 3
    assert exact_lines("--exact", "0") == []
    data = json.loads(run_cli("search", "the pump", "--json", cwd=pumps).stdout)
    assert len(data["exact"]) == 3 and data["exact_total"] >= 3


def test_shorten_keeps_the_densest_matches_whole():
    text = (
        "…alpha beta **pump** gamma delta "
        + "filler " * 30
        + "**pump** x **Valve** y **pump** end "
        + "filler " * 30
        + "**pump** **pump** **pump**…"
    )
    cut = shorten(text, 40)  # the most distinct words, not the most matches of one
    assert cut.startswith("…") and cut.endswith("…")
    assert "**pump** x **Valve** y **pump**" in cut and len(MARK.sub(r"\1", cut)) <= 42
    assert shorten("short **pump** text", 40) == "short **pump** text"
    no_marks = shorten("one two three four five six seven eight nine ten", 20)
    assert no_marks.startswith("one two") and no_marks.endswith("…")


def test_shorten_keeps_the_sentence_of_the_matches_and_no_more():
    text = "Filler words come first here. The **pump** needs a **valve** now. " + "More. " * 20
    assert shorten(text, 70) == "…The **pump** needs a **valve** now.…"  # a sentence whole
    run_on = "…come first and the **pump** needs a **valve** now and " + "more " * 30 + "…"
    cut = shorten(run_on, 70)  # no sentence ends in the window: cut at spaces
    assert cut.startswith("…") and "**pump** needs a **valve**" in cut
    assert len(MARK.sub(r"\1", cut)) <= 72


def test_neighbouring_matches_share_one_mark(pumps):
    out = run_cli("search", "bleed valve", "--snippet", "200", cwd=pumps).stdout
    assert "**bleed valve**" in out and "** **" not in out
