"""Verdicts: tolerant parsing of judge replies into validated scores."""

from chatjudge.verdicts.parse import Verdict, parse_verdict

__all__ = ["Verdict", "parse_verdict"]
