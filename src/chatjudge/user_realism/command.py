"""`chatjudge realism`: real conversations → goals → simulated conversations → the judge's
marks → the statistics, each step through the one call path with a store of its own in
DIR, so that the same command resumes step by step and pays for nothing twice:
- `goals.jsonl` (`goals.calls.sqlite`): each conversation's goal (`goals`);
- `simulated.jsonl` and its store, summary and record: `simulate`'s own machinery on the
  goal rows, which hold the goal and nothing of the real conversation;
- `marks.calls.sqlite`: the judge's marks (`marks`);
- with `--protocol`, the run directories `protocol-real/` and `protocol-simulated/`: the
  protocol's metrics on both sides (`gap`), judged by `--judge`;
- `realism.json` (the statistics, `compare`) and `report.html`.
One budget (`--max-cost-usd`) is shared by every step. Bad input, a bad option or an output
that cannot be written is refused before anything is sent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chatjudge import jsoncodec
from chatjudge.calls.budget import Budget
from chatjudge.calls.role import Role
from chatjudge.calls.session import CostEstimate, Seat, Session
from chatjudge.calls.unit import Unit, within
from chatjudge.data import Source
from chatjudge.errors import BudgetReached, BudgetReachedError
from chatjudge.formats.produced import ProducedInfo
from chatjudge.models import Model, ModelSpec, get_model
from chatjudge.options import RunConfig
from chatjudge.produce import build_simulation
from chatjudge.produce.simulation import Simulation
from chatjudge.protocols import Protocol
from chatjudge.ray_executor import distribute, key_checked_here
from chatjudge.rundir import Produced, prepare_output
from chatjudge.user_realism import gap
from chatjudge.user_realism.goals import Goals, stopped_by_budget, write_goals
from chatjudge.user_realism.marks import DISCLOSURE, DISCRIMINATOR, PUSHBACK, Marker
from chatjudge.user_realism.output_checks import (
    RECORD,
    check_outputs,
    realism_record,
    simulation_record,
    write_record,
)
from chatjudge.user_realism.real import RealConversation, read_real
from chatjudge.user_realism.sample import GoalSample
from chatjudge.user_realism.samples import goal_sample, simulated_ended_by_user, user_side
from chatjudge.user_realism.tune_search import TuneSetUp
from chatjudge.writing import open_write

GOALS, SIMULATED, REALISM, REPORT = "goals.jsonl", "simulated.jsonl", "realism.json", "report.html"
GOAL_STORE, MARK_STORE = "goals.calls.sqlite", "marks.calls.sqlite"


@dataclass
class Outcome:
    """What the command measured, for the statistics, the report and the exit status."""

    samples: list[GoalSample]
    goals: list[dict[str, Any]]  # goals.jsonl's rows
    reals: dict[str, RealConversation]
    simulated: dict[str, list[dict[str, Any]]]  # a goal's simulated rows (failed ones too)
    failed: list[dict[str, str]] = field(default_factory=list)  # {id, step, error}
    cut_share: float | None = None  # of the finished simulated conversations
    max_turns: int = 0
    metric_ranges: dict[str, Any] = field(default_factory=dict)  # `--protocol`'s metrics


@dataclass
class Realism:
    """The command, set up: every check passed, nothing sent."""

    reals: list[RealConversation]
    out: Path
    config: RunConfig  # its simulation's `max_turns` set (`--max-turns`, or the longest real)
    assistant: ModelSpec
    user: ModelSpec | None
    goal_model: Model
    judge: Model
    judge_spec: ModelSpec  # the protocol's runs build their judge from it
    record: ProducedInfo  # realism.run.json
    protocol: Protocol | None = None
    inputs: list[Path] = field(default_factory=list)
    tune: TuneSetUp | None = None  # `--tune` (`realism.tune`)

    @property
    def paths(self) -> dict[str, Path]:
        names = {"goals": GOALS, "simulated": SIMULATED, "realism": REALISM, "report": REPORT}
        return {k: self.out / v for k, v in names.items()}

    def budget(self) -> Budget | None:
        """`--max-cost-usd`'s budget, which every step shares."""
        limit = self.config.pricing.max_cost_usd
        return Budget(limit) if limit is not None else None

    async def run(self, budget: Budget | None = None) -> Outcome:
        """Every step in order, in `budget` (one of its own by default); raises
        `BudgetReachedError` (everything so far written) when `--max-cost-usd` stops one,
        and the same command then resumes."""
        budget = budget if budget is not None else self.budget()
        write_record(self.out, self.record)
        goals = await self._goals(budget, dry_run=False)
        _write_rows(self.out / GOALS, goals.rows)
        if goals.stopped is not None:
            raise _reached(goals.stopped, len(goals.rows), len(self.reals), "goal(s)")
        simulated = await self._simulate(goals.rows, budget)
        judged = await self._gap(goals.rows, simulated, budget)
        return await self._measure(goals, simulated, budget, judged=judged)

    async def estimate(self) -> CostEstimate:
        """`--dry-run`: what each step would send, after what the stores hold; a goal not
        held is stood in for by the conversation's first user message, and a simulated
        conversation not held by the real one, for counting the judge's calls."""
        session = self._goal_session(None, dry_run=True)
        async with session:
            goals = await write_goals(session, self.reals)
        estimates = [session.estimate("realism", len(self.reals))]
        held = {g["id"] for g in goals.rows}
        stand_ins = [  # one fact, so that its disclosure call is counted
            {"id": r.id, "question": r.user_messages[0], "facts": [r.user_messages[0]]}
            for r in self.reals
            if r.id not in held
        ]
        rows = goals.rows + stand_ins
        simulation = self._simulation(rows, dry_run=True)
        estimates.append(await simulation.estimate())
        simulated = read_simulated(self.out / SIMULATED)
        stood = {g["id"]: [*simulated.get(g["id"], [])] for g in rows}
        for goal_id, sims in stood.items():
            if not sims:
                real = next(r for r in self.reals if r.id == goal_id)
                stood[goal_id] = [
                    {"id": goal_id, "chat": real.messages, "status": "ok", "ended": "user"}
                ]
        marks = Session([Seat("judge", self.judge)], self.config, self.out / MARK_STORE,
                        total=len(rows), dry_run=True)  # fmt: skip
        async with marks:
            await self._marks(marks, rows, stood)
        estimates.append(marks.estimate("realism", len(rows)))
        return _combined(estimates, len(self.reals))

    async def _goals(self, budget: Budget | None, *, dry_run: bool) -> Goals:
        session = self._goal_session(budget, dry_run=dry_run)
        async with session:
            return await write_goals(session, self.reals)

    def _goal_session(self, budget: Budget | None, *, dry_run: bool) -> Session:
        todo = sum(r.question is None for r in self.reals)
        return Session([Seat("goal_model", self.goal_model)], self.config,
                       self.out / GOAL_STORE, total=todo, label="goals", dry_run=dry_run,
                       budget=budget)  # fmt: skip

    def _simulation(self, rows: Any, *, dry_run: bool) -> Simulation:
        """`simulate` set up on the goal rows; dry, on rows given from Python, whose name is
        not the file's that a run's record beside simulated.jsonl holds (nothing is written
        then: nothing to protect)."""
        config = self.config
        if dry_run:
            config = config.model_copy(
                update={"run": config.run.model_copy(update={"overwrite": True})}
            )
        return build_simulation(rows, self.assistant, self.user, self.out / SIMULATED,
                                column_map=None, config=config, dry_run=dry_run)  # fmt: skip

    async def _simulate(
        self, goals: list[dict[str, Any]], budget: Budget | None
    ) -> dict[str, list[dict[str, Any]]]:
        """`simulate` on goals.jsonl: K conversations a goal, written to simulated.jsonl."""
        if not goals:
            return {}
        simulation = self._simulation(self.out / GOALS, dry_run=False)
        simulation.budget = budget
        await simulation.run()  # BudgetReachedError: its rows and summary are written
        return read_simulated(self.out / SIMULATED)

    async def _gap(
        self,
        goals: list[dict[str, Any]],
        simulated: dict[str, list[dict[str, Any]]],
        budget: Budget | None,
    ) -> tuple[gap.Judged, gap.Judged]:
        """`--protocol`: its metrics on the real and the finished simulated conversations
        of every goal that has one (the others are not compared)."""
        if self.protocol is None:
            return gap.Judged({}, []), gap.Judged({}, [])
        reals = {r.id: r for r in self.reals}
        finished = {
            g: [s for s in rows if s.get("status") == "ok"] for g, rows in simulated.items()
        }
        paired = [g for g in goals if finished.get(str(g["id"]))]
        sides = (
            [(str(g["id"]), (str(g["id"]), reals[str(g["id"])].messages)) for g in paired],
            [(str(g["id"]), (str(s["id"]), s["chat"])) for g in paired
             for s in finished[str(g["id"])]],
        )  # fmt: skip
        judged = []
        for where, conversations in zip((gap.REAL_DIR, gap.SIMULATED_DIR), sides, strict=True):
            rows = gap.gap_rows(self.protocol, goals, conversations)
            judged.append(await gap.judge(rows, self.protocol, self.judge_spec, self.out / where,
                                          self.config, budget))  # fmt: skip
        return judged[0], judged[1]

    async def _measure(
        self,
        goals: Goals,
        simulated: dict[str, list[dict[str, Any]]],
        budget: Budget | None,
        *,
        judged: tuple[gap.Judged, gap.Judged],
    ) -> Outcome:
        """The judge's marks on every goal's conversations, and the samples they make."""
        session = Session([Seat("judge", self.judge)], self.config, self.out / MARK_STORE,
                          total=len(goals.rows), label="marking", budget=budget)  # fmt: skip
        async with session:
            samples = await self._marks(session, goals.rows, simulated, judged)
        reals = {r.id: r for r in self.reals}
        outcome = Outcome(samples, goals.rows, reals, simulated,
                          max_turns=self.config.simulation.max_turns)  # fmt: skip
        if self.protocol is not None:
            outcome.metric_ranges = gap.ranges(self.protocol)
        outcome.failed = [{"id": i, "step": "goal", "error": e} for i, e in goals.failed]
        finished = [r for rows in simulated.values() for r in rows if r.get("status") == "ok"]
        outcome.failed += [
            {"id": str(r["id"]), "step": "simulation", "error": str(r.get("error"))}
            for rows in simulated.values()
            for r in rows
            if r.get("status") != "ok"
        ]
        outcome.failed += [f for side in judged for f in side.failed]
        if finished:
            outcome.cut_share = sum(r.get("ended") == "max_turns" for r in finished) / len(finished)
        return outcome

    async def _marks(
        self,
        session: Session,
        goals: Sequence[Mapping[str, Any]],
        simulated: Mapping[str, list[dict[str, Any]]],
        judged: tuple[gap.Judged, gap.Judged] | None = None,
    ) -> list[GoalSample]:
        """Each goal's marks in the session's pool, with the protocol's metrics where
        `judged`; a goal with no finished simulated conversation has nothing to compare and
        is left out."""
        real_metrics, sim_metrics = (j.metrics for j in judged) if judged else ({}, {})
        (seat,) = session.seats
        caller, ledger = session.caller(seat), session.ledger(seat)
        settings = session.config.generation.settings()
        marker = Marker(*(Role(caller, ledger, settings, s)
                          for s in (DISCLOSURE, PUSHBACK, DISCRIMINATOR)))  # fmt: skip
        reals = {r.id: r for r in self.reals}
        found: dict[int, GoalSample] = {}

        async def one(job: tuple[int, Mapping[str, Any]]) -> None:
            n, goal = job
            with within(Unit(order=n)):  # the budget serves earlier goals first
                real = reals[str(goal["id"])]
                sims = [r for r in simulated.get(str(goal["id"]), []) if r.get("status") == "ok"]
                facts = goal.get("facts") or []
                real_side = user_side(
                    real.messages, ended_by_user=True,
                    marks=await marker.conversation(real.messages, facts),
                    metrics=real_metrics.get(real.id),
                )  # fmt: skip
                sides = [
                    user_side(s["chat"], ended_by_user=simulated_ended_by_user(s),
                              marks=await marker.conversation(s["chat"], facts),
                              metrics=sim_metrics.get(str(s["id"])))
                    for s in sims
                ]  # fmt: skip
                told = await marker.discriminate(real.messages, sims[0]["chat"])
                found[n] = goal_sample(real.id, real_side, sides, told)
                session.progress.advance(failed=False, tokens=0)

        jobs = ((n, g) for n, g in enumerate(goals) if any(
            r.get("status") == "ok" for r in simulated.get(str(g["id"]), [])))  # fmt: skip
        stopped = stopped_by_budget(await session.run(jobs, one), len(found))
        if stopped is not None:
            raise _reached(stopped, len(found), len(goals), "goal(s) marked")
        return [found[n] for n in sorted(found)]


