# `make test` and `make demo` work on a fresh clone with nothing installed: they create
# .venv and install the package with every extra and the dev tools first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.demo-installed

# `make test-min` proves the extras' floors (pyproject.toml): a separate .venv-min gets the lowest
# release of every direct requirement that the others allow (uv's lowest-direct resolution; uv
# itself from PyPI through pip), then the suites that drive the SDKs run on it. Rebuilt from
# scratch when pyproject.toml changes, since an install over a newer release never downgrades.
MIN_VENV := .venv-min
MIN_BIN := $(MIN_VENV)/bin
MIN_STAMP := $(MIN_VENV)/.installed
MIN_TESTS := tests/llm/providers/test_contract.py tests/llm/test_mcp.py

# `make bench-peers` (optional, never needed by `make test`) compares Zerda with LiteLLM,
# any-llm, pydantic-ai and aisuite: they go into a separate .venv-peers with this package and
# the SDK extras, never into .venv. Current releases from PyPI, unpinned: the run records the
# versions. groq: bench_scaling's OpenAI raw side imports it. aisuite[mcp]: aisuite 0.2.0
# raises NameError for any dict tool when `mcp` is missing. BENCH_PEERS_ARGS=--quick: a smoke run.
PEERS_VENV := .venv-peers
PEERS_BIN := $(PEERS_VENV)/bin
PEERS_STAMP := $(PEERS_VENV)/.installed
BENCH_PEERS_ARGS ?=

.PHONY: install test lint typecheck pytest demo bench bench-peers clean test-min test-fast-path-off

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[all,dev]"
	$(BIN)/python -m pip install --quiet --no-deps "bfcl-eval>=2025.1"
	touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest -q -n auto

test: lint typecheck pytest

$(MIN_STAMP): pyproject.toml
	rm -rf $(MIN_VENV)
	$(PYTHON) -m venv $(MIN_VENV)
	$(MIN_BIN)/python -m pip install --quiet uv
	$(MIN_BIN)/uv pip install --quiet --python $(MIN_BIN)/python --resolution lowest-direct -e ".[all,dev]"
	touch $(MIN_STAMP)

test-min: $(MIN_STAMP)
	$(MIN_BIN)/pytest -q -n auto -p no:cacheprovider $(MIN_TESTS)

# The contract suite with every interface's fast path off: the SDKs' documented calls.
test-fast-path-off: $(STAMP)
	ZERDA_FAST_PATH=0 $(BIN)/pytest -q -n auto -p no:cacheprovider tests/llm/providers/test_contract.py

# The demo needs the SDKs and the command line only, not the dev tools: a fresh clone's
# `make demo` installs just those (into the same .venv, so a later `make test` adds the rest).
$(DEMO_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -e ".[demo]"
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/zerda demo

bench: $(STAMP)
	$(BIN)/python benchmarks/run.py

$(PEERS_STAMP): pyproject.toml
	test -x $(PEERS_BIN)/python || $(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_BIN)/python -m pip install --quiet --upgrade pip
	$(PEERS_BIN)/python -m pip install --quiet --upgrade -e ".[openai,groq,anthropic,gemini]" \
		litellm any-llm-sdk "pydantic-ai-slim[openai,anthropic,google]" "aisuite[mcp]"
	touch $(PEERS_STAMP)

bench-peers: $(PEERS_STAMP)
	$(PEERS_BIN)/python benchmarks/peers/run_peers.py $(BENCH_PEERS_ARGS)

clean:
	rm -rf $(VENV) $(MIN_VENV) $(PEERS_VENV) .pytest_cache .mypy_cache .ruff_cache
