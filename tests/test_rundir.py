"""The run directory: what the engine writes is exactly the documented models, and every
reader refuses a file of another format with a message naming it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict
from typer.testing import CliRunner

import chatjudge
from chatjudge.cli import app
from chatjudge.errors import UsageError
from chatjudge.formats.analyses import Comparison, Rating
from chatjudge.formats.io import write_json
from chatjudge.formats.produced import GenerationSummary, SimulationSummary
from chatjudge.formats.results import CallRecord, ResultRecord
from chatjudge.formats.run_info import RunInfo
from chatjudge.formats.shared import Metric
from chatjudge.formats.summary import Summary
from chatjudge.options import RunConfig
from chatjudge.protocols import get_protocol, protocol_sha256
from chatjudge.rundir import (
    COMPARISON,
    RESULTS,
    RUN_INFO,
    SUMMARY,
    RunDir,
)

runner = CliRunner()
STRICT = ConfigDict(extra="forbid", strict=True)


# Strict copies of the documented models: no field beyond them, no coercion of types
# (JSON's own: an int where a float is declared is fine), nested records strict too.
class StrictCall(CallRecord):
    model_config = STRICT


class StrictResult(ResultRecord):
    model_config = STRICT
    calls: list[StrictCall]


class StrictMetric(Metric):
    model_config = STRICT


class StrictSummary(Summary):
    model_config = STRICT
    metrics: dict[str, StrictMetric]


class StrictRunInfo(RunInfo):
    model_config = STRICT


class StrictRating(Rating):
    model_config = STRICT


class StrictComparison(Comparison):
    model_config = STRICT
    ratings: list[StrictRating]


def test_the_strict_copies_are_strict() -> None:
    call = {
        "judge": "j",
        "sample": 0,
        "flipped": False,
        "status": "ok",
        "scores": {},
        "label": None,
        "rationale": {},
        "raw": None,
        "error": None,
        "cached": False,
        "input_tokens": None,
        "output_tokens": None,
        "latency": None,
    }
    StrictCall.model_validate_json(json.dumps(call))
    with pytest.raises(ValueError, match="extra"):
        StrictCall.model_validate_json(json.dumps({**call, "surprise": 1}))
    with pytest.raises(ValueError, match="sample"):
        StrictCall.model_validate_json(json.dumps({**call, "sample": "0"}))
    assert CallRecord.model_validate({**call, "surprise": 1})  # the readers' models allow it


def fair_judge(prompt: str) -> str:
    """Prefers whichever shown response says GOOD, in either order."""
    a = re.search(r"### Response A\n(.*?)\n\n### Response B", prompt, re.S).group(1)
    b = re.search(r"### Response B\n(.*?)\n", prompt, re.S).group(1)
    choice = "A" if "GOOD" in a else "B" if "GOOD" in b else "SAME"
    return json.dumps({"explanation": "GOOD wins", "pairwise_choice": choice})


def first_position_judge(prompt: str) -> str:
    return '{"explanation": "A looks fine", "pairwise_choice": "A"}'


def pairs(n: int, *, candidate_wins: int) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        good, bad = f"GOOD answer {i}", f"weak answer {i}"
        wins = i < candidate_wins
        rows.append(
            {
                "id": f"p{i}",
                "history": [
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "content": "hey"},
                ],
                "prompt": f"question {i}",
                "baseline_model_response": bad if wins else good,
                "response": good if wins else bad,
            }
        )
    return rows


def lines(run_dir: Path) -> list[str]:
    return (run_dir / RESULTS).read_text(encoding="utf-8").splitlines()


def fields_written(
    model: type[BaseModel], data: dict[str, Any], present: Iterable[str] = ()
) -> None:
    """Every field `model` requires is written, and the optional ones named in `present`;
    no field beyond the model's."""
    expected = {name for name, info in model.model_fields.items() if info.is_required()}
    expected |= set(present)
    assert expected <= set(data) <= set(model.model_fields), set(data) ^ expected


@pytest.fixture(scope="module")
def pairwise_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "pairwise"
    chatjudge.evaluate(
        pairs(4, candidate_wins=3),
        "pairwise-chat-quality",
        judge=fair_judge,
        out=out,
        samples=2,
        report=False,
    )
    return out


