"""Every output a refactor must leave byte for byte, written by one version of chatjudge.

`bench/compare_refs.py --identity` runs this script once per git ref, with that ref's
`src/` first on PYTHONPATH, in the same working directory (so paths written into outputs
match), and compares what it prints. The stand-in servers are this checkout's
(`tests.support`, which imports no chatjudge), so only chatjudge differs between the refs.

Scenarios, each with the OpenAI stand-in as every model (the demo's two runs may use the
embedded judge instead, `--judge local`):
- `demo`: `make demo`'s runs of both seed protocols;
- `tool-trajectory`: the bundled tool-call rows, judged by `tool-trajectory`;
- `agent`: `import` of the recorded agent, `generate --tool-replay`, `run`, `gate`
  (`gate.json`), `export --otlp`;
- `simulate-tools`: `simulate --tools` with a scripted tools module;
- `agree`: `agree` on the pairwise demo run with scripted human labels (`agreement.json`);
- `align`: `align` on the align stand-in's rows (`alignment.json`, `protocol.toml`).

    python bench/identity_outputs.py WORKDIR OUT.json [--judge stub|local] [--drop KEY,...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.support import align_standin  # noqa: E402 - this checkout's stand-ins
from tests.support.stub_openai import StubServer  # noqa: E402

EXAMPLES = ROOT / "examples"
# What differs between two runs of the same thing: clock times and measured durations.
MASKED = frozenset(
    {"latency", "created", "finished", "started", "seconds", "elapsed"}
    | {"timeUnixNano", "observedTimeUnixNano", "startTimeUnixNano", "endTimeUnixNano"}
)
# OTLP attributes that differ between two exports of the same run: the exporting process's id.
MASKED_ATTRIBUTES = frozenset({"service.instance.id"})
# Loopback stand-ins listen on a port of the moment.
LOOPBACK = re.compile(r"127\.0\.0\.1:\d+")
TOOLS = '''
def lookup(city: str, unit: str = "C") -> str:
    """Scripted: the same answer for the same arguments."""
    return f"{len(city) * 3} {unit}"


TOOLS = {"lookup": lookup}
'''


# Keys left out with --drop (a change that adds them on purpose, so that the rest is compared):
# a dict's key of that name, or an OTLP attribute whose key starts with it.
DROPPED: set[str] = set()


def mask(value: Any) -> Any:
    """`value` with every MASKED key's value replaced by "<masked>", at any depth."""
    if isinstance(value, dict):
        if value.get("key") in MASKED_ATTRIBUTES:
            return {**value, "value": "<masked>"}
        return {
            k: "<masked>" if k in MASKED else mask(v) for k, v in value.items() if k not in DROPPED
        }
    if isinstance(value, list):
        return [mask(v) for v in value if not _dropped_attribute(v)]
    if isinstance(value, str):
        return LOOPBACK.sub("127.0.0.1:<port>", value)
    return value


class Scenario:
    """One scenario's working folder, commands and collected outputs."""

    def __init__(self, work: Path, name: str, outputs: dict[str, str]) -> None:
        self.dir = work / name
        self.dir.mkdir(parents=True)
        self.name = name
        self.outputs = outputs

    def cli(self, *args: str, ok: tuple[int, ...] = (0,), **env: str) -> None:
        command = [sys.executable, "-m", "chatjudge.cli", *args]
        environ = {**os.environ, "OPENAI_API_KEY": "dummy", "COLUMNS": "120", **env}
        done = subprocess.run(command, cwd=self.dir, env=environ, capture_output=True, text=True)
        if done.returncode not in ok:
            raise RuntimeError(f"{' '.join(args)}: exit {done.returncode}\n{done.stderr[-3000:]}")

    def keep(self, relative: str) -> None:
        """A JSON or JSONL output, masked, under `<scenario>/<relative>`."""
        path = self.dir / relative
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".jsonl":
            rows = (mask(json.loads(line)) for line in text.splitlines() if line.strip())
            kept = "\n".join(json.dumps(row, sort_keys=True) for row in rows)
        elif path.suffix == ".json":
            kept = json.dumps(mask(json.loads(text)), indent=1, sort_keys=True)
        else:
            kept = LOOPBACK.sub("127.0.0.1:<port>", text)
        self.outputs[f"{self.name}/{relative}"] = kept


def demo(s: Scenario, stub: StubServer, judge: str) -> None:
    judged = ("--judge", "openai/stub", "--base-url", stub.base_url) if judge == "stub" else ()
    for example, protocol in (
        ("interactivity_accuracy.jsonl", "interactivity-accuracy"),
        ("pairwise_chat_quality.jsonl", "pairwise-chat-quality"),
    ):
        s.cli("run", str(EXAMPLES / example), "--protocol", protocol, "--out", protocol, *judged)
        s.keep(f"{protocol}/results.jsonl")
        s.keep(f"{protocol}/summary.json")


