"""How the CLI lists the units and documents a recognizer or the document context failed
on (annotate/failures.py), after the files that failed: one line each, as theirs."""

from __future__ import annotations

from kbx import api
from kbx.cli.common import escape, out

SHOWN = 10  # lines; --json lists them all


def unit_failures(failures: list[dict], retry: str) -> None:
    """The failures, and that the rest of each file went in; ``retry`` says when a unit a
    recognizer failed on is tried again (a value or a document's context, when it changes)."""
    for f in failures[:SHOWN]:
        out.print(f"  [yellow]![/] {escape(api.failure_line(f))}")
    if len(failures) > SHOWN:
        out.print(f"  … and {len(failures) - SHOWN} more (--json lists them)", markup=False)
    if failures:
        units = any(f["stage"] == "recognize" for f in failures)
        again = f"; the units a recognizer failed on are {retry}" if units else ""
        out.print(f"  (only these failed: the rest of each file is in{again})", markup=False)
