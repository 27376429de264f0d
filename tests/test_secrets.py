"""chatjudge.secrets: no key chatjudge knows reaches a file. `--tools` functions that return
the run's OPENAI_API_KEY and the other built-in providers' keys (as text, inside JSON, in an
exception's message) answer `generate` and `simulate`; `run`, `report` and `export` then read
what they wrote, and no file any command wrote holds a key, the SQLite stores' bytes
included: each shows as its variable's name."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.stub_openai import StubServer

KEY_NAMES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "GEMINI_API_KEY",
             "GOOGLE_API_KEY")  # fmt: skip
TOOLS = '''
import os

NAMES = {names!r}

def search(query: str, step: int) -> str:
    """Look something up."""
    return "keys: " + " ".join(os.environ[name] for name in NAMES)

def lookup(query: str, step: int) -> dict:
    """Look a record up."""
    return {{"step": step, "keys": [os.environ[name] for name in NAMES]}}

def failing(query: str, step: int) -> str:
    """Fail, quoting the key."""
    raise RuntimeError("denied for " + os.environ["OPENAI_API_KEY"])

TOOLS = {{"search": search, "lookup": lookup, "failing": failing}}
'''


@pytest.fixture
def keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A fresh value of every key (the test's own: the process may have masked others), and
    the module `sectools:TOOLS` importable from the current directory, as `--tools` finds it."""
    (tmp_path / "sectools.py").write_text(TOOLS.format(names=KEY_NAMES), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return {name: f"sk-{name.lower()}-{uuid.uuid4().hex}" for name in KEY_NAMES}


def no_key_in_any_file(root: Path, keys: dict[str, str]) -> None:
    written = [p for p in root.rglob("*") if p.is_file()]
    assert any(p.name.endswith(".sqlite") for p in written)
    for path in written:
        data = path.read_bytes()
        for name, value in keys.items():
            assert value.encode() not in data, (path, name)


def tool_results(rows: list[dict], column: str) -> list[str]:
    return [m["content"] for row in rows for m in row[column] if m["role"] == "tool"]


def judged(data: Path, protocol: str, out: Path, keys: dict[str, str], stub: StubServer) -> None:
    """`run`, `report` and `export` on `data`."""
    env = {k: v for k, v in keys.items() if k != "OPENAI_API_KEY"}
    key = keys["OPENAI_API_KEY"]
    done = run_cli("run", str(data), "-p", protocol, "-j", "openai/judge", "--base-url",
                   stub.base_url, "--out", str(out), key=key, **env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert run_cli("report", str(out), key=key, **env).returncode == 0
    exported = run_cli("export", str(out), "--otlp", str(out.parent / f"{out.name}.otlp.jsonl"),
                       key=key, **env)  # fmt: skip
    assert exported.returncode == 0, exported.stderr


def test_generate_keeps_no_key_a_tool_returned(tmp_path: Path, keys: dict[str, str]) -> None:
    rows = [
        {"id": f"r-{name}", "prompt": f"Ask {name}", "baseline_model_response": "Base.",
         "tools": [{"name": name, "parameters": {"type": "object"}}]}
        for name in ("search", "lookup", "failing")
    ]  # fmt: skip
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "generated.jsonl"
    env = {k: v for k, v in keys.items() if k != "OPENAI_API_KEY"}
    with StubServer() as stub:
        done = run_cli("generate", str(data), "-m", "openai/stub", "--base-url", stub.base_url,
                       "--out", str(out), "--tools", "sectools:TOOLS",
                       key=keys["OPENAI_API_KEY"], **env)  # fmt: skip
        assert done.returncode == 0, done.stderr
        written = [json.loads(line) for line in out.read_text().splitlines()]
        results = tool_results(written, "response_trajectory")
        assert len(results) == 6
        shown = " ".join(f"[{name}]" for name in KEY_NAMES)
        assert results[:2] == [f"keys: {shown}"] * 2
        assert json.loads(results[2])["keys"] == [f"[{name}]" for name in KEY_NAMES]
        assert results[4] == "error: RuntimeError: denied for [OPENAI_API_KEY]"
        assert "[OPENAI_API_KEY]" in written[0]["response"]  # the model quoted the results
        judged(out, "pairwise-chat-quality", tmp_path / "run", keys, stub)
    no_key_in_any_file(tmp_path, keys)


def test_simulate_keeps_no_key_a_tool_returned(tmp_path: Path, keys: dict[str, str]) -> None:
    rows = [{"id": "q", "question": "What is in the index?", "answer": "Nothing."}]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "conversations.jsonl"
    env = {k: v for k, v in keys.items() if k != "OPENAI_API_KEY"}
    with StubServer() as assistant, StubServer() as user:
        user.configure(user_ends_after=2)
        done = run_cli("simulate", str(data), "-a", "openai/assistant", "-u", "openai/user",
                       "--assistant-base-url", assistant.base_url, "--user-base-url",
                       user.base_url, "--out", str(out), "--tools", "sectools:TOOLS",
                       "--max-turns", "3", key=keys["OPENAI_API_KEY"], **env)  # fmt: skip
        assert done.returncode == 0, done.stderr
        written = [json.loads(line) for line in out.read_text().splitlines()]
        results = tool_results(written, "chat")
        assert results and all(r.startswith("keys: [OPENAI_API_KEY]") for r in results)
        judged(out, "interactivity-accuracy", tmp_path / "run", keys, assistant)
    no_key_in_any_file(tmp_path, keys)
