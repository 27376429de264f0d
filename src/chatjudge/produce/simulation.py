"""`chatjudge simulate`: a simulated user with a hidden goal talks with the assistant under
test, as CollabLLM measures interactivity, and the conversations are written for judging.

For each row (and sample), the simulated user opens, the assistant replies, and so on,
until the user ends the conversation (`ended: "user"`) or the assistant has replied
`--max-turns` times (`ended: "max_turns"`). Conversations run concurrently; the turns of
one conversation run in order. What each side sees is held apart here:
- the assistant gets the earlier conversation and the follow-up, nothing else: never the
  goal, the answer or the simulator's instructions;
- the simulated user gets its instructions with the goal and what it knows, and the
  conversation as a transcript: never the answer, never the assistant's hidden reasoning.
A conversation that cannot finish (retries exhausted, the context window, a user reply
that holds no message twice) is written with `status: "failed"`, its cause and its
partial transcript, and `chatjudge run` refuses to judge it as if it were complete.

With `--tools MODULE:OBJECT` the assistant is offered the user's functions (the row's
`tools` definitions where it has them, else definitions made from the functions), and
each of its turns is a tool loop (`tool_loop`): its calls and their results are in `chat`
as OpenAI's messages, which the judge sees; the simulated user sees the assistant's final
text only, never a call or a result. A turn cut at `--max-tool-steps` ends the
conversation there (`ended: "max_tool_steps"`): the assistant never answered in text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import IO, Any

from chatjudge.calls import Usage
from chatjudge.calls.role import Role
from chatjudge.calls.session import Budget, CostEstimate, Seat, Session, Starts
from chatjudge.calls.unit import Unit, current, within
from chatjudge.chat.fields import FieldSpec
from chatjudge.chat.render import as_messages
from chatjudge.chat.types import GenerationSettings, Message
from chatjudge.data import Item, Source, Validation, iter_items
from chatjudge.data.shard_rows import of, share
from chatjudge.errors import BudgetReached, ModelError
from chatjudge.formats.io import write_json
from chatjudge.formats.produced import ASSISTANT, SIMULATED_USER, ProducedInfo
from chatjudge.models import Model
from chatjudge.options import RunConfig
from chatjudge.produce.driver import OrderedWriter, drive, estimated, produced, summary_extras
from chatjudge.produce.replies import failure_cause, visible
from chatjudge.produce.tool_answers import ToolAnswering
from chatjudge.produce.tool_loop import ToolTurn, tool_turn
from chatjudge.produce.user import SCHEMA, SimulatedUser, UserReplyError, load_instructions
from chatjudge.rundir import Produced
from chatjudge.summarize.simulate_summary import SIMULATION_TOOLS, simulation_summary

FIELDS = (
    FieldSpec(
        name="chat_history",
        required=False,
        conversation=True,
        tool_calls=False,
        description="earlier conversation, seen by both sides",
    ),
    FieldSpec(name="question", description="the simulated user's goal"),
    FieldSpec(
        name="answer",
        required=False,
        description="ground truth, for interactivity-accuracy's judge only: never shown",
    ),
    FieldSpec(name="user_context", required=False, description="what the simulated user knows"),
)


@dataclass
class Simulation:
    source: Source
    validation: Validation
    assistant: Model
    user: Model
    config: RunConfig
    output: Produced
    made: ProducedInfo  # what this command records beside its rows
    tools: ToolAnswering | None = None  # --tools: the assistant's functions
    budget: Budget | None = None  # one shared with the steps of a larger command (`realism`)

    async def estimate(self) -> CostEstimate:
        """`--dry-run`: the calls these conversations would send and what they could cost,
        from 1 to `--max-turns` turns; nothing is sent and nothing is written. A conversation
        the store holds whole costs nothing; one it does not is counted from its start."""
        session = self._session(dry_run=True)
        return await estimated(session, self._converse, "simulate", self.validation.n_rows)

    async def run(self) -> dict[str, Any]:
        """Simulate every conversation, write them and their summary; returns the summary."""
        config = self.config
        session = self._session(dry_run=False)
        talked = await produced(session, self.output, self.made, self._converse)
        samples, total = config.run.samples, self.validation.n_rows * config.run.samples
        assistant, user = session.seats
        done = talked.writer.written
        summary = simulation_summary(
            talked.records,
            samples=samples,
            assistant=self.assistant.name,
            user=self.user.name,
            n_rows=self.validation.n_rows,
            max_turns=config.simulation.max_turns,
            usage={
                ASSISTANT: session.usage(assistant).as_dict(),
                SIMULATED_USER: session.usage(user).as_dict(),
            },
            cost=session.cost(done, total),
            options={
                k: str(v) if k in ("user_prompt", "prices") and v else v
                for k, v in config.options("simulate").items()
            },
            extras=summary_extras(self.source, self.validation, config.run.shard, talked.indexes),
            tools=talked.tools if self.tools is not None else None,
        )
        written = write_json(self.output.summary, summary, only_set=True)
        session.check_budget(talked.stopped, done, total, "conversation(s)", written)
        return written

    def _session(self, *, dry_run: bool) -> Session:
        """Two seats; one model in both roles has one caller (one concurrency cap). The dry
        run counts a conversation by its projection from 1 to `--max-turns` turns."""
        seats = [Seat("assistant", self.assistant), Seat("simulated_user", self.user)]
        total = self.validation.n_rows * self.config.run.samples
        return Session(seats, self.config, self.output.store, total=total,
                            label="simulating", dry_run=dry_run,
                            budget=self.budget)  # fmt: skip

    async def _converse(self, session: Session, out: IO[bytes]) -> _Talked:
        """Every conversation through `session`, written to `out` in input order: the
        command's one loop, dry or not."""
        config, sim = self.config, self.config.simulation
        seat_a, seat_u = session.seats
        assistant = Role(
            session.caller(seat_a), session.ledger(seat_a), config.generation.settings()
        )
        user = SimulatedUser(
            Role(session.caller(seat_u), session.ledger(seat_u), self._user_settings(), SCHEMA),
            load_instructions(sim.user_prompt),
        )
        samples = config.run.samples
        talked = _Talked(OrderedWriter(out))

        def project(item: Item) -> None:  # dry run: count a conversation from its start
            fields = item.fields
            history = as_messages(fields["chat_history"], label="Earlier conversation")
            goal, context = str(fields["question"]), fields.get("user_context")
            opening = user.messages(goal, context, history, [])
            session.project_conversation(
                seat_u,
                seat_a,
                user.role.prepare(opening)[1].messages,
                [*history, {"role": "user", "content": ""}],
                sim.max_turns,
                (sim.user_max_tokens, config.generation.max_tokens),
                steps,
            )

        steps = config.tools.max_tool_steps if self.tools is not None else 1
        talk = _Talk(assistant, user, sim.max_turns, samples, talked.records,
                     session.starts((1 + steps) * sim.max_turns),
                     project if session.dry_run else None, self._tools(steps),
                     talked.tools)  # fmt: skip

        def jobs() -> Iterator[tuple[int, tuple[Item, int]]]:
            for n, item in enumerate(self._items()):
                talked.indexes.append(item.index)
                yield from ((n * samples + k, (item, k)) for k in range(samples))

        talked.stopped = await drive(session, jobs(), talk.converse, talked.writer)
        return talked

    def _tools(self, steps: int) -> _AssistantTools | None:
        if self.tools is None or self.tools.functions is None:
            return None
        return _AssistantTools(self.tools, self.tools.definitions, steps)

    def _user_settings(self) -> GenerationSettings:
        sim = self.config.simulation
        return GenerationSettings(
            sim.user_temperature, sim.user_max_tokens, self.config.generation.seed
        )

    def _items(self) -> Iterator[Item]:
        """The rows to simulate (with `--shard`, this shard's, keeping their indexes)."""
        valid = self.validation
        items = iter_items(self.source, FIELDS, limit=self.config.run.limit,
                           skip=valid.skipped_rows, as_written=valid.read_as_written)  # fmt: skip
        return share(items, of(self.config.run.shard))