def build_realism(
    data: Any,
    assistant: ModelSpec,
    out: str | Path,
    *,
    user: ModelSpec | None = None,
    goal_model: ModelSpec | None = None,
    judge: ModelSpec | None = None,
    protocol: str | None = None,
    max_turns: int | None = None,
    column_map: Mapping[str, str] | None = None,
    config: RunConfig,
    dry_run: bool = False,
) -> Realism:
    """Read and check everything (the data first) and set the command up; nothing is sent.
    `goal_model` and `judge` default to the simulated user's model, which defaults to the
    assistant's; `max_turns` to the longest real conversation, in user turns."""
    config = config.in_process() if dry_run else config
    reals = read_real(data, column_map)
    checked = gap.checked_protocol(protocol, reals) if protocol is not None else None
    longest = max(len(r.user_messages) for r in reals)
    turns = max_turns if max_turns is not None else longest
    config = config.model_copy(
        update={"simulation": config.simulation.model_copy(update={"max_turns": turns})}
    )
    role_model = user if user is not None else assistant
    check_key = key_checked_here(config) and not dry_run
    built = [
        get_model(spec if spec is not None else role_model, config.client,
                  call_with="messages", check_key=check_key)
        for spec in (goal_model, judge)
    ]  # fmt: skip
    directory = Path(out)
    inputs = [Path(data)] if isinstance(data, str | Path) else []
    written = [directory / n for n in (GOALS, GOAL_STORE, MARK_STORE, REALISM, REPORT, RECORD)]
    sim = Produced(directory / SIMULATED)
    written += [sim.rows, sim.store, sim.summary, sim.record]
    simulation = simulation_record(assistant, user, config)
    models = {**simulation.models, "goal_model": built[0].name, "judge": built[1].name}
    record = realism_record(Source(data, column_map).name, models,
                            checked.name if checked else None, config)  # fmt: skip
    check_outputs(directory, written, inputs, record, simulation,
                  folders=[directory / gap.REAL_DIR, directory / gap.SIMULATED_DIR],
                  overwrite=config.run.overwrite)  # fmt: skip
    prepare_output(directory, tuple(written), create=not dry_run)
    if not dry_run:
        built = distribute(built, config, call_with="messages")
    goal_built, judge_built = built
    judge_spec = judge if judge is not None else role_model
    return Realism(reals, directory, config, assistant, user, goal_built, judge_built,
                   judge_spec, record, checked, inputs)  # fmt: skip


