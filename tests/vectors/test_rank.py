"""The dense ranking: exact cosine over the units the filters allow, and its fusion with
BM25 finding a passage asked for in other words."""

from __future__ import annotations

from pathlib import Path

from kbx.indexing.ingest import index
from kbx.recognizers.registry import Registry
from kbx.search.allowed import allowed
from kbx.search.bm25 import rank
from kbx.search.filters import Filters, compile_filters
from kbx.search.hybrid import dense_ranking, fuse
from kbx.store.db import Index
from kbx.store.postings import analyzer_of
from kbx.vectors import matrix
from kbx.vectors.model import from_folder, passage_text
from kbx.vectors.rank import dense_rank
from kbx.vectors.run import embed

DOCS = {
    "fleet/cars.md": "---\ncategory: transport\n---\n# Cars\n\nThe red car is one vehicle.\n",
    "fleet/vans.md": "---\ncategory: transport\n---\n# Vans\n\nTwo vehicles and a vendor.\n",
    "kitchen/bread.md": "---\ncategory: food\n---\n# Bread\n\nA loaf of bread, baking.\n",
    "os/kernel.md": "---\ncategory: systems\n---\n# Kernel\n\nThe microkernel notes.\n",
}


def _index(root: Path, model: Path) -> tuple[Index, object]:
    for name, text in DOCS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    index(root, registry=Registry([]))
    idx, enc = Index.for_root(root), from_folder(model)
    embed(idx, enc)
    return idx, enc


def _paths(con, units: list[int]) -> list[str]:
    out = []
    for u in units:
        (p,) = con.execute(
            "SELECT min(d.path) FROM placements pl JOIN documents d USING (doc_id) "
            "WHERE pl.unit_id = ?",
            [u],
        ).fetchone()
        out.append(p)
    return out


def test_the_nearest_units_come_first_with_their_cosine(tmp_path, tiny_model):
    idx, enc = _index(tmp_path, tiny_model)
    with idx.reader() as con:
        ranked = dense_rank(con, enc, "automobiles", limit=10)
        assert len(ranked) == 4  # every unit has a vector; none is left out
        assert _paths(con, [u for u, _ in ranked[:2]]) == ["fleet/cars.md", "fleet/vans.md"]
        scores = [s for _, s in ranked]
        assert scores == sorted(scores, reverse=True) and 0.5 < scores[0] <= 1.0001
        assert dense_rank(con, enc, enc.query("automobiles"), limit=10) == ranked


def test_filters_narrow_the_dense_list_to_what_they_allow_bm25(tmp_path, tiny_model):
    idx, enc = _index(tmp_path, tiny_model)
    with idx.reader() as con:
        for filters, want in (
            (Filters(path="kitchen/*"), {"kitchen/bread.md"}),
            (Filters(meta=["category=systems"]), {"os/kernel.md"}),
            (Filters(meta=["category!=transport"]), {"kitchen/bread.md", "os/kernel.md"}),
        ):
            f = compile_filters(con, filters)
            ranked = dense_ranking(con, enc, "automobile vehicle", f, limit=10)
            assert set(_paths(con, [u for u, _ in ranked])) == want  # the best ones excluded
            allowed = {u for (u,) in con.execute(f.units(), f.params).fetchall()}
            assert {u for u, _ in ranked} == allowed


def test_fusion_finds_the_passage_asked_for_in_other_words(tmp_path, tiny_model):
    idx, enc = _index(tmp_path, tiny_model)
    with idx.reader() as con:
        groups = analyzer_of(con).query("automobile vendor")
        bm25, _ = rank(con, groups, limit=10)
        assert _paths(con, [r[0] for r in bm25]) == ["fleet/vans.md"]  # the word "vendor"
        dense = dense_ranking(con, enc, "automobile vendor", limit=10)
        fused = fuse(bm25, dense)
        cars = next(r for r in fused if _paths(con, [r[0]]) == ["fleet/cars.md"])
        assert cars[2] == 0 and cars[3]["bm25"] is None and cars[3]["dense"] >= 1
        first = fused[0]
        assert _paths(con, [first[0]]) == ["fleet/vans.md"]  # in both lists
        assert first[3] == {"bm25": 1, "dense": first[3]["dense"]} and first[2] == bm25[0][2]


def _same(a: list[tuple[int, float]], b: list[tuple[int, float]]) -> bool:
    return [u for u, _ in a] == [u for u, _ in b] and all(
        abs(x - y) < 1e-5 for (_, x), (_, y) in zip(a, b, strict=True)
    )


