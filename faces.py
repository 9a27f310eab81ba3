"""Reading the command definitions (``kbx.options``) for the faces: each option as a
``Param`` (its face name, Python attribute, kind, default, whether it is a filter), the
options object built from the CLI's typed values or a server's raw ones (HTTP text, MCP
JSON: checked here, each error a ``BadArgument`` naming the option), and the JSON schema
of a command's input. A pure leaf, as ``kbx.options``."""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kbx import options as definitions
from kbx.errors import BadArgument
from kbx.options import HTTP, MCP, SERVED, Opt

TEXT_MAX = 2000  # characters of any text a server reads (a query, a pattern, a name)


@dataclass(frozen=True)
class Param:
    """One option of a command as the faces see it: its definition, its Python
    attribute, its kind (str, int, float, bool, list or Path), its default, and whether
    it sits in the command's ``Filters``."""

    opt: Opt
    attr: str
    kind: type
    default: Any
    required: bool
    in_filters: bool

    @property
    def name(self) -> str:
        return self.opt.name or self.attr.replace("_", "-")

    def name_on(self, face: str) -> str:
        return (self.opt.http or self.name) if face == HTTP else self.name

    def required_on(self, face: str) -> bool:
        return self.required or (face in SERVED and self.opt.served_required)

    def bounds_on(self, face: str) -> tuple[float | None, float | None]:
        if face in SERVED and self.opt.served:
            return self.opt.served
        return self.opt.low, self.opt.high


def _kind(hint: Any) -> type:
    parts = (hint, *typing.get_args(hint))
    for t in (bool, int, float, list, Path):
        if any(p is t or typing.get_origin(p) is t for p in parts):
            return t
    return str


def _default(f: dataclasses.Field) -> Any:
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return f.default


_PARAMS: dict[type, tuple[Param, ...]] = {}


def params(options: type) -> tuple[Param, ...]:
    """Every option of an options class, its ``Filters`` spread in place, in order."""
    found = _PARAMS.get(options)
    if found is None:
        hints = typing.get_type_hints(options)
        out: list[Param] = []
        for f in dataclasses.fields(options):
            if f.metadata.get("kbx_filters"):
                out += [
                    dataclasses.replace(p, in_filters=True) for p in params(definitions.Filters)
                ]
                continue
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            default = None if required else _default(f)
            kind = _kind(hints[f.name])
            out.append(Param(f.metadata["kbx"], f.name, kind, default, required, False))
        found = _PARAMS[options] = tuple(out)
    return found


def on(options: type, face: str) -> tuple[Param, ...]:
    """The options of ``options`` that ``face`` takes."""
    return tuple(p for p in params(options) if face in p.opt.faces)


def build(options: type, values: dict[str, Any]) -> Any:
    """An options object from values by attribute (the CLI's, already typed): the filters
    gathered into their ``Filters``, a list left out an empty list."""
    top: dict[str, Any] = {}
    inner: dict[str, Any] = {}
    for p in params(options):
        if p.attr not in values:
            continue
        v = values[p.attr]
        if p.kind is list:
            v = list(v or ())
        _filled(p, _cli_name(p), v)
        (inner if p.in_filters else top)[p.attr] = v
    filters = [f.name for f in dataclasses.fields(options) if f.metadata.get("kbx_filters")]
    if filters:
        top[filters[0]] = definitions.Filters(**inner)
    return options(**top)


def given(options: type, raw: dict[str, Any], face: str, where: str, repeated: bool = False) -> Any:
    """An options object from a server's request: ``raw`` maps face names to JSON values
    (MCP's arguments, a JSON body: a list option takes one value or a list; null is left
    out), or with ``repeated`` to the list of each name's occurrences (a query string).
    An unknown name, a missing one, a value of the wrong kind or out of bounds is a
    ``BadArgument`` that names it."""
    raw = {k: v for k, v in raw.items() if v is not None}
    taken = {p.name_on(face): p for p in on(options, face)}
    unknown = sorted(set(raw) - set(taken))
    if unknown:
        raise BadArgument(
            f"{where} takes no {', '.join(unknown)}; it takes {', '.join(taken) or 'no parameters'}"
        )
    missing = [n for n, p in taken.items() if p.required_on(face) and n not in raw]
    if missing:
        raise BadArgument(f"{where} needs {', '.join(missing)}")
    values = {}
    for n, value in raw.items():
        p = taken[n]
        listed = value if repeated or (p.kind is list and isinstance(value, list)) else [value]
        values[p.attr] = coerce(p, n, listed, face)
    for p in taken.values():
        if p.attr not in values and face in p.opt.face_defaults:
            values[p.attr] = p.opt.face_defaults[face]
    return build(options, values)


def _filled(p: Param, name: str, value: Any) -> None:
    """Refuse an empty text where an argument or a filter needs one: ``kbx grep ''``
    would match everywhere, ``--entity ''`` would look up nothing at all."""
    if not (p.opt.argument or p.in_filters) or p.kind not in (str, list):
        return
    if any(isinstance(v, str) and not v.strip() for v in (value if p.kind is list else [value])):
        raise BadArgument(f"{name} is empty; it needs {p.opt.brief or p.opt.help.lower()}")


