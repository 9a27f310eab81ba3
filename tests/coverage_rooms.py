"""Coverage by room (the package's top-level folders, and its top-level modules together), from
the JSON report `make coverage` writes, as a Markdown table for docs/TESTING.md.

    python tests/coverage_rooms.py build/coverage/coverage.json
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path


def rooms(report: dict) -> dict[str, tuple[int, int]]:
    """Room name: (statements, statements run)."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for name, data in report["files"].items():
        parts = Path(name).parts
        room = f"{parts[0]}/" if len(parts) > 1 else "top-level modules"
        totals[room][0] += data["summary"]["num_statements"]
        totals[room][1] += data["summary"]["covered_lines"]
    return {room: (n, run) for room, (n, run) in sorted(totals.items())}


def main(path: str) -> None:
    report = json.loads(Path(path).read_text())
    print("| room | statements | run | coverage |")
    print("|------|-----------:|----:|---------:|")
    for room, (n, run) in rooms(report).items():
        print(f"| {room} | {n} | {run} | {100 * run / n:.1f}% |")
    t = report["totals"]
    print(
        f"| **total** | {t['num_statements']} | {t['covered_lines']} | "
        f"{t['percent_covered']:.1f}% |"
    )


if __name__ == "__main__":
    main(sys.argv[1])
