"""A tiny dense model, built here: an ONNX graph written as protobuf bytes by hand (no onnx
package needed) that looks each token up in a 16-wide table and masks the padding, and a
word-level tokenizer. ONNX Runtime, the tokenizer, pooling and the store are the real ones;
the table puts words of one meaning (car, automobile, vehicle) on one direction, so a
query in other words than the passage's finds it, as a real model would."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import need_dense

DIM = 16
MEANINGS = [  # words on one row share a direction
    ["car", "cars", "automobile", "automobiles", "vehicle", "vehicles"],
    ["kernel", "microkernel", "kernels"],
    ["supplier", "vendor", "vendors", "suppliers"],
    ["approval", "approved", "sign-off"],
    ["red", "crimson"],
    ["bread", "loaf", "baking"],
]
OTHER = ["the", "a", "is", "of", "and", "for", "every", "notes", "one", "two", "three", "x"]


def _varint(n: int) -> bytes:
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _int(field: int, n: int) -> bytes:
    return _varint(field << 3) + _varint(n)


def _bytes(field: int, b: bytes | str) -> bytes:
    b = b.encode() if isinstance(b, str) else b
    return _varint(field << 3 | 2) + _varint(len(b)) + b


def _tensor(name: str, array: np.ndarray, dtype: int) -> bytes:
    dims = b"".join(_int(1, d) for d in array.shape)
    return dims + _int(2, dtype) + _bytes(8, name) + _bytes(9, array.tobytes())


def _value(name: str, elem: int, dims: list[int | str]) -> bytes:
    shape = b"".join(_bytes(1, _bytes(2, d) if isinstance(d, str) else _int(1, d)) for d in dims)
    return _bytes(1, name) + _bytes(2, _bytes(1, _int(1, elem) + _bytes(2, shape)))


def _node(op: str, inputs: list[str], outputs: list[str], attrs: bytes = b"") -> bytes:
    body = b"".join(_bytes(1, i) for i in inputs) + b"".join(_bytes(2, o) for o in outputs)
    return body + _bytes(4, op) + attrs


FLOAT, INT64 = 1, 7


def onnx_bytes(table: np.ndarray) -> bytes:
    """A graph ``last_hidden_state = table[input_ids] * attention_mask[..., None]``."""
    cast_to_float = _bytes(5, _bytes(1, "to") + _int(3, FLOAT) + _int(20, 2))
    nodes = [
        _node("Gather", ["table", "input_ids"], ["looked_up"]),
        _node("Cast", ["attention_mask"], ["mask_f"], cast_to_float),
        _node("Unsqueeze", ["mask_f", "last_axis"], ["mask_3"]),
        _node("Mul", ["looked_up", "mask_3"], ["last_hidden_state"]),
    ]
    graph = b"".join(_bytes(1, n) for n in nodes) + _bytes(2, "tiny")
    graph += _bytes(5, _tensor("table", table.astype("<f4"), FLOAT))
    graph += _bytes(5, _tensor("last_axis", np.array([-1], dtype="<i8"), INT64))
    graph += _bytes(11, _value("input_ids", INT64, ["batch", "seq"]))
    graph += _bytes(11, _value("attention_mask", INT64, ["batch", "seq"]))
    graph += _bytes(12, _value("last_hidden_state", FLOAT, ["batch", "seq", table.shape[1]]))
    return _int(1, 8) + _bytes(2, "kbx-tests") + _bytes(7, graph) + _bytes(8, _int(2, 13))


def tokenizer_json(vocab: dict[str, int]) -> str:
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return tok.to_str()


def make_tiny_model(folder: Path, recipe: dict | None = None, seed: int = 0) -> Path:
    """Write a tiny model folder (model.onnx, tokenizer.json, kbx-model.json); the test
    that asks for one fails, naming the extra, where it is not installed."""
    need_dense("onnxruntime")
    rng = np.random.default_rng(seed)
    words = ["[PAD]", "[UNK]", *(w for m in MEANINGS for w in m), *OTHER]
    vocab = {w: i for i, w in enumerate(words)}
    table = np.zeros((len(words), DIM), dtype=np.float32)
    for i, meaning in enumerate(MEANINGS):
        for w in meaning:
            table[vocab[w], i] = 1.0
    for w in OTHER:  # function words: small, scattered
        table[vocab[w]] = rng.normal(0, 0.05, DIM)
    table[vocab["[UNK]"], len(MEANINGS) :] = rng.normal(0, 0.3, DIM - len(MEANINGS))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.onnx").write_bytes(onnx_bytes(table))
    (folder / "tokenizer.json").write_text(tokenizer_json(vocab))
    (folder / "kbx-model.json").write_text(json.dumps(recipe or {"max_tokens": 64}))
    return folder


@pytest.fixture
def tiny_model(tmp_path) -> Path:
    return make_tiny_model(tmp_path / "tiny-model")


@pytest.fixture
def make_model():
    """``make_tiny_model`` itself, for tests that build several (test modules cannot
    import this conftest by name: the suite's own conftest holds that name)."""
    return make_tiny_model
