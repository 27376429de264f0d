"""The run report: a self-contained HTML page and the terminal summary.

The report reads `summary.json` and `results.jsonl`; it never calls a judge.
`write_compare_report` is loaded when first used, so that a run does not load the
comparison page it never draws.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chatjudge.report.html import ReportBuilder, write_report
from chatjudge.report.terminal import calibration_table, produced_table, summary_table

if TYPE_CHECKING:
    from chatjudge.report.compare_page import write_compare_report


def __getattr__(name: str) -> Any:
    if name == "write_compare_report":
        from chatjudge.report.compare_page import write_compare_report

        return write_compare_report
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ReportBuilder",
    "calibration_table",
    "produced_table",
    "summary_table",
    "write_compare_report",
    "write_report",
]
