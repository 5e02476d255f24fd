# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
# Both create .venv and install what is missing; a rerun installs nothing new.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PIP := $(PY) -m pip --disable-pip-version-check
SCIFACT ?= ../shared/data/scifact

.PHONY: install test test-fast lint demo bench bench-scale quality clean

install: $(STAMP)

$(STAMP): pyproject.toml packages/haiku-core/pyproject.toml packages/haiku-ingester/pyproject.toml packages/haiku-rag-cli/pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@# CPU torch first: otherwise pip pulls a multi-GB CUDA build.
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e 'packages/haiku-core[local,convert]' -e 'packages/haiku-ingester[ray,s3]' -e packages/haiku-rag-cli -e '.[dev]'
	@# The packages' bytecode, written once: where PYTHONDONTWRITEBYTECODE is set, every command
	@# would otherwise compile the haiku sources again (docs/cli.md, "Start-up time").
	@$(PY) -m compileall -q packages/*/src > /dev/null
	@# The query encoder's ONNX export, made once so that no first search waits for it.
	@HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(VENV)/bin/haiku-rag download-models > /dev/null \
		|| echo "note: the query encoder will be prepared by the first search (haiku-rag download-models failed)"
	@touch $(STAMP)

# Tests run on every core (pytest-xdist), a test file per worker at a time so that a module's
# shared fixture is built once; TEST_WORKERS=0 runs them in this process.
TEST_WORKERS ?= auto

test: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# The edit loop: everything but the tests marked slow (daemons, OCR, models, end-to-end runs).
# `make test` (and .ci/run) still runs the whole suite.
test-fast: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile -m "not slow" $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check packages tests bench tools
	$(PY) tools/commit_subjects.py

demo: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 bash examples/demo.sh

bench: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PY) bench/ingest.py --scifact $(SCIFACT)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PY) bench/search.py --scifact $(SCIFACT)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PY) bench/cli.py --scifact $(SCIFACT)

bench-scale: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PY) bench/scale.py --scifact $(SCIFACT)

quality: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PY) bench/quality.py --scifact $(SCIFACT)

clean:
	rm -rf $(VENV) .pytest_cache
