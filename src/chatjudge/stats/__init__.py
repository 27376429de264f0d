"""Statistics on plain sequences: bootstrap intervals, agreement with humans, ratings."""

from chatjudge.stats.agreement import Agreement, agreement, normalize_label
from chatjudge.stats.bootstrap import Estimate, bootstrap_ci, bootstrap_metrics
from chatjudge.stats.correlation import Correlation, correlation
from chatjudge.stats.ratings import Rating, Ratings, bradley_terry, win_rate_matrix
from chatjudge.stats.reliability import krippendorff_alpha, krippendorff_alpha_ci

__all__ = [
    "Agreement",
    "Correlation",
    "Estimate",
    "Rating",
    "Ratings",
    "agreement",
    "bootstrap_ci",
    "bootstrap_metrics",
    "bradley_terry",
    "correlation",
    "krippendorff_alpha",
    "krippendorff_alpha_ci",
    "normalize_label",
    "win_rate_matrix",
]
