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

    [engine]                          # where model recognizers run (kbx index, reprocess)
    kind = "dask"                     # "local" (the default: worker processes) or "dask"
    address = "tcp://scheduler:8786"  # the scheduler of a running Dask cluster
    timeout = 10                      # seconds to reach it
    spool = "/shared/kbx-spool"       # batches as files there, not through the scheduler
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

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


@dataclass
class Config:
    """What ``kbx.toml`` says; empty when there is none."""

    disabled: frozenset[str] = frozenset()
    options: dict[str, dict] = field(default_factory=dict)  # recognizer name → keyword options
    resolve: dict = field(default_factory=dict)  # [resolve]: mailto, rate, URLs, timeout
    engine: EngineConfig = EngineConfig()  # [engine]: local, or a Dask cluster's address


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
    engine = engine_config(data.get("engine", {}), str(path))
    return Config(frozenset(disabled), options, resolve, engine)
