"""The gate's section of the candidate run's report, in headless Chromium: the difference and
its interval drawn against the margin, and the per-slice forest plot."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import chatjudge
from chatjudge.cli import app
from chatjudge.formats.analyses import Gate
from chatjudge.formats.io import read_model
from chatjudge.report.gate_section import gate_sections
from chatjudge.rundir import GATE
from tests.analysis.gate.test_decide import judged, pointwise_rows
from tests.analysis.test_text import gate
from tests.report.conftest import check_report
from tests.support.browser import PageWatch


@pytest.fixture
def gated(tmp_path: Path) -> Path:
    n = 30
    lang = ["en"] * n + ["fr"] * n
    base = judged(pointwise_rows([(1, 2)] * (2 * n), lang=lang), tmp_path / "base")
    scores = [(1, 2)] * n + [(0, 2), (1, 2)] * (n // 2)
    cand = judged(pointwise_rows(scores, lang=lang), tmp_path / "cand")
    args = ["--baseline", str(base), "--candidate", str(cand), "--metric", "accuracy"]
    result = CliRunner().invoke(app, ["gate", *args, "--by", "lang", "--margin", "0.05"])
    assert result.exit_code in (1, 3), result.output
    return cand


def test_the_gate_section_draws_the_interval_against_the_margin(
    gated: Path, watch: PageWatch
) -> None:
    g = read_model(gated / GATE, Gate)
    page = check_report(watch, gated)  # also: offline, no script error
    section = page.locator('[data-section="gate"]')
    assert section.is_visible()
    assert f"Gate: {g.outcome}" in section.inner_text()
    # 15 of 60 rows differ: the small-sample rule guarded the interval, and says so
    assert g.method == "tango+betting" and "Small sample, 15 of 60 units differ" in (
        section.inner_text()
    )
    row = section.locator('.interval-row[data-key="gate"]')
    assert float(row.get_attribute("data-value")) == g.difference.value
    lo, hi = (float(row.get_attribute(a)) for a in ("data-lo", "data-hi"))
    assert [lo, hi] == g.difference.ci95
    assert f"{g.difference.value:+.3f}" in row.text_content()
    # The reference lines sit where the axis puts 0 and -margin, whiskers between them.
    zero = section.locator('.ref[data-ref="zero"] line')
    margin = section.locator('.ref[data-ref="margin"] line')
    assert float(section.locator('.ref[data-ref="margin"]').get_attribute("data-at")) == -0.05
    x0, xm = float(zero.get_attribute("x1")), float(margin.get_attribute("x1"))
    assert xm < x0
    box = row.locator(".whisker").bounding_box()
    dot = row.locator("circle.dot").bounding_box()
    assert box is not None and dot is not None
    assert box["x"] < dot["x"] + dot["width"] / 2 < box["x"] + box["width"]
    # the first section on the page: the decision comes before the score charts
    assert page.locator("[data-section]").first.get_attribute("data-section") == "gate"


def test_the_slices_forest_plot_is_worst_first(gated: Path, watch: PageWatch) -> None:
    g = read_model(gated / GATE, Gate)
    page = check_report(watch, gated)
    rows = page.locator('[data-section="gate-slices"] .interval-row')
    assert rows.count() == 2
    keys = [rows.nth(i).get_attribute("data-key") for i in range(2)]
    assert keys == [f"slice:{s.value}" for s in g.slices] == ["slice:fr", "slice:en"]
    fr = rows.nth(0)
    assert float(fr.get_attribute("data-value")) == g.slices[0].difference.value == -0.5
    assert float(fr.get_attribute("data-lo")) == g.slices[0].difference.ci95[0]
    assert "Bonferroni" in page.locator('[data-section="gate-slices"]').inner_text()


def test_a_run_without_gate_json_has_no_gate_section(tmp_path: Path, watch: PageWatch) -> None:
    run = judged(pointwise_rows([(1, 2), (0, 3)] * 3), tmp_path / "plain")
    page = check_report(watch, run)
    assert page.locator('[data-section="gate"]').count() == 0
    chatjudge.gate(run, judged(pointwise_rows([(1, 2), (0, 3)] * 3), tmp_path / "b"))
    page = watch.open(run / "report.html")  # as `gate` re-wrote it
    assert page.locator('[data-section="gate"]').count() == 1
    assert watch.errors == []


def test_a_slice_of_one_unit_says_too_few_to_say_in_the_forest_plot() -> None:
    one = {"value": "pro", "difference": {"value": 0.0, "ci95": []}, "level": 0.975,
           "n_pairs": 1, "below_margin": False, "counts": False}  # fmt: skip
    sections = gate_sections(gate(by="tier", slices=[one]))
    assert "n = 1 (&lt; 30), too few to say" in str(sections[1].chart)
