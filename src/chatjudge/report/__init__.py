"""The run report: a self-contained HTML page and the terminal summary.

The report reads `summary.json` and `results.jsonl`; it never calls a judge.
"""

from chatjudge.report.html import ReportBuilder, write_compare_report, write_report
from chatjudge.report.terminal import calibration_table, produced_table, summary_table

__all__ = [
    "ReportBuilder",
    "calibration_table",
    "produced_table",
    "summary_table",
    "write_compare_report",
    "write_report",
]
