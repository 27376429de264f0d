"""A report of 20,000 items in Chromium: compressed in the page, searched over every item,
and an item opened from its chunk shows the text `results.jsonl` holds."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import expect

from chatjudge.report import write_report
from tests.report.conftest import read_jsonl, write_pointwise_run
from tests.support.browser import PageWatch
from tests.support.report_page import embedded_index

N = 20_000
NEEDLE = 17_321  # far from the first chunks: the search must inflate them all to find it


def repeated_run(run_dir: Path, n: int) -> Path:
    """The hand-built pointwise run's items repeated to `n` (ids and positions made unique;
    the summary's counts follow, its metrics are the small run's), and one item, far in,
    whose conversation says something no other does."""
    run = write_pointwise_run(run_dir)
    plan = read_jsonl(run / "results.jsonl")
    with (run / "results.jsonl").open("w", encoding="utf-8") as out:
        for i in range(n):
            item = {**plan[i % len(plan)], "id": f"ia-{i + 1:05d}", "index": i}
            if i == NEEDLE:
                chat = [dict(m) for m in item["fields"]["chat"]]
                chat[2]["content"] = "Only this one asks about the Quokkas of Rottnest."
                item["fields"] = {**item["fields"], "chat": chat}
            out.write(json.dumps(item, ensure_ascii=False) + "\n")
    summary = json.loads((run / "summary.json").read_text("utf-8"))
    failed = sum(it["status"] == "failed" for it in plan) * n // len(plan)
    summary.update(n_items=n, n_ok=n - failed, n_failed=failed)
    (run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return run


def test_a_20000_item_report_finds_an_item_by_search_and_shows_it_as_written(
    tmp_path: Path, watch: PageWatch
) -> None:
    run = repeated_run(tmp_path / "large", N)
    results = run / "results.jsonl"
    wanted = read_jsonl(results)[NEEDLE]  # as a reader of results.jsonl sees it
    page_path = write_report(run)
    # Compressed: the page weighs a fraction of the results it shows (it was their size).
    assert page_path.stat().st_size < results.stat().st_size / 5
    assert len(embedded_index(page_path.read_text("utf-8"))["id"]) == N

    page = watch.open(page_path)
    count = page.locator("#items-count")
    expect(count).to_have_attribute("data-count", str(N))
    page.fill("#search", "quokkas of rottnest")
    expect(count).to_have_attribute("data-count", "1")
    row = page.locator("#item-rows tr")
    expect(row).to_have_count(1)
    expect(row).to_have_attribute("data-id", wanted["id"])
    expect(row.locator("td.preview")).to_have_text(wanted["fields"]["chat"][0]["content"])
    row.click()

    detail = page.locator("#detail")
    expect(detail).to_have_attribute("data-item-id", wanted["id"])
    messages = detail.locator(".conversation .msg")
    chat, history = wanted["fields"]["chat"], wanted["fields"]["chat_history"]
    expect(messages).to_have_count(len(chat) + len(history))
    for k, message in enumerate(history + chat):
        expect(messages.nth(k).locator(".role")).to_have_text(message["role"])
        expect(messages.nth(k)).to_contain_text(message["content"])
    calls = detail.locator(".call")
    expect(calls).to_have_count(len(wanted["calls"]))
    for k, call in enumerate(sorted(wanted["calls"], key=lambda c: c["sample"])):
        for why in call["rationale"].values():
            expect(calls.nth(k).locator(".rationale p")).to_contain_text([why])
    for field in ("question", "answer"):
        expect(detail).to_contain_text(wanted["fields"][field])
    assert watch.requests == [page_path.resolve().as_uri()]
    assert watch.errors == [] and watch.dialogs == []
