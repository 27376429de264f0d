"""The run report in a real headless Chromium: numbers, table, item detail, escaping, no network."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect

from chatjudge.report import write_report
from tests.report.conftest import (
    INJECTED_ID,
    INJECTION_IMG,
    INJECTION_SCRIPT,
    check_report,
    read_jsonl,
    write_pairwise_run,
    write_pointwise_run,
)
from tests.support.browser import PageWatch
from tests.support.report_page import embedded_index, embedded_items, script_block


def open_report(watch: PageWatch, run_dir: Path) -> Page:
    page = watch.open(write_report(run_dir))
    expect(page.locator("#item-rows tr").first).to_be_visible()
    return page


def assert_offline_and_clean(watch: PageWatch, run_dir: Path) -> None:
    """The page asked for nothing but itself, raised no script error and opened no dialog."""
    assert watch.requests == [(run_dir / "report.html").resolve().as_uri()]
    assert watch.errors == []
    assert watch.dialogs == []


def percent(value: float) -> str:
    return f"{value * 100:.1f}%"


def shown_rows(page: Page) -> int:
    return page.locator("#item-rows tr").count()


def expect_count(page: Page, n: int) -> None:
    expect(page.locator("#items-count")).to_have_attribute("data-count", str(n))


def text_of(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(f"{m['role']}: {m['content']}" for m in value)
    return str(value)


def matching(items: list[dict[str, Any]], query: str) -> int:
    """How many items a search for `query` must keep: id or any field contains it."""
    q = query.lower()
    return sum(
        q in (item["id"] + "\n" + "\n".join(text_of(v) for v in item["fields"].values())).lower()
        for item in items
    )


def test_check_report_on_both_protocols(tmp_path: Path, watch: PageWatch) -> None:
    """The reusable check (also for real runs) passes on both hand-built runs."""
    check_report(watch, write_pairwise_run(tmp_path / "pw"))
    watch.requests.clear()
    check_report(watch, write_pointwise_run(tmp_path / "pt"))


def test_pairwise_numbers_equal_summary(pairwise_run: Path, watch: PageWatch) -> None:
    summary = json.loads((pairwise_run / "summary.json").read_text())
    page = open_report(watch, pairwise_run)

    for key in ("n_items", "n_ok", "n_failed"):
        tile = page.locator(f"#{key}")
        assert tile.get_attribute("data-value") == str(summary[key])
        assert tile.locator(".count-value").inner_text() == str(summary[key])
    assert page.locator("#protocol").get_attribute("data-value") == "pairwise-chat-quality"
    assert page.locator("#judges .chip").all_inner_texts() == summary["judges"]

    for name, m in summary["metrics"].items():
        card = page.locator(f'.metric[data-metric="{name}"]')
        assert float(card.get_attribute("data-value")) == m["value"]
        assert [float(card.get_attribute("data-lo")), float(card.get_attribute("data-hi"))] == m[
            "ci95"
        ]
        assert card.get_attribute("data-n") == str(m["n"])
        assert card.locator(".metric-value").inner_text() == percent(m["value"])
        lo, hi = m["ci95"]
        assert card.locator(".ci-text").inner_text() == f"[{percent(lo)}, {percent(hi)}]"

    # The win/tie/loss chart and the consistency chart draw the summary's numbers.
    for name in ("candidate_win_rate", "tie_rate", "baseline_win_rate", "position_consistency"):
        row = page.locator(f'.interval-row[data-key="{name}"]')
        assert float(row.get_attribute("data-value")) == summary["metrics"][name]["value"]
        assert float(row.get_attribute("data-hi")) == summary["metrics"][name]["ci95"][1]
        assert percent(summary["metrics"][name]["value"]) in row.text_content()

    # A panel: every judge's metrics and the agreement between the two judges.
    per_judge = summary["per_judge"]
    for judge in summary["judges"]:
        for name, m in per_judge[judge]["metrics"].items():
            row = page.locator(f'.interval-row[data-key="{name}:{judge}"]')
            assert float(row.get_attribute("data-value")) == m["value"]
            assert float(row.get_attribute("data-lo")) == m["ci95"][0]
    pair = per_judge["inter_judge_agreement"][0]
    row = page.locator(f'.interval-row[data-key="agreement:{"|".join(pair["judges"])}"]')
    assert float(row.get_attribute("data-value")) == pair["agreement"]
    assert percent(pair["agreement"]) in row.text_content()
    assert_offline_and_clean(watch, pairwise_run)


def test_pointwise_numbers_and_score_distributions(pointwise_run: Path, watch: PageWatch) -> None:
    summary = json.loads((pointwise_run / "summary.json").read_text())
    items = read_jsonl(pointwise_run / "results.jsonl")
    page = open_report(watch, pointwise_run)

    shown = {
        card.get_attribute("data-metric"): card.locator(".metric-value").inner_text()
        for card in page.locator(".metric").all()
    }
    m = summary["metrics"]
    assert shown == {
        "interactivity": f"{m['interactivity']['value']:.2f}",
        "itr": f"{m['itr']['value']:.1f}",
        "accuracy": percent(m["accuracy"]["value"]),
    }
    lo, hi = m["itr"]["ci95"]  # an interval is written as precisely as its value
    assert (
        page.locator('.metric[data-metric="itr"] .ci-text').inner_text() == f"[{lo:.1f}, {hi:.1f}]"
    )
    for name in ("interactivity", "accuracy"):
        expected = Counter(it["scores"][name] for it in items if it["status"] == "ok")
        bars = page.locator(f'[data-chart="score-{name}"] .bar-group').all()
        drawn = {
            float(b.get_attribute("data-label")): int(b.get_attribute("data-count")) for b in bars
        }
        assert drawn == {float(k): v for k, v in expected.items()}
        for bar in bars:  # the count is written on the bar itself
            assert bar.get_attribute("data-count") in bar.text_content()
    assert_offline_and_clean(watch, pointwise_run)


def test_search_and_filters_narrow_the_table(pairwise_run: Path, watch: PageWatch) -> None:
    items = read_jsonl(pairwise_run / "results.jsonl")
    page = open_report(watch, pairwise_run)
    assert shown_rows(page) == len(items)

    page.fill("#search", "SOURDOUGH")
    expect_count(page, matching(items, "sourdough"))
    assert shown_rows(page) == matching(items, "sourdough") == 2
    page.fill("#search", INJECTED_ID)
    expect_count(page, 1)
    assert page.locator("#item-rows tr").get_attribute("data-id") == INJECTED_ID
    page.fill("#search", "no conversation mentions this")
    expect_count(page, 0)
    expect(page.locator("#empty")).to_be_visible()
    page.fill("#search", "")
    expect_count(page, len(items))

    page.select_option('[data-filter="status"]', "failed")
    expect_count(page, sum(it["status"] == "failed" for it in items))
    assert page.locator("#item-rows tr").get_attribute("data-status") == "failed"
    page.select_option('[data-filter="status"]', "")

    choice = '[data-filter="choice:pairwise_choice"]'
    for side in ("CANDIDATE", "BASELINE", "TIE"):
        page.select_option(choice, side)
        expect_count(page, sum(it["scores"].get("pairwise_choice") == side for it in items))
    page.select_option(choice, "")

    page.select_option('[data-filter="consistency"]', "no")
    inconsistent = sum(it["consistent"] is False for it in items)
    expect_count(page, inconsistent)
    assert page.locator("#item-rows td.no").count() == inconsistent
    page.fill("#search", "home office")  # filters and search combine
    expect_count(
        page,
        sum(
            it["consistent"] is False and "home office" in text_of(it["fields"]["prompt"]).lower()
            for it in items
        ),
    )
    assert_offline_and_clean(watch, pairwise_run)


def test_sorting_by_id_score_and_status(pointwise_run: Path, watch: PageWatch) -> None:
    items = read_jsonl(pointwise_run / "results.jsonl")
    page = open_report(watch, pointwise_run)

    page.select_option("#sort", "status")
    assert page.locator("#item-rows tr").first.get_attribute("data-status") == "failed"

    header = page.locator('th[data-sort="score:interactivity"]')
    header.click()
    header.click()  # second click: descending
    col = [h.get_attribute("data-sort") for h in page.locator("#item-head th").all()].index(
        "score:interactivity"
    )
    expect(header.locator(".arrow")).to_have_text("▼")
    cells = [row.locator("td").nth(col).inner_text() for row in page.locator("#item-rows tr").all()]
    scores = [float(c) for c in cells if c != "—"]
    assert scores == sorted(scores, reverse=True)
    assert cells[-1] == "—"  # the failed item has no score and goes last

    page.select_option("#sort", "id")
    ids = page.locator("#item-rows tr").evaluate_all("rows => rows.map(r => r.dataset.id)")
    assert ids == sorted(it["id"] for it in items)

    page.select_option('[data-filter="score:interactivity"]', "3")
    expect_count(page, sum(it["scores"].get("interactivity") == 3 for it in items))
    assert_offline_and_clean(watch, pointwise_run)


def test_item_detail_shows_conversation_calls_and_rationale(
    pairwise_run: Path, watch: PageWatch
) -> None:
    items = {it["id"]: it for it in read_jsonl(pairwise_run / "results.jsonl")}
    page = open_report(watch, pairwise_run)
    item = items["pw-02"]

    page.locator('#item-rows tr[data-id="pw-02"]').click()
    detail = page.locator("#detail")
    expect(detail).to_be_visible()
    assert detail.get_attribute("data-item-id") == "pw-02"
    user_turns = detail.locator(".msg.user").all_inner_texts()
    assert any(item["fields"]["prompt"] in t for t in user_turns)
    assert any(
        m["content"] in t
        for t in user_turns
        for m in item["fields"]["history"]
        if m["role"] == "user"
    )
    assert item["fields"]["history"][2]["content"] in detail.locator(".msg.assistant").inner_text()
    responses = detail.locator(".response").all_inner_texts()
    assert item["fields"]["baseline_model_response"] in responses[0]
    assert item["fields"]["response"] in responses[1]

    calls = detail.locator(".call")
    assert calls.count() == len(item["calls"]) == 4
    assert sorted(c.get_attribute("data-judge") for c in calls.all()) == sorted(
        c["judge"] for c in item["calls"]
    )
    flipped = detail.locator('.call[data-flipped="true"]')
    assert flipped.count() == 2
    expect(flipped.first).to_contain_text("flipped: candidate shown as A")
    for call in item["calls"]:
        expect(detail).to_contain_text(call["rationale"]["pairwise_choice"])
    expect(detail.locator('.call[data-flipped="true"]').first).to_contain_text("wrote")

    # A failed item: the error and the raw reply that did not parse.
    page.keyboard.press("Escape")
    expect(detail).to_be_hidden()
    failed = next(it for it in items.values() if it["status"] == "failed")
    page.locator(f'#item-rows tr[data-id="{failed["id"]}"]').click()
    bad = next(c for c in failed["calls"] if c["status"] == "failed")
    expect(detail.locator(".error-box").first).to_contain_text(failed["error"])
    expect(detail.locator(".call.failed pre.raw")).to_have_text(bad["raw"])
    assert_offline_and_clean(watch, pairwise_run)


def test_failed_provider_call_shows_its_error(pointwise_run: Path, watch: PageWatch) -> None:
    items = read_jsonl(pointwise_run / "results.jsonl")
    failed = next(it for it in items if it["status"] == "failed")
    page = open_report(watch, pointwise_run)
    page.locator(f'#item-rows tr[data-id="{failed["id"]}"]').click()
    bad = page.locator("#detail .call.failed")
    expect(bad).to_contain_text("ServerError: 503")
    expect(bad).to_contain_text("No reply came back")
    # The question and the ground truth of a pointwise item are there too.
    expect(page.locator("#detail")).to_contain_text(failed["fields"]["answer"])
    assert_offline_and_clean(watch, pointwise_run)


def test_injected_markup_is_shown_as_text_and_never_runs(
    pairwise_run: Path, pointwise_run: Path, watch: PageWatch
) -> None:
    html = write_report(pairwise_run).read_text("utf-8")
    assert INJECTION_SCRIPT not in html and INJECTION_IMG not in html
    # The markup reaches the page inside the compressed items, and only there.
    assert INJECTION_SCRIPT in json.dumps(embedded_items(html), ensure_ascii=False)

    page = open_report(watch, pairwise_run)
    title = page.title()
    assert "pwned" not in title
    page.locator(f'#item-rows tr[data-id="{INJECTED_ID}"]').click()
    detail = page.locator("#detail-body")
    expect(detail).to_contain_text(INJECTION_SCRIPT)
    expect(detail).to_contain_text(INJECTION_IMG)
    assert detail.locator("script, img").count() == 0
    expect(detail.locator(".rationale").first).to_contain_text(INJECTION_SCRIPT)
    page.wait_for_timeout(200)  # an onerror handler would have fired by now
    assert page.title() == title
    assert page.evaluate("document.title") == title
    assert_offline_and_clean(watch, pairwise_run)

    # In the pointwise run the markup is in the first turn, shown in the table's preview.
    watch.requests.clear()
    page = open_report(watch, pointwise_run)
    title = page.title()
    preview = page.locator("#item-rows tr").nth(4).locator("td.preview")
    expect(preview).to_contain_text("<script>document.title='pwned'</script>")
    page.locator("#item-rows tr").nth(4).click()
    expect(page.locator("#detail .rationale").nth(1)).to_contain_text(INJECTION_IMG)
    assert page.locator("#detail img, #detail script").count() == 0
    page.wait_for_timeout(200)
    assert page.title() == title != "pwned"
    assert_offline_and_clean(watch, pointwise_run)


def test_tool_calls_and_results_are_collapsible_blocks_shown_as_text(
    pairwise_run: Path, watch: PageWatch
) -> None:
    page = open_report(watch, pairwise_run)
    title = page.title()
    page.locator(f'#item-rows tr[data-id="{INJECTED_ID}"]').click()
    responses = page.locator("#detail .response")
    for side in range(2):  # the baseline's trajectory and the candidate's, the same way
        call = responses.nth(side).locator("details.tool.call")
        result = responses.nth(side).locator("details.tool.result")
        expect(call.locator("summary")).to_have_text("called search")
        expect(result.locator("summary")).to_have_text(
            f"tool (search) returned · {len('found ' + INJECTION_IMG)} characters"
        )
        expect(call.locator("pre")).to_be_hidden()  # closed until asked for
        call.locator("summary").click()
        result.locator("summary").click()
        expect(call.locator("pre")).to_have_text(json.dumps({"q": INJECTION_SCRIPT}))
        expect(result.locator("pre")).to_have_text(f"found {INJECTION_IMG}")
    expect(page.locator("#detail")).not_to_contain_text("response_trajectory")  # not repeated
    assert page.locator("#detail script, #detail img").count() == 0
    page.wait_for_timeout(200)  # an onerror handler would have fired by now
    assert page.evaluate("document.title") == title
    assert_offline_and_clean(watch, pairwise_run)


def test_pages_of_a_large_run(tmp_path: Path, watch: PageWatch) -> None:
    run = write_pointwise_run(tmp_path / "large", n_items=2500)
    page = open_report(watch, run)
    assert shown_rows(page) == 50
    expect(page.locator("#page-info")).to_contain_text("Page 1 of 50")
    page.click("#next-page")
    assert page.locator("#item-rows tr").first.get_attribute("data-id") == "ia-51"
    page.select_option('[data-filter="status"]', "failed")
    expect_count(page, 250)
    expect(page.locator("#page-info")).to_contain_text("Page 1 of 5")
    page.select_option('[data-filter="status"]', "")
    page.fill("#search", "ia-1234")
    expect_count(page, 1)
    # Stepping through items in the detail panel follows the table's order across pages.
    page.fill("#search", "")
    expect_count(page, 2500)
    page.locator("#item-rows tr").last.click()
    page.click("#detail-next")
    expect(page.locator("#detail")).to_have_attribute("data-item-id", "ia-51")
    expect(page.locator("#page-info")).to_contain_text("Page 2 of 50")
    assert_offline_and_clean(watch, run)


def test_items_block_cannot_be_broken_out_of(tmp_path: Path) -> None:
    run = write_pointwise_run(tmp_path / "escape")
    html = write_report(run).read_text("utf-8")
    block = script_block(html, "items-data")
    assert re.fullmatch(r"[A-Za-z0-9+/=\s]*", block)  # base64 lines: no markup can be in it
    items = embedded_items(html)
    assert [it["id"] for it in items] == [it["id"] for it in read_jsonl(run / "results.jsonl")]
    assert INJECTION_SCRIPT in json.dumps(items, ensure_ascii=False)
    assert embedded_index(html)["id"] == [it["id"] for it in items]
    assert html.count("</script>") == 4  # config, index, items, the page's own script


def test_a_run_without_items_opens_and_searches(tmp_path: Path, watch: PageWatch) -> None:
    """No chunk to inflate: the empty table, a search over nothing, no script error."""
    run = write_pointwise_run(tmp_path / "empty")
    (run / "results.jsonl").write_text("", encoding="utf-8")
    summary = json.loads((run / "summary.json").read_text("utf-8"))
    summary.update(n_items=0, n_ok=0, n_failed=0)
    (run / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    page = watch.open(write_report(run))
    expect_count(page, 0)
    expect(page.locator("#empty")).to_be_visible()
    page.fill("#search", "anything")
    page.wait_for_timeout(400)  # past the box's 150 ms debounce
    expect_count(page, 0)
    assert_offline_and_clean(watch, run)


def test_a_link_to_an_item_opens_it_from_its_chunk(pointwise_run: Path, watch: PageWatch) -> None:
    path = write_report(pointwise_run)
    wanted = read_jsonl(pointwise_run / "results.jsonl")[6]
    page = watch.page
    page.goto(f"{path.resolve().as_uri()}#item={wanted['id']}", wait_until="load")
    detail = page.locator("#detail")
    expect(detail).to_have_attribute("data-item-id", wanted["id"])
    expect(detail).to_contain_text(wanted["fields"]["answer"])
    assert watch.errors == []
