"""The report's labelling mode in a real headless Chromium, on runs made by the engine.

A person labels a seeded random sample (the judge's verdict hidden until they answer),
progress survives a reload, and the exported file is what `chatjudge agree --human` reads.
The sample order is checked against an independent Python port of the page's shuffle.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from scipy.stats import spearmanr
from typer.testing import CliRunner

import chatjudge
from chatjudge.cli import app
from chatjudge.report import write_report
from chatjudge.report.html import label_scales
from chatjudge.report.load import ResultStats
from tests.report.conftest import read_jsonl, write_pointwise_run
from tests.support.browser import PageWatch

runner = CliRunner()
M32 = 0xFFFFFFFF


# ---------------------------------------------------------------- the sample, in Python
def mulberry32(seed: int) -> Iterator[float]:
    """The page's generator, written again from its definition (uint32 arithmetic)."""
    a = seed & M32
    while True:
        a = (a + 0x6D2B79F5) & M32
        t = ((a ^ (a >> 15)) * (a | 1)) & M32
        t = (t ^ (t + ((t ^ (t >> 7)) * (t | 61)))) & M32
        yield ((t ^ (t >> 14)) & M32) / 2**32


def seeded_sample(ids: list[str], seed: int, size: int) -> list[str]:
    """Ids sorted as JavaScript sorts strings, Fisher-Yates from the end, the first `size`."""
    order = sorted(ids, key=lambda s: s.encode("utf-16-be"))
    rand = mulberry32(seed)
    for i in range(len(order) - 1, 0, -1):
        j = math.floor(next(rand) * (i + 1))
        order[i], order[j] = order[j], order[i]
    return order[:size]


def test_python_port_matches_reference_values() -> None:
    """First outputs of the widely copied JavaScript mulberry32 (`t = a += 0x6D2B79F5; ...`),
    run in Node for seeds 0 and 123456789, so the port is not only checked against itself."""
    rand = mulberry32(0)
    assert [next(rand) for _ in range(3)] == [
        0.26642920868471265,
        0.0003297457005828619,
        0.2232720274478197,
    ]
    rand = mulberry32(123456789)
    assert [next(rand) for _ in range(3)] == [
        0.2577907438389957,
        0.9707721115555614,
        0.7853280142880976,
    ]


# ---------------------------------------------------------------- runs made by the engine
def fair_judge(prompt: str) -> str:
    """Prefers the response holding GOOD; writes which item it judged into its explanation."""
    a = re.search(r"### Response A\n(.*?)\n\n### Response B", prompt, re.S).group(1)
    b = re.search(r"### Response B\n(.*)", prompt, re.S).group(1)
    choice = (
        "A"
        if "GOOD" in a and "GOOD" not in b
        else "B"
        if "GOOD" in b and "GOOD" not in a
        else "SAME"
    )
    item = re.search(r"question (\d+)", prompt).group(1)
    why = f"RATIONALE-{item}: response {choice} is better"
    return json.dumps({"explanation": why, "pairwise_choice": choice})


def pairwise_run(tmp_path: Path, n: int = 12) -> Path:
    rows = []
    for i in range(n):
        base, cand = [("plain", "GOOD"), ("GOOD", "plain"), ("GOOD one", "GOOD two")][i % 3]
        rows.append(
            {
                "id": f"q{i:02d}",
                "history": [
                    {"role": "user", "content": "Hi"},
                    {"role": "assistant", "content": "Hello, what is it?"},
                ],
                "prompt": f"question {i}",
                "baseline_model_response": f"{base} baseline answer {i}",
                "response": f"{cand} candidate answer {i}",
            }
        )
    out = tmp_path / "pairwise"
    chatjudge.evaluate(rows, "pairwise-chat-quality", fair_judge, out)
    return out


def scoring_judge(prompt: str) -> str:
    """Interactivity from the ground truth's digit, accuracy 1 unless it is 3."""
    digit = int(re.search(r"Ground Truth Answer: (\d)", prompt).group(1))
    return json.dumps(
        {
            "interactivity": {"thought": f"THOUGHT-{digit}", "score": digit},
            "accuracy": {"thought": "matches", "score": int(digit != 3)},
        }
    )


def pointwise_run(tmp_path: Path, n: int = 8) -> Path:
    rows = [
        {
            "id": f"d{i}",
            "chat": [
                {"role": "user", "content": f"What is {i}?"},
                {"role": "assistant", "content": f"It is {i}."},
            ],
            "question": f"What is {i}?",
            "answer": str(i % 3 + 1),
        }
        for i in range(n)
    ]
    out = tmp_path / "pointwise"
    chatjudge.evaluate(rows, "interactivity-accuracy", scoring_judge, out)
    return out


