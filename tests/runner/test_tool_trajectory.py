"""`chatjudge run -p tool-trajectory` end to end, as a user runs it: no judge, the usual
run directory (results, summary, report) that `gate` and `merge` read, bad rows refused."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import chatjudge
from chatjudge.rundir import STORE
from tests.support.cli import run_cli

METRICS = [
    "trajectory_match",
    "tool_call_precision",
    "tool_call_recall",
    "tool_call_f1",
    "tool_call_precision_macro",
    "tool_call_recall_macro",
    "tool_call_f1_macro",
]


def trajectory(*calls: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for k, (name, arguments) in enumerate(calls):
        function = {"name": name, "arguments": json.dumps(arguments)}
        call = {"id": f"c{k}", "type": "function", "function": function}
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{k}", "content": "ok"})
    return [*messages, {"role": "assistant", "content": "Done."}]


EXPECTED = [
    {"name": "get", "arguments": {"city": "Paris"}},
    {"name": "book", "arguments": {"day": 2}},
]
GET, BOOK, SEARCH = ("get", {"city": "Paris"}), ("book", {"day": 2}), ("search", {"q": "x"})
ROWS = [
    {"id": "same", "response_trajectory": trajectory(GET, BOOK)},
    {"id": "swapped", "response_trajectory": trajectory(BOOK, GET)},
    {"id": "extra", "response_trajectory": trajectory(GET, SEARCH, BOOK), "match": "in-order"},
    {"id": "short", "response_trajectory": trajectory(GET)},
]


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text(
        "".join(json.dumps({"expected_tool_calls": EXPECTED, **r}) + "\n" for r in rows)
    )
    return path


def test_run_scores_without_a_judge_and_writes_the_usual_files(tmp_path: Path) -> None:
    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    done = run_cli("run", str(data), "-p", "tool-trajectory", "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    assert "no judge: deterministic" in done.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert (summary["protocol"], summary["judge"], summary["n_ok"]) == (
        "tool-trajectory",
        "deterministic",
        4,
    )
    assert list(summary["metrics"]) == METRICS
    assert summary["cost"]["total_usd"] == 0 and summary["usage"]["calls"] == 0
    # by hand: matches same (exact) and extra (in-order): 2 of 4; calls made 2+2+3+1 = 8,
    # matched 2+2+2+1 = 7, expected 8
    m = summary["metrics"]
    assert m["trajectory_match"]["value"] == 0.5
    assert (m["tool_call_precision"]["value"], m["tool_call_recall"]["value"]) == (7 / 8, 7 / 8)
    assert m["tool_call_precision_macro"]["value"] == (1 + 1 + 2 / 3 + 1) / 4
    assert m["tool_call_recall_macro"]["value"] == (1 + 1 + 1 + 1 / 2) / 4
    records = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").open()]
    by_id = {r["id"]: r for r in records}
    assert by_id["swapped"]["scores"]["trajectory_match"] == 0
    assert by_id["swapped"]["tool_calls"]["left_at"] == 1
    assert "left the expected trajectory at call 1" in by_id["swapped"]["rationale"]["trajectory"]
    assert by_id["extra"]["tool_calls"]["pairs"] == [[0, 0], [1, 2]]
    with sqlite3.connect(tmp_path / "run" / STORE) as store:  # empty: no call was made
        assert store.execute("select count(*) from calls").fetchone() == (0,)
    assert (tmp_path / "run" / "report.html").is_file()


def test_match_sets_the_mode_of_rows_without_one(tmp_path: Path) -> None:
    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    done = run_cli("run", str(data), "-p", "tool-trajectory", "--match", "any-order",
                   "--out", str(tmp_path / "run"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    records = {
        json.loads(line)["id"]: json.loads(line)
        for line in (tmp_path / "run" / "results.jsonl").open()
    }
    assert {k: r["scores"]["trajectory_match"] for k, r in records.items()} == {
        "same": 1, "swapped": 1, "extra": 1, "short": 0,  # `extra` keeps its own in-order
    }  # fmt: skip


def test_map_names_the_trajectory_column(tmp_path: Path) -> None:
    rows = [{"id": "a", "calls": trajectory(GET, BOOK), "chat": trajectory(GET)}]
    data = write_rows(tmp_path / "rows.jsonl", rows)
    done = run_cli("run", str(data), "-p", "tool-trajectory", "--map", "calls=trajectory",
                   "--out", str(tmp_path / "run"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = json.loads((tmp_path / "run" / "results.jsonl").read_text())
    assert record["scores"]["trajectory_match"] == 1  # not `chat`, which stops after get


def test_bad_expected_calls_exit_2_naming_row_and_field_before_anything(tmp_path: Path) -> None:
    rows = [
        {"id": "ok", "response_trajectory": trajectory(GET)},
        {"id": "b1", "response_trajectory": trajectory(GET), "match": "sideways"},
        {"id": "b2", "response_trajectory": trajectory(GET),
         "expected_tool_calls": [{"name": "get", "arguments": {"q": 1},
                                  "compare": {"q": "fuzzy"}}]},
        {"id": "b3", "response_trajectory": trajectory(GET),
         "expected_tool_calls": [{"name": "get", "compare": {"q": {"regex": "(("}}}]},
        {"id": "b4", "response_trajectory": trajectory(GET), "expected_tool_calls": [{"name": 7}]},
        {"id": "b5", "expected_tool_calls": EXPECTED},
    ]  # fmt: skip
    data = write_rows(tmp_path / "rows.jsonl", rows)
    done = run_cli("run", str(data), "-p", "tool-trajectory", "--out", str(tmp_path / "run"))
    assert done.returncode == 2
    err = " ".join(done.stderr.split())
    assert "row 2, field 'match': unknown match mode 'sideways'" in err
    assert (
        "row 3, field 'expected_tool_calls': call 1: compare['q']: unknown comparator 'fuzzy'"
        in err
    )
    assert (
        "row 4, field 'expected_tool_calls': call 1: compare['q']: regex '((' does not compile"
        in err
    )
    assert (
        "row 5, field 'expected_tool_calls': call 1: name must be a non-empty string, got 7" in err
    )
    assert "row 6, field 'trajectory': missing" in err
    assert "row 1" not in err
    assert not (tmp_path / "run").exists()


def test_a_judge_or_samples_are_refused(tmp_path: Path) -> None:
    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    judged = run_cli("run", str(data), "-p", "tool-trajectory", "--judge", "local",
                     "--out", str(tmp_path / "run"))  # fmt: skip
    assert judged.returncode == 2 and "calls no judge" in judged.stderr
    sampled = run_cli("run", str(data), "-p", "tool-trajectory", "--samples", "3",
                      "--out", str(tmp_path / "run"))  # fmt: skip
    assert sampled.returncode == 2 and "deterministic" in sampled.stderr


def test_a_judge_check_is_refused_before_the_run_directory_is_made(tmp_path: Path) -> None:
    """No judge, none to check: refused as a judge is, nothing created."""
    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    check = write_rows(tmp_path / "check.jsonl", ROWS)
    done = run_cli("run", str(data), "-p", "tool-trajectory", "--judge-check", str(check),
                   "--out", str(tmp_path / "run"))  # fmt: skip
    assert done.returncode == 2
    assert "tool-trajectory calls no judge, there is none to check" in done.stderr
    assert not (tmp_path / "run").exists()


def test_gate_and_merge_read_its_runs(tmp_path: Path) -> None:
    """`gate` and `merge` through the CLI; the runs they read through the API but a shard."""
    base = write_rows(tmp_path / "base.jsonl", ROWS)
    better = [{**r, "response_trajectory": trajectory(GET, BOOK)} for r in ROWS]
    cand = write_rows(tmp_path / "cand.jsonl", better)
    for name, data in (("b", base), ("c", cand)):
        chatjudge.evaluate(data, "tool-trajectory", out=tmp_path / name)
    gated = run_cli("gate", "--baseline", str(tmp_path / "b"), "--candidate", str(tmp_path / "c"),
                    "--metric", "trajectory_match", "--allow-mismatch",
                    "--out", str(tmp_path / "gate.json"))  # fmt: skip
    assert gated.returncode in (0, 1, 3), gated.stderr
    decision = json.loads((tmp_path / "gate.json").read_text())
    assert decision["metric"] == "trajectory_match" and decision["n_pairs"] == 4
    assert decision["difference"]["value"] == 0.5  # 4 of 4 match against 2 of 4
    done = run_cli(
        "run", str(base), "-p", "tool-trajectory", "--shard", "0/2", "--out", str(tmp_path / "s0")
    )
    assert done.returncode == 0, done.stderr
    chatjudge.evaluate(base, "tool-trajectory", out=tmp_path / "s1", shard="1/2")
    merged = run_cli(
        "merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "--out", str(tmp_path / "m")
    )
    assert merged.returncode == 0, merged.stderr
    chatjudge.evaluate(base, "tool-trajectory", out=tmp_path / "w")
    summaries = [
        json.loads((tmp_path / d / "summary.json").read_text())["metrics"] for d in ("m", "w")
    ]
    assert summaries[0] == summaries[1]


def test_dry_run_sends_nothing_and_prompt_has_none_to_show(tmp_path: Path) -> None:
    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    dry = run_cli(
        "run", str(data), "-p", "tool-trajectory", "--dry-run", "--out", str(tmp_path / "run")
    )
    assert dry.returncode == 0, dry.stderr
    assert "$0.0000" in dry.stdout and not (tmp_path / "run").exists()
    prompt = run_cli("prompt", str(data), "-p", "tool-trajectory")
    assert prompt.returncode == 2 and "sends no prompt" in prompt.stderr


def test_records_keep_trajectories_read_into_openai_format_and_count_each_call_once(
    tmp_path: Path,
) -> None:
    """An SDK's dump (content null beside the calls) is kept as a judged run keeps it: read
    into OpenAI's format; arguments that are not JSON are counted once per call."""
    dumped = trajectory(GET, BOOK)
    dumped[0] = {**dumped[0], "content": None}
    broken = trajectory(GET)
    broken[0]["tool_calls"][0]["function"]["arguments"] = '{"city": "Par'
    rows = [{"id": "dumped", "response_trajectory": dumped},
            {"id": "broken", "response_trajectory": broken}]  # fmt: skip
    data = write_rows(tmp_path / "rows.jsonl", rows)
    done = run_cli("run", str(data), "-p", "tool-trajectory", "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    records = {r["id"]: r for r in map(json.loads, (tmp_path / "run" / "results.jsonl").open())}
    assert records["dumped"]["fields"]["response_trajectory"][0]["content"] == ""
    assert records["dumped"]["scores"]["trajectory_match"] == 1
    assert records["broken"]["fields"]["response_trajectory"] == broken
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["unparsed_tool_arguments"] == 1


READ, WRITE = ("read_file", {"path": "a"}), ("write_file", {"path": "a", "text": "x"})
WRITES = [{"name": "write_file", "arguments": {"path": "a", "text": "x"}}]


def test_checked_tools_leave_other_calls_out_the_rows_field_winning(tmp_path: Path) -> None:
    rows = [
        {"id": "flag", "response_trajectory": trajectory(READ, WRITE, READ)},
        {"id": "own", "response_trajectory": trajectory(READ, WRITE),
         "checked_tools": ["*_file"], "expected_tool_calls": [{"name": "read_file",
         "arguments": {"path": "a"}}, *WRITES]},
    ]  # fmt: skip
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"expected_tool_calls": WRITES, **r}) + "\n" for r in rows))
    done = run_cli("run", str(data), "-p", "tool-trajectory", "--match", "any-order",
                   "--checked-tools", "write_*,delete_*",
                   "--out", str(tmp_path / "run"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    records = {r["id"]: r for r in map(json.loads, (tmp_path / "run" / "results.jsonl").open())}
    flag, own = records["flag"], records["own"]
    assert (flag["scores"]["trajectory_match"], flag["scores"]["actual_calls"]) == (1, 1)
    assert flag["scores"]["tool_call_precision"] == 1.0
    assert flag["rationale"]["trajectory"].endswith(
        'not checked, ignored (checked: write_*, delete_*): read_file({"path":"a"}); '
        'read_file({"path":"a"})'
    )
    assert (own["scores"]["trajectory_match"], own["scores"]["actual_calls"]) == (1, 2)
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["config"]["checked_tools"] == "write_*,delete_*"
    again = run_cli("run", str(data), "-p", "tool-trajectory", "--match", "any-order",
                    "--out", str(tmp_path / "run"))  # fmt: skip
    assert again.returncode == 2 and "option checked_tools" in " ".join(again.stderr.split())


def test_an_expected_call_to_a_tool_not_checked_is_a_row_error(tmp_path: Path) -> None:
    rows = [
        {"id": "ok", "response_trajectory": trajectory(WRITE), "expected_tool_calls": WRITES},
        {"id": "read", "response_trajectory": trajectory(READ),
         "expected_tool_calls": [{"name": "read_file", "arguments": {"path": "a"}}]},
        {"id": "own", "response_trajectory": trajectory(WRITE), "checked_tools": ["delete"],
         "expected_tool_calls": WRITES},
        {"id": "bad", "response_trajectory": trajectory(WRITE), "checked_tools": 7,
         "expected_tool_calls": WRITES},
        {"id": "none", "response_trajectory": trajectory(WRITE), "checked_tools": [],
         "expected_tool_calls": WRITES},
    ]  # fmt: skip
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = run_cli("run", str(data), "-p", "tool-trajectory", "--checked-tools", "write_*",
                   "--out", str(tmp_path / "run"))  # fmt: skip
    assert done.returncode == 2
    err = " ".join(done.stderr.split())
    assert (
        "row 2, field 'expected_tool_calls': call 1: 'read_file' is not a checked tool "
        "(write_*): an expected call must be to one" in err
    )
    assert (
        "row 3, field 'expected_tool_calls': call 1: 'write_file' is not a checked tool (delete)"
        in err
    )
    assert "row 4, field 'checked_tools': expected a list of tool names or patterns, got int" in err
    assert "row 5, field 'checked_tools': names no tool" in err
    assert "row 1" not in err and not (tmp_path / "run").exists()
    empty = run_cli("run", str(data), "-p", "tool-trajectory", "--checked-tools", " ,",
                    "--out", str(tmp_path / "run"))  # fmt: skip
    assert empty.returncode == 2 and "--checked-tools" in empty.stderr


def test_a_call_without_a_recorded_result_mid_trajectory_is_counted_not_refused(
    tmp_path: Path,
) -> None:
    """A recording that kept a call but not its result (DESIGN §12): the row is data, the
    call is counted and named in the rationale, the other calls pair as usual."""
    messages = trajectory(GET, SEARCH, BOOK)
    del messages[3]  # search's result
    data = write_rows(tmp_path / "rows.jsonl", [{"id": "lost", "response_trajectory": messages,
                                                  "match": "in-order"}])  # fmt: skip
    done = run_cli("run", str(data), "-p", "tool-trajectory", "--out", str(tmp_path / "run"))
    assert done.returncode == 0, done.stderr
    (record,) = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").open()]
    assert record["scores"]["calls_without_result"] == 1
    assert record["scores"]["trajectory_match"] == 1
    assert "no result recorded: call 2 search" in record["rationale"]["trajectory"]