def test_each_results_line_is_exactly_a_result_record(pairwise_run: Path) -> None:
    records = lines(pairwise_run)
    assert len(records) == 4
    for line in records:
        record = StrictResult.model_validate_json(line)
        data = json.loads(line)
        fields_written(ResultRecord, data, {"format"})
        assert "judge_scores" not in data  # panels only
        for call in data["calls"]:
            fields_written(CallRecord, call)
        assert record.format == 1 and record.status == "ok"
        assert len(record.calls) == 4  # 2 samples x 2 orders
        assert {(c.sample, c.flipped) for c in record.calls} == {
            (0, False),
            (0, True),
            (1, False),
            (1, True),
        }
        assert record.consistent is True and record.agreement == 1.0


def test_summary_json_is_exactly_a_summary(pairwise_run: Path) -> None:
    text = (pairwise_run / SUMMARY).read_text(encoding="utf-8")
    summary = StrictSummary.model_validate_json(text)
    fields_written(Summary, json.loads(text), {"format"})
    assert summary.format == 2 and summary.samples == 2 and summary.flip is True
    assert (summary.n_items, summary.n_ok, summary.n_failed) == (4, 4, 0)
    assert summary.metrics["candidate_win_rate"].value == 0.75
    for metric in json.loads(text)["metrics"].values():
        fields_written(Metric, metric)
    assert RunDir(pairwise_run).summary == Summary.model_validate_json(text)


def test_run_json_is_exactly_run_info(pairwise_run: Path) -> None:
    text = (pairwise_run / RUN_INFO).read_text(encoding="utf-8")
    info = StrictRunInfo.model_validate_json(text)
    fields_written(RunInfo, json.loads(text), {"format", "chatjudge_version"})
    assert info.format == 1 and info.protocol == "pairwise-chat-quality" and info.n_rows == 4
    assert info.judges == [
        {"name": "python/fair_judge", "provider": "python", "model": info.judges[0]["model"]}
    ]
    expected = RunConfig.from_options({"samples": 2}).options()
    assert info.config == {**expected, "base_url": []}  # every option, by name


def test_a_panel_and_skipped_rows_write_their_optional_fields(tmp_path: Path) -> None:
    rows = pairs(3, candidate_wins=2)
    rows.insert(1, {"id": "bad", "prompt": "question without responses"})
    out = tmp_path / "panel"
    result = chatjudge.evaluate(
        rows,
        "pairwise-chat-quality",
        judge=[fair_judge, first_position_judge],
        out=out,
        skip_invalid=True,
        report=False,
    )
    assert result.summary["n_skipped"] == 1
    for line in lines(out):
        StrictResult.model_validate_json(line)
        fields_written(ResultRecord, json.loads(line), {"format", "judge_scores"})
    text = (out / SUMMARY).read_text(encoding="utf-8")
    summary = StrictSummary.model_validate_json(text)
    fields_written(Summary, json.loads(text), {"format", "n_skipped", "skipped"})
    assert summary.n_skipped == 1 and len(summary.skipped) >= 1
    assert set(summary.per_judge) == {
        "python/fair_judge",
        "python/first_position_judge",
        "inter_judge_agreement",
    }


def test_fields_keep_every_input_column(tmp_path: Path) -> None:
    rows = pairs(2, candidate_wins=1)
    rows = [{**r, "category": f"c{i}", "extra": [i]} for i, r in enumerate(rows)]
    del rows[0]["history"]  # an optional protocol field left out: null in fields
    out = tmp_path / "columns"
    chatjudge.evaluate(rows, "pairwise-chat-quality", judge=fair_judge, out=out, report=False)
    by_id = {r.id: r for r in RunDir(out).results()}
    assert by_id["p0"].fields["history"] is None
    expected = [{"history": None, **rows[0]}, rows[1]]  # every column, and the absent field
    for row in expected:
        fields = by_id[row["id"]].fields
        assert fields == row
        assert list(fields)[:4] == ["history", "prompt", "baseline_model_response", "response"]


def test_a_failed_item_is_a_result_record_too(tmp_path: Path) -> None:
    def unparseable(prompt: str) -> str:
        return "I cannot decide."

    out = tmp_path / "failed"
    chatjudge.evaluate(
        pairs(2, candidate_wins=1),
        "pairwise-chat-quality",
        judge=unparseable,
        out=out,
        parse_retries=0,
        report=False,
    )
    for line in lines(out):
        record = StrictResult.model_validate_json(line)
        assert record.status == "failed" and record.scores == {} and record.error
        assert all(c.status == "failed" and c.raw == "I cannot decide." for c in record.calls)
    StrictSummary.model_validate_json((out / SUMMARY).read_text(encoding="utf-8"))


