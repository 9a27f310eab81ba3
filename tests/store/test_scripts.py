"""Every script searchable (issue 44): words with combining marks stay whole, Chinese,
Japanese and Korean are found by any run a person types, and an index made by an older
analysis chain is analyzed again by `kbx index` and refused by search until then."""

from __future__ import annotations

import re
import unicodedata

import duckdb
import pytest

from kbx.analysis import TOKEN, Analyzer, fold
from kbx.errors import SchemaError
from kbx.indexing.ingest import index
from kbx.search.grep import grep, phrase_terms
from kbx.search.passages import snippet_window
from kbx.search.search import phrase_parts, search
from kbx.store.db import Index
from kbx.wordchars import CJK, MARKS

NOTES = {
    "ja.md": "# 会議メモ\n\n人工知能と機械学習について会議で話した。東京の研究所で行う。\n",
    "zh.md": "# 笔记\n\n我们在北京讨论了信息检索系统和人工智能。\n",
    "ko.md": "# 메모\n\n한국어 정보 검색 시스템을 만들었다.\n",
    "hi.md": "# टिप्पणी\n\nयह शोध हिंदी भाषा के बारे में है। किताब पढ़ी।\n",
    "hi2.md": "# दूसरी\n\nशब्द और धन की बात।\n",
    "el.md": "# Σημειώσεις\n\nΗ Ελληνική γλώσσα έχει τόνους.\n",
    "ar.md": "# ملاحظات\n\nاللُّغَةُ العَرَبِيَّةُ جميلة.\n",
    "en.md": "# Kernels\n\nThe seL4 microkernel reports ERR_4021 in v18.2.0 (CVE-2023-12345).\n",
    "ru.md": "# Заметки\n\nЭто результаты нашего исследования языка и новых методов поиска.\n",
    "de.md": "# Notizen\n\nDie Häuser der Stadt werden mit den neuen Dächern gebaut.\n",
}


@pytest.fixture(scope="module")
def notes(tmp_path_factory) -> Index:
    root = tmp_path_factory.mktemp("scripts") / "notes"
    root.mkdir()
    for name, text in NOTES.items():
        (root / name).write_text(text, encoding="utf-8")
    index(root)
    return Index.for_root(root)


def _top(idx: Index, query: str) -> str | None:
    hits = search(idx, query, k=3, exact=0).hits
    return hits[0].path if hits else None


@pytest.mark.parametrize(
    "query, path",
    [
        ("人工知能", "ja.md"),
        ("機械学習", "ja.md"),
        ("会議", "ja.md"),
        ("研究所", "ja.md"),
        ("北京", "zh.md"),
        ("信息检索", "zh.md"),
        ("检", "zh.md"),  # one character: its own term
        ("정보 검색", "ko.md"),
        ("शोध", "hi.md"),
        ("ελληνικη", "el.md"),  # accents folded
        ("العربية", "ar.md"),  # harakat folded
        ("ERR_4021", "en.md"),
        ("исследование", "ru.md"),  # stemmed in Russian: исследовани
        ("новый метод", "ru.md"),
        ("Haus Dach", "de.md"),  # stemmed in German, umlauts folded after
    ],
)
def test_a_word_of_each_script_finds_its_note(notes, query, path):
    assert _top(notes, query) == path


def test_a_run_the_text_lacks_finds_nothing(notes):
    assert search(notes, "人工衛星", k=3, exact=0).hits[0].covered < 3  # 人工 only
    assert search(notes, "衛星", k=3, exact=0).hits == []


def test_a_vowel_sign_does_not_split_a_word(notes):
    # शब्द and धन share consonants with शोध; split at the marks, they would match it
    hits = search(notes, "शोध", k=5, exact=0).hits
    assert [h.path for h in hits] == ["hi.md"]
    assert "**शोध**" in hits[0].snippet


def test_cjk_snippet_marks_the_whole_run(notes):
    hit = search(notes, "人工知能", k=1, exact=0).hits[0]
    assert "**人工知能**" in hit.snippet


def test_exact_matches_inside_a_cjk_run(notes):
    r = search(notes, "機械学習", k=3, exact=3)
    assert [m.path for m in r.exact] == ["ja.md"]
    assert r.exact[0].start_line == 3


