"""`chatjudge.realism(..., tune=True)` end to end against Python function models: the gain
shown on held-out goals, what the optimiser and the tuned prompt never hold, the tuned
prompt used by `simulate --user-prompt`, a rerun that pays nothing, and no gain, exit 3."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import chatjudge
from chatjudge.cli.realism import _measured
from chatjudge.options import RunConfig
from chatjudge.user_realism.measuring import set_up
from tests.user_realism.tune_standins import END, ONE_FACT, TuneRecorder, real_rows

N = 125  # 50 held out


def tuned(rec: TuneRecorder, out: Path, **options: Any) -> Any:
    return chatjudge.realism(real_rows(N), rec.assistant, out, user=rec.user,
                             goal_model=rec.goal_writer, judge=rec.judge, tune=True,
                             optimizer=rec.optimizer, **options)  # fmt: skip


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[TuneRecorder, Path, Any]:
    rec = TuneRecorder()
    out = tmp_path_factory.mktemp("tune") / "r"
    return rec, out, tuned(rec, out)


def test_the_gain_is_shown_on_held_out_goals(run: tuple[TuneRecorder, Path, Any]) -> None:
    rec, out, result = run
    tuning = result.tuning
    assert tuning.gain_shown and not tuning.overshoot and tuning.chosen == "rules"
    assert tuning.rules == [ONE_FACT] and tuning.examples == []
    assert tuning.candidates["original"] == 1.0 and tuning.candidates["examples"] == 1.0
    held = tuning.held_out
    assert held.n == 50 and len(tuning.tuning_ids) == 75
    assert not set(held.ids) & set(tuning.tuning_ids)
    assert held.before.value == 1.0 and held.difference.ci95[1] < 0
    assert held.behaviours["disclosure"].before == 1.0  # the real users give one fact of two
    assert held.behaviours["disclosure"].after == 0.0
    written = json.loads((out / "realism.json").read_text())
    assert written["tuning"]["held_out"]["difference"]["value"] == held.difference.value
    assert written["tuning"]["optimizer"] == "python/TuneRecorder.optimizer"
    assert tuning.optimizer_calls == 4 and len(rec.seen["optimizer"]) == 4


def test_no_held_out_conversation_goal_or_reason_reaches_the_optimiser(
    run: tuple[TuneRecorder, Path, Any],
) -> None:
    rec, out, result = run
    sent = "\n".join(rec.texts("optimizer"))
    assert "picked the real user" in sent and "real one wrote 'plan a trip need-" in sent
    for goal in result.tuning.held_out.ids:  # each conversation's own words: need-<i>, city-<i>
        i = int(goal[1:])
        assert f"need-{i}'" not in sent and f"city-{i}\n" not in sent and goal not in sent
    tuned_prompt = (out / "user_prompt.txt").read_text()
    assert not any(f"need-{int(g[1:])}'" in tuned_prompt for g in result.tuning.held_out.ids)
    shown = [g for g in result.tuning.tuning_ids if f"need-{int(g[1:])}'" in sent]
    assert shown  # the tuning goals' reasons are shown


def test_the_tuned_prompt_is_what_simulate_user_prompt_reads(
    run: tuple[TuneRecorder, Path, Any], tmp_path: Path
) -> None:
    rec, out, _ = run
    text = (out / "user_prompt.txt").read_text()
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert header[0].startswith("# Tuned by `chatjudge realism --tune` (rules)")
    assert any("held-out discriminator accuracy 1.000 ->" in line for line in header)
    goals = [json.loads(line) for line in (out / "goals.jsonl").read_text().splitlines()][:2]
    path = chatjudge.simulate(goals, rec.assistant, rec.user, tmp_path / "sim.jsonl",
                              user_prompt=out / "user_prompt.txt", max_turns=4)  # fmt: skip
    rows = [json.loads(line) for line in Path(path).read_text().splitlines()]
    said = [[m["content"] for m in r["chat"] if m["role"] == "user"] for r in rows]
    assert said == [["plan a trip need-0", "from city-0", "for 2 people", "bye"],
                    ["plan a trip need-1", "from city-1", "for 3 people", "bye"]]  # fmt: skip
    system = rec.seen["user"][-1][0]["content"]
    assert not system.startswith("#") and ONE_FACT in system and END in system


def test_a_second_run_sends_nothing_again(run: tuple[TuneRecorder, Path, Any]) -> None:
    _, out, first = run
    again = TuneRecorder()
    second = tuned(again, out)
    assert again.seen == {} and second.tuning == first.tuning


def test_no_gain_exits_3(tmp_path: Path) -> None:
    rec = TuneRecorder(rules=["Be brief."])  # a rule that changes nothing the judge reads
    own = {"out": tmp_path / "r", "user": rec.user, "goal_model": rec.goal_writer,
           "judge": rec.judge, "tune": True, "optimizer": rec.optimizer}  # fmt: skip
    config = RunConfig.from_options({}, command="realism", progress=False)
    job = set_up(real_rows(N), rec.assistant, own, config)
    assert _measured(job).exit_code == 3
    written = json.loads((tmp_path / "r" / "realism.json").read_text())["tuning"]
    assert not written["gain_shown"]
    assert written["reason"].startswith("no gain shown on held-out conversations: ")
    assert (tmp_path / "r" / "user_prompt.txt").read_text().count("use it with care") == 1


def test_the_dry_run_says_what_the_tuning_adds_and_sends_nothing(tmp_path: Path) -> None:
    from chatjudge.user_realism.measuring import estimate

    rec = TuneRecorder()
    own = {"out": tmp_path / "r", "user": rec.user, "goal_model": rec.goal_writer,
           "judge": rec.judge, "tune": True, "optimizer": rec.optimizer}  # fmt: skip
    config = RunConfig.from_options({}, command="realism", progress=False)
    found = estimate(set_up(real_rows(N), rec.assistant, own, config, dry_run=True))
    note = next(n for n in found.notes if n.startswith("realism --tune"))
    assert "225 simulated conversation(s)" in note and "50 x --samples" in note
    assert rec.seen == {} and not (tmp_path / "r" / "tune").exists()
