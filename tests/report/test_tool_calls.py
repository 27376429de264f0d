"""A tool-trajectory run's report in a real headless Chromium: per item, the expected calls
beside the calls made (matched, missed, extra), names and arguments shown as text only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

import chatjudge
from chatjudge.report import write_report
from tests.report.conftest import INJECTION_IMG, INJECTION_SCRIPT
from tests.support.browser import PageWatch

EVIL_TOOL = "lookup" + INJECTION_SCRIPT


def trajectory(*calls: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for k, (name, arguments) in enumerate(calls):
        function = {"name": name, "arguments": json.dumps(arguments)}
        call = {"id": f"c{k}", "type": "function", "function": function}
        messages += [
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{k}", "content": "ok"},
        ]
    return messages


def test_expected_and_made_calls_side_by_side_as_text(tmp_path: Path, watch: PageWatch) -> None:
    rows = [
        {
            "id": "evil",
            "response_trajectory": trajectory(
                (EVIL_TOOL, {"q": INJECTION_IMG}), ("search", {"q": "x"})
            ),
            "expected_tool_calls": [
                {"name": EVIL_TOOL, "arguments": {"q": INJECTION_IMG}},
                {"name": "book", "arguments": {"day": 2}},
            ],
            "match": "in-order",
        },
        {
            "id": "fine",
            "response_trajectory": trajectory(("search", {"q": "x"})),
            "expected_tool_calls": [{"name": "search", "arguments": {"q": "x"}}],
        },
    ]
    result = chatjudge.evaluate(rows, protocol="tool-trajectory", out=tmp_path / "run")
    page = watch.open(result.report_path)
    title = page.title()
    page.locator('#item-rows tr[data-id="evil"]').click()
    table = page.locator("#detail table.tool-calls")
    expect(table.locator("tbody tr")).to_have_count(3)
    matched, missed, extra = (table.locator("tbody tr").nth(k) for k in range(3))
    expect(matched.locator("td").nth(0)).to_have_text("matched")
    expect(matched.locator("td").nth(1)).to_have_text(
        f"{EVIL_TOOL}({json.dumps({'q': INJECTION_IMG}, separators=(',', ':'))})"
    )
    expect(matched.locator("td").nth(2)).to_contain_text(f"call 1 {EVIL_TOOL}(")
    expect(missed.locator("td").nth(0)).to_have_text("missed")
    expect(missed.locator("td").nth(1)).to_have_text('book({"day":2})')
    expect(missed.locator("td").nth(2)).to_have_text("")
    expect(extra.locator("td").nth(0)).to_have_text("extra")
    expect(extra.locator("td").nth(2)).to_contain_text('call 2 search({"q":"x"})')
    expect(extra).to_have_class("extra left")  # in order, the trajectory left here
    expect(page.locator("#detail")).to_contain_text("does not match")
    expect(page.locator("#detail")).to_contain_text("left the expected trajectory at call 2")
    assert page.locator("#detail script, #detail img").count() == 0
    page.wait_for_timeout(200)  # an onerror handler would have fired by now
    assert page.evaluate("document.title") == title != "pwned"
    page.locator("#detail-next").click()  # the next item, `fine`
    expect(page.locator("#detail table.tool-calls tbody tr")).to_have_count(1)
    expect(page.locator("#detail")).to_contain_text("matches")
    assert watch.errors == [] and watch.dialogs == []


def test_a_judge_free_report_speaks_of_no_judge_and_plots_counts_as_counts(
    tmp_path: Path, watch: PageWatch
) -> None:
    """tool-trajectory: no "Judge: deterministic", no pointwise badge, no judge calls, no
    labelling; its counts (matched_calls) drawn in whole numbers; a null precision (an item
    that made no call) shown as a dash."""
    rows = [
        {
            "id": f"r{n}",
            "response_trajectory": trajectory(*[("search", {"q": k}) for k in range(n)])
            or [{"role": "assistant", "content": "No call needed."}],
            "expected_tool_calls": [{"name": "search", "arguments": {"q": k}} for k in range(n)]
            or [{"name": "book", "arguments": {}}],
            "match": "any-order",
        }
        for n in range(15)  # 0 to 14 calls: more distinct counts than a chart has bars
    ]
    result = chatjudge.evaluate(rows, protocol="tool-trajectory", out=tmp_path / "run")
    page = watch.open(result.report_path)
    text = page.locator("body").inner_text()
    assert "deterministic" not in text and "judge calls" not in text.lower()
    assert "null" not in text
    expect(page.locator("#kind")).to_have_count(0)
    expect(page.locator("#judges")).to_have_count(0)
    expect(page.locator("#scorer")).to_have_text("the tool-trajectory rules, no judge")
    expect(page.locator("[role=tab], #tab-label, #label-view")).to_have_count(0)
    expect(page.locator("#n_ok .count-label")).to_have_text("Scored")
    counts = page.locator('[data-chart="score-matched_calls"]')
    expect(counts.locator(".axis-title").last).to_have_text("matched_calls")
    labels = counts.locator(".bar-group").evaluate_all("gs => gs.map(g => g.dataset.label)")
    assert labels[0] == "0–1" and labels[-1] == "14" and len(labels) == 8, labels
    section = page.locator(".chart-card", has=counts)
    expect(section.locator("h3")).to_have_text("Matched calls")
    empty = page.locator('#item-rows tr[data-id="r0"]')
    expect(empty.locator("td").nth(4)).to_have_text("—")  # tool_call_precision
    empty.click()
    expect(page.locator("#detail .detail-head")).to_contain_text("tool_call_precision —")
    expect(page.locator("#detail")).not_to_contain_text("Judge calls")
    expect(page.locator("#detail")).to_contain_text("missed: book({})")  # the rationale
    expect(page.locator("#detail")).not_to_contain_text("tokens")
    page.goto(result.report_path.resolve().as_uri() + "#label")  # no labelling to open
    expect(page.locator("#report-view")).to_be_visible()
    assert watch.errors == [] and watch.dialogs == []


def test_a_judge_free_run_of_an_older_chatjudge_is_reported_so_too(tmp_path: Path) -> None:
    """Its summary.json names no `scorer`: the built-in protocol says it has one."""
    row = {"id": "r", "response_trajectory": trajectory(("search", {"q": 1})),
           "expected_tool_calls": [{"name": "search", "arguments": {"q": 1}}]}  # fmt: skip
    run = tmp_path / "run"
    chatjudge.evaluate([row], protocol="tool-trajectory", out=run, report=False)
    summary = json.loads((run / "summary.json").read_text())
    assert summary.pop("scorer") == "tool-trajectory"
    (run / "summary.json").write_text(json.dumps(summary))
    html = write_report(run).read_text()
    assert 'id="scorer"' in html and 'id="tab-label"' not in html
