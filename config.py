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

    [dense]                           # dense retrieval (vectors/setup.py)
    model = "models/my-encoder"       # a local folder (relative to the root)
    enable = true

    [engine]                          # where model recognizers run (kbx index, reprocess)
    kind = "dask"                     # "local" (the default: worker processes) or "dask"
    address = "tcp://scheduler:8786"  # the scheduler of a running Dask cluster
    timeout = 10                      # seconds to reach it
    spool = "/shared/kbx-spool"       # batches as files there, not through the scheduler

The file is read into one typed settings object (``Config``), once per process and version
of the file; an unknown table or key, or a value of the wrong type or out of range, is a
``BadArgument`` (exit 2) that names it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Annotated, TypeVar

import msgspec

from kbx.errors import BadArgument

FILE = "kbx.toml"
ENGINES = ("local", "dask")


@dataclass(frozen=True)
class EngineConfig:
    """Where recognizer batches run: this machine's worker processes, or a Dask cluster."""

    kind: str = "local"
    address: str | None = None  # the Dask scheduler, e.g. tcp://10.0.0.5:8786
    timeout: float = 10.0  # seconds to reach it before giving up
    spool: str | None = None  # a folder every worker reads: batches go as files through it

    def override(
        self, kind: str | None, address: str | None, spool: str | None = None
    ) -> EngineConfig:
        """These settings with a command's ``--engine``, ``--address`` and ``--spool``
        applied, checked; an address alone means the dask engine."""
        for option, given in (("--address", address), ("--spool", spool)):
            if kind == "local" and given:
                raise BadArgument(f"{option} is for a Dask cluster: give it with --engine dask")
        kind = kind or ("dask" if address else self.kind)
        section = {"kind": kind, "address": address or self.address, "timeout": self.timeout}
        if spool or self.spool:
            section["spool"] = spool or self.spool
        return engine_config(section, "--engine")


def engine_config(section: object, where: str) -> EngineConfig:
    """Checked engine settings from ``[engine]`` (or a command's options, named by
    ``where`` in the message)."""
    if not isinstance(section, dict):
        raise BadArgument(f"{where}: [engine] must be a table")
    unknown = sorted(set(section) - {"kind", "address", "timeout", "spool"})
    if unknown:
        raise BadArgument(
            f"{where}: [engine] takes kind, address, timeout and spool, not {unknown[0]}"
        )
    kind, address = section.get("kind", "local"), section.get("address")
    timeout = section.get("timeout", 10.0)
    if kind not in ENGINES:
        raise BadArgument(f"{where}: engine kind {kind!r}: choose from {', '.join(ENGINES)}")
    if address is not None and (not isinstance(address, str) or "://" not in address):
        raise BadArgument(f"{where}: engine address {address!r}: give tcp://HOST:PORT")
    if kind == "dask" and address is None:
        raise BadArgument(
            f"{where}: the dask engine needs the scheduler's address (tcp://HOST:PORT): "
            "--address, or address in kbx.toml [engine]"
        )
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise BadArgument(f"{where}: engine timeout must be a positive number of seconds")
    spool = section.get("spool")
    if spool is not None and (not isinstance(spool, str) or not Path(spool).is_absolute()):
        raise BadArgument(
            f"{where}: engine spool {spool!r}: give the absolute path of a folder every "
            "worker mounts at the same path"
        )
    dask = kind == "dask"
    return EngineConfig(kind, address if dask else None, float(timeout), spool if dask else None)


# [resolve] and [dense] as msgspec types: each value checked (type, range), no key unknown.
# (A cold search reads no kbx.toml, so it never imports this module nor msgspec.)
Positive = Annotated[float, msgspec.Meta(gt=0)]
NonNegative = Annotated[float, msgspec.Meta(ge=0)]


