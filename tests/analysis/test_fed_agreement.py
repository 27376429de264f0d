"""End to end on real human ratings: the `local` judge rates FED dialogues with the shipped
1-5 chat quality protocol, then `chatjudge agree` correlates it with the mean human Overall.

The correlation is reported, not asserted high: the local model has 135M parameters.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FED = ROOT.parent / "shared" / "data" / "fed" / "fed_data.json"
N_DIALOGUES = 6  # each costs the local judge ~4 s of CPU; 6 make a correlation


def fed_items(n: int) -> tuple[list[dict], list[dict]]:
    """The `n` shortest dialog-level FED records as (history, prompt, response) items, and
    their human ratings: the judge spends ~10 ms of CPU a prompt token, and the shortest
    dialogues are rated as the others are (every dialogue by 5 raters)."""
    records = [r for r in json.loads(FED.read_text(encoding="utf-8")) if "response" not in r]
    items, ratings = [], []
    for k, record in enumerate(sorted(records, key=lambda r: len(r["context"]))[:n]):
        lines = [line for line in record["context"].splitlines() if line.strip()]
        last = max(i for i, line in enumerate(lines) if line.startswith("System:"))
        ask = max(i for i in range(last) if lines[i].startswith("User:"))
        item_id = f"fed-{k:03d}"
        items.append(
            {
                "id": item_id,
                "history": "\n".join(lines[:ask]),
                "prompt": lines[ask].removeprefix("User:").strip(),
                "response": lines[last].removeprefix("System:").strip(),
            }
        )
        for rater, score in enumerate(record["annotations"]["Overall"]):
            if isinstance(score, int | float):
                ratings.append({"id": item_id, "rater": f"r{rater}", "score": score})
    return items, ratings


def test_local_judge_against_fed_human_overall(tmp_path: Path) -> None:
    items, ratings = fed_items(N_DIALOGUES)
    data, human, out = tmp_path / "fed.jsonl", tmp_path / "human.jsonl", tmp_path / "run"
    data.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    human.write_text("".join(json.dumps(r) + "\n" for r in ratings), encoding="utf-8")
    cli = [sys.executable, "-m", "chatjudge.cli"]
    run = subprocess.run(
        [
            *cli,
            "run",
            str(data),
            "--protocol",
            str(ROOT / "examples" / "chat_quality_1to5.toml"),
            "--judge",
            "local",
            "--out",
            str(out),
            "--max-tokens",
            "300",
            "--local-workers",  # one llama.cpp process reads the template's ~700 tokens once
            "1",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert run.returncode == 0, run.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_ok"] == N_DIALOGUES
    assert 1 <= summary["metrics"]["quality"]["value"] <= 5

    agree = subprocess.run(
        [*cli, "agree", str(out), "--human", str(human), "--score", "quality"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert agree.returncode == 0, agree.stderr
    assert "Spearman" in agree.stdout and "Kendall" in agree.stdout
    result = json.loads((out / "agreement.json").read_text())
    corr = result["correlation"]
    assert corr["n"] == N_DIALOGUES
    if "error" in corr:  # the judge gave every dialogue one score: said, not a crash
        assert "constant" in corr["error"] and corr["error"] in agree.stdout
    else:  # 6 dialogues: fewer than 30 pairs give no interval, and say so
        assert corr["too_few"].startswith("too few to say") and "too few to say" in agree.stdout
        for name in ("spearman", "kendall"):
            assert -1 <= corr[name] <= 1 and corr[f"{name}_ci95"] is None
    alpha = result["krippendorff_alpha"]
    assert alpha["n_raters"] == 5 and -1 <= alpha["humans"]["value"] <= 1
    print(agree.stdout)  # the figures, for the closing note (pytest -s)
