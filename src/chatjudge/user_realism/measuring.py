"""The command from end to end, as the CLI and `chatjudge.realism(...)` run it: set up
(refused before anything is sent), every step, the statistics and realism.json, the page."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chatjudge.calls.run_sync import run_sync
from chatjudge.models import ModelSpec
from chatjudge.options import RunConfig
from chatjudge.user_realism.command import REPORT, Realism, build_realism
from chatjudge.user_realism.result import statistics, write_realism

if TYPE_CHECKING:
    from chatjudge.calls.estimate import CostEstimate
    from chatjudge.formats.realism import Realism as RealismFile


def set_up(data: Any, assistant: ModelSpec, own: Mapping[str, Any], config: RunConfig,
           *, column_map: Mapping[str, str] | None = None, dry_run: bool = False,
           ) -> Realism:  # fmt: skip
    """The command set up from its own options (`RealismOptions`' names)."""
    out = own.get("out")
    if out is None:
        from chatjudge.errors import UsageError

        raise UsageError("realism needs --out DIR")
    job = build_realism(data, assistant, out, user=own.get("user"),
                        goal_model=own.get("goal_model"), judge=own.get("judge"),
                        protocol=own.get("protocol"), max_turns=own.get("max_turns"),
                        column_map=column_map, config=config, dry_run=dry_run)  # fmt: skip
    optimizer = own.get("optimizer")
    if own.get("tune") or optimizer is not None:
        from chatjudge.errors import UsageError
        from chatjudge.user_realism.tune import set_up_tune

        if not own.get("tune") or optimizer is None:
            raise UsageError("--tune and --optimizer MODEL go together")
        job.tune = set_up_tune(job.reals, optimizer, job.config, check_key=not dry_run)
    return job


def estimate(job: Realism) -> CostEstimate:
    found = run_sync(job.estimate())
    if job.tune is not None:
        tuning, held = len(job.tune.tuning), len(job.tune.held)
        found.notes.append(
            f"realism --tune is not counted above: it adds {3 * tuning} simulated "
            f"conversation(s) of the tuning goals (3 candidates, one each) and their "
            f"discriminator's calls, {held} x --samples of the held-out goals with every "
            f"mark, and 4 calls of the optimiser ({job.tune.optimizer.name})"
        )
    return found


def measure(job: Realism) -> RealismFile:
    """Every step, then realism.json and report.html; returns what realism.json holds.
    Raises `BudgetReachedError` at `--max-cost-usd` (what was done is written)."""
    budget = job.budget()
    outcome = run_sync(job.run(budget))
    result = statistics(outcome, job.config.options("realism"))
    write_realism(job.out, result)
    from chatjudge.report.realism_page import write_realism_page
    from chatjudge.user_realism.page_data import example, spreads

    write_realism_page(Path(job.out) / REPORT, result, spreads(outcome), example(outcome))
    if job.tune is not None:  # realism.json is written first: the tuning may stop at the budget
        from chatjudge.user_realism.tune import tune

        result.tuning = tune(job, outcome, budget)
        write_realism(job.out, result)
    return result


def realism(
    data: Any,
    assistant: ModelSpec,
    out: str | Path,
    *,
    user: ModelSpec | None = None,
    goal_model: ModelSpec | None = None,
    judge: ModelSpec | None = None,
    protocol: str | None = None,
    max_turns: int | None = None,
    tune: bool = False,
    optimizer: ModelSpec | None = None,
    column_map: Mapping[str, str] | None = None,
    dry_run: bool = False,
    **options: Any,
) -> RealismFile | CostEstimate:
    """`chatjudge.realism(...)`: measure simulated users against the real conversations in
    `data` (import output, or rows with `chat`), as `chatjudge realism` does; writes `out`/
    goals.jsonl, simulated.jsonl, realism.json and report.html and returns realism.json's
    model (`dry_run`: the estimate, nothing sent). Models: names or Python callables taking
    OpenAI-style messages. `tune` with `optimizer`: also tune the simulated user and prove
    the gain on held-out goals (realism.json's `tuning`, `out`/user_prompt.txt). `options`:
    the command's run and simulation options (`samples`, `concurrency`, `max_cost_usd`,
    `seed`, ...). Raises `BudgetReachedError` at `max_cost_usd`."""
    config = RunConfig.from_options(options, command="realism", progress=False)
    own = {"out": out, "user": user, "goal_model": goal_model, "judge": judge,
           "protocol": protocol, "max_turns": max_turns, "tune": tune,
           "optimizer": optimizer}  # fmt: skip
    job = set_up(data, assistant, own, config, column_map=column_map, dry_run=dry_run)
    return estimate(job) if dry_run else measure(job)