# ---------------------------------------------------------------- page helpers
@pytest.fixture
def fresh(watch: PageWatch) -> PageWatch:
    """The browser's profile is shared by the package's tests: start from a blank page (each
    test clears the saved labels of the report it opens, as `start` does)."""
    watch.page.goto("about:blank")
    return watch


def start(watch: PageWatch, run_dir: Path, *, clear: bool = True) -> Page:
    page = watch.open(run_dir / "report.html")
    if clear:
        page.evaluate("localStorage.clear()")
    page.click("#tab-label")
    expect(page.locator("#label-view")).to_be_visible()
    return page


def current(page: Page) -> str:
    return page.locator("#label-item").get_attribute("data-item-id")


def rank(page: Page) -> int:
    return int(page.locator("#label-item").get_attribute("data-rank"))


def labelled(page: Page) -> int:
    return int(page.locator("#label-progress").get_attribute("data-labelled"))


def walk(page: Page, limit: int = 100) -> list[str]:
    """Every id of the sample in order, stepping with the Next button from the first item."""
    for _ in range(limit):
        if page.locator("#label-prev").is_disabled():
            break
        page.click("#label-prev")
    ids = [current(page)]
    while page.locator("#label-next").is_enabled() and len(ids) < limit:
        page.click("#label-next")
        ids.append(current(page))
    return ids


def verdict_state(page: Page) -> str:
    return page.locator("#label-verdict").get_attribute("data-state")