def test_grep_phrase_narrows_by_pairs(notes):
    an = Analyzer()
    assert phrase_terms(an, "信息检索") == [["信息"], ["息检"], ["检索"]]
    start, rest = phrase_parts("检索系统")
    assert not start and not rest.endswith(")")  # no word boundary around CJK
    g = grep(notes, re.compile(rest), word_start=start, needs=phrase_terms(an, "检索系统"))
    assert [m.path for m in g.matches] == ["zh.md"]


def test_english_identifiers_keep_their_terms():
    an = Analyzer()
    assert an.query("seL4 ERR_4021 v18.2.0 CVE-2023-12345") == [
        ["sel4"],
        ["err_4021", "err", "4021"],
        ["v18.2.0", "v18", "2", "0"],
        ["cve-2023-12345", "cve", "2023", "12345"],
    ]


def test_marks_stay_inside_words():
    for word in ("हिंदी", "शोध", "தமிழ்", "ภาษาไทย", "বাংলা"):
        assert TOKEN.findall(f"x {word}, y") == ["x", word, "y"]


def test_folding_keeps_the_marks_that_spell_a_word():
    assert fold("Café") == "cafe" and fold("Ελληνική") == "ελληνικη"
    assert fold("عَرَبِيّ") == "عربي"
    assert fold("ガス") != fold("カス") and fold("ｶﾞｽ") == "ガス"  # kana voicing kept
    assert fold("क्ष") != fold("कष")  # virama kept
    assert fold("한국어") == "한국어"  # Hangul recomposed after NFKD


def test_cjk_terms_cover_every_substring():
    an = Analyzer()
    text = "我们在北京讨论了信息检索系统"
    terms = set(an.terms(text))
    for i in range(len(text)):
        for j in range(i + 1, len(text) + 1):
            assert all(g[0] in terms for g in an.query(text[i:j]))


def test_snippet_cut_keeps_marks_with_their_letter():
    text = "कि" * 300  # no space to snap to: each cut falls on a letter or its sign
    for at in range(200, 210):
        start, end = snippet_window(text, [(at, at + 2)], size=51)
        assert 0 < start < end < len(text)
        assert text[start] == "क" and text[end] == "क"


def test_tables_hold_marks_and_cjk_only():
    for a, b in re.findall(r"(.)(?:-(.))?", MARKS):
        for c in (a, b) if b else (a,):
            assert unicodedata.category(c)[0] == "M"
    assert re.fullmatch(f"[{CJK}]+", "人工知能カタカナーひらがな한국어々")
    assert not re.search(f"[{CJK}]", "abc абв 123 ・、。")
    bmp = [chr(c) for c in range(0x300, 0x3000) if unicodedata.category(chr(c))[0] == "M"]
    assert all(re.fullmatch(f"[\\w{MARKS}]", c) for c in bmp)


def test_an_index_of_the_older_chain_is_refused_then_analyzed_again(tmp_path):
    root = tmp_path / "n"
    root.mkdir()
    (root / "ja.md").write_text("人工知能の研究。\n", encoding="utf-8")
    index(root)
    idx = Index.for_root(root)
    with duckdb.connect(str(idx.db)) as con:
        con.execute("DELETE FROM kbx_meta WHERE key = 'analysis'")
    made = r"another version of the analysis chain \(1; this kbx analyzes as \d+"
    with pytest.raises(SchemaError, match=made):
        search(idx, "人工知能")
    report = index(root)
    assert report.unchanged == 1  # not read again: only analyzed
    assert search(idx, "人工知能", exact=0).hits[0].path == "ja.md"


def test_status_counts_units_per_language(notes):
    from kbx.search.status import status

    langs = status(notes).languages
    assert {"ja", "zh", "ko", "hi", "el", "ar", "ru", "de"} <= set(langs)
    assert langs["en"] == 1  # the English note; the rest each its own


def test_ru_snippet_marks_the_inflected_word(notes):
    hit = search(notes, "исследование", k=1, exact=0).hits[0]
    assert "**исследования**" in hit.snippet


