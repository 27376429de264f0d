"""`run -p tool-trajectory` on trajectory cells and values as files hold them: JSON text in
a trajectory column, integers beyond 64 bits, an empty `task_id`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.cli import run_cli

EXPECTED = [{"name": "get", "arguments": {"city": "Paris"}}]
CALLED = [
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "get", "arguments": '{"city": "Paris"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "18 C"},
]  # fmt: skip
BROKEN = '[{"role": "assistant", "content": '


def run(tmp_path: Path, rows: list[dict[str, Any]], *flags: str) -> Any:
    data = tmp_path / "rows.jsonl"
    data.write_text(
        "".join(json.dumps({"expected_tool_calls": EXPECTED, **r}) + "\n" for r in rows)
    )
    return run_cli(
        "run", str(data), "-p", "tool-trajectory", *flags, "--out", str(tmp_path / "run")
    )


def records(tmp_path: Path) -> dict[str, Any]:
    return {r["id"]: r for r in map(json.loads, (tmp_path / "run" / "results.jsonl").open())}


def test_a_trajectory_of_json_text_that_does_not_parse_is_a_row_error(tmp_path: Path) -> None:
    rows = [
        {"id": "ok", "trajectory": CALLED},
        {"id": "slot", "trajectory": BROKEN},
        {"id": "chat", "chat": BROKEN},  # the slot's column where a row has only `chat`
        {"id": "response", "response_trajectory": BROKEN},
        {"id": "baseline", "trajectory": CALLED, "baseline_trajectory": BROKEN},
    ]
    done = run(tmp_path, rows)
    assert done.returncode == 2
    err = " ".join(done.stderr.split())
    for row, field in ((2, "trajectory"), (3, "chat"), (4, "response_trajectory"),
                       (5, "baseline_trajectory")):  # fmt: skip
        assert (
            f"row {row}, field '{field}': is text that is not JSON (expected a list of messages)"
            in err
        ), err
    assert "row 1" not in err and not (tmp_path / "run").exists()


def test_json_text_in_jsonl_is_checked_and_scored_as_the_list_it_holds(tmp_path: Path) -> None:
    bad_role = json.dumps([{"role": "robot", "content": "hi"}])
    refused = run(tmp_path, [{"id": "a", "trajectory": bad_role}])
    assert refused.returncode == 2
    assert "row 1, field 'trajectory': message 1: unknown role 'robot'" in " ".join(
        refused.stderr.split()
    )
    rows = [{"id": "text", "response_trajectory": json.dumps(CALLED)},
            {"id": "list", "response_trajectory": CALLED}]  # fmt: skip
    done = run(tmp_path, rows)
    assert done.returncode == 0, done.stderr
    got = records(tmp_path)
    assert got["text"]["scores"] == got["list"]["scores"]
    assert got["text"]["scores"]["trajectory_match"] == 1
    assert got["text"]["fields"]["response_trajectory"] == CALLED  # kept as the list it holds


BIG = 123456789012345678901234567890  # beyond 64 bits


def test_integers_beyond_64_bits_compare_exactly(tmp_path: Path) -> None:
    def called(n: int) -> list[dict[str, Any]]:
        call = {"id": "c1", "type": "function",
                "function": {"name": "get", "arguments": json.dumps({"n": n})}}  # fmt: skip
        return [{"role": "assistant", "content": "", "tool_calls": [call]}]

    expected = [{"name": "get", "arguments": {"n": BIG}}]
    rows = [
        {"id": "same", "trajectory": called(BIG), "expected_tool_calls": expected},
        {"id": "next", "trajectory": called(BIG + 1), "expected_tool_calls": expected},
    ]
    done = run(tmp_path, rows)
    assert done.returncode == 0, done.stderr
    got = records(tmp_path)
    assert got["same"]["scores"]["trajectory_match"] == 1
    assert got["next"]["scores"]["trajectory_match"] == 0
    assert f'extra: call 1 get({{"n":{BIG + 1}}})' in got["next"]["rationale"]["trajectory"]
    assert got["next"]["tool_calls"]["actual"] == [{"name": "get", "arguments": {"n": BIG + 1}}]


def test_an_empty_task_id_is_no_task(tmp_path: Path) -> None:
    rows = [{"id": f"r{k}", "trajectory": CALLED, "task_id": ""} for k in range(3)]
    done = run(tmp_path, rows)
    assert done.returncode == 0, done.stderr
    metrics = json.loads((tmp_path / "run" / "summary.json").read_text())["metrics"]
    assert not [name for name in metrics if "_pass_" in name]  # three rows, not three tries
    rows = [{**r, "task_id": "t1"} for r in rows]
    done = run(tmp_path, rows, "--overwrite")
    assert done.returncode == 0, done.stderr
    metrics = json.loads((tmp_path / "run" / "summary.json").read_text())["metrics"]
    assert metrics["trajectory_match_pass_hat_3"]["value"] == 1.0
