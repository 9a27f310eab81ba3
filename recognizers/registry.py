"""Recognizers by name: built-ins and third-party ones alike come through the
entry-point group ``kbx.recognizers``, loaded when first asked for."""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import lru_cache
from importlib.metadata import EntryPoint, entry_points

from kbx.config import Config
from kbx.errors import BadArgument, KbxError, Off
from kbx.recognizers.base import Recognizer

GROUP = "kbx.recognizers"


@lru_cache(maxsize=4)
def _installed(find: Callable, path: tuple[str, ...]) -> tuple[EntryPoint, ...]:
    """The group's entry points, by name, as installed on ``path``: found once per process
    and path (scanning every installed distribution's metadata costs about 20 ms, and a
    server loads a registry for every status and write). A plugin installed while a
    process runs is seen by the next process."""
    return tuple(sorted(find(group=GROUP), key=lambda e: e.name))


class Registry:
    """A set of recognizers; tests build a fresh one, nothing loads at import time."""

    def __init__(self, recognizers: list[Recognizer] | None = None):
        self._by_name: dict[str, Recognizer] = {}
        self.broken: list[tuple[str, str]] = []  # entry points that failed to load, and why
        self.off: list[tuple[str, str]] = []  # not set up for this index (no model configured)
        for r in recognizers or []:
            self.register(r)

    def register(self, recognizer: Recognizer) -> None:
        """Add one recognizer; its metadata is checked and a duplicate name refused."""
        if not isinstance(recognizer, Recognizer):
            raise BadArgument(f"{recognizer!r} has no `info` and `recognize(texts)`")
        name = recognizer.info.name
        if name in self._by_name:
            raise BadArgument(f"two recognizers are named {name!r}")
        self._by_name[name] = recognizer

    @classmethod
    def load(cls, config: Config | None = None) -> Registry:
        """Every recognizer installed under the entry-point group, built with its options
        from ``kbx.toml``, except those it disables; one that cannot be built (a missing
        model, a bad option) is set aside with its reason rather than stopping the others."""
        config = config or Config()
        registry = cls()
        for ep in _installed(entry_points, tuple(sys.path)):
            if ep.name in config.disabled:
                continue
            try:
                registry.register(ep.load()(**config.options.get(ep.name, {})))
            except Off as e:
                registry.off.append((ep.name, str(e)))
            except Exception as e:
                why = str(e) if isinstance(e, KbxError) else f"{type(e).__name__}: {e}"
                registry.broken.append((ep.name, why))
        return registry

    def replace(self, recognizer: Recognizer) -> None:
        """Put ``recognizer`` in place of the one of its name, if there is one (an index's
        gazetteer, read again once a repair replayed edits into it)."""
        if recognizer.info.name in self._by_name:
            del self._by_name[recognizer.info.name]
            self.register(recognizer)

    def get(self, name: str) -> Recognizer:
        try:
            return self._by_name[name]
        except KeyError:
            choices = ", ".join(sorted(self._by_name)) or "none installed"
            raise BadArgument(f"no recognizer named {name!r}; choose from {choices}") from None

    def __iter__(self):
        return iter(sorted(self._by_name.values(), key=lambda r: r.info.name))

    def __len__(self) -> int:
        return len(self._by_name)
