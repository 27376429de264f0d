"""A row scored: per-item figures and the rationale, worked out by hand."""

from __future__ import annotations

from typing import Any

from chatjudge.trajectories import score_row


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_a_row_with_a_missed_and_an_extra_call() -> None:
    row = {
        "response_trajectory": [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [call("1", "get", '{"city":"Paris"}')],
            },
            {"role": "tool", "tool_call_id": "1", "content": "18 C"},
            {"role": "assistant", "content": "", "tool_calls": [call("2", "search", '{"q": 1}')]},
            {"role": "tool", "tool_call_id": "2", "content": "..."},
            {"role": "assistant", "content": "Done."},
        ],
        "expected_tool_calls": [
            {"name": "get", "arguments": {"city": "Paris"}},
            {"name": "book", "arguments": {"day": 2}},
        ],
        "match": "in-order",
    }
    scored = score_row(row, "exact")
    assert scored.scores == {
        "trajectory_match": 0,
        "tool_call_precision": 0.5,  # 1 of 2 calls made
        "tool_call_recall": 0.5,  # 1 of 2 expected
        "tool_call_f1": 0.5,  # 2 * 1 / (2 + 2)
        "matched_calls": 1,
        "actual_calls": 2,
        "expected_calls": 2,
        "calls_without_result": 0,
    }
    assert scored.rationale["trajectory"].splitlines() == [
        "match in-order: the trajectory does not match (1 of 2 expected call(s) made, "
        "1 missed, 1 extra, 2 call(s) in all).",
        'matched: get({"city":"Paris"}) at call 1',
        'missed: book({"day":2})',
        'extra: call 2 search({"q":1})',
        'left the expected trajectory at call 2: search({"q":1})',
    ]
    assert scored.comparison["pairs"] == [[0, 0]] and scored.comparison["left_at"] == 2
    assert scored.comparison["actual"][1] == {"name": "search", "arguments": {"q": 1}}


def test_the_default_mode_applies_where_the_row_has_none_and_no_call_has_no_precision() -> None:
    chat = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    row: dict[str, Any] = {"chat": chat, "expected_tool_calls": []}
    assert score_row(row, "subset").scores == {
        "trajectory_match": 1,
        "tool_call_precision": None,
        "tool_call_recall": None,
        "tool_call_f1": None,
        "matched_calls": 0,
        "actual_calls": 0,
        "expected_calls": 0,
        "calls_without_result": 0,
    }
    row["expected_tool_calls"] = [{"name": "get", "extra_arguments": True}]
    scored = score_row(row, "subset")
    assert scored.scores["trajectory_match"] == 1  # subset: no call is an allowed subset
    assert (scored.scores["tool_call_precision"], scored.scores["tool_call_recall"]) == (None, 0.0)
    assert (
        score_row(row, "exact")
        .rationale["trajectory"]
        .endswith("left the expected trajectory at call 1: it made no call")
    )


def test_anthropic_blocks_and_a_trajectory_cut_on_calls_are_read() -> None:
    row = {
        "trajectory": [
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Looking."},
                    {"type": "tool_use", "id": "t1", "name": "get", "input": {"city": "Paris"}},
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "18"}],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t2", "name": "get", "input": {"city": "Rome"}}
                ],
            },
        ],  # fmt: skip
        "response_trajectory": [],  # `trajectory` comes first
        "expected_tool_calls": [{"name": "get", "arguments": {"city": "Paris"}}],
    }
    scored = score_row(row, "superset")
    assert scored.scores["trajectory_match"] == 1
    assert scored.scores["actual_calls"] == 2 and scored.scores["tool_call_precision"] == 0.5
    row["expected_tool_calls"] = '[{"name": "get", "arguments": "{\\"city\\": \\"Rome\\"}"}]'
    assert score_row(row, "superset").comparison["pairs"] == [[0, 1]]


