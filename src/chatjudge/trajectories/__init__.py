"""Scoring what an agent did: its tool calls against the expected ones, with no model
(`run -p tool-trajectory`). `pairing` pairs calls and decides a match mode; `score` reads a
row and gives its scores, rationale and the comparison the report shows."""

from chatjudge.trajectories.pairing import Pairing, pair_calls
from chatjudge.trajectories.score import SCORES, Scored, actual_calls, score_row

__all__ = ["SCORES", "Pairing", "Scored", "actual_calls", "pair_calls", "score_row"]
