"""Screenshots of the report (top, an opened item, a narrow screen) for a person to look at.

They land in test-output/ (gitignored). The assertions check the layout does not overflow.
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect

from chatjudge.report import write_report
from tests.report.conftest import INJECTED_ID
from tests.support.browser import PageWatch


def page_width(watch: PageWatch) -> int:
    return int(watch.page.evaluate("document.documentElement.scrollWidth"))


def test_screenshots_wide(
    pairwise_run: Path, pointwise_run: Path, watch: PageWatch, output_dir: Path
) -> None:
    for name, run, item in (
        ("pairwise", pairwise_run, "pw-02"),
        ("pointwise", pointwise_run, "ia-06"),
    ):
        page = watch.open(write_report(run))
        assert page_width(watch) <= 1280
        page.screenshot(path=output_dir / f"report-{name}-top.png")
        page.screenshot(path=output_dir / f"report-{name}-full.png", full_page=True)
        page.locator(f'#item-rows tr[data-id="{item}"]').click()
        expect(page.locator("#detail")).to_be_visible()
        page.screenshot(path=output_dir / f"report-{name}-item.png")
        assert (output_dir / f"report-{name}-item.png").stat().st_size > 10_000
    assert watch.errors == []


def test_screenshots_narrow(pairwise_run: Path, watch: PageWatch, output_dir: Path) -> None:
    watch.page.set_viewport_size({"width": 390, "height": 844})
    page = watch.open(write_report(pairwise_run))
    assert page_width(watch) <= 390  # nothing pushes the page sideways on a phone
    page.screenshot(path=output_dir / "report-narrow-full.png", full_page=True)
    page.locator(f'#item-rows tr[data-id="{INJECTED_ID}"]').click()
    detail = page.locator("#detail")
    expect(detail).to_be_visible()
    assert detail.bounding_box()["width"] <= 390
    page.screenshot(path=output_dir / "report-narrow-item.png")
    assert watch.errors == []
