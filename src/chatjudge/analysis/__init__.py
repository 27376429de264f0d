"""Analyses of finished runs: comparing candidates and agreement with human raters."""

from chatjudge.analysis.agree import agree_with_humans, read_human_labels
from chatjudge.analysis.compare import compare_runs

__all__ = ["agree_with_humans", "compare_runs", "read_human_labels"]
