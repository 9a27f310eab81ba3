"""Per-index settings from ``kbx.toml`` at the indexed root: which recognizers run, and
their options. Optional: without the file every installed recognizer runs with defaults.

    [recognizers]
    disable = ["quantities"]          # never run these here

    [recognizers.spacy]
    model = "en_core_web_sm"          # any installed spaCy pipeline

    [recognizers.gliner]
    model = "models/gliner-small"     # a local folder (relative to the root)
    labels = ["dataset", "software"]
    threshold = 0.5

    [resolve]                         # kbx resolve: Crossref and OpenAlex
    mailto = "you@example.org"
    rate = 5                          # requests per second
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from kbx.errors import BadArgument

FILE = "kbx.toml"


@dataclass
class Config:
    """What ``kbx.toml`` says; empty when there is none."""

    disabled: frozenset[str] = frozenset()
    options: dict[str, dict] = field(default_factory=dict)  # recognizer name → keyword options
    resolve: dict = field(default_factory=dict)  # [resolve]: mailto, rate, URLs, timeout


def load_config(root: Path) -> Config:
    """Read ``root/kbx.toml``; a malformed file is one clear error, not a silent default."""
    path = root / FILE
    if not path.is_file():
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise BadArgument(f"{path}: not valid TOML ({e})") from None
    section = data.get("recognizers", {})
    if not isinstance(section, dict):
        raise BadArgument(f"{path}: [recognizers] must be a table")
    disabled = section.get("disable", [])
    if not isinstance(disabled, list) or not all(isinstance(d, str) for d in disabled):
        raise BadArgument(f"{path}: recognizers.disable must be a list of names")
    options = {k: dict(v) for k, v in section.items() if isinstance(v, dict)}
    for opts in options.values():  # a model folder is found relative to the root
        model = opts.get("model")
        if isinstance(model, str) and (root / model).exists():
            opts["model"] = str((root / model).resolve())
    resolve = data.get("resolve", {})
    if not isinstance(resolve, dict):
        raise BadArgument(f"{path}: [resolve] must be a table")
    return Config(frozenset(disabled), options, resolve)
