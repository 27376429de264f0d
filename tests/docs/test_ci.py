"""docs/ci.md works as written: the workflow's `run:` steps, executed by bash in order against
a stand-in judge, judge, gate and write the step summary; the baseline cached is not paid
twice; and the pytest example passes on the runs they made."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.support.stub_openai import StubServer

DOC = Path(__file__).resolve().parents[2] / "docs" / "ci.md"
BIN = Path(sys.executable).parent
INSTALL_STEP = "Install chatjudge"  # replaced by this checkout's environment


def block(language: str) -> str:
    found = re.findall(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(found) == 1, f"docs/ci.md should hold one {language} block"
    return found[0]


def steps() -> list[dict[str, Any]]:
    workflow = yaml.safe_load(block("yaml"))
    (job,) = workflow["jobs"].values()
    return [s for s in job["steps"] if "run" in s]


def rows(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"q{i}",
            "question": f"What is {i} + {i}?",
            "answer": str(2 * i),
            "chat": [
                {"role": "user", "content": f"what's {i}+{i}?"},
                {"role": "assistant", "content": f"It is {2 * i}."},
            ],
        }
        for i in range(n)
    ]


def bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # GitHub runs a `run:` step as `bash --noprofile --norc -eo pipefail {0}`
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_workflow_steps_run_and_gate(tmp_path: Path) -> None:
    run_steps = steps()
    names = [s["name"] for s in run_steps]
    assert names[0] == INSTALL_STEP and run_steps[0]["run"].startswith("pip install chatjudge")
    evals = tmp_path / "evals"
    evals.mkdir()
    n = 150
    data = "".join(json.dumps(r) + "\n" for r in rows(n))
    # The candidate's conversations are the baseline's: the stand-in judge, a function of
    # the prompt, then gives both the same verdicts, and the gate passes (Δ = 0). Rows that
    # never differ are a small sample: on a 1-3 score, 147 of them are the fewest that pass
    # a margin of 0.05 (docs/statistics.md, "Small samples").
    (evals / "baseline.jsonl").write_text(data, encoding="utf-8")
    (evals / "candidate.jsonl").write_text(data, encoding="utf-8")
    m = 10  # the judge check: 3 calls per item in each run, beside the rows
    check = [{**r, "id": f"check-{r['id']}", "label": 2} for r in rows(m)]
    (evals / "judge_check.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in check), encoding="utf-8"
    )
    summary = tmp_path / "step-summary.md"
    with StubServer() as stub:
        env = {
            **os.environ,
            "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "JUDGE": "openai/stub",
            "PROTOCOL": "interactivity-accuracy",
            "OPENAI_API_KEY": "sk-test",
            "OPENAI_BASE_URL": stub.base_url,
            "GITHUB_STEP_SUMMARY": str(summary),
        }
        sent = []
        for step in run_steps[1:]:
            done = bash(step["run"], tmp_path, env)
            assert done.returncode == 0, (step["name"], done.stdout, done.stderr)
            sent.append(stub.stats.requests)
        # each run judged its rows once, and the check's items 3 times each
        assert sent[0] == n + 3 * m and sent[1] == 2 * (n + 3 * m)
        # A second job with the baseline restored from the cache sends nothing for it.
        done = bash(run_steps[1]["run"], tmp_path, env)
        assert done.returncode == 0 and stub.stats.requests == 2 * (n + 3 * m)
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("### chatjudge gate: ✅ pass")
    history = text[text.index("### chatjudge history:") :]  # appended after the gate's
    assert history.startswith("### chatjudge history: ✅ no regression")
    assert "| interactivity | baseline → candidate | +0.0000 |" in history
    assert (tmp_path / "runs" / "history.html").is_file()
    assert "| +0.0000 | [-0.0488, +0.0488] | 0.05 (not-worse) | pass |" in text
    header = "| Δ | 95% CI | margin | outcome | MDE (80%) | pairs | unpaired / failed |"
    assert header in text and header in DOC.read_text(encoding="utf-8")  # the doc's example
    assert (tmp_path / "runs" / "candidate" / "gate.json").is_file()
    report = (tmp_path / "runs" / "candidate" / "report.html").read_text(encoding="utf-8")
    assert 'data-section="gate"' in report
    gate = json.loads((tmp_path / "runs" / "candidate" / "gate.json").read_text("utf-8"))
    assert gate["judge_check"]["n_items"] == m and not gate["judge_check"]["changed"]

    # The pytest example, on the run directories the workflow made.
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_quality_gate.py").write_text(block("python"), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": ""},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
