# Two set-up commands, each creating its own environment from a fresh clone:
#   make demo   judge the bundled examples with the embedded local judge (no key, no network)
#   make test   install everything (incl. Debian's Chromium for the report tests) and run the suite
# llama-cpp-python builds from source the first time (about 9 minutes on 2 cores); pip's wheel
# cache makes later installs fast.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_OUT ?= chatjudge-runs/demo

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.demo-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[local]'
	touch $@

$(VENV)/.test-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[all,test]'
	touch $@ $(VENV)/.demo-installed

/usr/bin/chromium:
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null

demo: $(VENV)/.demo-installed
	@status=0; \
	$(BIN)/chatjudge run examples/interactivity_accuracy.jsonl --protocol interactivity-accuracy \
		--out $(DEMO_OUT)/interactivity-accuracy || status=$$?; \
	$(BIN)/chatjudge run examples/pairwise_chat_quality.jsonl --protocol pairwise-chat-quality \
		--out $(DEMO_OUT)/pairwise-chat-quality || status=$$?; \
	exit $$status

test: $(VENV)/.test-installed /usr/bin/chromium
	$(BIN)/python -m pytest

lint: $(VENV)/.test-installed
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy src

bench: $(VENV)/.test-installed
	$(BIN)/python bench/run_engine.py

clean:
	rm -rf $(VENV) chatjudge-runs test-output
