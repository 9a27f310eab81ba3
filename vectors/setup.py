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

from dataclasses import dataclass
from pathlib import Path

from kbx.config import FILE, load_config
from kbx.errors import BadArgument, ModelMissing
from kbx.vectors.model import Encoder, from_folder, packaged

SECTION = "dense"
_LOADED: dict[tuple[str, bool], Encoder] = {}


@dataclass(frozen=True)
class Setting:
    """What ``kbx.toml`` says of dense retrieval: on or off, and which model folder (None:
    the packaged model)."""

    enabled: bool = True
    folder: Path | None = None


def setting(root: Path) -> Setting:
    """The ``[dense]`` table of ``root/kbx.toml`` (kbx.config checks it), its folder found."""
    dense = load_config(Path(root)).dense
    folder = (Path(root) / dense.model).resolve() if dense.model else None
    if folder is not None and not folder.is_dir():
        raise BadArgument(
            f"{Path(root) / FILE}: {SECTION}.model {dense.model!r} is not a folder under {root}"
        )
    return Setting(dense.enable, folder)


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
