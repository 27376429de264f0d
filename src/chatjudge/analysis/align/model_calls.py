"""`chatjudge align`'s model calls, all through the one call path: the judge re-judges rows
as `run` does (an engine per judging, each in its own run directory under `DIR/judged/`,
its own store: a killed align resumes judging call by call), and the optimiser is one seat
of a session on `DIR/optimizer.sqlite`. One budget (`--max-cost-usd`) spans them all; in a
dry run every judging and optimiser call is counted, none is sent. The optimiser's one call
is made through a `calls.role.Role`, as every producer's are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chatjudge.analysis.align.guidance import RULES_SCHEMA
from chatjudge.calls.budget import Budget
from chatjudge.calls.estimate import CostEstimate, RoleEstimate
from chatjudge.calls.role import Role
from chatjudge.calls.run_sync import run_sync
from chatjudge.calls.session import NotSent, Seat, Session
from chatjudge.chat.types import GenerationSettings
from chatjudge.errors import BudgetReached, BudgetReachedError
from chatjudge.models import ModelSpec, get_model
from chatjudge.options import RunConfig
from chatjudge.protocols import Protocol
from chatjudge.rundir import RunDir
from chatjudge.runner import build_engine

OPTIMIZER_STORE = "optimizer.sqlite"
# A dry run's stand-in for the rules the optimiser would write: every candidate is counted.
DRY_RULES = '{"rules": ["(a rule the optimiser writes)"]}'
JUDGED = "judged"


class AlignCalls:
    """The judge's and the optimiser's calls of one alignment, and what they cost."""

    def __init__(
        self,
        out: Path,
        rows: Mapping[str, dict[str, Any]],
        judge: ModelSpec,
        optimizer: ModelSpec,
        config: RunConfig,
        *,
        run_store: Path | None = None,
        dry_run: bool = False,
    ) -> None:
        """`run_store`: the aligned run's store, which answers the calls it holds (the
        original prompt's, with the run's judge): align never pays for them again."""
        self.out = out
        self.run_store = run_store
        self.rows = rows
        self.judge_spec = judge
        self.optimizer = get_model(optimizer, config.client)
        self.config = config
        self.dry_run = dry_run
        limit = config.pricing.max_cost_usd
        self.budget = Budget(limit) if limit is not None and not dry_run else None
        self.judge_calls = 0
        self.optimizer_calls = 0
        self.cost_usd: float | None = 0.0
        self.estimates: list[CostEstimate] = []

    def judge(self, protocol: Protocol, name: str, ids: Sequence[str]) -> dict[str, Any]:
        """The judge's scores of `ids` (those judged ok) with `protocol`."""
        chosen = [self.rows[i] for i in ids]
        out = self.out / JUDGED / name
        engine = build_engine(chosen, protocol, self.judge_spec, out, column_map=None,
                              config=self.config, dry_run=self.dry_run)  # fmt: skip
        engine.reference_store = self.run_store
        if self.dry_run:
            self.estimates.append(engine.estimate())
            return {}
        try:
            outcome = run_sync(engine.run(budget=self.budget))
        except BudgetReachedError as exc:
            raise BudgetReachedError(
                f"--max-cost-usd reached while judging {name}: raise it and run the same "
                "command again to go on (every reply so far is kept and not paid twice)",
                summary=exc.summary,
            ) from None
        self.judge_calls += outcome.summary["usage"].get("calls", 0)
        self._add_cost(outcome.cost.invocation_usd)
        return RunDir(out).ok_scores()

    def write_rules(self, prompt: str, name: str) -> str:
        """The optimiser's reply to `prompt` (from its store when it holds it)."""
        return run_sync(self._write_rules(prompt))

    async def _write_rules(self, prompt: str) -> str:
        seat = Seat("optimizer", self.optimizer)
        session = Session([seat], self.config, self.out / OPTIMIZER_STORE, total=1,
                          label="optimising", dry_run=self.dry_run, budget=self.budget)  # fmt: skip
        async with session:
            settings = GenerationSettings(0.0, self.config.generation.max_tokens,
                                          self.config.generation.seed)  # fmt: skip
            role = Role(session.caller(seat), session.ledger(seat), settings, RULES_SCHEMA)
            try:
                reply = await role.call([{"role": "user", "content": prompt}])
            except NotSent:
                self.estimates.append(session.estimate("align", 1))
                return DRY_RULES
            except BudgetReached as exc:
                raise BudgetReachedError(
                    f"--max-cost-usd reached before the optimiser's call: {exc}; raise it and "
                    "run the same command again to go on",
                    summary={},
                ) from None
            usage = session.usage()
            self.optimizer_calls += usage.calls
            self._add_cost(session.cost(1, 1).invocation_usd)
        return reply.text

    def _add_cost(self, usd: float | None) -> None:
        self.cost_usd = None if usd is None or self.cost_usd is None else self.cost_usd + usd

    def estimate(self, rows: int) -> CostEstimate:
        """A dry run's account: every judging's and optimiser call's, summed by role."""
        roles: dict[tuple[str, str], RoleEstimate] = {}
        notes: list[str] = ["the optimiser's rules are not written in a dry run: the judge's "
                            "input tokens count a one-line stand-in for them"]  # fmt: skip
        for found in self.estimates:
            notes += [n for n in found.notes if n not in notes]
            for r in found.roles:
                key = (r.role, r.model)
                if key not in roles:
                    roles[key] = r.model_copy()
                    continue
                total = roles[key]
                total.add(r.calls, r.input_tokens, r.output_cap_tokens)
                total.answered_by_store += r.answered_by_store
                if total.cost_usd is not None and r.cost_usd is not None:
                    total.cost_usd = (total.cost_usd[0] + r.cost_usd[0],
                                      total.cost_usd[1] + r.cost_usd[1])  # fmt: skip
                else:
                    total.cost_usd = None
        merged = list(roles.values())
        unpriced = [f"{r.role} ({r.model})" for r in merged if r.cost_usd is None]
        total_usd = None
        if not unpriced:
            total_usd = (round(sum(r.cost_usd[0] for r in merged if r.cost_usd), 6),
                         round(sum(r.cost_usd[1] for r in merged if r.cost_usd), 6))  # fmt: skip
        return CostEstimate(command="align", rows=rows, roles=merged, total_usd=total_usd,
                            unpriced=unpriced, notes=notes)  # fmt: skip
