"""The report of a real `chatjudge run` (CLI, OpenAI judge over HTTP) in headless Chromium."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import expect
from typer.testing import CliRunner

from chatjudge.cli import app
from tests.report.conftest import check_report, read_jsonl
from tests.support.browser import PageWatch
from tests.support.stub_openai import StubServer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SCRIPT = "<script>document.title='pwned'</script>"
IMG = "<img src=x onerror=\"document.title='pwned'\">"


def test_report_of_a_real_pairwise_run(tmp_path: Path, watch: PageWatch, output_dir: Path) -> None:
    rows = [json.loads(line) for line in (EXAMPLES / "pairwise_chat_quality.jsonl").open()][:6]
    rows[0]["prompt"] = f"Is this safe? {SCRIPT} {IMG}"
    rows[1]["response"] = f"Here you go: {IMG}"
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "run"
    with StubServer(permanent={"POISON-PILL": "500"}) as stub:
        rows[2]["prompt"] += " POISON-PILL"
        data.write_text("".join(json.dumps(r) + "\n" for r in rows))
        done = CliRunner().invoke(
            app,
            [
                "run",
                str(data),
                "-p",
                "pairwise-chat-quality",
                "-j",
                "openai/stub",
                "--base-url",
                stub.base_url,
                "--out",
                str(out),
                "--max-retries",
                "1",
                "--retry-wait",
                "0.01",
            ],
        )
    assert done.exit_code == 1, done.output  # one item failed, the rest judged
    page = check_report(watch, out)
    title = page.title()
    assert "pwned" not in title
    items = read_jsonl(out / "results.jsonl")

    page.click("#detail-close")  # check_report left the first item open

    # Filtering narrows the table to the failed item.
    page.select_option('[data-filter="status"]', "failed")
    expect(page.locator("#items-count")).to_have_attribute("data-count", "1")
    page.select_option('[data-filter="status"]', "")
    expect(page.locator("#items-count")).to_have_attribute("data-count", str(len(items)))

    # Opening the injected item shows its conversation as text and its rationale.
    page.fill("#search", rows[0]["id"])
    page.locator("#item-rows tr").first.click()
    detail = page.locator("#detail")
    expect(detail).to_contain_text(SCRIPT)
    expect(detail).to_contain_text(IMG)
    first = next(it for it in items if it["id"] == rows[0]["id"])
    expect(detail).to_contain_text(first["calls"][0]["rationale"]["pairwise_choice"])
    assert detail.locator("img").count() == 0 and detail.locator("script").count() == 0
    assert page.title() == title and "pwned" not in page.title()
    page.screenshot(path=str(output_dir / "real-run-item.png"), full_page=False)