def test_the_memory_mapped_matrix_ranks_as_the_sql_scan_does(tmp_path, tiny_model):
    idx, enc = _index(tmp_path, tiny_model)
    with idx.reader() as con:
        assert matrix.load(con, idx.db, enc.name, enc.version) is not None  # the pass wrote it
        for query in ("automobiles", "bread kernel", "the"):
            for filters in (None, Filters(path="fleet/*"), Filters(meta=["category!=food"])):
                f = compile_filters(con, filters)
                sql = dense_ranking(con, enc, query, f, limit=3)
                assert _same(dense_ranking(con, enc, query, f, limit=3, db=idx.db), sql)
                found = allowed(con, f)  # the placements a search finds allowed
                if found is not None:  # the units given, not selected by a statement
                    given = dense_ranking(con, enc, query, f, 3, idx.db, found.units)
                    assert _same(given, sql)


def test_a_stale_matrix_is_not_used_and_a_removed_units_row_is_dropped(tmp_path, tiny_model):
    idx, enc = _index(tmp_path, tiny_model)
    (tmp_path / "fleet" / "cars.md").unlink()
    index(tmp_path, registry=Registry([]))  # the unit goes; the matrix still has its row
    with idx.reader() as con:
        ranked = dense_rank(con, enc, "automobiles", limit=10, db=idx.db)
        assert "fleet/cars.md" not in _paths(con, [u for u, _ in ranked]) and len(ranked) == 3
    with idx.writer() as con:
        matrix.bump(con)  # as a write of vectors by a pass killed before its export
    with idx.reader() as con:
        assert matrix.load(con, idx.db, enc.name, enc.version) is None
        assert _same(dense_rank(con, enc, "automobiles", limit=10, db=idx.db), ranked)


def test_an_index_without_units_ranks_nothing(tmp_path, tiny_model):
    (tmp_path / "empty.md").write_text("")
    index(tmp_path, registry=Registry([]))
    idx, enc = Index.for_root(tmp_path), from_folder(tiny_model)
    assert embed(idx, enc).units == 0
    with idx.reader() as con:
        assert dense_rank(con, enc, "car", db=idx.db) == dense_rank(con, enc, "car") == []


def test_a_unit_ranks_by_its_best_window_in_the_matrix_and_the_sql_scan(tmp_path, make_model):
    long = "# Notes\n\n" + "bread " * 30 + "and one automobile.\n"  # past the first window
    docs = {"long.md": long, "kernel.md": "# Kernel\n\nThe microkernel notes.\n"}
    for name, text in docs.items():
        (tmp_path / name).write_text(text)
    index(tmp_path, registry=Registry([]))
    idx = Index.for_root(tmp_path)
    first_only = from_folder(make_model(tmp_path / "m0", {"max_tokens": 8, "stride": 0}))
    windowed = from_folder(make_model(tmp_path / "m1", {"max_tokens": 8, "max_windows": 9}))
    embed(idx, first_only)
    with idx.reader() as con:
        unseen = dense_rank(con, first_only, "car", limit=2)
        assert _paths(con, [unseen[0][0]]) == ["kernel.md"]  # "bread" is all it read
    embed(idx, windowed)  # a new version: every unit redone, window by window
    with idx.reader() as con:
        n, heads, text = con.execute(
            "SELECT count(*), any_value(heading_path), any_value(text) FROM vectors "
            "JOIN units u USING (unit_hash) WHERE version = ? AND u.unit_id IN "
            "(SELECT unit_id FROM placements JOIN documents USING (doc_id) "
            "WHERE path = 'long.md')",
            [windowed.version],
        ).fetchone()
        assert n == len(windowed.passages([passage_text(heads, text)]).owner) >= 5  # a row each
        seen = dense_rank(con, windowed, "car", limit=2)
        assert _paths(con, [seen[0][0]]) == ["long.md"] and seen[0][1] > 0.3
        assert _same(dense_rank(con, windowed, "car", limit=2, db=idx.db), seen)
        for filters in (Filters(path="long.md"), Filters(path="kernel.md")):
            f = compile_filters(con, filters)
            sql = dense_ranking(con, windowed, "car", f, limit=5)
            assert len(sql) == 1 and _same(dense_ranking(con, windowed, "car", f, 5, idx.db), sql)
