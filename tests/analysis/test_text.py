"""The terminal text of `compare`, `agree` and `gate`, built beside their analyses."""

from __future__ import annotations

from typing import Any

from rich.console import Console, RenderableType

from chatjudge.analysis.agree_text import agreement_lines
from chatjudge.analysis.compare_text import control_note, ratings_table
from chatjudge.formats.analyses import Gate
from chatjudge.report.gate_text import markdown, table


def rendered(renderable: RenderableType) -> str:
    console = Console(width=140, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def comparison(**extra: Any) -> dict[str, Any]:
    return {
        "protocol": "pairwise-chat-quality",
        "n_items": 6,
        "n_battles": 12,
        "ratings": [
            {"model": "baseline", "rating": 1000.0, "ci95": [980.4, 1019.6]},
            {"model": "v2", "rating": 1061.7, "ci95": None},
        ],
        "outcomes": {
            "baseline": {"won": 3, "tied": 2, "lost": 7},
            "v2": {"won": 7, "tied": 2, "lost": 3},
        },
        **extra,
    }


def test_ratings_table_has_a_row_per_model_with_its_interval_and_battles() -> None:
    text = rendered(ratings_table(comparison()))
    assert "pairwise-chat-quality: 6 items, 12 battles" in text
    rows = [line.split("│")[1:-1] for line in text.splitlines() if "│" in line]
    cells = [[c.strip() for c in row] for row in rows]
    assert ["baseline", "1000", "[980, 1020]", "3", "2", "7"] in cells
    assert ["v2", "1062", "-", "7", "2", "3"] in cells
    assert "controlled" not in text


def test_ratings_table_adds_the_controlled_rating_beside_the_raw_one() -> None:
    controlled = [
        {"model": "baseline", "rating": 1000.0, "ci95": [990.0, 1010.0]},
        {"model": "v2", "rating": 1012.2, "ci95": [1001.0, 1024.0]},
    ]
    text = rendered(ratings_table(comparison(controlled_ratings=controlled)))
    v2 = next(line for line in text.splitlines() if "│ v2" in line)
    assert [c.strip() for c in v2.split("│")[1:-1]][-2:] == ["1012", "[1001, 1024]"]


def test_control_note_names_the_corrected_ratings_and_their_coefficients() -> None:
    assert control_note(comparison()) is None
    note = control_note(comparison(control="length", style_coefficients={"length": 0.1234}))
    assert note == (
        "controlled: length-controlled ratings (corrected, not the judge's raw result), the "
        "responses' length differences held equal; coefficients per SD: length +0.123"
    )
    constant = control_note(comparison(control="style", style_coefficients={}))
    assert constant is not None and constant.endswith("coefficients per SD: none (constant)")


def test_agreement_lines_pairwise() -> None:
    result = {
        "judge": "local",
        "protocol": "pairwise-chat-quality",
        "n_items": 40,
        "with_ties": {
            "agreement": 0.625,
            "ci95": [0.5, 0.75],
            "kappa": 0.41,
            "kappa_ci95": [0.2, 0.6],
            "n": 40,
        },
        "without_ties": {"error": "every pair had a tie"},
    }
    assert agreement_lines(result).splitlines() == [
        "local vs humans on 40 items (pairwise-chat-quality)",
        "  with ties (S1): agreement 0.625 [0.500, 0.750], kappa 0.410 [0.200, 0.600], n=40",
        "  without ties (S2): every pair had a tie",
    ]


def test_agreement_lines_pointwise() -> None:
    result = {
        "judge": "local",
        "protocol": "interactivity-accuracy",
        "n_items": 12,
        "score": "accuracy",
        "correlation": {
            "spearman": 0.5,
            "spearman_ci95": [0.1, 0.8],
            "kendall": 0.4,
            "kendall_ci95": None,
            "n": 12,
        },
        "krippendorff_alpha": {
            "humans": {"value": 0.7, "ci95": [0.5, 0.85]},
            "humans_and_judge": {"value": None, "ci95": None},
        },
    }
    assert agreement_lines(result).splitlines()[1:] == [
        "  accuracy vs mean human: Spearman 0.500 [0.100, 0.800], Kendall 0.400 -, n=12",
        "  Krippendorff's alpha, humans: 0.700 [0.500, 0.850]",
        "  Krippendorff's alpha, humans and judge: -",
    ]
    result["correlation"] = {"error": "the judge gave one score to all", "n": 12}
    lines = agreement_lines(result).splitlines()
    assert lines[1] == "  accuracy vs mean human: the judge gave one score to all"


def gate(**extra: Any) -> Gate:
    difference = {"value": 0.0625, "ci95": [0.01, 0.115]}
    return Gate.model_validate(
        {
            "outcome": "pass",
            "reason": "the interval is above -0.05",
            "metric": "preference",
            "difference": difference,
            "se": 0.026,
            "method": "Tango",
            "mde80": 0.0731,
            "rows_to_decide": None,
            "margin": 0.05,
            "require": "not-worse",
            "n_pairs": 80,
            "n_units": 80,
            "counts": {"run": {"rows": 82, "failed": 2, "unpaired": 0}},
            "by": None,
            "cluster": None,
            "slices": [],
            "noise": None,
            "mismatches": [],
            "looks": [],
            "runs": {"run": "runs/v2"},
            "created": "2026-11-24T19:00:00Z",
            "chatjudge_version": "0",
            **extra,
        }
    )


def test_gate_table_shows_the_decision_and_the_counts() -> None:
    text = rendered(table(gate()))
    assert "gate: preference (candidate − baseline)" in text
    row = next(line for line in text.splitlines() if "+0.0625" in line)
    assert [c.strip() for c in row.split("│")[1:-1]] == [
        "+0.0625",
        "[+0.0100, +0.1150]",
        "0.05 (not-worse)",
        "pass",
        "0.0731",
        "80 (80 units)",
    ]
    assert "run: 82 rows, 2 failed, 0 unpaired" in text
    assert "slices, worst first" not in text


def test_gate_table_lists_slices_worst_first_as_plain_text() -> None:
    slices = [
        {
            "value": "[lang]=de",
            "difference": {"value": -0.2, "ci95": [-0.3, -0.1]},
            "level": 0.975,
            "n_pairs": 40,
            "below_margin": True,
            "counts": True,
        }
    ]
    text = rendered(table(gate(by="topic", slices=slices, outcome="fail")))
    assert "slices, worst first" in text
    row = next(line for line in text.splitlines() if "topic=" in line)
    assert [c.strip() for c in row.split("│")[1:-1]] == [
        "topic=[lang]=de",  # a value's brackets are text, not rich markup
        "-0.2000",
        "[-0.3000, -0.1000]",
        "97.50%",
        "40",
        "regressed",
    ]


def test_a_slice_of_one_unit_says_too_few_to_say_in_the_table_and_markdown() -> None:
    slices = [
        {
            "value": "pro",
            "difference": {"value": 0.0, "ci95": []},  # one unit: no interval
            "level": 0.975,
            "n_pairs": 1,
            "below_margin": False,
            "counts": False,
        }
    ]
    g = gate(by="tier", slices=slices)
    row = next(line for line in rendered(table(g)).splitlines() if "tier=" in line)
    assert [c.strip() for c in row.split("│")[1:-1]][2] == "too few to say"
    assert "| tier=pro | +0.0000 | too few to say | 97.50% | 1 |" in markdown(g)
