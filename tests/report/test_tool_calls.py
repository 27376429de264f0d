"""A tool-trajectory run's report in a real headless Chromium: per item, the expected calls
beside the calls made (matched, missed, extra), names and arguments shown as text only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

import chatjudge
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
