# make demo: the main job on a fresh machine (no API key needed).
# make test: lint, type-check and the whole test suite, installing what they need.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
HASH := $(shell sha256sum pyproject.toml | cut -c1-16)
DEMO_STAMP := $(VENV)/.stamp-demo-$(HASH)
DEV_STAMP := $(VENV)/.stamp-dev-$(HASH)
KERNEL := $(VENV)/share/jupyter/kernels/chatlas-like/kernel.json

.PHONY: demo test lint typecheck pytest docs bench system-deps clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(DEMO_STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[demo]'
	touch $@

$(DEV_STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[dev]'
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

# The Jupyter kernel the notebook tests run: the venv's own interpreter.
$(KERNEL): $(DEV_STAMP)
	$(PY) -m ipykernel install --sys-prefix --name chatlas-like --display-name "chatlas_like (.venv)" >/dev/null

pytest: $(DEV_STAMP) $(KERNEL) system-deps
	$(PY) -m pytest -rs

# The documentation site, built offline; any warning fails it.
docs: $(DEV_STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

test: lint typecheck pytest docs

bench: $(DEV_STAMP)
	$(PY) -m benchmarks.run

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache site
