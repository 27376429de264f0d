"""The metric gap (`--protocol`): the protocol's metrics on each goal's real conversation and
on its simulated ones, judged by `--judge` through the run engine (the one call path, its
store, the command's budget) into two run directories of DIR, `protocol-real/` and
`protocol-simulated/`, which the same command resumes.

Both sides are judged alike: the conversation as `real.shown` renders it for the
discriminator (no system prompt, no tool messages), beside the goal's own fields, so that
the difference is the users', not the formatting's. A conversation's value of a metric is
its item's score, offset and scaled as the metric says (`itr`: (interactivity - 2.5) x 200)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatjudge.calls.budget import Budget
from chatjudge.errors import DataValidationError, Problem, UsageError
from chatjudge.models import ModelSpec
from chatjudge.options import RunConfig
from chatjudge.protocols import Protocol, get_protocol
from chatjudge.protocols.kinds import kind_of
from chatjudge.rundir import RunDir
from chatjudge.stats.intervals import Range
from chatjudge.user_realism.real import RealConversation, shown

REAL_DIR, SIMULATED_DIR = "protocol-real", "protocol-simulated"
# What a goal's rows give a protocol, beside `chat`; `answer` only where the real row had one.
GOAL_FIELDS = ("question", "answer", "user_context")


def checked_protocol(name: str, reals: Sequence[RealConversation]) -> Protocol:
    """The protocol, refused before anything is sent when it cannot judge one conversation
    against its goal: it must be judged (not deterministic), pointwise, read the
    conversation from `chat` and need nothing a goal row lacks (`answer`: every real row)."""
    protocol = get_protocol(name)
    kind = kind_of(protocol)
    if not kind.judged or kind.one_run_compares:
        raise UsageError(
            f"--protocol {protocol.name}: the metric gap judges each conversation alone; it "
            "needs a pointwise protocol with a judge (e.g. interactivity-accuracy)"
        )
    needed = set(protocol.required_fields)
    if "chat" not in {f.name for f in protocol.fields}:
        raise UsageError(f"--protocol {protocol.name} reads no `chat`: nothing to judge")
    beyond = sorted(needed - {"chat", *GOAL_FIELDS})
    if beyond:
        raise UsageError(
            f"--protocol {protocol.name} needs {', '.join(beyond)}, which a goal does not hold "
            f"(a goal gives chat and {', '.join(GOAL_FIELDS)})"
        )
    if "answer" in needed:
        missing = [Problem(r.row, "answer", f"--protocol {protocol.name} needs the answer")
                   for r in reals if r.answer is None]  # fmt: skip
        if missing:
            raise DataValidationError(missing[:50], len(missing))
    return protocol


def ranges(protocol: Protocol) -> dict[str, Range]:
    """Each metric's range, from its score's (a share's choice: [0, 1])."""
    scores = {s.name: s for s in protocol.scores}
    found = {}
    for metric in _per_item(protocol):
        score = scores[metric.source]
        ends = [(score.min + metric.offset) * metric.scale,
                (score.max + metric.offset) * metric.scale]  # fmt: skip
        found[metric.name] = Range(min(ends), max(ends))
    return found


@dataclass
class Judged:
    """The metric values of every judged conversation, by item id, and the failed items."""

    metrics: dict[str, dict[str, float]]
    failed: list[dict[str, str]]


def gap_rows(
    protocol: Protocol, goals: Iterable[Mapping[str, Any]], conversations: Iterable[tuple[str, Any]]
) -> list[dict[str, Any]]:
    """A protocol row per conversation: its id, `chat` as shown, the goal's fields the
    protocol reads. `conversations`: (goal id, (row id, messages)) pairs."""
    wanted = {f.name for f in protocol.fields} & set(GOAL_FIELDS)
    by_id = {str(g["id"]): g for g in goals}
    rows = []
    for goal_id, (row_id, messages) in conversations:
        goal = by_id[goal_id]
        row = {"id": row_id, "chat": shown(messages)}
        row.update({k: goal[k] for k in sorted(wanted) if goal.get(k) is not None})
        rows.append(row)
    return rows


async def judge(
    rows: list[dict[str, Any]],
    protocol: Protocol,
    judge_spec: ModelSpec,
    out: Path,
    config: RunConfig,
    budget: Budget | None,
) -> Judged:
    """The protocol's run on `rows` into `out` (resumed from its store: the rows grow as a
    stopped command goes on, so the run is replaced, never refused); raises
    `BudgetReachedError` when the shared budget stops it."""
    if not rows:
        return Judged({}, [])
    from chatjudge.runner import build_engine

    engine = build_engine(rows, protocol, judge_spec, out, column_map=None,
                          config=engine_config(config))  # fmt: skip
    await engine.run(budget=budget)
    metrics = _per_item(protocol)
    judged = Judged({}, [])
    for record in RunDir(out).results():
        if record.status != "ok":
            judged.failed.append({"id": record.id, "step": "protocol", "error": str(record.error)})
            continue
        values = {}
        for m in metrics:
            score = record.scores.get(m.source)
            if isinstance(score, int | float) and not isinstance(score, bool):
                values[m.name] = (float(score) + m.offset) * m.scale
        judged.metrics[record.id] = values
    return judged


def engine_config(config: RunConfig) -> RunConfig:
    """The protocol's runs: one verdict a conversation (`--samples` is the simulated
    conversations a goal), replacing what the same command's stopped run wrote."""
    run = config.run.model_copy(update={"samples": 1, "overwrite": True})
    return config.model_copy(update={"run": run})


def _per_item(protocol: Protocol) -> list[Any]:
    """The metrics that have a value per conversation: a score's mean, not a ratio."""
    scores = {s.name for s in protocol.scores}
    return [m for m in protocol.metrics
            if m.source in scores and m.equals is None and not m.denominator]  # fmt: skip
