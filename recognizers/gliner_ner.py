"""Zero-shot named entities of any label ("dataset", "software", "book title") with GLiNER.

The model is loaded from a local folder named in ``kbx.toml`` and never downloaded
(``local_files_only``; ``HF_HUB_OFFLINE`` is set unless the environment sets it). The
version digests the model's config and weights, the labels and the threshold, so a
change to any of them marks the runs stale. Units longer than the model's window are
cut at word boundaries and the spans mapped back. Its mentions only boost: zero-shot
labels are not precise enough to filter on. torch's thread pools do not survive a
fork, so it runs in the writing process (``fork_safe=False``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

from kbx.errors import GlinerOff, GlinerUnavailable
from kbx.recognizers.base import Mention, RecognizerInfo, loaded, surface

VERSION = "4"  # 4: not in inline code nor across cells; 3: not run on code; 2: value = surface
INSTALL = "pip install 'kbx[gliner]'"
_WORD = re.compile(r"\w+(?:[-_]\w+)*|\S")  # GLiNER's own word splitting


def _digest(model_dir: Path) -> str:
    """A digest of every file in the model folder, by content: a retrained model of the
    same shape and size is another model."""
    h = hashlib.sha256()
    for f in sorted(p for p in model_dir.rglob("*") if p.is_file()):
        h.update(f.relative_to(model_dir).as_posix().encode())
        h.update(file_digest(f).encode())
    return h.hexdigest()[:10]


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes, remembered by path, size and modification time in the
    user's cache folder, so a large weight file is read once, not at every start."""
    st = path.stat()
    key = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    cache_file = _cache_dir() / "file-digests.json"
    try:
        cache = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        cache = {}
    if isinstance(cache, dict) and isinstance(cache.get(key), str):
        return cache[key]
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    cache = cache if isinstance(cache, dict) else {}
    cache[key] = h.hexdigest()
    with contextlib.suppress(OSError):  # a cache that cannot be written only costs time
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache_file.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(cache))
        tmp.replace(cache_file)
    return cache[key]


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "kbx"


def _label_type(label: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "_", label.upper()).strip("_")


class GlinerRecognizer:
    """GLiNER over units, for the labels configured in ``kbx.toml``."""

    def __init__(
        self,
        model: str | None = None,
        labels: Sequence[str] = ("person", "organization", "software", "dataset"),
        threshold: float = 0.5,
        batch_size: int = 8,
    ):
        if not model:
            raise GlinerOff(
                "no GLiNER model configured; set [recognizers.gliner] model = PATH (a local "
                "folder) in kbx.toml"
            )
        path = Path(model)
        if not (path / "gliner_config.json").is_file():
            raise GlinerUnavailable(f"{model} is not a GLiNER model folder (no gliner_config.json)")
        labels = [str(x).strip() for x in labels if str(x).strip()]
        if not labels:
            raise GlinerUnavailable("give at least one GLiNER label in kbx.toml")
        self.path, self.labels = path, labels
        self.threshold, self.batch_size = float(threshold), int(batch_size)
        self._digest = _digest(path)
        config = f"{self._digest}:{'|'.join(labels)}:{self.threshold}"
        self.info = RecognizerInfo(
            name="gliner",
            version=f"{VERSION}+{hashlib.sha256(config.encode()).hexdigest()[:12]}",
            types=tuple(dict.fromkeys(_label_type(x) for x in labels)),
            filter=False,
            fork_safe=False,
            names=True,
            code=False,
            inline_code=False,
            cross_cells=False,
            slow=True,
        )
        self._model = None

    def load(self):
        if self._model is None:
            self._model = loaded(("gliner", str(self.path), self._digest), self._from_folder)
        return self._model

    def _from_folder(self):
        try:
            from gliner import GLiNER
        except ImportError:
            raise GlinerUnavailable(f"GLiNER is not installed; {INSTALL}") from None
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        model = GLiNER.from_pretrained(str(self.path), local_files_only=True)
        model.eval()
        return model

    def _windows(self, text: str) -> list[tuple[int, int]]:
        """``[start, end)`` character ranges that fit the model: at most its ``max_len``
        words, and at most 512 subword positions with the label prompt (counted with the
        model's own tokenizer, so a vocabulary that cuts words finely still fits)."""
        model = self.load()
        words = [m.span() for m in _WORD.finditer(text)]
        if not words:
            return [(0, len(text))]
        tokenizer = model.data_processor.transformer_tokenizer
        prompt = sum(len(tokenizer.tokenize(x)) + 1 for x in self.labels) + 8
        budget = min(512, tokenizer.model_max_length) - prompt
        max_words = int(getattr(model.config, "max_len", 384))
        sizes = [len(tokenizer.tokenize(text[a:b])) or 1 for a, b in words]
        out, first, used = [], 0, 0
        for i, n in enumerate(sizes):
            if i > first and (used + n > budget or i - first >= max_words):
                out.append((words[first][0], words[i - 1][1]))
                first, used = i, 0
            used += n
        out.append((words[first][0], words[-1][1]))
        return out

    def recognize(self, texts: Sequence[str]) -> list[list[Mention]]:
        model = self.load()
        pieces = [(i, a, b) for i, t in enumerate(texts) for a, b in self._windows(t)]
        found = model.inference(
            [texts[i][a:b] for i, a, b in pieces],
            self.labels,
            threshold=self.threshold,
            batch_size=self.batch_size,
        )
        out: list[list[Mention]] = [[] for _ in texts]
        for (i, a, _), ents in zip(pieces, found, strict=True):
            for e in ents:
                start, end = a + e["start"], a + e["end"]
                out[i].append(
                    Mention(
                        start,
                        end,
                        _label_type(e["label"]),
                        texts[i][start:end],
                        surface(texts[i][start:end]),
                        round(float(e["score"]), 4),
                    )
                )
        return out
