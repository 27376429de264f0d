"""realism's report.html in a real headless Chromium, from `chatjudge.realism(...)` against
Python function models: each behaviour real beside simulated, the discriminator's accuracy
and reasons, the metric gap, one goal's two conversations side by side, what a conversation
says shown as text and never run, and no request beyond the page itself."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect

import chatjudge
from tests.support.browser import PageWatch
from tests.user_realism.standins import Recorder
from tests.user_realism.test_gap import ROWS

MARKUP = '<img src=x onerror="alert(1)"><script>alert(2)</script><b>bold</b>'


def test_the_realism_page(tmp_path: Path, watch: PageWatch, output_dir: Path) -> None:
    rec = Recorder()
    first = {**ROWS[0], "chat": [{"role": "user", "content": MARKUP}, *ROWS[0]["chat"][1:]]}
    result = chatjudge.realism([first, *ROWS[1:]], rec.assistant, tmp_path / "r", user=rec.user,
                               judge=rec.judge, protocol="interactivity-accuracy",
                               samples=2)  # fmt: skip
    path = tmp_path / "r" / "report.html"
    page = watch.open(path)

    rows = page.locator("#behaviours tbody tr")
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.measure)") == list(result.behaviours)
    for name, measure in result.behaviours.items():
        row = page.locator(f'#behaviours tr[data-measure="{name}"]')
        expect(row.locator("td").nth(1)).to_contain_text(f"{measure.real.value:.3g}")
        expect(row.locator("td").nth(2)).to_contain_text(f"{measure.simulated.value:.3g}")
        assert row.get_attribute("data-claimed") == str(measure.claimed).lower()
    turns = page.locator('#behaviours tr[data-measure="user_turns"] td')
    expect(turns.nth(6)).to_contain_text("(n=3)")  # the spread over the real conversations
    expect(turns.nth(7)).to_contain_text("(n=6)")  # ...and over the simulated ones

    judged = result.discriminator
    assert judged is not None and judged.accuracy.value == 1.0
    expect(page.locator("#discriminator-accuracy")).to_contain_text(
        f"Accuracy 1 [{judged.accuracy.ci95[0]:.3g}"
    )
    expect(page.locator("#reasons li").first).to_contain_text("the simulated user thanks politely")
    expect(page.locator('#gaps tr[data-metric="accuracy"]')).to_contain_text("-0.667")

    real = page.locator('#example [data-side="real"]')
    simulated = page.locator('#example [data-side="simulated"]')
    expect(real).to_contain_text(MARKUP)  # the markup as text
    expect(simulated).to_contain_text("Hello, I need help with my plan.")
    assert page.locator("#example img, #example script, #example b").count() == 0
    assert watch.dialogs == [] and watch.errors == []
    assert watch.requests == [path.resolve().as_uri()]
    page.screenshot(path=output_dir / "realism-full.png", full_page=True)