def step(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": list(calls)}


def result(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "ok"}


GET_BOOK = [
    {"name": "get", "arguments": {"city": "Paris"}},
    {"name": "book", "arguments": {"day": 2}},
]


def test_two_parallel_calls_in_swapped_order_match_under_exact_and_in_order() -> None:
    parallel = [step(call("1", "book", '{"day": 2}'), call("2", "get", '{"city": "Paris"}')),
                result("1"), result("2"), {"role": "assistant", "content": "Booked."}]  # fmt: skip
    row = {"response_trajectory": parallel, "expected_tool_calls": GET_BOOK}
    for mode in ("exact", "in-order"):
        scored = score_row(row, mode)  # type: ignore[arg-type]
        assert scored.scores["trajectory_match"] == 1, mode
        assert scored.comparison["pairs"] == [[0, 1], [1, 0]]
    apart = [step(call("1", "book", '{"day": 2}')), result("1"),
             step(call("2", "get", '{"city": "Paris"}')), result("2")]  # fmt: skip
    row = {"response_trajectory": apart, "expected_tool_calls": GET_BOOK}
    assert [score_row(row, m).scores["trajectory_match"] for m in ("exact", "in-order")] == [0, 0]


def test_calls_whose_result_was_not_recorded_are_counted() -> None:
    # a trajectory cut at a cap: two parallel calls, one answered, then nothing
    cut = [step(call("1", "get", '{"city": "Paris"}')), result("1"),
           step(call("2", "book", '{"day": 2}'), call("3", "get", '{"city": "Rome"}')),
           result("3")]  # fmt: skip
    scored = score_row({"trajectory": cut, "expected_tool_calls": GET_BOOK}, "superset")
    assert scored.scores["calls_without_result"] == 1
    assert (scored.scores["trajectory_match"], scored.scores["actual_calls"]) == (1, 3)
    assert scored.rationale["trajectory"].splitlines()[-1] == (
        'no result recorded: call 2 book({"day":2})'
    )
    # mid-trajectory: get's result not recorded, book's recorded (a recording of the calls)
    gap = [step(call("1", "get", '{"city": "Paris"}')), step(call("2", "book", '{"day": 2}')),
           result("2"), {"role": "assistant", "content": "Booked."}]  # fmt: skip
    scored = score_row({"trajectory": gap, "expected_tool_calls": GET_BOOK}, "exact")
    assert (scored.scores["calls_without_result"], scored.scores["trajectory_match"]) == (1, 1)
    assert scored.rationale["trajectory"].endswith(
        'no result recorded: call 1 get({"city":"Paris"})'
    )
    answered = score_row({"trajectory": cut[:2], "expected_tool_calls": GET_BOOK[:1]}, "exact")
    assert answered.scores["calls_without_result"] == 0
    assert "no result recorded" not in answered.rationale["trajectory"]


READS_AND_WRITES = [
    step(call("1", "read_file", '{"path": "a"}')), result("1"),
    step(call("2", "write_file", '{"path": "a", "text": "x"}'),
         call("3", "list_dir", '{"path": "."}')), result("2"), result("3"),
    step(call("4", "delete_file", '{"path": "b"}')), result("4"),
]  # fmt: skip
WRITES = [
    {"name": "delete_file", "arguments": {"path": "b"}},
    {"name": "write_file", "arguments": {"path": "a", "text": "x"}},
]


def test_calls_to_tools_not_checked_count_nowhere() -> None:
    row = {"response_trajectory": READS_AND_WRITES, "expected_tool_calls": WRITES,
           "match": "any-order"}  # fmt: skip
    assert score_row(row, "exact").scores["trajectory_match"] == 0  # the reads are extra
    scored = score_row(row, "exact", checked_tools=("write_*", "delete_file"))
    assert scored.scores == {
        "trajectory_match": 1,  # the writes were exactly these, whatever it read
        "tool_call_precision": 1.0,
        "tool_call_recall": 1.0,
        "tool_call_f1": 1.0,
        "matched_calls": 2,
        "actual_calls": 2,
        "expected_calls": 2,
        "calls_without_result": 0,
    }
    assert scored.comparison["actual"] == [
        {"name": "write_file", "arguments": {"path": "a", "text": "x"}},
        {"name": "delete_file", "arguments": {"path": "b"}},
    ]
    assert scored.rationale["trajectory"].splitlines() == [
        "match any-order: the trajectory matches (2 of 2 expected call(s) made, 0 missed, "
        "0 extra, 2 call(s) in all).",
        'matched: delete_file({"path":"b"}) at call 2; '
        'write_file({"path":"a","text":"x"}) at call 1',
        'not checked, ignored (checked: write_*, delete_file): read_file({"path":"a"}); '
        'list_dir({"path":"."})',
    ]


def test_the_rows_checked_tools_win_over_the_runs() -> None:
    row = {"response_trajectory": READS_AND_WRITES, "expected_tool_calls": WRITES[:1],
           "match": "any-order", "checked_tools": ["delete_*"]}  # fmt: skip
    scored = score_row(row, "exact", checked_tools=("write_*", "delete_file"))
    assert (scored.scores["trajectory_match"], scored.scores["actual_calls"]) == (1, 1)
    row["checked_tools"] = "delete_file, write_file"  # text: names or patterns by commas
    assert score_row(row, "exact").scores["actual_calls"] == 2


def test_a_long_argument_is_cut_in_the_rationale_and_kept_whole_in_the_comparison() -> None:
    """A 5 MB argument is in `results.jsonl` as the row's trajectory and the compared calls;
    the rationale names the call with the argument's start and its length, not twice more."""
    text = "lorem ipsum " * 400_000
    arguments = '{"text": "' + text + '"}'
    row = {
        "response_trajectory": [
            {"role": "assistant", "content": "", "tool_calls": [call("1", "write", arguments)]},
            {"role": "tool", "tool_call_id": "1", "content": "ok"},
        ],
        "expected_tool_calls": [{"name": "write", "arguments": {"text": "short"}}],
        "match": "exact",
    }
    scored = score_row(row, "exact")
    lines = scored.rationale["trajectory"].splitlines()
    written = len('{"text":"' + text + '"}')
    start = ('{"text":"' + text)[:200]
    cut = f"… ({written:,} characters)"
    assert lines[2] == f"extra: call 1 write({start}{cut})"
    assert lines[3] == f"left the expected trajectory at call 1: write({start}{cut})"
    assert len(scored.rationale["trajectory"]) < 1_000
    assert scored.comparison["actual"][0]["arguments"] == {"text": text}
    short = score_row({**row, "expected_tool_calls": [{"name": "write", "arguments": {"t": 1}}]},
                      "exact")  # fmt: skip
    assert 'missed: write({"t":1})' in short.rationale["trajectory"]
