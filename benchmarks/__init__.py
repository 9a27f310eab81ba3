"""kbx's benchmarks: side-by-side runs on the evaluation data in ``../shared/eval``.

Run one with ``python -m benchmarks NAME [ARGS]`` from the repository root; ``python -m
benchmarks`` lists them, a line each (the registry is in ``__main__.py``). Each script
still runs on its own too (``python benchmarks/NAME.py``), as the history in
docs/benchmarks-history.md quotes them. The current figures are in docs/BENCHMARKS.md.
"""
