"""Every named error lives in kbx.errors, has the exit code the README says, and is listed."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import kbx.errors as errors

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def _named() -> dict[str, type]:
    return {
        n: c
        for n, c in vars(errors).items()
        if inspect.isclass(c) and issubclass(c, BaseException) and c.__module__ == errors.__name__
    }


def test_every_named_error_is_in_the_readme_table_with_its_exit_code():
    rows = re.findall(r"^\| (`[^|]+`) \| ([\d—]+) \|", README, re.M)
    listed = {n: code for names, code in rows for n in re.findall(r"`(\w+)`", names)}
    assert set(listed) == set(_named())
    for name, cls in _named().items():
        if listed[name] != "—":
            assert cls.exit_code == int(listed[name]), name


def test_no_module_outside_errors_defines_an_error_class():
    root = Path(errors.__file__).resolve().parent
    skip = {"tests", "benchmarks", "examples", ".venv", "docs", "build"}
    found = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root)
        if rel.parts[0] in skip or rel.name == "errors.py" or rel.parts[0].startswith("."):
            continue
        for m in re.finditer(r"^class (\w+)\((\w*(?:Error|Exception)\w*)\)", path.read_text()):
            found.append(f"{rel}: {m[1]}({m[2]})")
    assert found == []