# Readers refuse another format


def copy_run(source: Path, target: Path) -> Path:
    target.mkdir(parents=True)
    for name in (RESULTS, SUMMARY, RUN_INFO):
        (target / name).write_bytes((source / name).read_bytes())
    return target


def set_summary_format(run_dir: Path, value: Any) -> Path:
    path = run_dir / SUMMARY
    data = json.loads(path.read_text(encoding="utf-8"))
    if value is None:
        del data["format"]
    else:
        data["format"] = value
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def set_results_format(run_dir: Path, value: Any, line: int = -1) -> Path:
    path = run_dir / RESULTS
    records = [json.loads(x) for x in lines(run_dir)]
    records[line]["format"] = value
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def refused(message: str, path: Path, found: Any, reads: str = "format 1") -> None:
    flat = " ".join(message.split())
    assert str(path) in flat, message
    assert f"has format {found!r}" in flat, message
    assert f"reads {reads}" in flat, message


@pytest.mark.parametrize("found", [3, None, "1"])
def test_read_summary_refuses_another_format(
    pairwise_run: Path, tmp_path: Path, found: Any
) -> None:
    run = copy_run(pairwise_run, tmp_path / "run")
    path = set_summary_format(run, found)
    with pytest.raises(UsageError) as info:
        _ = RunDir(run).summary
    refused(str(info.value), path, found, "format 2 (and upgrades 1)")


def test_a_version_1_summary_is_read_as_version_2(pairwise_run: Path, tmp_path: Path) -> None:
    run = copy_run(pairwise_run, tmp_path / "run")
    set_summary_format(run, 1)
    summary = RunDir(run).summary
    assert summary.format == 2 and summary.pass_k is None  # version 1 had no tries
    assert summary.metrics["candidate_win_rate"].value == 0.75


def test_iter_results_refuses_another_format(pairwise_run: Path, tmp_path: Path) -> None:
    run = copy_run(pairwise_run, tmp_path / "run")
    path = set_results_format(run, 2)
    with pytest.raises(UsageError) as info:
        list(RunDir(run).results())
    refused(str(info.value), path, 2)
    with pytest.raises(UsageError):
        RunDir(run).ok_scores()


def test_a_truncated_last_line_is_an_error_naming_file_and_line(
    pairwise_run: Path, tmp_path: Path
) -> None:
    run = copy_run(pairwise_run, tmp_path / "run")
    with (run / RESULTS).open("a", encoding="utf-8") as f:
        f.write('{"format": 1, "id": "p9", "sta')
    with pytest.raises(UsageError, match=r"results.jsonl, line 5, is cut off"):
        list(RunDir(run).results())
    with pytest.raises(UsageError, match="rewrite the results from its store"):
        RunDir(run).ok_scores()


def newer_format(run: Path, which: str) -> tuple[Path, int, str]:
    """`which` of `run` set to the version after the one chatjudge writes: its path, that
    version and what the refusal says chatjudge reads."""
    if which == SUMMARY:
        return set_summary_format(run, 3), 3, "format 2 (and upgrades 1)"
    return set_results_format(run, 2), 2, "format 1"


@pytest.mark.parametrize("which", [SUMMARY, RESULTS])
def test_report_exits_2_on_another_format(pairwise_run: Path, tmp_path: Path, which: str) -> None:
    run = copy_run(pairwise_run, tmp_path / "run")
    path, found, reads = newer_format(run, which)
    done = runner.invoke(app, ["report", str(run)])
    assert done.exit_code == 2, done.output
    refused(done.output, path, found, reads)


def test_report_reads_format_1(pairwise_run: Path, tmp_path: Path) -> None:
    run = copy_run(pairwise_run, tmp_path / "run")
    done = runner.invoke(app, ["report", str(run)])
    assert done.exit_code == 0, done.output
    assert (run / "report.html").is_file()


@pytest.mark.parametrize("which", [SUMMARY, RESULTS])
def test_compare_exits_2_on_another_format(pairwise_run: Path, tmp_path: Path, which: str) -> None:
    good = copy_run(pairwise_run, tmp_path / "good")
    bad = copy_run(pairwise_run, tmp_path / "bad")
    path, found, reads = newer_format(bad, which)
    done = runner.invoke(
        app, ["compare", f"good={good}", f"bad={bad}", "--out", str(tmp_path / "cmp")]
    )
    assert done.exit_code == 2, done.output
    refused(done.output, path, found, reads)
    assert not (tmp_path / "cmp" / COMPARISON).exists()