@dataclass
class _Talked:
    """What the conversations leave for the summary."""

    writer: OrderedWriter
    records: list[dict[str, Any]] = field(default_factory=list)  # per conversation
    indexes: list[int] = field(default_factory=list)  # each written row's index among all
    stopped: BudgetReached | None = None
    tools: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SIMULATION_TOOLS, 0))


@dataclass(frozen=True)
class _AssistantTools:
    """--tools: how the assistant's calls are answered, the definitions offered where a
    row has none, and the model calls a turn may take."""

    answering: ToolAnswering
    definitions: list[dict[str, Any]]
    max_steps: int


@dataclass
class _Talk:
    assistant: Role
    user: SimulatedUser
    max_turns: int
    samples: int
    records: list[dict[str, Any]]  # per conversation, what the summary needs
    starts: Starts | None = None  # with a budget: when a conversation may start
    project: Callable[[Item], None] | None = None  # dry run: a conversation not held whole
    tools: _AssistantTools | None = None  # --tools
    tool_totals: dict[str, int] = field(default_factory=dict)  # --tools: its turns' counts

    async def converse(self, job: tuple[Item, int]) -> tuple[dict[str, Any], bool]:
        """One conversation, turn by turn: its output row, and whether it failed. Short of
        budget, the turns of a conversation started earlier go first (its unit's `order`),
        and a new one starts only as the money left could finish those started (`Starts`),
        so that a budget finishes conversations rather than starting more. A dry run counts
        a conversation the store does not hold whole by its projection (the unit's)."""
        item, sample = job
        order = item.index * self.samples + sample
        project = None if self.project is None else partial(self.project, item)
        with within(Unit(order, sample, project)):
            if self.starts is None:
                return await self._converse(item)
            await self.starts.start(order)
            try:
                return await self._converse(item)
            finally:
                self.starts.end(order)

    async def _converse(self, item: Item) -> tuple[dict[str, Any], bool]:
        unit = current()
        order, sample = unit.order, unit.sample
        fields = item.fields
        goal, context = str(fields["question"]), fields.get("user_context")
        history = as_messages(fields["chat_history"], label="Earlier conversation")
        chat: list[Message] = []
        used = {"assistant": Usage(), "user": Usage()}
        turns, ended, error, plain = 0, None, None, 0
        try:
            while True:
                asks = self.user.messages(goal, context, history, chat)
                said = await self.user.turn(asks, replied=turns > 0, tokens=used["user"])
                self._step()
                plain += said.plain
                if said.ends:
                    if said.text:
                        chat.append({"role": "user", "content": said.text})
                    ended = "user"
                    break
                chat.append({"role": "user", "content": said.text})
                if self.tools is None:
                    reply = await self.assistant.call([*history, *chat])
                    self._step()
                    used["assistant"].add(reply)
                    chat.append({"role": "assistant", "content": visible(reply.text)})
                else:
                    turn = await self._tool_turn(item, [*history, *chat], used["assistant"])
                    chat.extend(turn.trajectory)
                    if turn.ended == "max_tool_steps":
                        turns += 1
                        ended = "max_tool_steps"
                        break
                turns += 1
                if turns >= self.max_turns:
                    ended = "max_turns"
                    break
        except ModelError as exc:
            if exc.fatal:
                raise
            error = failure_cause(exc)
        except UserReplyError as exc:
            error = ("no user message", str(exc))
        first = next((m["content"] for m in chat if m["role"] == "user"), "")
        restates = goal.strip().lower() in first.lower()
        self.records.append(
            {
                "order": order,
                "sample": sample,
                "ok": error is None,
                "cause": error[0] if error else None,
                "turns": turns,
                "assistant_tokens": used["assistant"].output_tokens,
                "ended": ended,
                "restates": restates,
                "plain": plain,
            }
        )
        row = {k: v for k, v in item.data.items() if k != "chat"}
        if self.samples > 1:
            row["id"] = f"{item.id}#{sample}"
            row["sample"] = sample
        row.update(
            chat=chat,
            turns=turns,
            ended=ended,
            status="failed" if error else "ok",
            error=error[1] if error else None,
            usage={  # by the roles the summary names: assistant, simulated_user
                ASSISTANT: used["assistant"].as_dict(cached=False),
                SIMULATED_USER: used["user"].as_dict(cached=False),
            },
            first_message_restates_question=restates,
        )
        return row, error is not None

    async def _tool_turn(self, item: Item, messages: list[Message], usage: Usage) -> ToolTurn:
        """The assistant's turn as a tool loop, its steps counted in `usage`; each step
        counts as a call of its conversation for the budget's `Starts`."""
        tools = self.tools
        assert tools is not None
        turn = await tool_turn(
            self.assistant,
            messages,
            tools=item.tools or tools.definitions,
            answers=tools.answering.answers(()),
            max_steps=tools.max_steps,
            usage=usage,
        )
        for _ in range(turn.steps):
            self._step()
        self.tool_totals["tool_steps"] += turn.steps
        self.tool_totals["tool_errors"] += turn.errors
        return turn

    def _step(self) -> None:
        """The conversation made a call: one fewer for the budget's `Starts` to claim."""
        if self.starts is not None:
            self.starts.step(current().order)
