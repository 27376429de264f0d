"""`chatjudge realism`'s steps against Python function models: the real conversations read,
the goals written, the simulated conversations, the judge's marks and the samples the
statistics read, checked against hand computation; what the simulated user is shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatjudge.calls.run_sync import run_sync
from chatjudge.errors import DataValidationError
from chatjudge.options import RunConfig
from chatjudge.user_realism.command import build_realism
from chatjudge.user_realism.real import read_real
from tests.user_realism.standins import REAL_ONLY, Recorder

REAL = [
    {  # import's rows: conversation "c1", two turns; its last turn is the conversation
        "id": "c1#1",
        "conversation_id": "c1",
        "turn": 1,
        "history": [],
        "prompt": "i want to plan a trip",
        "baseline_model_response": "Where to?",
    },
    {
        "id": "c1#2",
        "conversation_id": "c1",
        "turn": 2,
        "history": [
            {"role": "user", "content": "i want to plan a trip"},
            {"role": "assistant", "content": "Where to?"},
        ],
        "prompt": "lisbon for 3 days, that is wrong btw",
        "baseline_model_response": f"Lisbon, 3 days: here is a plan with {REAL_ONLY} tarts.",
    },
    {  # a row with chat, a tool call and its result among its messages
        "id": "c2",
        "chat": [
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": "weather in 2 cities?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "t1",
                        "type": "function",
                        "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "t1", "content": "TOOL-RESULT-18C"},
            {"role": "assistant", "content": f"Paris: 18 C, {REAL_ONLY} weather."},
        ],
    },
    {  # a row that holds its goal: no goal call for it
        "id": "c3",
        "question": "Which laptop?",
        "facts": ["budget 900", "for gaming"],
        "chat": [
            {"role": "user", "content": "budget 900, which laptop"},
            {"role": "assistant", "content": "This one."},
        ],
    },
]


def realism_job(rec: Recorder, out: Path, data: object = REAL, **options: object):
    config = RunConfig.from_options(options, command="realism", progress=False)
    return build_realism(
        data,
        rec.assistant,
        out,
        user=rec.user,
        goal_model=rec.goal_writer,
        judge=rec.judge,
        config=config,
    )


def test_import_rows_are_read_as_their_last_turn_and_chat_rows_as_they_are() -> None:
    reals = read_real(REAL)
    assert [r.id for r in reals] == ["c2", "c3", "c1"]
    c1 = reals[2]
    assert c1.user_messages == ("i want to plan a trip", REAL[1]["prompt"])
    assert c1.messages[-1] == {"role": "assistant", "content": REAL[1]["baseline_model_response"]}
    assert [m["role"] for m in reals[0].messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert reals[1].question == "Which laptop?" and reals[1].facts == ("budget 900", "for gaming")


def test_bad_rows_are_named_by_row_and_field() -> None:
    rows = [
        {"id": "a", "text": "hello"},
        {"id": "b", "chat": "not a list"},
        {"id": "c", "chat": [{"role": "assistant", "content": "only me"}]},
        {"id": "d", "conversation_id": "x", "prompt": "", "baseline_model_response": 3},
        {"id": "e", "question": "", "chat": [{"role": "user", "content": "hi"}]},
    ]
    with pytest.raises(DataValidationError) as info:
        read_real(rows)
    assert [(p.row, p.field) for p in info.value.problems] == [
        (1, "chat"),
        (2, "chat"),
        (3, "chat"),
        (4, "prompt"),
        (4, "baseline_model_response"),
        (5, "question"),
    ]


def test_every_step_writes_and_the_samples_match_a_hand_count(tmp_path: Path) -> None:
    rec = Recorder()
    outcome = run_sync(realism_job(rec, tmp_path / "r", samples=2).run())
    goals = [json.loads(x) for x in (tmp_path / "r" / "goals.jsonl").read_text().splitlines()]
    assert [g["id"] for g in goals] == ["c2", "c3", "c1"]
    c2, c3, c1 = goals
    assert c1 == {
        "id": "c1",
        "question": "Help with: i want to plan a trip",
        "facts": [REAL[1]["prompt"]],
        "user_context": f"- {REAL[1]['prompt']}",
    }
    assert c2["facts"] == ["weather in 2 cities?"]
    assert c3 == {
        "id": "c3",
        "question": "Which laptop?",
        "facts": ["budget 900", "for gaming"],
        "user_context": "- budget 900\n- for gaming",
    }
    assert len(rec.seen["goal"]) == 2  # c3 held its goal
    simulated = [
        json.loads(x) for x in (tmp_path / "r" / "simulated.jsonl").read_text().splitlines()
    ]
    assert [s["id"] for s in simulated] == ["c2#0", "c2#1", "c3#0", "c3#1", "c1#0", "c1#1"]
    assert {s["ended"] for s in simulated} == {"user"}
    assert outcome.cut_share == 0.0 and outcome.failed == []
    assert outcome.max_turns == 2  # the longest real conversation: c1's two user turns

    by_goal = {s.goal_id: s for s in outcome.samples}
    one = by_goal["c1"]
    assert one.real.user_messages == ("i want to plan a trip", REAL[1]["prompt"])
    assert one.real.ended_by_user is True
    assert one.real.disclosed == (False,)  # its one fact is in the second message
    assert one.real.pushback == (False, True)  # "that is wrong"
    assert [s.user_messages for s in one.simulated] == [
        ("Hello, I need help with my plan.", "Thank you!")
    ] * 2
    assert [(s.ended_by_user, s.disclosed, s.pushback) for s in one.simulated] == [
        (True, (False,), (False, False))
    ] * 2
    # the judge picks the user who does not thank politely, in both orders
    assert one.discriminations == (True, True)
    assert one.reasons == ("the simulated user thanks politely",) * 2
    # the chat row's tool messages are data, never a user message
    assert by_goal["c2"].real.user_messages == ("weather in 2 cities?",)
    assert by_goal["c2"].real.disclosed == (True,)
    assert by_goal["c3"].real.disclosed == (True, False)


def test_the_simulated_user_and_the_discriminator_never_see_what_they_must_not(
    tmp_path: Path,
) -> None:
    rec = Recorder()
    run_sync(realism_job(rec, tmp_path / "r").run())
    user_prompts = "\n".join(rec.texts("user"))
    assert REAL_ONLY not in user_prompts and "Where to?" not in user_prompts
    assert "TOOL-RESULT-18C" not in user_prompts
    assert "Help with: i want to plan a trip" in user_prompts  # the goal, and only it
    judged = "\n".join(rec.texts("judge"))
    assert "TOOL-RESULT-18C" not in judged and "weather(" not in judged
    assert "You are helpful." not in judged  # no system prompt: formatting gives nothing away
    assert "TOOL-RESULT-18C" not in "\n".join(rec.texts("goal"))


def test_a_second_run_sends_nothing_again(tmp_path: Path) -> None:
    rec = Recorder()
    first = run_sync(realism_job(rec, tmp_path / "r").run())
    calls = {k: len(v) for k, v in rec.seen.items()}
    again = Recorder()
    second = run_sync(realism_job(again, tmp_path / "r").run())
    assert calls["judge"] > 0 and again.seen == {}
    assert second.samples == first.samples


def test_the_dry_run_counts_every_step_and_sends_nothing(tmp_path: Path) -> None:
    rec = Recorder()
    config = RunConfig.from_options({}, command="realism", progress=False)
    job = build_realism(
        REAL,
        rec.assistant,
        tmp_path / "r",
        user=rec.user,
        goal_model=rec.goal_writer,
        judge=rec.judge,
        config=config,
        dry_run=True,
    )
    estimate = run_sync(job.estimate())
    assert rec.seen == {} and not (tmp_path / "r").exists()
    calls = {r.role: r.calls for r in estimate.roles}
    assert calls["goal_model"] == (2, 2)  # c3 holds its goal
    assert calls["judge"][0] == 3 * (2 + 2 + 2)  # per goal: 2 conversations x 2 marks, 2 orders
    assert calls["assistant"][1] == 3 * 2  # up to --max-turns replies a conversation