@pytest.mark.parametrize("which", [SUMMARY, RESULTS])
def test_agree_exits_2_on_another_format(pairwise_run: Path, tmp_path: Path, which: str) -> None:
    run = copy_run(pairwise_run, tmp_path / "run")
    path, found, reads = newer_format(run, which)
    human = tmp_path / "human.jsonl"
    human.write_text(
        "".join(json.dumps({"id": f"p{i}", "label": "CANDIDATE"}) + "\n" for i in range(4)),
        encoding="utf-8",
    )
    done = runner.invoke(app, ["agree", str(run), "--human", str(human)])
    assert done.exit_code == 2, done.output
    refused(done.output, path, found, reads)
    assert not (run / "agreement.json").exists()
    # The same run in format 1 is read.
    set_summary_format(run, 1)
    set_results_format(run, 1)
    assert runner.invoke(app, ["agree", str(run), "--human", str(human)]).exit_code == 0


@pytest.fixture(scope="module")
def compare_json(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Path]]:
    """compare.json of two pairwise runs, as `chatjudge compare` writes it."""
    root = tmp_path_factory.mktemp("compare")
    runs = {}
    for name, wins in (("strong", 5), ("weak", 2)):
        runs[name] = root / name
        chatjudge.evaluate(
            pairs(6, candidate_wins=wins),
            "pairwise-chat-quality",
            judge=fair_judge,
            out=runs[name],
            report=False,
        )
    done = runner.invoke(
        app, ["compare", *(f"{k}={v}" for k, v in runs.items()), "--out", str(root / "cmp")]
    )
    assert done.exit_code == 0, done.output
    return (root / "cmp" / COMPARISON).read_text(encoding="utf-8"), runs


def test_compare_json_is_a_comparison(compare_json: tuple[str, dict[str, Path]]) -> None:
    text, runs = compare_json
    comparison = Comparison.model_validate_json(text)
    assert comparison.format == 1 and comparison.kind == "pairwise"
    assert comparison.protocol == "pairwise-chat-quality" and comparison.baseline == "baseline"
    assert set(comparison.models) == {"baseline", "strong", "weak"}
    assert {r.model for r in comparison.ratings} == set(comparison.models)
    assert comparison.runs == {name: str(path) for name, path in runs.items()}
    assert comparison.n_items == 6 and comparison.n_battles == 12
    assert comparison.outcomes["strong"] == {"won": 5, "tied": 0, "lost": 1}
    assert len(comparison.win_rates) == 3 and all(len(row) == 3 for row in comparison.win_rates)


def test_compare_json_has_exactly_the_comparison_fields(
    compare_json: tuple[str, dict[str, Path]],
) -> None:
    text, _ = compare_json
    StrictComparison.model_validate_json(text)
    data = json.loads(text)
    fields_written(Comparison, data, {"format"})
    for rating in data["ratings"]:
        fields_written(Rating, rating)


class StrictGeneration(GenerationSummary):
    model_config = STRICT
    metrics: dict[str, StrictMetric]


class StrictSimulation(SimulationSummary):
    model_config = STRICT
    metrics: dict[str, StrictMetric]


def echo(messages: list[dict[str, Any]]) -> str:
    return "answer to " + str(messages[-1]["content"])


def idle_user(messages: list[dict[str, Any]]) -> str:  # never ends: max_turns does
    return json.dumps({"thought": "t", "response": "go on", "done": False})


def test_the_summary_of_generate_is_exactly_a_generation_summary(tmp_path: Path) -> None:
    rows = [{"id": f"r{i}", "prompt": f"say {i}"} for i in range(3)] + [{"id": "bad"}]
    out = chatjudge.generate(rows, echo, "response", tmp_path / "g.jsonl", skip_invalid=True)
    text = out.with_name("g.summary.json").read_text(encoding="utf-8")
    summary = StrictGeneration.model_validate_json(text)
    fields_written(GenerationSummary, json.loads(text), {"format", "kind", "n_skipped", "skipped"})
    assert (summary.kind, summary.n_rows, summary.n_ok, summary.n_failed) == ("generation", 3, 3, 0)
    assert summary.n_skipped == 1 and summary.skipped[0]["row"] == 4
    assert summary.metrics["output_tokens"].n == 3


