"""The metric gap (`--protocol`): interactivity-accuracy on each goal's real conversation and
on its simulated ones, through the run engine and its stores, checked against a hand
computation; protocols that cannot judge a conversation against its goal are refused
before anything is sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import chatjudge
from chatjudge.errors import DataValidationError, UsageError
from tests.user_realism.standins import Recorder


def _chat(*said: str) -> list[dict[str, str]]:
    roles = ("user", "assistant")
    return [{"role": roles[n % 2], "content": text} for n, text in enumerate(said)]


# The protocol's stand-in judge: interactivity = the conversation's user messages (at most 3),
# accuracy = 1 when it names the answer. Every simulated conversation (tests/user_realism/standins)
# has 2 user messages and never names it: interactivity 2, accuracy 0.
ROWS = [
    {  # 1 user message, names Lisbon: interactivity 1, accuracy 1
        "id": "a",
        "question": "Where to go?",
        "answer": "Lisbon",
        "chat": [{"role": "system", "content": "SYSTEM-PROMPT"}, *_chat("trip ideas?", "Lisbon.")],
    },
    {"id": "b", "question": "Where to go?", "answer": "Lisbon", "chat": _chat("hi", "Porto.")},
    {  # 3 user messages, names Lisbon: interactivity 3, accuracy 1
        "id": "c",
        "question": "Where to go?",
        "answer": "Lisbon",
        "chat": _chat("hi", "hello", "a city?", "Lisbon", "thanks", "bye"),
    },
]


def test_the_gap_is_the_hand_computed_paired_difference(tmp_path: Path) -> None:
    rec = Recorder()
    result = chatjudge.realism(ROWS, rec.assistant, tmp_path / "r", user=rec.user,
                               judge=rec.judge, protocol="interactivity-accuracy",
                               samples=2)  # fmt: skip
    gaps = result.metric_gaps
    assert set(gaps) == {"interactivity", "itr", "accuracy"}
    inter = gaps["interactivity"]
    assert inter.real.value == pytest.approx(5 / 3) and inter.simulated.value == 2.0
    assert inter.difference.value == pytest.approx(1 / 3)  # (+1, +1, -1) / 3
    assert gaps["itr"].difference.value == pytest.approx(200 / 3)  # (score - 2.5) x 200
    accuracy = gaps["accuracy"]
    assert (accuracy.real.value, accuracy.simulated.value) == (pytest.approx(2 / 3), 0.0)
    assert accuracy.difference.value == pytest.approx(-2 / 3)
    assert all(m.n_goals == 3 for m in gaps.values())
    written = json.loads((tmp_path / "r" / "realism.json").read_text())
    assert written["metric_gaps"]["accuracy"]["difference"]["value"] == pytest.approx(-2 / 3)
    # a verdict per conversation, judged as shown (no system prompt): 3 real ones; the 3 x 2
    # simulated ones are alike, one call answers them all (the store's key is the prompt)
    assert len(rec.seen["protocol"]) == 3 + 1
    assert "SYSTEM-PROMPT" not in "\n".join(rec.texts("protocol"))
    real_run = [json.loads(x) for x in (tmp_path / "r/protocol-real/results.jsonl").open()]
    simulated_run = (tmp_path / "r/protocol-simulated/results.jsonl").read_text().splitlines()
    assert sorted(r["id"] for r in real_run) == ["a", "b", "c"] and len(simulated_run) == 6

    again = Recorder()  # the same command resumes: the stores answer every call
    second = chatjudge.realism(ROWS, again.assistant, tmp_path / "r", user=again.user,
                               judge=again.judge, protocol="interactivity-accuracy",
                               samples=2)  # fmt: skip
    assert again.seen == {} and second.metric_gaps == gaps


def test_a_conversation_the_protocol_cannot_judge_is_a_failure_and_left_out(
    tmp_path: Path,
) -> None:
    rec = Recorder()
    judged = rec.protocol_judge

    def broken(prompt: str) -> str:  # no verdict for goal b's real conversation
        return "no idea" if "Porto." in prompt else judged(prompt)

    rec.protocol_judge = broken  # type: ignore[method-assign]
    result = chatjudge.realism(ROWS, rec.assistant, tmp_path / "r", user=rec.user,
                               judge=rec.judge, protocol="interactivity-accuracy")  # fmt: skip
    assert result.failed == {"protocol": 1}
    assert result.metric_gaps["accuracy"].n_goals == 2
    assert result.metric_gaps["accuracy"].difference.value == pytest.approx(-1.0)


def test_a_protocol_needing_an_answer_is_refused_naming_the_rows_without_one(
    tmp_path: Path,
) -> None:
    rec = Recorder()
    rows = [ROWS[0], {k: v for k, v in ROWS[1].items() if k != "answer"}]
    with pytest.raises(DataValidationError) as info:
        chatjudge.realism(rows, rec.assistant, tmp_path / "r", judge=rec.judge,
                          protocol="interactivity-accuracy")  # fmt: skip
    assert [(p.row, p.field) for p in info.value.problems] == [(2, "answer")]
    assert rec.seen == {} and not (tmp_path / "r").exists()


def test_a_pairwise_protocol_is_refused(tmp_path: Path) -> None:
    rec = Recorder()
    with pytest.raises(UsageError, match="pointwise"):
        chatjudge.realism(ROWS, rec.assistant, tmp_path / "r", protocol="pairwise-chat-quality")
    assert rec.seen == {}
