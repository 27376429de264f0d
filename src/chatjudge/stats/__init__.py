"""Statistics on plain sequences: bootstrap intervals, agreement with humans, ratings.

Submodules load on first use: scipy.stats alone costs more than a second of
start-up, and most runs need only the bootstrap.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chatjudge.stats.agreement import Agreement, agreement, normalize_label
    from chatjudge.stats.bootstrap import Estimate, bootstrap_ci, bootstrap_metrics
    from chatjudge.stats.correlation import Correlation, correlation
    from chatjudge.stats.ratings import Rating, Ratings, bradley_terry, win_rate_matrix
    from chatjudge.stats.reliability import krippendorff_alpha, krippendorff_alpha_ci

_WHERE = {
    "Agreement": "agreement", "agreement": "agreement", "normalize_label": "agreement",
    "Estimate": "bootstrap", "bootstrap_ci": "bootstrap", "bootstrap_metrics": "bootstrap",
    "Correlation": "correlation", "correlation": "correlation",
    "Rating": "ratings", "Ratings": "ratings", "bradley_terry": "ratings",
    "win_rate_matrix": "ratings",
    "krippendorff_alpha": "reliability", "krippendorff_alpha_ci": "reliability",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'chatjudge.stats' has no attribute {name!r}")
    return getattr(import_module(f"chatjudge.stats.{_WHERE[name]}"), name)


__all__ = sorted(_WHERE)
