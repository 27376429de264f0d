"""Reading a run directory: a cut-off last line, NaN, and what the page keeps of each item."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chatjudge.errors import UsageError
from chatjudge.report import write_report
from chatjudge.report.load import slim_item
from chatjudge.rundir import RunDir
from tests.report.conftest import (
    read_jsonl,
    write_pairwise_run,
    write_pointwise_run,
)
from tests.support.report_page import embedded_index, embedded_items


def test_a_cut_off_last_line_stops_the_page_with_file_and_line(tmp_path: Path) -> None:
    """Never a page that disagrees with the table: the cut is named, and nothing written."""
    run = write_pointwise_run(tmp_path / "cut")
    n = len(read_jsonl(run / "results.jsonl"))
    with (run / "results.jsonl").open("a", encoding="utf-8") as out:
        out.write('{"format": 1, "id": "ia-99", "index": 98, "status": "o')
    with pytest.raises(UsageError, match=rf"results.jsonl, line {n + 1}, is cut off"):
        write_report(run)
    assert not (run / "report.html").exists()
    assert not list(run.glob("tmp*"))  # the spool is gone too


def test_nan_in_results_becomes_null(tmp_path: Path) -> None:
    run = write_pointwise_run(tmp_path / "nan")
    lines = (run / "results.jsonl").read_text("utf-8").splitlines()
    lines[0] = lines[0].replace('"agreement": 1.0', '"agreement": NaN')
    assert "NaN" in lines[0]
    (run / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    items = embedded_items(write_report(run).read_text("utf-8"))
    assert items[0]["agreement"] is None


def test_slim_item_keeps_what_only_it_holds(tmp_path: Path) -> None:
    run = write_pairwise_run(tmp_path / "pw")
    failed = next(it for it in read_jsonl(run / "results.jsonl") if it["status"] == "failed")
    slim = slim_item(failed)
    assert "raw" not in slim and "rationale" not in slim and "format" not in slim
    for call, kept in zip(failed["calls"], slim["calls"], strict=True):
        if call["status"] == "ok":
            assert "raw" not in kept and kept["rationale"] == call["rationale"]
        else:
            assert kept["raw"] == call["raw"] and kept["error"] == call["error"]
    # An item without calls keeps its own raw reply and rationale.
    bare = {**failed, "calls": [], "raw": "not json", "rationale": {"x": "why"}}
    assert slim_item(bare)["raw"] == "not json"
    assert slim_item(bare)["rationale"] == {"x": "why"}


def test_report_is_rewritten_in_place(tmp_path: Path) -> None:
    run = write_pointwise_run(tmp_path / "again")
    first = write_report(run)
    assert first == run / "report.html"
    second = write_report(run)
    assert second.read_text("utf-8") == first.read_text("utf-8")
    assert sorted(p.name for p in run.iterdir()) == ["report.html", "results.jsonl", "summary.json"]


def test_a_directory_without_a_summary_is_a_usage_error(tmp_path: Path) -> None:
    run = write_pointwise_run(tmp_path / "unfinished")
    (run / "summary.json").unlink()
    with pytest.raises(UsageError, match="has no summary.json"):
        write_report(run)
    assert not (run / "report.html").exists()


def test_a_results_line_is_spooled_as_written_only_where_the_page_needs_all_of_it(
    tmp_path: Path,
) -> None:
    """`chatjudge run` hands the report each record with its results line: a record with no
    raw reply (a deterministic scorer's) goes in as that line; one with raw replies is
    slimmed as before. The index, plain text in a script block, cannot be broken out of."""
    from chatjudge import jsoncodec
    from chatjudge.report import ReportBuilder

    run = write_pairwise_run(tmp_path / "pw")
    judged = next(it for it in read_jsonl(run / "results.jsonl") if it["status"] == "ok")
    assert any(c.get("raw") for c in judged["calls"])
    scored = {
        **judged,
        "id": "scored</script>&",
        "raw": None,
        "rationale": {"trajectory": "matched: </script><b>x</b> & more"},
        "calls": [{**c, "raw": None, "rationale": {}} for c in judged["calls"]],
        "tool_calls": {"expected": [{"name": "f</script>", "arguments": {}}]},
    }
    builder = ReportBuilder(run)
    for record in (judged, scored):
        builder.add(record, jsoncodec.dumps(record))
    html = builder.finish(RunDir(run).summary).read_text()
    assert "</script><b>" not in html and "f</script>" not in html and "scored</" not in html
    assert embedded_index(html)["id"] == [judged["id"], "scored</script>&"]
    items = embedded_items(html)
    assert items[0] == json.loads(json.dumps(slim_item(judged)))  # slimmed: no raw replies
    assert items[1] == json.loads(jsoncodec.dumps(scored))  # the line itself, whole
