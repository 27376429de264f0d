"""The gate's decision from a difference's interval: pass, fail or inconclusive, the
smallest detectable effect, the power, and how many rows would decide."""

from __future__ import annotations

import pytest

from chatjudge.stats import Difference, decide, mde80, power, rows_to_decide


def _diff(value: float, se: float, n_rows: int) -> Difference:
    return Difference(value, (value - 2 * se, value + 2 * se), se, n_rows, n_rows, "tango")


@pytest.mark.parametrize(
    ("ci", "margin", "require", "outcome"),
    [
        ((-0.04, 0.02), 0.05, "not-worse", "pass"),
        ((-0.05, 0.02), 0.05, "not-worse", "inconclusive"),  # lo on -M: not > -M
        ((-0.09, -0.06), 0.05, "not-worse", "fail"),
        ((-0.09, -0.05), 0.05, "not-worse", "inconclusive"),
        ((-0.01, 0.02), 0.0, "not-worse", "inconclusive"),
        ((-0.04, 0.02), 0.05, "better", "inconclusive"),
        ((0.001, 0.02), 0.05, "better", "pass"),
        ((-0.03, -0.001), 0.05, "better", "fail"),
    ],
)
def test_decide(ci: tuple[float, float], margin: float, require: str, outcome: str) -> None:
    assert decide(ci, margin, require) == outcome  # type: ignore[arg-type]


def test_decide_refuses_a_negative_margin_or_unknown_requirement() -> None:
    with pytest.raises(ValueError, match="margin"):
        decide((0.1, 0.2), -0.05, "not-worse")
    with pytest.raises(ValueError, match="require"):
        decide((0.1, 0.2), 0.05, "worse")  # type: ignore[arg-type]


def test_mde_and_power_by_hand() -> None:
    assert mde80(0.02) == pytest.approx(0.056)
    # Δ exactly one MDE above the boundary: Φ(2.80 - 1.96) = Φ(0.84) = 0.7995.
    assert power(0.056, 0.02, 0.0, "better") == pytest.approx(0.79955, abs=1e-4)
    assert power(0.056 - 0.05, 0.02, 0.05, "not-worse") == pytest.approx(0.79955, abs=1e-4)
    # On the boundary it passes 2.5% of the time; half an MDE above: Φ(-0.56) = 0.2877.
    assert power(-0.05, 0.02, 0.05, "not-worse") == pytest.approx(0.025, abs=1e-6)
    assert power(0.028, 0.02, 0.0, "better") == pytest.approx(0.28774, abs=1e-4)
    assert power(0.01, 0.0, 0.0, "better") == 1.0
    assert power(0.0, 0.0, 0.0, "better") == 0.0
    with pytest.raises(ValueError, match="standard error"):
        mde80(-1.0)


def test_rows_to_decide_by_hand() -> None:
    # 400 rows, Δ = 0.02, SE = 0.02: 400 * (1.96 * 0.02 / 0.02)^2 = 1536.6 rows.
    assert rows_to_decide(_diff(0.02, 0.02, 400), 0.0, "better") == 1537
    # not-worse with M = 0.02: distance 0.04, 400 * 0.98^2 = 384.1 rows (already decided).
    assert rows_to_decide(_diff(0.02, 0.02, 400), 0.02, "not-worse") == 385
    # Below the boundary the projection is to a fail: the distance is what counts.
    assert rows_to_decide(_diff(-0.04, 0.02, 400), 0.02, "not-worse") == 1537
    assert rows_to_decide(_diff(-0.02, 0.02, 400), 0.02, "not-worse") is None
