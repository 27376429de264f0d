# Two set-up commands, each creating its own environment from a fresh clone:
#   make demo   judge the bundled examples with the embedded local judge (no key, no network)
#   make test   install everything (incl. Debian's Chromium for the report tests) and run the suite
# llama-cpp-python builds from source the first time (4-12 minutes on 2 cores), safely (no
# native CPU detection, so no AMX), into a wheel folder named after its version and flags
# (scripts/llama-wheel.sh); installs take it from there and never from pip's own wheel cache.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_OUT ?= chatjudge-runs/demo

.PHONY: demo demo-simulate demo-traces demo-agent demo-realism test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# --only-binary: pip may take llama-cpp-python only as the wheel built by the script.
$(VENV)/.demo-installed: pyproject.toml scripts/llama-wheel.sh | $(BIN)/python
	wheels=$$(bash scripts/llama-wheel.sh $(BIN)/python) && \
	$(BIN)/pip install --quiet --find-links "$$wheels" --only-binary llama-cpp-python -e '.[local]'
	touch $@

$(VENV)/.test-installed: pyproject.toml scripts/llama-wheel.sh | $(BIN)/python
	wheels=$$(bash scripts/llama-wheel.sh $(BIN)/python) && \
	$(BIN)/pip install --quiet --find-links "$$wheels" --only-binary llama-cpp-python -e '.[all,test]'
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

# The whole offline pipeline: simulated conversations with the embedded model in both roles,
# then judged for interactivity and accuracy.
demo-simulate: $(VENV)/.demo-installed
	$(BIN)/chatjudge simulate examples/questions.jsonl --assistant local --user local \
		--max-turns 2 --max-tokens 128 --user-max-tokens 160 --out $(DEMO_OUT)/simulated.jsonl
	$(BIN)/chatjudge run $(DEMO_OUT)/simulated.jsonl --protocol interactivity-accuracy \
		--out $(DEMO_OUT)/simulated-judged

# From production traces to a verdict, offline: import the bundled OpenTelemetry export, let
# the embedded model answer each conversation's last user turn as the candidate (it cannot
# call tools: --no-tools shows it production's tool calls as text, and the summary counts the
# rows it answered so), judge it against production's reply, and gate (1 fail and 3
# inconclusive are verdicts, not errors).
demo-traces: $(VENV)/.demo-installed
	$(BIN)/chatjudge import examples/traces/otel-genai.jsonl --keep user.tier \
		--out $(DEMO_OUT)/traces/rows.jsonl
	$(BIN)/chatjudge generate $(DEMO_OUT)/traces/rows.jsonl --field response --model local \
		--no-tools --max-tokens 128 --out $(DEMO_OUT)/traces/replayed.jsonl
	$(BIN)/chatjudge run $(DEMO_OUT)/traces/replayed.jsonl -p pairwise-chat-quality \
		--out $(DEMO_OUT)/traces/judged
	$(BIN)/chatjudge gate $(DEMO_OUT)/traces/judged --by user.tier || { s=$$?; [ $$s = 1 ] || [ $$s = 3 ]; }

# An assistant that acts, offline: import the recorded support agent's traces (its tool calls
# kept as calls, production's trajectory as the baseline), let a scripted next version answer
# each last turn with the recorded tool results replayed (the embedded model cannot call
# tools: examples/traces/candidate_agent.py stands in for the candidate), judge both
# trajectories with the embedded model, and gate.
demo-agent: $(VENV)/.demo-installed
	mkdir -p $(DEMO_OUT)/agent && rm -f $(DEMO_OUT)/agent/candidate.url
	$(BIN)/chatjudge import examples/traces/otel-agent.jsonl --keep user.tier \
		--out $(DEMO_OUT)/agent/rows.jsonl
	$(BIN)/python examples/traces/candidate_agent.py $(DEMO_OUT)/agent/candidate.url & pid=$$!; \
	trap 'kill $$pid' EXIT; \
	for i in $$(seq 100); do [ -s $(DEMO_OUT)/agent/candidate.url ] && break; sleep 0.1; done; \
	$(BIN)/chatjudge generate $(DEMO_OUT)/agent/rows.jsonl --field response \
		--model openai/parcelo-next --base-url "$$(cat $(DEMO_OUT)/agent/candidate.url)" \
		--tool-replay --out $(DEMO_OUT)/agent/replayed.jsonl
	$(BIN)/chatjudge run $(DEMO_OUT)/agent/replayed.jsonl -p pairwise-chat-quality \
		--out $(DEMO_OUT)/agent/judged
	$(BIN)/chatjudge gate $(DEMO_OUT)/agent/judged --by user.tier || { s=$$?; [ $$s = 1 ] || [ $$s = 3 ]; }

# Simulated users against real ones, offline: the first 4 of the bundled real conversations,
# each turned into a goal, simulated once with the embedded model as assistant and user, and
# compared; the embedded model also writes the goals and judges. It shows the mechanics, not
# verdicts to trust (a small model, 4 goals: nothing can be claimed).
demo-realism: $(VENV)/.demo-installed
	mkdir -p $(DEMO_OUT)/realism
	head -n 4 examples/traces/real_conversations.jsonl > $(DEMO_OUT)/realism/real.jsonl
	$(BIN)/chatjudge realism $(DEMO_OUT)/realism/real.jsonl --assistant local --user local \
		--max-turns 2 --max-tokens 160 --user-max-tokens 96 --out $(DEMO_OUT)/realism/out

# The import layers first (pyproject's [tool.importlinter]): a broken one fails the build.
# pytest with bytecode written even where PYTHONDONTWRITEBYTECODE is set: the suite starts
# hundreds of `chatjudge` processes, each of which would otherwise compile src/ again (about
# 0.06 s of CPU each, 13% of a typical one); from the second run on, each pytest-xdist worker
# also collects in about 4 s of CPU instead of 7.
test: $(VENV)/.test-installed /usr/bin/chromium
	$(BIN)/lint-imports --no-cache --no-logo
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest

lint: $(VENV)/.test-installed
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy src
	$(BIN)/lint-imports --no-cache --no-logo

bench: $(VENV)/.test-installed
	$(BIN)/python bench/fixed_cost.py
	$(BIN)/python bench/run_engine.py
	$(BIN)/python bench/local_judge.py
	$(BIN)/python bench/simulate.py
	$(BIN)/python bench/ray_executor.py
	$(BIN)/python bench/import_traces.py
	$(BIN)/python bench/import_junk.py

clean:
	rm -rf $(VENV) chatjudge-runs test-output