def export(page: Page, tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    with page.expect_download() as info:
        page.click("#label-export")
    download = info.value
    path = tmp_path / download.suggested_filename
    download.save_as(path)
    return path, read_jsonl(path)


def assert_offline_and_clean(watch: PageWatch) -> None:
    """Nothing but the page itself (and the export's own blob) was fetched; no error, no dialog."""
    assert all(u.startswith(("file://", "blob:")) for u in watch.requests), watch.requests
    assert watch.errors == [] and watch.dialogs == []


# ---------------------------------------------------------------- tests
def test_pairwise_labels_hidden_verdict_reload_export_and_agree(
    tmp_path: Path, fresh: PageWatch
) -> None:
    run = pairwise_run(tmp_path)
    results = {r["id"]: r for r in read_jsonl(run / "results.jsonl")}
    judge = {i: r["scores"]["pairwise_choice"] for i, r in results.items()}
    sample = seeded_sample(list(results), 0, 12)
    page = start(fresh, run)
    assert page.evaluate("location.hash") == "#label"
    expect(page.locator("#report-view")).to_be_hidden()
    expect(page.locator("#tab-label")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#label-progress")).to_have_attribute("data-size", "12")
    assert page.locator("#label-seed").input_value() == "0"
    assert current(page) == sample[0] and rank(page) == 1

    # Before answering: the responses are shown as A and B, nothing of the verdict is in the page.
    first = sample[0]
    item = page.locator("#label-item")
    expect(item).to_contain_text(results[first]["fields"]["baseline_model_response"])
    expect(item).to_contain_text(results[first]["fields"]["response"])
    assert item.locator(".badge").all_inner_texts() == ["Response A", "Response B"]
    assert verdict_state(page) == "waiting"
    assert "RATIONALE" not in page.locator("#label-view").inner_text()
    assert page.locator("#label-view .call").count() == 0

    # Answer with a key: the answer is marked, the verdict and its rationale appear.
    page.keyboard.press("b")
    expect(page.locator('.answer-btn[data-value="CANDIDATE"]')).to_have_attribute(
        "aria-pressed", "true"
    )
    assert verdict_state(page) == "shown"
    number = int(first[1:])
    expect(page.locator("#label-verdict")).to_contain_text(f"RATIONALE-{number}")
    assert page.locator("#label-verdict .call").count() == 2  # both presentation orders
    assert labelled(page) == 1

    # Next item: hidden again; answer with a button, then keys; an undone answer is gone.
    page.keyboard.press("n")
    assert rank(page) == 2 and verdict_state(page) == "waiting"
    assert page.evaluate("document.activeElement.id") == "label-item-title"
    page.click('.answer-btn[data-value="BASELINE"]')
    assert verdict_state(page) == "shown"
    page.keyboard.press("n")
    page.keyboard.press("3")
    assert labelled(page) == 3
    page.keyboard.press("u")
    assert labelled(page) == 2 and rank(page) == 3 and verdict_state(page) == "waiting"
    page.keyboard.press("t")
    page.keyboard.press("n")
    page.keyboard.press("1")
    page.click("#label-next")
    page.click('.answer-btn[data-value="CANDIDATE"]')
    answers = ["CANDIDATE", "BASELINE", "TIE", "BASELINE", "CANDIDATE"]
    given = dict(zip(sample, answers, strict=False))
    assert labelled(page) == 5
    expect(page.locator("#label-progress")).to_contain_text("5 of 12 labelled")

    # A reload keeps the labels, the position and the labelling view.
    page.reload(wait_until="load")
    expect(page.locator("#label-view")).to_be_visible()
    assert labelled(page) == 5 and rank(page) == 5 and verdict_state(page) == "shown"
    page.keyboard.press("p")
    expect(page.locator('.answer-btn[data-value="BASELINE"]')).to_have_attribute(
        "aria-pressed", "true"
    )

    path, rows = export(page, tmp_path)
    assert path.name == "labels-pairwise-chat-quality-seed0.jsonl"
    assert rows == [
        {"id": i, "label": given[i], "seed": 0, "rank": k + 1, "sample_size": 12}
        for k, i in enumerate(sample[:5])
    ]

    done = runner.invoke(app, ["agree", str(run), "--human", str(path)])
    assert done.exit_code == 0, done.output
    result = json.loads((run / "agreement.json").read_text())
    assert result["n_items"] == 5 and result["column"] == "label"
    same = sum(judge[i] == given[i] for i in given)
    assert result["with_ties"]["agreement"] == pytest.approx(same / 5)
    assert result["with_ties"]["n"] == 5
    assert f"agreement {same / 5:.3f}" in done.output
    assert_offline_and_clean(fresh)


def test_pointwise_scales_digits_hidden_verdict_and_agree(tmp_path: Path, fresh: PageWatch) -> None:
    run = pointwise_run(tmp_path)
    results = {r["id"]: r for r in read_jsonl(run / "results.jsonl")}
    sample = seeded_sample(list(results), 0, 8)
    page = start(fresh, run)
    # The protocol's scales: interactivity 1-3, accuracy 0/1.
    for column, values in (("interactivity", ["1", "2", "3"]), ("accuracy", ["0", "1"])):
        buttons = page.locator(f'.answer-btn[data-column="{column}"]')
        assert [b.get_attribute("data-value") for b in buttons.all()] == values
    expect(page.locator(".question.active")).to_have_attribute("data-column", "interactivity")
    assert "THOUGHT" not in page.locator("#label-view").inner_text()

    page.keyboard.press("3")  # interactivity, then the next score is the active one
    assert verdict_state(page) == "waiting" and labelled(page) == 0
    expect(page.locator(".question.active")).to_have_attribute("data-column", "accuracy")
    page.keyboard.press("1")
    assert verdict_state(page) == "shown" and labelled(page) == 1
    digit = results[sample[0]]["scores"]["interactivity"]
    expect(page.locator("#label-verdict")).to_contain_text(f"THOUGHT-{digit}")

    page.keyboard.press("n")
    page.click('.answer-btn[data-column="interactivity"][data-value="2"]')
    page.click('.answer-btn[data-column="accuracy"][data-value="0"]')
    assert labelled(page) == 2

    # Kept hidden: answering does not bring the verdict in, and the choice survives a reload.
    page.uncheck("#label-show-verdict")
    assert verdict_state(page) == "hidden"
    assert page.locator("#label-verdict .call").count() == 0
    page.keyboard.press("n")
    page.keyboard.press("1")
    page.keyboard.press("1")
    assert verdict_state(page) == "hidden" and labelled(page) == 3
    assert "THOUGHT" not in page.locator("#label-view").inner_text()

    # One score only: arrows choose the score; a half-answered item is not exported.
    page.keyboard.press("n")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("2")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("3")
    expect(
        page.locator('.answer-btn[data-column="interactivity"][data-value="3"]')
    ).to_have_attribute("aria-pressed", "true")
    assert labelled(page) == 3

    page.reload(wait_until="load")
    assert not page.locator("#label-show-verdict").is_checked()
    assert labelled(page) == 3 and rank(page) == 4

    path, rows = export(page, tmp_path)
    given = {sample[0]: (3, 1), sample[1]: (2, 0), sample[2]: (1, 1)}
    assert rows == [
        {"id": i, "interactivity": inter, "accuracy": acc}
        | {"seed": 0, "rank": k + 1, "sample_size": 8}
        for k, (i, (inter, acc)) in enumerate(given.items())
    ]
    expect(page.locator("#label-command")).to_contain_text(f"--human {path.name}")
    judge = {i: results[i]["scores"] for i in given}
    for extra in ([], ["--column", "accuracy", "--score", "accuracy"]):
        done = runner.invoke(app, ["agree", str(run), "--human", str(path), *extra])
        assert done.exit_code == 0, done.output
        result = json.loads((run / "agreement.json").read_text())
        column = extra[1] if extra else "interactivity"
        assert result["n_items"] == 3 and result["score"] == column
        assert result["calibrated"][column]["n_labels"] == 3
        # The file's scores went in: the judge's against the human ones, item by item.
        index = 0 if column == "interactivity" else 1
        ours = [float(v[index]) for v in given.values()]
        theirs = [float(judge[i][column]) for i in given]
        if len(set(ours)) > 1 and len(set(theirs)) > 1:
            rho = spearmanr(theirs, ours).statistic
            assert result["correlation"]["spearman"] == pytest.approx(rho)
        else:  # one side constant: undefined, and said so
            assert "error" in result["correlation"]
    assert_offline_and_clean(fresh)


def test_the_seed_fixes_the_sample_order(tmp_path: Path, fresh: PageWatch) -> None:
    run = pairwise_run(tmp_path)
    ids = [r["id"] for r in read_jsonl(run / "results.jsonl")]
    page = start(fresh, run)
    first = walk(page)
    assert first == seeded_sample(ids, 0, 12)
    assert sorted(first) == sorted(ids) and first != sorted(ids)

    page.reload(wait_until="load")  # a second load, same seed: same order
    assert walk(page) == first

    page.fill("#label-seed", "7")
    page.click("#label-draw")
    assert rank(page) == 1
    seven = walk(page)
    assert seven == seeded_sample(ids, 7, 12) and seven != first

    # A smaller sample with the same seed is the start of the larger one.
    page.fill("#label-size", "5")
    page.press("#label-size", "Enter")
    assert walk(page) == seven[:5]
    expect(page.locator("#label-progress")).to_have_attribute("data-size", "5")

    # Bad values are refused with a message, and the sample stays as it was.
    for seed, size in (("-1", "5"), ("1.5", "5"), (str(2**32), "5"), ("3", "13"), ("3", "0")):
        page.fill("#label-seed", seed)
        page.fill("#label-size", size)
        page.click("#label-draw")
        expect(page.locator("#label-setup-error")).to_be_visible()
        assert walk(page) == seven[:5]
    expect(page.locator("#label-setup-error")).to_contain_text("from 1 to 12")
    page.fill("#label-seed", "0")
    page.fill("#label-size", "12")
    page.click("#label-draw")
    expect(page.locator("#label-setup-error")).to_be_hidden()
    assert walk(page) == first
    assert_offline_and_clean(fresh)


def test_labels_are_kept_per_seed_and_reset_asks_first(tmp_path: Path, fresh: PageWatch) -> None:
    run = pairwise_run(tmp_path)
    page = start(fresh, run)
    page.keyboard.press("a")
    page.keyboard.press("n")
    page.keyboard.press("b")
    assert labelled(page) == 2

    page.fill("#label-seed", "5")
    page.click("#label-draw")
    assert labelled(page) == 0
    page.keyboard.press("t")
    expect(page.locator("#label-progress")).to_have_attribute("data-labelled", "1")
    page.fill("#label-seed", "0")
    page.click("#label-draw")
    assert labelled(page) == 2 and rank(page) == 2

    page.click("#label-reset")
    expect(page.locator("#label-reset-confirm")).to_contain_text("Erase the 2 label(s) of seed 0?")
    page.click("#label-reset-no")
    expect(page.locator("#label-reset-confirm")).to_be_hidden()
    assert labelled(page) == 2
    page.click("#label-reset")
    page.click("#label-reset-yes")
    assert labelled(page) == 0 and rank(page) == 1
    expect(page.locator("#label-export")).to_be_disabled()
    page.reload(wait_until="load")
    assert labelled(page) == 0
    page.fill("#label-seed", "5")
    page.click("#label-draw")
    assert labelled(page) == 1  # another seed's labels are left alone
    assert_offline_and_clean(fresh)


def test_skipped_items_are_flagged(tmp_path: Path, fresh: PageWatch) -> None:
    page = start(fresh, pairwise_run(tmp_path))
    page.keyboard.press("a")
    page.keyboard.press("n")
    page.keyboard.press("n")
    page.keyboard.press("b")
    gaps = page.locator("#label-gaps")
    expect(gaps).to_be_visible()
    expect(gaps).to_have_attribute("data-count", "1")
    page.keyboard.press("p")
    page.keyboard.press("t")
    expect(gaps).to_be_hidden()


def test_a_large_run_samples_judged_items_and_shows_one(tmp_path: Path, fresh: PageWatch) -> None:
    """3,000 items, 300 failed: the sample is drawn from the judged ones, one item on screen."""
    run = write_pointwise_run(tmp_path / "large", n_items=3000)
    write_report(run)
    items = read_jsonl(run / "results.jsonl")
    ok = [it["id"] for it in items if it["status"] == "ok"]
    assert len(ok) == 2700
    page = start(fresh, run)
    expect(page.locator("#label-progress")).to_have_attribute("data-size", "50")
    assert page.locator("#label-size").get_attribute("max") == "2700"
    assert walk(page) == seeded_sample(ok, 0, 50)
    assert page.locator("#label-body .msg").count() <= 6  # one conversation, not 3,000
    # Two judge samples give half scores; the scale is still the protocol's.
    values = page.locator('.answer-btn[data-column="interactivity"]').all()
    assert [b.get_attribute("data-value") for b in values] == ["1", "2", "3"]
    assert_offline_and_clean(fresh)


def test_report_view_still_works_beside_labelling(tmp_path: Path, fresh: PageWatch) -> None:
    """The tabs switch views with the mouse and the arrow keys; the item detail still opens."""
    run = pairwise_run(tmp_path)
    page = fresh.open(run / "report.html")
    # The profile is shared: another test's position in this run's sample may be saved.
    page.evaluate("localStorage.clear()")
    expect(page.locator("#label-view")).to_be_hidden()
    page.locator("#item-rows tr").first.click()
    expect(page.locator("#detail")).to_be_visible()
    page.click("#tab-label")
    expect(page.locator("#detail")).to_be_hidden()
    page.focus("#tab-label")
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#report-view")).to_be_visible()
    assert page.evaluate("document.activeElement.id") == "tab-report"
    assert page.evaluate("location.hash") == ""
    page.keyboard.press("n")  # labelling keys do nothing in the report view
    page.keyboard.press("ArrowRight")
    expect(page.locator("#label-view")).to_be_visible()
    assert rank(page) == 1
    assert_offline_and_clean(fresh)


def test_nothing_to_label_when_no_item_was_judged(tmp_path: Path, fresh: PageWatch) -> None:
    rows = [
        {"id": f"x{i}", "prompt": "p", "baseline_model_response": "a", "response": "b"}
        for i in range(3)
    ]
    run = tmp_path / "failed"
    chatjudge.evaluate(rows, "pairwise-chat-quality", lambda prompt: "no verdict here", run)
    page = start(fresh, run)
    expect(page.locator("#label-empty")).to_be_visible()
    expect(page.locator("#label-item")).to_be_hidden()
    expect(page.locator("#label-export")).to_be_disabled()
    page.keyboard.press("n")
    assert_offline_and_clean(fresh)


def test_scales_come_from_the_protocol_or_from_the_scores_given() -> None:
    """Built-in protocols give their ranges; a custom one (not at hand) the range judged."""
    stats = ResultStats()
    for inter, grade in ((2, 4.5), (2.5, 7.0), (2, 5.0)):
        stats.add({"status": "ok", "scores": {"interactivity": inter, "grade": grade}})
    stats.add({"status": "ok", "scores": {"stars": 2}})
    stats.add({"status": "ok", "scores": {"stars": 4}})
    builtin = label_scales("interactivity-accuracy", stats)
    assert builtin[0] == {
        "name": "interactivity",
        "min": 1,
        "max": 3,
        "integer": True,
        "values": [1, 2, 3],
        "source": "protocol",
    }
    custom = {s["name"]: s for s in label_scales("my-rubric", stats)}
    assert custom["interactivity"]["values"] is None  # 2.5 was given: typed, not buttons
    assert (custom["grade"]["min"], custom["grade"]["max"]) == (4.5, 7.0)
    assert custom["stars"] == {
        "name": "stars",
        "min": 2,
        "max": 4,
        "integer": True,
        "values": [2, 3, 4],
        "source": "observed",
    }
