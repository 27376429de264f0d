"""`chatjudge realism --tune`'s model calls, all through the one call path and the command's
one budget:
- a candidate's simulations: `simulate`'s machinery on the chosen goal rows, with the
  candidate's instructions as `--user-prompt`, in a folder of its own under `DIR/tune/`
  (its rows, its store: a killed tuning resumes conversation by conversation); one
  conversation a goal for the choice, `--samples` for the held-out goals;
- the judge's marks: the command's own store (`marks.calls.sqlite`), so that a real
  conversation's marks are never paid twice;
- the optimiser: one seat of a session on `DIR/tune/optimizer.calls.sqlite`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chatjudge.analysis.align.guidance import RULES_SCHEMA
from chatjudge.calls.budget import Budget
from chatjudge.calls.role import Role
from chatjudge.calls.run_sync import run_sync
from chatjudge.calls.session import Seat, Session
from chatjudge.calls.unit import Unit, within
from chatjudge.chat.types import GenerationSettings
from chatjudge.errors import BudgetReached, BudgetReachedError
from chatjudge.models import Model
from chatjudge.produce import build_simulation
from chatjudge.user_realism.command import MARK_STORE, Realism, read_simulated
from chatjudge.user_realism.goals import stopped_by_budget
from chatjudge.user_realism.marks import DISCLOSURE, DISCRIMINATOR, PUSHBACK, Marker
from chatjudge.user_realism.sample import GoalSample
from chatjudge.user_realism.samples import goal_sample, simulated_ended_by_user, user_side
from chatjudge.writing import open_write

TUNE_DIR = "tune"
OPTIMIZER_STORE = "optimizer.calls.sqlite"
PROMPT, ROWS = "user_prompt.txt", "simulated.jsonl"


class TuneCalls:
    """The simulations, marks and optimiser calls of one tuning."""

    def __init__(
        self,
        job: Realism,
        goals: Sequence[Mapping[str, Any]],
        optimizer: Model,
        budget: Budget | None,
    ) -> None:
        self.job = job
        self.goals = {str(g["id"]): dict(g) for g in goals}
        self.optimizer = optimizer
        self.budget = budget
        self.folder = job.out / TUNE_DIR

    def simulate(
        self, instructions: str, name: str, ids: Sequence[str], marked: bool
    ) -> dict[str, GoalSample]:
        """`ids`' goals simulated with `instructions` and discriminated (`marked`: every
        mark, with `--samples` conversations a goal); a goal without a finished
        conversation is left out."""
        rows = [self.goals[i] for i in ids if i in self.goals]
        if not rows:
            return {}
        folder = self.folder / name
        folder.mkdir(parents=True, exist_ok=True)
        with open_write(folder / PROMPT) as out:
            out.write(instructions.encode())
        config = self._config(folder / PROMPT, samples=None if marked else 1)
        simulation = build_simulation(rows, self.job.assistant, self.job.user, folder / ROWS,
                                      column_map=None, config=config)  # fmt: skip
        simulation.budget = self.budget
        run_sync(simulation.run())
        simulated = read_simulated(folder / ROWS)
        return run_sync(self._marked(rows, simulated, marked, name))

    def write_rules(self, prompt: str, name: str) -> str:
        """The optimiser's reply to `prompt` (from its store when it holds it)."""
        return run_sync(self._write_rules(prompt, name))

    def _config(self, prompt: Path, samples: int | None) -> Any:
        config = self.job.config
        simulation = config.simulation.model_copy(update={"user_prompt": prompt})
        run = config.run.model_copy(update={"overwrite": True})  # the folder is the tuning's
        if samples is not None:
            run = run.model_copy(update={"samples": samples})
        return config.model_copy(update={"simulation": simulation, "run": run})

    async def _marked(
        self,
        rows: Sequence[Mapping[str, Any]],
        simulated: Mapping[str, list[dict[str, Any]]],
        marked: bool,
        name: str,
    ) -> dict[str, GoalSample]:
        session = Session([Seat("judge", self.job.judge)], self.job.config,
                          self.job.out / MARK_STORE, total=len(rows), label=f"marking {name}",
                          budget=self.budget)  # fmt: skip
        reals = {r.id: r for r in self.job.reals}
        found: dict[str, GoalSample] = {}
        async with session:
            (seat,) = session.seats
            caller, ledger = session.caller(seat), session.ledger(seat)
            settings = session.config.generation.settings()
            marker = Marker(*(Role(caller, ledger, settings, s)
                              for s in (DISCLOSURE, PUSHBACK, DISCRIMINATOR)))  # fmt: skip

            async def one(job: tuple[int, Mapping[str, Any]]) -> None:
                n, goal = job
                with within(Unit(order=n)):  # the budget serves earlier goals first
                    real = reals[str(goal["id"])]
                    sims = [s for s in simulated.get(real.id, []) if s.get("status") == "ok"]
                    facts = goal.get("facts") or []

                    async def side(messages: Any, ended: bool) -> Any:
                        marks = await marker.conversation(messages, facts) if marked else None
                        return user_side(messages, ended_by_user=ended, marks=marks)

                    real_side = await side(real.messages, True)
                    sides = [await side(s["chat"], simulated_ended_by_user(s)) for s in sims]
                    told = await marker.discriminate(real.messages, sims[0]["chat"])
                    found[real.id] = goal_sample(real.id, real_side, sides, told)
                    session.progress.advance(failed=False, tokens=0)

            jobs = ((n, g) for n, g in enumerate(rows) if any(
                s.get("status") == "ok" for s in simulated.get(str(g["id"]), [])))  # fmt: skip
            stopped = stopped_by_budget(await session.run(jobs, one), len(found))
        if stopped is not None:
            raise _reached(stopped, f"marking the tuning's {name} conversations")
        return found

    async def _write_rules(self, prompt: str, name: str) -> str:
        seat = Seat("optimizer", self.optimizer)
        self.folder.mkdir(parents=True, exist_ok=True)
        session = Session([seat], self.job.config, self.folder / OPTIMIZER_STORE, total=1,
                          label="optimising", budget=self.budget)  # fmt: skip
        async with session:
            settings = GenerationSettings(0.0, self.job.config.generation.max_tokens,
                                          self.job.config.generation.seed)  # fmt: skip
            role = Role(session.caller(seat), session.ledger(seat), settings, RULES_SCHEMA)
            try:
                reply = await role.call([{"role": "user", "content": prompt}], 0)
            except BudgetReached as exc:
                raise _reached(exc, f"the optimiser's call ({name})") from None
        return reply.text


def _reached(stopped: BudgetReached, what: str) -> BudgetReachedError:
    return BudgetReachedError(
        f"{stopped}: --max-cost-usd reached at {what}; the same command with a larger "
        "--max-cost-usd resumes, paying only for the rest",
        summary={},
    )