def _cli_name(p: Param) -> str:
    return (p.opt.metavar or p.name).upper() if p.opt.argument else f"--{p.name}"


def coerce(p: Param, name: str, raw: list, face: str) -> Any:
    """One option's value from a server's raw values, checked."""
    if p.kind is list:
        if not all(isinstance(v, str) for v in raw):
            raise BadArgument(f"{name} takes text values")
        _filled(p, name, raw)
        return [_short(name, v) for v in raw]
    if len(raw) != 1:
        raise BadArgument(f"give {name} once")
    v = raw[0]
    if p.kind is bool:
        if isinstance(v, bool):
            return v
        if str(v).lower() in ("1", "true", "yes", "on"):
            return True
        if str(v).lower() in ("0", "false", "no", "off"):
            return False
        raise BadArgument(f"{name} is true or false, got {v!r}")
    if p.kind in (int, float):
        n = _number(v, p.kind)
        if n is None:
            what = "a whole number" if p.kind is int else "a number"
            raise BadArgument(f"{name} must be {what}, got {v!r}")
        low, high = p.bounds_on(face)
        if (low is not None and n < low) or (high is not None and n > high):
            span = f"from {low:g} to {high:g}" if high is not None else f"at least {low:g}"
            raise BadArgument(f"{name} must be {span}, got {n:g}")
        return n
    if not isinstance(v, str):
        raise BadArgument(f"{name} takes text, got {v!r}")
    if p.opt.choices and v not in p.opt.choices:
        raise BadArgument(f"{name} {v!r}: choose from {', '.join(p.opt.choices)}")
    _filled(p, name, v)
    return _short(name, v)


def _number(v: Any, kind: type) -> int | float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int) or (kind is float and isinstance(v, float)):
        return kind(v)
    if isinstance(v, str) and len(v) < 12:
        try:
            return kind(v.strip())
        except ValueError:
            return None
    return None


def _short(name: str, value: str) -> str:
    if len(value) > TEXT_MAX:
        raise BadArgument(f"{name} is {len(value)} characters; at most {TEXT_MAX} are read")
    return value


_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", Path: "string"}


def schema(options: type, face: str = MCP) -> dict:
    """The JSON schema of a command's input on ``face``: lean, as a model reads it every
    turn (no titles, no null alternatives; a list option also takes one value)."""
    props: dict[str, dict] = {}
    required = []
    for p in on(options, face):
        s: dict[str, Any] = (
            {"type": "array", "items": {"type": "string"}}
            if p.kind is list
            else {"type": _JSON_TYPES[p.kind]}
        )
        if p.opt.choices:
            s["enum"] = list(p.opt.choices)
        low, high = p.bounds_on(face)
        if low is not None:
            s["minimum"] = low
        if high is not None:
            s["maximum"] = high
        default = p.opt.face_defaults.get(face, p.default)
        if default is not None and p.kind is not list:
            s["default"] = default
        s["description"] = p.opt.brief or p.opt.help
        props[p.name_on(face)] = s
        if p.required_on(face):
            required.append(p.name_on(face))
    out: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        out["required"] = required
    return out


def _flags(p: Param) -> str:
    o = p.opt
    if o.argument:
        return (o.metavar or p.name).upper()
    if o.negatable:
        return f"`--{p.name}` / `--no-{p.name}`"
    flags = o.flags or (f"--{p.name}", *((o.short,) if o.short else ()))
    return " ".join(f"`{f}`" for f in flags)


def _shown(p: Param) -> str:
    if p.required:
        return "required"
    if p.default in (None, [], False) or p.kind is list:
        return ""
    return f"`{p.default}`"


def reference() -> str:
    """docs/CLI.md: every command and its options, made from the definitions (as the
    faces are), so the reference cannot drift from what the CLI, MCP and HTTP accept;
    ``tests/test_faces.py`` holds the file equal to this and ``make docs`` writes it."""
    out = [
        "# Command reference",
        "",
        "Made from the command definitions (`options.py`) by `make docs`; do not edit by hand.",
        "Each option is the CLI's flag; the MCP tools and the HTTP API take the same name "
        "without dashes (`date-from`), where the last column says they take it. Every "
        "command also takes `--db PATH` and, but `gazetteer export`, `--json`.",
    ]
    for command in definitions.COMMANDS.values():
        faces = ", ".join(f for f in (definitions.CLI, MCP, HTTP) if f in command.faces)
        out += ["", f"## kbx {command.name}", "", f"Faces: {faces}."]
        if command.brief:
            out += ["", command.brief]
        rows = [p for p in params(command.options) if definitions.CLI in p.opt.faces]
        if not rows:
            continue
        out += ["", "| option | default | what it does | MCP, HTTP |", "| --- | --- | --- | --- |"]
        for p in rows:
            served = "yes" if SERVED & p.opt.faces and SERVED & command.faces else ""
            text = " ".join(p.opt.help.split()).replace("|", "\\|")
            out.append(f"| {_flags(p)} | {_shown(p)} | {text} | {served} |")
    return "\n".join(out) + "\n"