class ResolveConfig(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """``[resolve]``: Crossref and OpenAlex (see ``kbx.linking.resolvers.Settings``)."""

    mailto: str | None = None
    rate: Positive = 5.0  # requests per second
    timeout: Positive = 10.0  # seconds
    retries: Annotated[int, msgspec.Meta(ge=0)] = 4
    backoff: NonNegative = 1.0  # seconds, doubled each retry
    max_wait: NonNegative = 60.0  # the longest Retry-After honoured
    min_score: NonNegative = 0.0
    crossref_url: str | None = None
    openalex_url: str | None = None


class DenseConfig(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """``[dense]``: the model folder (None: the packaged model), and on or off."""

    model: str | None = None
    enable: bool = True


S = TypeVar("S", bound=msgspec.Struct)
TABLES = ("recognizers", "resolve", "dense", "engine")


@dataclass(frozen=True)
class Config:
    """What ``kbx.toml`` says; defaults where there is none."""

    disabled: frozenset[str] = frozenset()
    options: dict[str, dict] = field(default_factory=dict)  # recognizer name → keyword options
    resolve: ResolveConfig = ResolveConfig()  # [resolve]: mailto, rate, URLs, timeout
    engine: EngineConfig = EngineConfig()  # [engine]: local, or a Dask cluster's address
    dense: DenseConfig = DenseConfig()  # [dense]: the model folder, on or off


def _table(data: dict, name: str, path: Path) -> dict:
    section = data.get(name, {})
    if not isinstance(section, dict):
        raise BadArgument(f"{path}: [{name}] must be a table")
    return section


_SAID = {  # msgspec's type names as a kbx.toml's writer reads them
    "got `float`": "got a fraction",
    "`float`": "a number",
    "`int`": "a whole number",
    "`str | null`": "a string",
    "`str`": "a string",
    "`bool`": "true or false",
}


def _checked(section: dict, kind: type[S], name: str, path: Path) -> S:
    """``section`` as ``kind``; a bad key or value is one line that names it."""
    try:
        return msgspec.convert(section, kind)
    except msgspec.ValidationError as e:
        message, _, where = str(e).partition(" - at `$")
        key = where.rstrip("`").lstrip(".")
        if message.startswith("Object contains unknown field"):
            unknown = message.split("`")[1]
            keys = ", ".join(kind.__struct_fields__)
            raise BadArgument(f"{path}: [{name}] has no {unknown}; keys: {keys}") from None
        for spelled, said in _SAID.items():
            message = message.replace(spelled, said)
        raise BadArgument(f"{path}: [{name}] {key}: {message[0].lower()}{message[1:]}") from None


def load_config(root: Path) -> Config:
    """``root/kbx.toml`` as settings, read once per process while the file stays the same;
    a malformed file is one clear error (exit 2), not a silent default."""
    path = Path(root) / FILE
    if not path.is_file():
        return Config()
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise BadArgument(f"{path}: not valid TOML ({e})") from None
    config = _load(path, text)
    options = {name: dict(opts) for name, opts in config.options.items()}
    for opts in options.values():  # a model folder is found relative to the root (now)
        model = opts.get("model")
        if isinstance(model, str) and (root / model).exists():
            opts["model"] = str((root / model).resolve())
    return replace(config, options=options)


@lru_cache(maxsize=16)
def _load(path: Path, text: str) -> Config:
    """The file's text checked, once per process and content."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise BadArgument(f"{path}: not valid TOML ({e})") from None
    unknown = sorted(set(data) - set(TABLES))
    if unknown:
        raise BadArgument(f"{path}: no table [{unknown[0]}]; tables: {', '.join(TABLES)}")
    section = _table(data, "recognizers", path)
    disabled = section.get("disable", [])
    if not isinstance(disabled, list) or not all(isinstance(d, str) for d in disabled):
        raise BadArgument(f"{path}: recognizers.disable must be a list of names")
    odd = sorted(k for k, v in section.items() if k != "disable" and not isinstance(v, dict))
    if odd:
        raise BadArgument(
            f"{path}: [recognizers] has no {odd[0]}; keys: disable, and a table "
            "[recognizers.NAME] of options per recognizer"
        )
    options = {k: dict(v) for k, v in section.items() if isinstance(v, dict)}
    resolve = _checked(_table(data, "resolve", path), ResolveConfig, "resolve", path)
    dense = _checked(_table(data, "dense", path), DenseConfig, "dense", path)
    engine = engine_config(data.get("engine", {}), str(path))
    return Config(frozenset(disabled), options, resolve, engine, dense)
