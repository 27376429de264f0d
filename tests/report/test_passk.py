"""pass^k and pass@k in the report, in a real headless Chromium: one chart per 0/1 metric
with both curves against k and their intervals, no metric card for each k, and a metric
name that holds markup shown as text."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import expect

import chatjudge
from chatjudge.report import write_report
from tests.support.browser import PageWatch

NAME = "ok<img src=x onerror=alert(1)>"
PROTOCOL = f"""\
name = "resolved"
kind = "pointwise"
template = "Did the assistant resolve it?\\n{{chat}}\\n"

[[fields]]
name = "chat"
conversation = true

[[scores]]
name = "resolved"
path = "resolved"
min = 0
max = 1

[[metrics]]
name = '{NAME}'
source = "resolved"
"""


def judge(prompt: str) -> str:
    return json.dumps({"resolved": int("OK" in prompt)})


def test_the_report_draws_pass_k_against_k(tmp_path: Path, watch: PageWatch) -> None:
    protocol = tmp_path / "resolved.toml"
    protocol.write_text(PROTOCOL, encoding="utf-8")
    tries = {"t1": "OOXX", "t2": "OOOO", "t3": "XOXO", "t4": "OXXX", "t5": "O"}
    rows = [
        {"id": f"{task}-{k}", "task_id": task, "chat": "OK" if mark == "O" else "no"}
        for task, marks in tries.items()
        for k, mark in enumerate(marks)
    ]
    run = tmp_path / "run"
    chatjudge.evaluate(rows, protocol, judge=judge, out=run, report=False)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["pass_k"]["max_k"] == 4
    page = watch.open(write_report(run))
    chart = page.locator(f'section[data-section="passk-{NAME}"] svg.chart')
    expect(chart).to_be_visible()
    for kind in ("pass_hat", "pass_at"):
        for k in range(1, 5):
            key = f"{NAME}_{kind}_{k}"
            dot = chart.locator(f'circle[data-key="{key}"]')
            expect(dot).to_have_count(1)
            metric = summary["metrics"][key]
            assert float(dot.get_attribute("data-value") or "nan") == metric["value"]
            assert float(dot.get_attribute("data-lo") or "nan") == metric["ci95"][0]
            assert float(dot.get_attribute("data-hi") or "nan") == metric["ci95"][1]
    assert chart.locator("path.curve").count() == 2  # one line per estimator
    # pass^k falls with k and pass@k rises: the curves run as the summary says
    hats = [summary["metrics"][f"{NAME}_pass_hat_{k}"]["value"] for k in range(1, 5)]
    ats = [summary["metrics"][f"{NAME}_pass_at_{k}"]["value"] for k in range(1, 5)]
    assert hats == sorted(hats, reverse=True) and ats == sorted(ats)
    section = page.locator(f'section[data-section="passk-{NAME}"]')
    expect(section.locator("h2, h3").first).to_contain_text(f"{NAME.capitalize()}: pass^k")
    expect(section).to_contain_text("Over 4 tasks tried 4 times or more (1 tried once left out)")
    # the plain metric has its card; its pass^k and pass@k are in the chart only
    expect(page.locator(".card.metric[data-metric]")).to_have_count(1)
    assert page.locator("img[src=x]").count() == 0  # the name's markup is text, never an element
    assert watch.dialogs == [] and watch.errors == []
