"""The typer options of a command, generated from its definition (``kbx.options``): one
``@command(DEFINITION)`` over a function that takes the built options object, and typer
sees the parameters the definition names, with their flags, help, bounds and defaults."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from kbx import api
from kbx.cli.common import DbOption, JsonOption

_ANNOTATION: dict[type, Any] = {
    str: str,
    int: int,
    float: float,
    bool: bool,
    list: list[str],
    Path: Path,
}


def parameter(p: api.Param) -> inspect.Parameter:
    """The typer parameter of one option."""
    o = p.opt
    kind = _ANNOTATION[p.kind]
    if p.default is None or p.kind is list:
        kind = kind | None
    extra: dict[str, Any] = {"help": o.help, "rich_help_panel": o.panel}
    if o.metavar:
        extra["metavar"] = o.metavar
    if o.low is not None:
        extra["min"] = o.low
    if o.high is not None:
        extra["max"] = o.high
    if o.argument:
        info = typer.Argument(**extra)
    else:
        if o.negatable:
            flags: tuple[str, ...] = (f"--{p.name}/--no-{p.name}",)
        else:
            flags = o.flags or (f"--{p.name}", *((o.short,) if o.short else ()))
        if p.default is None or p.kind is bool or p.kind is list:
            extra["show_default"] = False
        if o.envvar:
            extra["envvar"] = o.envvar
        info = typer.Option(*flags, **extra)
    default = inspect.Parameter.empty if p.required else (None if p.kind is list else p.default)
    return inspect.Parameter(
        p.attr,
        inspect.Parameter.KEYWORD_ONLY,
        default=default,
        annotation=Annotated[kind, info],
    )


def reflowed(doc: str | None) -> str | None:
    """A docstring with each paragraph of prose on one line, examples (indented) as they
    are: the help wraps prose to the terminal, where the source's own line ends, kept,
    left a word alone on a line at 80 columns."""
    if doc is None:
        return None
    paragraphs = inspect.cleandoc(doc).split("\n\n")
    return "\n\n".join(
        p if any(line.startswith(" ") for line in p.split("\n")) else " ".join(p.split("\n"))
        for p in paragraphs
    )


def command(definition: api.Command, *, db: bool = True):
    """A typer command from ``definition``, calling the decorated function with the
    options object and, by keyword, ``db`` and ``as_json`` (where it takes them)."""

    def decorate(body: Callable[..., None]) -> Callable[..., None]:
        params = [parameter(p) for p in api.options_on(definition.options, api.CLI)]
        extra = []
        if db:
            extra.append(inspect.Parameter("db", inspect.Parameter.KEYWORD_ONLY, default=None,
                                           annotation=DbOption))  # fmt: skip
        if definition.json:
            extra.append(inspect.Parameter("as_json", inspect.Parameter.KEYWORD_ONLY,
                                           default=False, annotation=JsonOption))  # fmt: skip
        taken = {p.attr for p in api.options_on(definition.options, api.CLI)}

        def call(**given: Any) -> None:
            rest = {k: given.pop(k) for k in list(given) if k not in taken}
            return body(api.build_options(definition.options, given), **rest)

        call.__signature__ = inspect.Signature([*params, *extra])  # type: ignore[attr-defined]
        call.__annotations__ = {p.name: p.annotation for p in [*params, *extra]}
        call.__name__ = body.__name__
        call.__qualname__ = body.__qualname__
        call.__doc__ = reflowed(body.__doc__)
        call.__module__ = body.__module__
        call.definition = definition  # type: ignore[attr-defined]
        return call

    return decorate
