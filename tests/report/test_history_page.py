"""The page of `chatjudge history`, in a real headless Chromium: each run's point and
interval in order, the steps with their status, judge changes marked, and run names that
carry markup shown as text, never run."""

from __future__ import annotations

from pathlib import Path

from chatjudge.formats.analyses import GateDifference
from chatjudge.formats.history import History, HistoryRun, HistoryStep
from chatjudge.formats.shared import Metric
from chatjudge.report.history_page import write_history_page
from tests.report.conftest import INJECTION_IMG, INJECTION_SCRIPT
from tests.support.browser import PageWatch

NAMES = ["v1", INJECTION_SCRIPT, INJECTION_IMG]


def made() -> History:
    runs = [
        HistoryRun(name=name, path=f"/runs/{i}", created=f"2026-0{i + 1}-01T00:00:00",
                   judges=["openai/judge"], evaluator=f"{i}" * 12 if i else None,
                   judge_check=0.9 if i else None,
                   metrics={"resolved": Metric(value=v, ci95=[v - 0.1, v + 0.1], n=40)})
        for i, (name, v) in enumerate(zip(NAMES, (0.8, 0.75, 0.4), strict=True))
    ]  # fmt: skip
    steps = [
        HistoryStep(before=NAMES[0], after=NAMES[1], metric="resolved",
                    difference=GateDifference(value=-0.05, ci95=[-0.2, 0.1]), n_pairs=40,
                    paired=True, judge_changed="judges: a vs <b>x</b>", decided=False,
                    regression=False),
        HistoryStep(before=NAMES[1], after=NAMES[2], metric="resolved",
                    difference=GateDifference(value=-0.35, ci95=[-0.5, -0.2]), n_pairs=40,
                    paired=True, judge_changed=None, decided=True, regression=True),
    ]  # fmt: skip
    return History(protocol="resolved", metrics=["resolved"], margin=0.0, all_steps=False,
                   runs=runs, steps=steps)  # fmt: skip


def test_history_page(tmp_path: Path, watch: PageWatch) -> None:
    path = write_history_page(made(), tmp_path / "history.html")
    page = watch.open(path)
    assert page.title() == "Release history · chatjudge"  # nothing injected ran
    assert watch.dialogs == [] and watch.errors == []
    assert all(url.startswith("file:") for url in watch.requests)  # self-contained
    assert page.locator("#headline").get_attribute("data-regressions") == "1"
    statuses = page.locator("#steps tbody tr").evaluate_all("rs => rs.map(r => r.dataset.status)")
    assert statuses == ["judge changed", "regression"]
    steps = page.locator("#steps tbody tr").all_inner_texts()
    assert INJECTION_SCRIPT in steps[0] and "-0.3500" in steps[1]
    rows = page.locator("#chart-metric-0 [data-key]")
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.key)") == NAMES
    assert "judge changed" in page.locator("#chart-metric-0").inner_text()
    runs = page.locator("#runs tbody tr")
    assert runs.evaluate_all("rs => rs.map(r => r.dataset.evaluator)") == ["—", "1" * 12, "2" * 12]
    assert runs.evaluate_all("rs => rs.map(r => r.dataset.judgeChanged || '')") == ["", "true", ""]
    assert runs.nth(1).inner_text().endswith("0.90")
    assert page.locator("img").count() == 0 and page.locator("b").count() == 0
