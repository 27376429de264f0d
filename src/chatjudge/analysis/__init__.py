"""Analyses of finished runs: comparing candidates, agreement with human raters, and the
ship decision between two versions (`gate`, imported from `chatjudge.analysis.gate`: it
needs the paired statistics, which the other analyses do not)."""

from chatjudge.analysis.agree import agree_with_humans, read_human_labels
from chatjudge.analysis.compare import compare_runs

__all__ = ["agree_with_humans", "compare_runs", "read_human_labels"]
