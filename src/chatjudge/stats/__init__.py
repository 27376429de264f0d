"""Statistics on plain sequences: bootstrap and betting intervals, agreement, ratings.

Each name's module is imported when the name is first used, so that a run's summary, which
needs the bootstraps and style control, loads neither the agreement and correlation with
human labels, the ratings, the reliability (krippendorff) nor the sequential tests (issue 29,
item 8)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chatjudge.stats.betting import betting_interval
    from chatjudge.stats.bootstrap import (
        Estimate,
        bootstrap_ci,
        bootstrap_metrics,
        bootstrap_ratios,
    )
    from chatjudge.stats.decision import Outcome, Require, decide, mde80, power, rows_to_decide
    from chatjudge.stats.label_agreement import Agreement, agreement, normalize_label
    from chatjudge.stats.noise import NoiseSplit, noise_split
    from chatjudge.stats.paired import (
        Difference,
        paired_difference,
        paired_ratio_difference,
        tango_interval,
    )
    from chatjudge.stats.passk import PassK, pass_at, pass_hat, pass_k
    from chatjudge.stats.ppi import Calibrated, ppi_mean
    from chatjudge.stats.rank_correlation import Correlation, correlation
    from chatjudge.stats.ratings import Rating, Ratings, bradley_terry, win_rate_matrix
    from chatjudge.stats.reliability import krippendorff_alpha, krippendorff_alpha_ci
    from chatjudge.stats.sequential import confidence_sequence, confidence_sequence_path
    from chatjudge.stats.small_sample import SmallSample, sign_test
    from chatjudge.stats.style import Controlled, StyleControl, controlled_fits, style_control

# Each public name and the module of this package that defines it.
_HOME: dict[str, str] = {
    "Agreement": "label_agreement",
    "Calibrated": "ppi",
    "Controlled": "style",
    "Correlation": "rank_correlation",
    "Difference": "paired",
    "Estimate": "bootstrap",
    "NoiseSplit": "noise",
    "Outcome": "decision",
    "PassK": "passk",
    "Rating": "ratings",
    "Ratings": "ratings",
    "Require": "decision",
    "SmallSample": "small_sample",
    "StyleControl": "style",
    "agreement": "label_agreement",
    "betting_interval": "betting",
    "bootstrap_ci": "bootstrap",
    "bootstrap_metrics": "bootstrap",
    "bootstrap_ratios": "bootstrap",
    "bradley_terry": "ratings",
    "confidence_sequence": "sequential",
    "confidence_sequence_path": "sequential",
    "controlled_fits": "style",
    "correlation": "rank_correlation",
    "decide": "decision",
    "krippendorff_alpha": "reliability",
    "krippendorff_alpha_ci": "reliability",
    "mde80": "decision",
    "noise_split": "noise",
    "normalize_label": "label_agreement",
    "paired_difference": "paired",
    "paired_ratio_difference": "paired",
    "pass_at": "passk",
    "pass_hat": "passk",
    "pass_k": "passk",
    "power": "decision",
    "ppi_mean": "ppi",
    "rows_to_decide": "decision",
    "sign_test": "small_sample",
    "style_control": "style",
    "tango_interval": "paired",
    "win_rate_matrix": "ratings",
}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "Agreement",
    "Calibrated",
    "Controlled",
    "Correlation",
    "Difference",
    "Estimate",
    "NoiseSplit",
    "Outcome",
    "PassK",
    "Rating",
    "Ratings",
    "Require",
    "SmallSample",
    "StyleControl",
    "agreement",
    "betting_interval",
    "bootstrap_ci",
    "bootstrap_metrics",
    "bootstrap_ratios",
    "bradley_terry",
    "confidence_sequence",
    "confidence_sequence_path",
    "controlled_fits",
    "correlation",
    "decide",
    "krippendorff_alpha",
    "krippendorff_alpha_ci",
    "mde80",
    "noise_split",
    "normalize_label",
    "paired_difference",
    "paired_ratio_difference",
    "pass_at",
    "pass_hat",
    "pass_k",
    "power",
    "ppi_mean",
    "rows_to_decide",
    "sign_test",
    "style_control",
    "tango_interval",
    "win_rate_matrix",
]
