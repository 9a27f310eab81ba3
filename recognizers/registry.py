"""Recognizers by name: built-ins and third-party ones alike come through the
entry-point group ``kbx.recognizers``, loaded when first asked for."""

from __future__ import annotations

from importlib.metadata import entry_points

from kbx.errors import BadArgument
from kbx.recognizers.base import Recognizer

GROUP = "kbx.recognizers"


class Registry:
    """A set of recognizers; tests build a fresh one, nothing loads at import time."""

    def __init__(self, recognizers: list[Recognizer] | None = None):
        self._by_name: dict[str, Recognizer] = {}
        self.broken: list[tuple[str, str]] = []  # entry points that failed to load, and why
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
    def load(cls) -> Registry:
        """Every recognizer installed under the entry-point group; one that fails to load is
        set aside with its reason rather than stopping the others."""
        registry = cls()
        for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
            try:
                registry.register(ep.load()())
            except Exception as e:
                registry.broken.append((ep.name, f"{type(e).__name__}: {e}"))
        return registry

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