def read_simulated(path: Path) -> dict[str, list[dict[str, Any]]]:
    """simulated.jsonl's rows by goal (`<id>#<k>` with --samples K > 1); none when absent."""
    by_goal: dict[str, list[dict[str, Any]]] = {}
    if not path.is_file():
        return by_goal
    with path.open("rb") as lines:
        for line in lines:
            row = jsoncodec.loads(line)
            goal = str(row["id"])
            if "sample" in row:
                goal = goal.rsplit("#", 1)[0]
            by_goal.setdefault(goal, []).append(row)
    return by_goal


def _write_rows(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    with open_write(path) as out:
        for row in rows:
            out.write(jsoncodec.dumps(dict(row)) + b"\n")


def _reached(stopped: BudgetReached, done: int, total: int, what: str) -> BudgetReachedError:
    return BudgetReachedError(
        f"{stopped}: {done} of {total} {what} finished and written; the same command with a "
        "larger --max-cost-usd resumes, paying only for the rest",
        summary={},
    )


def _combined(estimates: Sequence[CostEstimate], rows: int) -> CostEstimate:
    """The steps' estimates as one: every role of every step, the totals summed."""
    roles = [r for e in estimates for r in e.roles]
    unpriced = [u for e in estimates for u in e.unpriced]
    total = None
    if not unpriced:
        totals = [e.total_usd for e in estimates if e.total_usd is not None]
        total = (sum(t[0] for t in totals), sum(t[1] for t in totals))
    notes = [n for e in estimates for n in e.notes]
    notes.append(
        "realism: a goal not yet written is counted from the conversation's first user "
        "message, and the judge's marks on a conversation not yet simulated from the real one"
    )
    return CostEstimate(command="realism", rows=rows, roles=roles, total_usd=total,
                        unpriced=unpriced, notes=list(dict.fromkeys(notes)))  # fmt: skip