def test_the_summary_of_simulate_is_exactly_a_simulation_summary(tmp_path: Path) -> None:
    rows = [{"id": f"s{i}", "question": f"q{i}?", "answer": "a"} for i in range(3)]
    out = chatjudge.simulate(rows, echo, idle_user, tmp_path / "s.jsonl", max_turns=2, samples=2)
    text = out.with_name("s.summary.json").read_text(encoding="utf-8")
    summary = StrictSimulation.model_validate_json(text)
    data = json.loads(text)
    fields_written(SimulationSummary, data, {"format", "kind", "per_sample", "spread"})
    assert "n_skipped" not in data  # only with --skip-invalid rows
    assert (summary.n_conversations, summary.n_ok, summary.samples) == (6, 6, 2)
    assert summary.metrics["turns"].value == 2.0 and summary.metrics["ended_by_max_turns"].n == 6
    assert summary.per_sample is not None and len(summary.per_sample) == 2
    assert summary.format == 2  # version 2: the simulated user's usage is `simulated_user`
    assert set(summary.usage) == set(summary.cost.roles) == {"assistant", "simulated_user"}
    assert summary.usage["simulated_user"]["calls"] == 12
    # the assistant sees the same conversation in each row: one call per sample and turn is
    # sent, its twins in the other rows take its reply (issue 40, item 8)
    assistant = summary.usage["assistant"]
    assert (assistant["calls"], assistant["cached_calls"]) == (4, 8)


def test_write_json_writes_only_what_the_model_was_given_and_its_version(tmp_path: Path) -> None:
    metric = {"value": 1.0, "ci95": None, "n": 1}
    built = GenerationSummary(
        model="m", field="response", n_rows=1, n_ok=1, n_failed=0, failures={},
        metrics={"output_tokens": metric}, usage={}, cost_usd=None, options={},
        created="now", chatjudge_version="0",
    )  # fmt: skip
    sparse = write_json(tmp_path / "a.json", built, only_set=True)
    assert "n_skipped" not in sparse  # left at its default
    assert list(sparse)[0] == "format" and sparse["format"] == 1  # the version, always first
    full = write_json(tmp_path / "b.json", built)
    assert full["n_skipped"] == 0 and full["format"] == 1
    assert json.loads((tmp_path / "b.json").read_text()) == full


def strict_json(text: str) -> Any:
    """JSON as strict parsers read it: `NaN` and `Infinity` are errors."""

    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_no_summary_is_ever_written_with_nan_or_infinity(tmp_path: Path) -> None:
    """A NaN or infinite number that reaches a written model (a summary's metric, its
    cost) is written as null: the file stays JSON that every parser reads."""
    metric = {"value": float("nan"), "ci95": [float("-inf"), float("inf")], "n": 3}
    built = GenerationSummary(
        model="m", field="response", n_rows=1, n_ok=1, n_failed=0, failures={},
        metrics={"output_tokens": metric}, usage={}, cost_usd=float("nan"), options={},
        created="now", chatjudge_version="0",
    )  # fmt: skip
    written = write_json(tmp_path / "s.summary.json", built)
    text = (tmp_path / "s.summary.json").read_text()
    assert "NaN" not in text and "Infinity" not in text
    assert strict_json(text) == written
    assert written["cost_usd"] is None and written["metrics"]["output_tokens"]["value"] is None
    assert written["metrics"]["output_tokens"]["ci95"] == [None, None]


# RunDir: nothing read until asked, each file typed, a missing or damaged one named

OLD_RUNS = Path(__file__).parent / "fixtures" / "chatjudge-0.1"


def test_opening_a_run_reads_nothing_and_each_file_once(pairwise_run: Path, tmp_path: Path) -> None:
    assert RunDir(tmp_path / "nowhere").path == tmp_path / "nowhere"  # no file asked for
    run = RunDir(copy_run(pairwise_run, tmp_path / "run"))
    info, summary = run.info, run.summary
    assert isinstance(info, RunInfo) and isinstance(summary, Summary)
    (run.path / RUN_INFO).unlink()
    (run.path / SUMMARY).unlink()
    assert run.info is info and run.summary is summary  # read once, kept
    assert info.protocol == summary.protocol == "pairwise-chat-quality"