def tool_trajectory(s: Scenario, stub: StubServer, judge: str) -> None:
    s.cli("run", str(EXAMPLES / "tool_calls.jsonl"), "-p", "tool-trajectory", "--out", "run")
    s.keep("run/results.jsonl")
    s.keep("run/summary.json")


def agent(s: Scenario, stub: StubServer, judge: str) -> None:
    s.cli("import", str(EXAMPLES / "traces" / "otel-agent.jsonl"), "--keep", "user.tier",
          "--out", "rows.jsonl")  # fmt: skip
    s.cli("generate", "rows.jsonl", "--field", "response", "-m", "openai/stub", "--base-url",
          stub.base_url, "--tool-replay", "--out", "replayed.jsonl")  # fmt: skip
    s.cli("run", "replayed.jsonl", "-p", "pairwise-chat-quality", "-j", "openai/stub",
          "--base-url", stub.base_url, "--out", "judged")  # fmt: skip
    s.cli("gate", "judged", "--by", "user.tier", ok=(0, 1, 3))
    s.cli("export", "judged", "--otlp", "judged.otlp.jsonl")
    for output in ("rows.jsonl", "replayed.jsonl", "replayed.summary.json", "judged/results.jsonl",
                   "judged/summary.json", "judged/gate.json", "judged.otlp.jsonl"):  # fmt: skip
        s.keep(output)


def simulate_tools(s: Scenario, stub: StubServer, judge: str) -> None:
    (s.dir / "scripted_tools.py").write_text(TOOLS, encoding="utf-8")
    path = f"{os.environ['PYTHONPATH']}:{s.dir}"  # --tools imports the module from there
    with StubServer() as user:
        user.configure(user_ends_after=2)
        s.cli("simulate", str(EXAMPLES / "questions.jsonl"), "-a", "openai/assistant", "-u",
              "openai/user", "--assistant-base-url", stub.base_url, "--user-base-url",
              user.base_url, "--tools", "scripted_tools:TOOLS", "--max-turns", "3",
              "--out", "conversations.jsonl", PYTHONPATH=path)  # fmt: skip
    s.keep("conversations.jsonl")
    s.keep("conversations.summary.json")


def agree(s: Scenario, stub: StubServer, judge: str) -> None:
    s.cli("run", str(EXAMPLES / "pairwise_chat_quality.jsonl"), "-p", "pairwise-chat-quality",
          "-j", "openai/stub", "--base-url", stub.base_url, "--out", "run")  # fmt: skip
    ids = [json.loads(line)["id"] for line in (s.dir / "run" / "results.jsonl").open()]
    labels = "".join(json.dumps({"id": i, "label": "AB"[_bit(i)]}) + "\n" for i in ids)
    (s.dir / "labels.jsonl").write_text(labels, encoding="utf-8")
    s.cli("agree", "run", "--human", "labels.jsonl")
    s.keep("run/agreement.json")


def align(s: Scenario, stub: StubServer, judge: str) -> None:
    rows = align_standin.rows(150)
    (s.dir / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    labels = "".join(json.dumps({"id": r["id"], "label": align_standin.policy(r["id"])}) + "\n"
                     for r in rows)  # fmt: skip
    (s.dir / "labels.jsonl").write_text(labels, encoding="utf-8")
    with StubServer(replies=align_standin.standin_reply) as standin:
        s.cli("run", "rows.jsonl", "-p", "pairwise-chat-quality", "-j", "openai/stub",
              "--base-url", standin.base_url, "--no-flip", "--out", "run")  # fmt: skip
        s.cli("align", "run", "--human", "labels.jsonl", "--optimizer", "openai/stub",
              "--base-url", standin.base_url, "--out", "aligned", ok=(0, 3))  # fmt: skip
    s.keep("aligned/alignment.json")
    s.keep("aligned/protocol.toml")


def _bit(text: str) -> int:
    return hashlib.sha256(text.encode()).digest()[0] & 1


SCENARIOS: dict[str, Callable[[Scenario, StubServer, str], None]] = {
    "demo": demo,
    "tool-trajectory": tool_trajectory,
    "agent": agent,
    "simulate-tools": simulate_tools,
    "agree": agree,
    "align": align,
}


def _dropped_attribute(value: Any) -> bool:
    key = value.get("key") if isinstance(value, dict) else None
    return isinstance(key, str) and any(key.startswith(d) for d in DROPPED)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("work", type=Path, help="an empty folder, the same path for every ref")
    parser.add_argument("out", type=Path, help="where to write {output name: masked text}")
    parser.add_argument("--judge", choices=("stub", "local"), default="stub")
    parser.add_argument("--drop", default="", help="KEY,...: keys left out of the comparison")
    args = parser.parse_args(argv)
    DROPPED.update(k for k in args.drop.split(",") if k)
    outputs: dict[str, str] = {}
    with StubServer() as stub:
        for name, scenario in SCENARIOS.items():
            scenario(Scenario(args.work, name, outputs), stub, args.judge)
    args.out.write_text(json.dumps(outputs), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
