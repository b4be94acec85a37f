# make demo: the main job on a fresh machine (no API key needed).
# make test: lint, type-check, the whole test suite, the docs and the floor smoke run,
# installing what they need (Python packages into .venv; PostgreSQL and Chromium with apt
# when missing, see scripts/system-deps.sh).
# make test SKIP_BROWSER=1: neither installs Chromium nor runs the browser tests (each
# is reported skipped; under CI=true a skip is a failure).
# make docs: the site in site/, to open from disk (site/index.html); make docs-serve
# serves it on 127.0.0.1 (the search box needs a server).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# pyproject.toml declares the ranges users get; constraints.txt the exact versions tested.
# A change to either reinstalls (the stamps are keyed on both).
HASH := $(shell cat pyproject.toml constraints.txt | sha256sum | cut -c1-16)
DEMO_STAMP := $(VENV)/.stamp-demo-$(HASH)
DEV_STAMP := $(VENV)/.stamp-dev-$(HASH)
KERNEL_STAMP := $(VENV)/.stamp-kernel-$(HASH)
# An editable install makes setuptools print a note ("Editable installation ... folders
# with the same name as your package") that asks nothing of the user: silence that one.
QUIET_BUILD := PYTHONWARNINGS="ignore:Editable installation:UserWarning"
# The floors: the core and [demo] at the lowest versions pyproject.toml allows.
FLOOR := .venv-floor
FLOOR_HASH := $(shell $(PYTHON) scripts/floors.py pins | sha256sum | cut -c1-16)
FLOOR_STAMP := $(FLOOR)/.stamp-$(FLOOR_HASH)

DOCS_PORT ?= 8000

.PHONY: demo test lint typecheck pytest docs docs-serve floor-smoke bench chatlas-suite system-deps clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(DEMO_STAMP): pyproject.toml constraints.txt | $(PY)
	$(QUIET_BUILD) $(PY) -m pip install -q -c constraints.txt -e '.[demo]'
	touch $@

$(DEV_STAMP): pyproject.toml constraints.txt | $(PY)
	$(QUIET_BUILD) $(PY) -m pip install -q -c constraints.txt -e '.[dev]'
	touch $@ $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(PY) -m chatlas_like demo

system-deps:
	bash scripts/system-deps.sh

lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(DEV_STAMP)
	$(VENV)/bin/basedpyright

# The stock `python3` kernelspec, inside the venv (--sys-prefix): the venv's nbclient
# finds it before any system kernel, so the notebooks run on the venv's interpreter.
# (ipykernel's wheel ships a python3 spec that runs a bare `python`: this replaces it.)
$(KERNEL_STAMP): $(DEV_STAMP)
	$(PY) -m ipykernel install --sys-prefix >/dev/null
	touch $@

# The suite starts many Python processes (notebook kernels, the console, the demo, MCP
# servers, crash scripts). On a machine with PYTHONDONTWRITEBYTECODE=1 none of them
# writes bytecode, so each would compile the package again: compile it once first, as
# an installed wheel is (compileall writes regardless; an up-to-date file is skipped).
pytest: $(DEV_STAMP) $(KERNEL_STAMP) system-deps
	$(PY) -m compileall -q -x '/(\.venv|results)' chatlas_like tests benchmarks
	$(PY) -m pytest -rs

# The documentation site, built offline; any warning fails it. Its links name pages
# (use_directory_urls: false), so site/index.html opens from disk.
docs: $(DEV_STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site
	@echo "docs: open file://$(CURDIR)/site/index.html, or run make docs-serve for search"

# The built site on 127.0.0.1 (Material's search reads its index with a request, which
# a browser refuses from file://). Ctrl-C stops it.
docs-serve: docs
	$(PY) -m http.server --bind 127.0.0.1 --directory site $(DOCS_PORT)

# A venv of its own with every floor installed exactly: import, demo, one tool round.
$(FLOOR_STAMP):
	rm -rf $(FLOOR)
	$(PYTHON) -m venv $(FLOOR)
	$(PYTHON) scripts/floors.py pins > $(FLOOR)/floors.txt
	$(QUIET_BUILD) $(FLOOR)/bin/python -m pip install -q -c $(FLOOR)/floors.txt -e '.[demo]'
	touch $@

floor-smoke: $(FLOOR_STAMP)
	$(FLOOR)/bin/python scripts/floors.py smoke

test: lint typecheck pytest docs floor-smoke

bench: $(DEV_STAMP)
	$(PY) -m benchmarks.run

# chatlas 0.23.0's own tests (downloaded into .chatlas-suite/) run against chatlas_like
# through an import alias; not part of `make test`.
chatlas-suite: $(DEV_STAMP)
	$(PY) scripts/chatlas_suite.py

clean:
	rm -rf $(VENV) $(FLOOR) .pytest_cache .ruff_cache site .chatlas-suite
