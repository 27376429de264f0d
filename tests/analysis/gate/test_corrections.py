"""The gate's corrections for the judge's biases: deciding on a length- or style-controlled
preference (the raw one kept beside it) and human-calibrated figures, named as corrected in
gate.json, the markdown and the terminal."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import chatjudge
from chatjudge.formats.analyses import Gate
from chatjudge.formats.io import read_model
from chatjudge.report.gate_text import markdown
from chatjudge.stats.intervals import SHARE
from chatjudge.stats.ppi import ppi_mean
from chatjudge.stats.style import response_text, style_control, style_counts
from tests.analysis.gate.test_decide import cli, fair_judge, judged, pairwise_rows, pointwise_rows


def length_loving_judge(prompt: str) -> str:
    """Prefers the longer response (a judge with a pure length bias), in either order."""
    a = re.search(r"### Response A\n(.*?)\n\n### Response B", prompt, re.S)
    b = re.search(r"### Response B\n(.*?)\n", prompt, re.S)
    assert a and b
    la, lb = len(a.group(1)), len(b.group(1))
    choice = "A" if la > lb else "B" if lb > la else "SAME"
    return json.dumps({"explanation": "longer is better", "pairwise_choice": choice})


def verbose_rows(n: int = 40) -> list[dict]:
    """The candidate is longer in 3 of 4 rows: a length-biased judge prefers it there."""
    rows = pairwise_rows(["T"] * n)
    for i, row in enumerate(rows):
        pad = " and more words" * (1 + i % 5)
        if i % 4:
            row["response"] += pad
        else:
            row["baseline_model_response"] += pad
    return rows


def test_control_length_decides_on_the_controlled_rate_and_keeps_the_raw(tmp_path: Path) -> None:
    rows = verbose_rows()
    run = judged(rows, tmp_path / "pw", length_loving_judge)
    raw = chatjudge.gate(run, report=False)
    g = chatjudge.gate(run, control="length", report=False)
    # An independent computation from the same rows (the gate orders them by id): the
    # judge's votes and the two sides' texts.
    order = sorted(range(len(rows)), key=lambda i: rows[i]["id"])
    votes = np.array([1.0 if i % 4 else 0.0 for i in order])
    counts = [np.array([style_counts(response_text(rows[i][side])) for i in order])
              for side in ("response", "baseline_model_response")]  # fmt: skip
    expected = style_control(votes, counts[0], counts[1], seed=0).length
    assert g.control == "length" and g.metric == "length_controlled_preference"
    assert g.difference.value == pytest.approx(expected.value - 0.5, abs=1e-6)
    # the raw preference's small-sample rule holds it: the side its sign test does not
    # clear (the upper: no fail) reaches the raw betting interval's end
    small = g.small_sample
    assert small is not None and small.rule == "sign-test" and small.betting_ci is not None
    lo, hi = expected.ci95[0] - 0.5, max(expected.ci95[1] - 0.5, small.betting_ci[1])
    assert g.difference.ci95 == pytest.approx([lo, hi], abs=1e-6)
    assert g.raw_difference == raw.difference and raw.difference.value == pytest.approx(0.25)
    assert g.corrected["length_controlled_preference"].value == pytest.approx(expected.value)
    assert "style_controlled_preference" in g.corrected and g.style_control["sentence"]
    text = markdown(g)
    assert "Decided on the length-controlled preference" in text
    assert "length controlled preference (corrected)" in text
    assert f"the raw difference was {raw.difference.value:+.4f}" in text


def test_control_applies_to_one_pairwise_run_only(tmp_path: Path) -> None:
    base = judged(pointwise_rows([(1, 2)] * 4), tmp_path / "b")
    cand = judged(pointwise_rows([(1, 3)] * 4), tmp_path / "c")
    done = cli("--baseline", str(base), "--candidate", str(cand), "--control", "length")
    assert done.exit_code == 2 and "one pairwise run" in done.output
    done = cli(str(cand), "--control", "shape")
    assert done.exit_code == 2 and "--control takes length or style" in done.output


def test_human_labels_add_calibrated_figures(tmp_path: Path) -> None:
    wins = ["C"] * 12 + ["T"] * 4 + ["B"] * 4
    run = judged(pairwise_rows(wins), tmp_path / "pw", length_loving_judge)
    labels = tmp_path / "h.jsonl"
    human = ["B", "SAME", "A", "B", "B", "A"]  # rows p0..p5 (B: the candidate is better)
    labels.write_text("".join(json.dumps({"id": f"p{i}", "label": h}) + "\n"
                              for i, h in enumerate(human)))  # fmt: skip
    done = cli(str(run), "--human", str(labels), "--markdown", str(tmp_path / "g.md"))
    assert done.exit_code in (0, 1, 3), done.output
    g = read_model(run / "gate.json", Gate)
    pref = g.calibrated["preference"]
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    vote = {"CANDIDATE": 1.0, "TIE": 0.5, "BASELINE": 0.0}
    judge_all = np.array([vote[r["scores"]["pairwise_choice"]] for r in records])
    by_id = {r["id"]: vote[r["scores"]["pairwise_choice"]] for r in records}
    labelled = np.array([by_id[f"p{i}"] for i in range(6)])
    truth = np.array([{"B": 1.0, "SAME": 0.5, "A": 0.0}[h] for h in human])
    expected = ppi_mean(judge_all, labelled, truth)
    assert pref.n_labels == 6 and pref.value == pytest.approx(expected.value)
    assert "preference, human-calibrated (PPI++, 6 labels" in (tmp_path / "g.md").read_text()


def test_the_report_section_shows_the_corrected_and_the_raw_difference(tmp_path: Path) -> None:
    run = judged(verbose_rows(), tmp_path / "pw", length_loving_judge)
    chatjudge.gate(run, control="style")  # writes gate.json and the report
    page = (run / "report.html").read_text(encoding="utf-8")
    gate_part = page[page.index("Gate: ") :]
    assert "raw preference: candidate − baseline" in gate_part
    assert "style_controlled_preference" in gate_part and "(corrected)" in gate_part


def test_a_controlled_rate_on_few_rows_is_under_the_small_sample_rule(tmp_path: Path) -> None:
    # three rows the candidate wins: the length-controlled fit alone says [+0.4997, +0.4997]
    run = judged(pairwise_rows(["C"] * 3), tmp_path / "pw", fair_judge, flip=False)
    g = chatjudge.gate(run, control="length", require="better", report=False)
    assert g.outcome == "inconclusive" and g.difference.ci95[0] <= 0
    assert g.method.endswith("sign-test on the raw preference")
    assert g.small_sample is not None and g.small_sample.sign_p == [0.125, 1.0]


def test_human_calibrated_figures_stay_within_the_metrics_range(tmp_path: Path) -> None:
    """PPI's correction and its normal interval reach past a rate's 1 here (1.0022 within
    [0.871, 1.133]); gate.json and the text hold them within [0, 1]."""
    run = judged(pairwise_rows(["C"] * 16 + ["T"] * 4), tmp_path / "pw", fair_judge)
    labels = tmp_path / "h.jsonl"
    human = {0: "B", 1: "B", 2: "B", 3: "B", 16: "B", 17: "B", 18: "SAME", 19: "SAME"}
    labels.write_text("".join(json.dumps({"id": f"p{i}", "label": h}) + "\n"
                              for i, h in human.items()))  # fmt: skip
    unclipped = ppi_mean(np.array([1.0] * 16 + [0.5] * 4), np.array([1.0] * 4 + [0.5] * 4),
                         np.array([1.0] * 6 + [0.5] * 2), known=SHARE)  # fmt: skip
    assert unclipped.value > 1 and unclipped.ci95[1] > 1
    # 8 labels: the normal interval held to the humans' betting interval for [0, 1].
    assert unclipped.ci95[0] < 0.8713 and unclipped.ci95[0] == unclipped.human_only.ci95[0]
    done = cli(str(run), "--human", str(labels), "--markdown", str(tmp_path / "g.md"))
    assert done.exit_code in (0, 1, 3), done.output
    pref = read_model(run / "gate.json", Gate).calibrated["preference"]
    assert pref.value == 1.0 and pref.ci95 == [pytest.approx(unclipped.ci95[0]), 1.0]
    assert pref.human_only.ci95 is not None and pref.human_only.ci95[1] == 1.0
    assert f"1.0000 [{unclipped.ci95[0]:.4f}, 1.0000]" in (tmp_path / "g.md").read_text()
