"""Statistics on plain sequences: bootstrap and betting intervals, agreement, ratings."""

from chatjudge.stats.agreement import Agreement, agreement, normalize_label
from chatjudge.stats.betting import betting_interval
from chatjudge.stats.bootstrap import Estimate, bootstrap_ci, bootstrap_metrics
from chatjudge.stats.correlation import Correlation, correlation
from chatjudge.stats.noise import NoiseSplit, noise_split
from chatjudge.stats.paired import (
    Difference,
    Outcome,
    Require,
    decide,
    mde80,
    paired_difference,
    power,
    rows_to_decide,
    tango_interval,
)
from chatjudge.stats.ppi import Calibrated, ppi_mean
from chatjudge.stats.ratings import Rating, Ratings, bradley_terry, win_rate_matrix
from chatjudge.stats.reliability import krippendorff_alpha, krippendorff_alpha_ci
from chatjudge.stats.sequential import confidence_sequence, confidence_sequence_path
from chatjudge.stats.small_sample import SmallSample, sign_test
from chatjudge.stats.style import Controlled, StyleControl, controlled_fits, style_control

__all__ = [
    "Agreement",
    "Calibrated",
    "Controlled",
    "Correlation",
    "Difference",
    "Estimate",
    "NoiseSplit",
    "Outcome",
    "Rating",
    "Ratings",
    "Require",
    "SmallSample",
    "StyleControl",
    "agreement",
    "betting_interval",
    "bootstrap_ci",
    "bootstrap_metrics",
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
    "power",
    "ppi_mean",
    "rows_to_decide",
    "sign_test",
    "style_control",
    "tango_interval",
    "win_rate_matrix",
]