def test_detect_tells_languages_and_leaves_english_alone():
    from kbx.languages import detect

    assert detect("The seL4 microkernel has a machine-checked proof of the design.") is None
    assert detect("| a | b |\n| 1 | 2 |") is None  # too little to tell: as English
    assert detect("Die Datei wird nicht gelesen, wenn sie mit dem Zeichen beginnt.") == "de"
    assert detect("Le fichier est lu par le programme et la sortie est une liste.") == "fr"
    # their commonest words, which Dutch and Danish write too (de, en, et), tell them apart
    fr = "Si un fichier vaut -, l'entrée standard est lue. Le code de retour vaut 0 en cas "
    assert detect(fr + "de succès, 1 en cas de conflit, et 2 en cas de problème.") == "fr"
    es = "Si un fichero es -, se lee la entrada estándar. El código de salida es 0 en caso "
    assert detect(es + "de éxito, 1 en caso de conflicto y 2 en caso de problemas.") == "es"
    assert detect("ls -l --all показывает все файлы каталога") == "ru"
    assert detect("ls -l は、ファイルの一覧を表示します。") == "ja"
    assert detect("显示目录中的文件列表。") == "zh"
    assert detect("Ця програма показує файли") == "uk"
    digest = "9476bb2d9cdd50c80a57a941234bbd763a697377e5677befb67b4ead9511a361  node.tar.gz"
    assert detect("\n".join([digest] * 5)) is None  # de, a, e inside hex are no words
    assert detect("iQEcBAEBCgAGBQJWG/msAAoJEHNBsVwHCHesiwQH/2MWeonw7cb2fOmmTA2nItB7") is None


def test_a_querys_language_from_its_first_letter_of_another_script():
    from kbx.languages import of_query

    assert of_query("会議") == "zh" and of_query("会議の記録") == "ja"  # kana tells Japanese
    assert of_query("исследование") == "ru" and of_query("शोध") == "hi"
    assert of_query("Node.js のインストール") == "ja"  # a quarter of the letters suffices
    assert of_query("install Node.js 会") is None  # a Han letter among many Latin ones
    assert of_query("how do I stop a stream") is None and of_query("café latte") is None
    assert of_query("können verwandt werden") is None  # too few function words to tell
    assert of_query("Lesen Sie die Datei und die Ausgabe mit dem Befehl") == "de"


def test_foreign_prose_indexes_stem_and_word_english_only_stems():
    from types import SimpleNamespace

    from kbx.analysis import analyze_units

    de = SimpleNamespace(
        text="Die Häuser der Stadt werden mit den neuen Dächern gebaut.",
        kind="prose",
        heading_path=(),
    )
    en = SimpleNamespace(text="The houses of the city are built.", kind="prose", heading_path=())
    (de_terms, _, _, de_len), (en_terms, _, _, en_len) = analyze_units([de, en], Analyzer())
    assert {"haus", "hauser", "dach", "dachern", "#lang=de"} <= set(de_terms.split())
    assert de_len == 10  # the words once: neither the unstemmed copies nor the language
    assert "hous" in en_terms.split() and "houses" not in en_terms.split()
    assert "#lang" not in en_terms and en_len == 7


def test_grep_context_is_cut_between_letters(tmp_path):
    root = tmp_path / "n"
    root.mkdir()
    body = "x " + "हिंदी a " * 30 + "खोज " + "हिंदी a " * 30  # 60 before the match: ी
    (root / "hi.md").write_text(body + "\n", encoding="utf-8")
    index(root)
    g = grep(Index.for_root(root), "खोज")
    text = g.matches[0].text
    assert "**खोज**" in text
    inner = text.strip("…")
    assert unicodedata.category(inner[0])[0] != "M" and inner.split()[0] in ("हिंदी", "दी")


def test_lang_filter_keeps_passages_of_one_language(notes):
    from kbx.errors import BadArgument
    from kbx.search.filters import Filters

    def paths(query: str, lang: str) -> set[str]:
        hits = search(notes, query, k=20, exact=0, filters=Filters(lang=lang)).hits
        return {h.path for h in hits}

    assert paths("人工知能 исследование seL4", "ru") == {"ru.md"}
    assert paths("人工知能 исследование seL4", "ja") == {"ja.md"}
    assert paths("人工知能 исследование seL4", "en") == {"en.md"}
    with pytest.raises(BadArgument, match="unknown language"):
        search(notes, "x", filters=Filters(lang="xx"))
