"""Which dense model an index uses: the packaged one, a local folder ``kbx.toml`` names, or
none (the ``dense`` extra absent, or turned off), with the one line that says why.

    [dense]
    model = "models/my-encoder"   # a local folder (relative to the root), see model.py
    enable = false                # dense retrieval off for this index

A loaded model is kept for the life of the process (one per folder), so a long-lived
server embeds each query without loading it again; a cold process that only embeds its
query loads it ``quick`` (model.py): when first used, on the thread that embeds the query.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from kbx.errors import BadArgument, ModelMissing
from kbx.vectors.model import Encoder, from_folder, packaged

FILE = "kbx.toml"
SECTION = "dense"
_LOADED: dict[tuple[str, bool], Encoder] = {}


@dataclass(frozen=True)
class Setting:
    """What ``kbx.toml`` says of dense retrieval: on or off, and which model folder (None:
    the packaged model)."""

    enabled: bool = True
    folder: Path | None = None


def setting(root: Path) -> Setting:
    """Read the ``[dense]`` table of ``root/kbx.toml``; a malformed one is a clear error."""
    path = Path(root) / FILE
    if not path.is_file():
        return Setting()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8")).get(SECTION, {})
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise BadArgument(f"{path}: not valid TOML ({e})") from None
    if not isinstance(data, dict):
        raise BadArgument(f"{path}: [{SECTION}] must be a table")
    unknown = sorted(set(data) - {"model", "enable"})
    if unknown:
        raise BadArgument(f"{path}: [{SECTION}] has no {', '.join(unknown)}; keys: model, enable")
    enabled, model = data.get("enable", True), data.get("model")
    if not isinstance(enabled, bool):
        raise BadArgument(f"{path}: {SECTION}.enable must be true or false")
    if model is not None and not isinstance(model, str):
        raise BadArgument(f"{path}: {SECTION}.model must be a folder path")
    folder = (Path(root) / model).resolve() if model else None
    if folder is not None and not folder.is_dir():
        raise BadArgument(f"{path}: {SECTION}.model {model!r} is not a folder under {root}")
    return Setting(enabled, folder)


def encoder(root: Path, quick: bool = False) -> Encoder:
    """The index's model, loaded once per process. Raises ``ModelMissing`` (its message
    says what to install, or that kbx.toml turned it off) when there is none."""
    s = setting(root)
    if not s.enabled:
        raise ModelMissing(f"dense retrieval is off in {Path(root) / FILE} ([dense] enable)")
    return loaded(s.folder, quick)


def loaded(folder: Path | None, quick: bool = False) -> Encoder:
    """The model of ``folder`` (None: the packaged one), loaded once per process."""
    key = (str(folder) if folder else "", quick)
    if key not in _LOADED:
        _LOADED[key] = from_folder(folder, quick) if folder else packaged(quick)
    return _LOADED[key]


def encoder_or_why(root: Path, quick: bool = False) -> tuple[Encoder | None, str | None]:
    """The model, or None and the one line that says why dense retrieval is off."""
    try:
        return encoder(root, quick), None
    except ModelMissing as e:
        return None, str(e)