def test_results_are_typed_records_read_as_they_are_iterated(
    pairwise_run: Path, tmp_path: Path
) -> None:
    run = RunDir(copy_run(pairwise_run, tmp_path / "run"))
    with (run.path / RESULTS).open("a", encoding="utf-8") as f:
        f.write("not JSON\n")  # after the 4 items
    results = run.results()
    first = next(results)  # read before the damaged line is reached
    assert isinstance(first, ResultRecord) and first.id == "p0"
    assert [next(results).id for _ in range(3)] == ["p1", "p2", "p3"]
    with pytest.raises(UsageError, match=r"results.jsonl, line 5, is cut off or not JSON"):
        next(results)


def test_ok_scores_are_the_scores_of_the_items_judged_ok(pairwise_run: Path) -> None:
    run = RunDir(pairwise_run)
    assert run.ok_scores() == {r.id: r.scores for r in run.results() if r.status == "ok"}
    assert len(run.ok_scores()) == run.summary.n_ok == 4


@pytest.mark.parametrize("name", [RUN_INFO, SUMMARY, RESULTS])
def test_a_missing_file_is_a_usage_error_naming_it(
    pairwise_run: Path, tmp_path: Path, name: str
) -> None:
    run = RunDir(copy_run(pairwise_run, tmp_path / "run"))
    (run.path / name).unlink()
    read = {
        RUN_INFO: lambda: run.info,
        SUMMARY: lambda: run.summary,
        RESULTS: run.results,  # when asked, not at the first item
    }[name]
    with pytest.raises(UsageError, match=rf"{re.escape(str(run.path))} has no {name}"):
        read()


@pytest.mark.parametrize("name", [RUN_INFO, SUMMARY])
def test_a_damaged_file_is_a_usage_error_naming_it(
    pairwise_run: Path, tmp_path: Path, name: str
) -> None:
    run = RunDir(copy_run(pairwise_run, tmp_path / "run"))
    path = run.path / name
    path.write_bytes(path.read_bytes()[:40])  # cut short
    with pytest.raises(UsageError, match=rf"{re.escape(str(path))} is cut off or not JSON"):
        _ = run.info if name == RUN_INFO else run.summary


def test_a_run_of_chatjudge_0_1_is_upgraded_on_read() -> None:
    run = RunDir(OLD_RUNS / "pairwise-run")
    assert "format" not in json.loads((run.path / RUN_INFO).read_text(encoding="utf-8"))
    assert run.info.format == RunInfo.version() and run.info.protocol_sha256 is None
    assert run.summary.format == Summary.version() and run.summary.pass_k is None
    assert [r.format for r in run.results()] == [ResultRecord.version()] * 3
    assert run.protocol().name == "pairwise-chat-quality"  # no hash recorded: not refused


def with_protocol(run: Path, name: str, sha256: str | None) -> RunDir:
    data = json.loads((run / RUN_INFO).read_text(encoding="utf-8"))
    (run / RUN_INFO).write_text(
        json.dumps({**data, "protocol": name, "protocol_sha256": sha256}), encoding="utf-8"
    )
    return RunDir(run)


def test_the_protocol_is_the_built_in_one_run_json_names(pairwise_run: Path) -> None:
    run = RunDir(pairwise_run)
    assert run.protocol() is get_protocol("pairwise-chat-quality")
    assert run.protocol("pairwise-chat-quality") is get_protocol("pairwise-chat-quality")
    with pytest.raises(UsageError, match="--protocol is 'interactivity-accuracy', .* was judged"):
        run.protocol("interactivity-accuracy")


def test_a_custom_protocol_is_given_and_must_be_the_one_recorded(
    pairwise_run: Path, tmp_path: Path
) -> None:
    toml = Path(__file__).parents[1] / "examples" / "chat_quality_1to5.toml"
    custom = get_protocol(toml)
    run = with_protocol(copy_run(pairwise_run, tmp_path / "run"), custom.name,
                        protocol_sha256(custom))  # fmt: skip
    with pytest.raises(UsageError) as refused:
        run.protocol()
    assert str(run.path) in str(refused.value)
    assert "custom protocol 'chat-quality-1to5': give its file with --protocol" in str(
        refused.value
    )
    assert run.protocol(toml).name == custom.name and run.protocol(str(toml)) is not None
    edited = with_protocol(run.path, custom.name, "0" * 64)
    with pytest.raises(UsageError, match="is not the one .* was judged with: its sha256"):
        edited.protocol(toml)
