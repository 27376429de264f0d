"""`chatjudge generate`: a model under test answers every row's prompt, as Vertex AI's
evaluation runs the candidate and the baseline model before judging them.

The model sees `history` as chat messages (a plain-text history as one system message
holding it) and `prompt` as the last user message (or messages), and its reply fills
`response` or `baseline_model_response`: the output is a dataset that
`chatjudge run -p pairwise-chat-quality` reads unchanged. A row whose call failed is
written with `status: "failed"` and its `error`, without the field, so that judging
refuses it instead of judging a reply that does not exist. `--samples K` asks K times
with distinct seeds (seed + k): rows `<id>#<k>` with a `sample` column, the tries of one
task that a run's pass^k reads.

A row with tools (a `tools` column, or tool calls in its conversation or trajectory, from
which definitions are derived) offers them to the model, whose calls are answered by
`--tool-replay` or `--tools` (`tool_answers`), turn by turn up to `--max-tool-steps`
(`tool_loop`); with `--tools`, a row without tools is offered the functions, as `simulate`
offers them. Its row also gets the turn's messages in the trajectory column the pairwise
protocol reads for that field (`response_trajectory`, `baseline_trajectory`) and
`<field>_ended`. A row offered no tools is answered, and written, as it always was.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from chatjudge.calls import Usage
from chatjudge.calls.role import Role
from chatjudge.calls.session import CostEstimate, Seat, Session
from chatjudge.calls.unit import Unit, within
from chatjudge.chat.fields import FieldSpec
from chatjudge.chat.render import as_messages, without_tools
from chatjudge.chat.types import Message
from chatjudge.data import Item, Source, Validation, iter_items
from chatjudge.data.shard_rows import of, share
from chatjudge.errors import BudgetReached, ModelError, UsageError
from chatjudge.formats.io import write_json
from chatjudge.formats.produced import ProducedInfo
from chatjudge.models import Model
from chatjudge.options import RunConfig
from chatjudge.produce.driver import OrderedWriter, drive, estimated, produced, summary_extras
from chatjudge.produce.replies import failure_cause, visible
from chatjudge.produce.tool_answers import ToolAnswering
from chatjudge.produce.tool_loop import tool_turn
from chatjudge.rundir import Produced
from chatjudge.summarize.generate_summary import TOOL_TOTALS, generation_summary

FIELDS = (
    FieldSpec(
        name="history",
        required=False,
        conversation=True,
        description="conversation so far",
    ),
    FieldSpec(name="prompt", conversation=True, description="the user's next message"),
)
TARGETS = ("response", "baseline_model_response")
# Where a turn with tools writes its messages: the columns `pairwise-chat-quality` reads.
TRAJECTORY = {"response": "response_trajectory", "baseline_model_response": "baseline_trajectory"}


def check_target(field: str) -> None:
    if field not in TARGETS:
        raise UsageError(f"--field must be one of {', '.join(TARGETS)}, got {field!r}")


def request_messages(item: Item) -> list[Message]:
    """What the model under test sees: the history, then the prompt as the last turn."""
    history = as_messages(item.fields["history"], label="The conversation so far")
    prompt = item.fields["prompt"]
    if isinstance(prompt, list):
        return [*history, *as_messages(prompt, label="")]
    return [*history, {"role": "user", "content": str(prompt)}]


@dataclass
class Generation:
    source: Source
    validation: Validation
    model: Model
    field: str
    config: RunConfig
    output: Produced
    made: ProducedInfo  # what this command records beside its rows
    tools: ToolAnswering | None = None  # how tool calls are answered; None: no row has tools

    async def estimate(self) -> CostEstimate:
        """`--dry-run`: the calls this generation would send (after what the store holds)
        and what they could cost; nothing is sent and nothing is written."""
        session = self._session(dry_run=True)
        return await estimated(session, self._answer, "generate", self.validation.n_rows)

    async def run(self) -> dict[str, Any]:
        """Answer every row and write the output and its summary; returns the summary."""
        config = self.config
        session = self._session(dry_run=False)
        answered = await produced(session, self.output, self.made, self._answer)
        n_failed = sum(answered.failures.values())
        optional = summary_extras(self.source, self.validation, config.run.shard, answered.indexes)
        n_done = answered.writer.written
        total = self.validation.n_rows * config.run.samples
        cost = session.cost(n_done, total)
        summary = generation_summary(
            answered.tokens,
            model=self.model.name,
            field=self.field,
            n_rows=self.validation.n_rows,
            n_ok=n_done - n_failed,
            failures=answered.failures,
            usage=session.usage().as_dict(),
            cost=cost,
            options=config.options("generate"),
            extras=optional,
            tools=answered.tools,
        )
        written = write_json(self.output.summary, summary, only_set=True)
        session.check_budget(answered.stopped, n_done, total, "row(s)", written)
        return written

    def _session(self, *, dry_run: bool) -> Session:
        seat = Seat("model_under_test", self.model)
        total = self.validation.n_rows * self.config.run.samples
        return Session([seat], self.config, self.output.store, total=total,
                            label="generating", dry_run=dry_run)  # fmt: skip

    def _items(self) -> Iterator[Item]:
        """The rows to answer (with `--shard`, this shard's, keeping their indexes)."""
        valid = self.validation
        items = iter_items(self.source, FIELDS, limit=self.config.run.limit,
                           skip=valid.skipped_rows, as_written=valid.read_as_written)  # fmt: skip
        return share(items, of(self.config.run.shard))

    async def _answer(self, session: Session, out: IO[bytes]) -> _Answered:
        """Ask the model every row's prompt through `session` and write the rows to `out`
        in input order: the command's one loop, dry or not."""
        (seat,) = session.seats
        role = Role(session.caller(seat), session.ledger(seat), self.config.generation.settings())
        answered = _Answered(OrderedWriter(out))
        written = (self.field, TRAJECTORY[self.field], f"{self.field}_ended")
        answering = self.tools
        with_tools = _ToolRows(role, self) if answering is not None else None
        no_tools = self.config.tools.no_tools
        samples = self.config.run.samples

        async def answer(job: tuple[Item, int]) -> tuple[dict[str, Any], bool]:
            item, sample = job
            order = item.index * samples + sample
            row = {k: v for k, v in item.data.items() if k not in written}
            if samples > 1:  # tries of one task, as `simulate --samples` writes them
                row.update(id=f"{item.id}#{sample}", sample=sample)
            usage = dict(row["usage"]) if isinstance(row.get("usage"), dict) else {}
            try:
                offered = answering.offered(item.tools) if answering is not None else None
                with within(Unit(order, sample)):
                    if with_tools is not None and offered:
                        text, used, more = await with_tools.turn(item, offered, answered.tools)
                    else:
                        asked = request_messages(item)
                        if no_tools and item.tools:  # their calls and results read as text
                            answered.tools["rows_without_tools"] += 1
                            asked = without_tools(asked)
                        reply = await role.call(asked)
                        text = visible(reply.text)  # what it says, not the reasoning before it
                        used, more = Usage(), {}
                        used.add(reply)
            except ModelError as exc:
                if exc.fatal:
                    raise
                kind, cause = failure_cause(exc)
                answered.failures[kind] = answered.failures.get(kind, 0) + 1
                row.update(status="failed", error=cause)
                return row, True
            usage[self.field] = used.as_dict(cached=False)
            answered.tokens[order] = float(used.output_tokens)
            row.update({self.field: text, **more, "status": "ok", "error": None, "usage": usage})
            return row, False

        def jobs() -> Iterator[tuple[int, tuple[Item, int]]]:
            for n, item in enumerate(self._items()):
                answered.indexes.append(item.index)
                yield from ((n * samples + k, (item, k)) for k in range(samples))

        answered.stopped = await drive(session, jobs(), answer, answered.writer)
        return answered


@dataclass
class _ToolRows:
    """The turns of rows with tools: the model offered them, its calls answered."""

    role: Role
    generation: Generation

    async def turn(
        self, item: Item, tools: list[dict[str, Any]], totals: dict[str, int]
    ) -> tuple[str, Usage, dict[str, Any]]:
        """The row's final text, offered `tools`, what its steps used, and the columns it
        adds (its trajectory, why it ended); counts the steps, unmatched calls and errors
        in `totals`."""
        gen, config = self.generation, self.generation.config
        assert gen.tools is not None
        recorded = [item.fields.get("history"), item.fields.get("prompt")]
        recorded += [item.data.get(name) for name in TRAJECTORY.values()]
        turn = await tool_turn(
            self.role,
            request_messages(item),
            tools=tools,
            answers=gen.tools.answers(recorded),
            max_steps=config.tools.max_tool_steps,
        )
        totals["tool_steps"] += turn.steps
        totals["unmatched_tool_calls"] += turn.unmatched
        totals["tool_errors"] += turn.errors
        added = {TRAJECTORY[gen.field]: turn.trajectory, f"{gen.field}_ended": turn.ended}
        return turn.text, turn.usage, added


@dataclass
class _Answered:
    """What answering the rows leaves for the summary."""

    writer: OrderedWriter
    tools: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOOL_TOTALS, 0))
    tokens: dict[int, float] = field(default_factory=dict)  # output tokens, by row (and sample)
    failures: dict[str, int] = field(default_factory=dict)  # by kind
    indexes: list[int] = field(default_factory=list)  # each written row's index among all
    stopped: BudgetReached | None = None
