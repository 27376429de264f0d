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
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from chatjudge.calls import Caller, CallPolicy, Ledger, RunProgress, Usage
from chatjudge.calls.budget import Meter, Starts, budget_for, meter_for, reached_error
from chatjudge.calls.estimate import (
    CostEstimate,
    DryCaller,
    RoleEstimate,
    WouldSend,
    finish,
    role_estimate,
)
from chatjudge.calls.prices import command_cost, prices_of, role_cost
from chatjudge.conversation import as_messages
from chatjudge.data import Item, Source, Validation, iter_items
from chatjudge.data.shard import of, share
from chatjudge.errors import ModelError
from chatjudge.fields import FieldSpec
from chatjudge.formats.io import write_json
from chatjudge.formats.produced import ASSISTANT, SIMULATED_USER, ProducedInfo
from chatjudge.models import Model
from chatjudge.options import RunConfig
from chatjudge.produce.driver import OrderedWriter, drive, summary_extras
from chatjudge.produce.replies import failure_cause, visible
from chatjudge.produce.roles import Role
from chatjudge.produce.user import SCHEMA, SimulatedUser, UserReplyError, load_instructions
from chatjudge.rundir import Produced
from chatjudge.store import Store
from chatjudge.store.reader import StoreReader
from chatjudge.summarize.simulation import simulation_summary
from chatjudge.types import GenerationSettings, Message

FIELDS = (
    FieldSpec(
        name="chat_history",
        required=False,
        conversation=True,
        description="earlier conversation, seen by both sides",
    ),
    FieldSpec(name="question", description="the simulated user's goal"),
    FieldSpec(name="answer", description="ground truth, for the judge only: never shown"),
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

    async def estimate(self) -> CostEstimate:
        """`--dry-run`: the calls these conversations would send and what they could cost,
        from 1 to `--max-turns` turns; nothing is sent and nothing is written. A conversation
        the store holds whole costs nothing; one it does not is counted from its start."""
        config, sim = self.config, self.config.simulation
        prices = prices_of([self.assistant, self.user], config.pricing)
        reader = StoreReader(self.output.store)
        lookup = not config.run.no_cache
        policy = CallPolicy.of(config)
        try:
            assistant = Role(
                DryCaller(self.assistant, policy, 1),
                Ledger(reader, lookup=lookup),
                config.generation.settings(),
            )
            user = SimulatedUser(
                Role(DryCaller(self.user, policy, 1), Ledger(reader, lookup=lookup),
                     self._user_settings(), SCHEMA),
                load_instructions(sim.user_prompt),
            )  # fmt: skip
            accounts = [
                role_estimate(role, m, prices[m.name], reader.mean_output_tokens(m.name))
                for role, m in (("assistant", self.assistant), ("simulated_user", self.user))
            ]
            talk = _Talk(assistant, user, sim.max_turns, config.run.samples, [])
            for item in self._items():
                for k in range(config.run.samples):
                    try:
                        await talk.converse((item, k))
                    except WouldSend:
                        self._count_conversation(item, k, user, *accounts)
            accounts[0].answered_by_store = assistant.usage.cached_calls
            accounts[1].answered_by_store = user.role.usage.cached_calls
        finally:
            reader.close()
        return finish("simulate", self.validation.n_rows, accounts, prices)

    def _count_conversation(
        self,
        item: Item,
        sample: int,
        user: SimulatedUser,
        assistant_account: RoleEstimate,
        user_account: RoleEstimate,
    ) -> None:
        """One conversation's calls, from 1 turn (the user opens, the assistant answers,
        the user closes) to `--max-turns` turns with every message at its cap; the user's
        first call is counted exactly, later ones as it plus the transcript so far."""
        fields = item.fields
        history = as_messages(fields["chat_history"], label="Earlier conversation")
        opening = user.messages(str(fields["question"]), fields.get("user_context"), history, [])
        base_u = user_account.count(user.role.prepare(opening, sample)[1].messages)
        base_a = assistant_account.count([*history, {"role": "user", "content": ""}])
        turns, cap_a = self.config.simulation.max_turns, self.config.generation.max_tokens
        cap_u = self.config.simulation.user_max_tokens
        mean_u = user_account.mean_stored_output or 0.0
        mean_a = assistant_account.mean_stored_output or 0.0
        closes = turns > 1  # after one reply the user is asked again, and may close
        growth = turns * (turns - 1) // 2
        user_account.add(
            (1 + closes, turns),
            (
                base_u + closes * round(base_u + mean_u + mean_a),
                turns * base_u + (cap_u + cap_a) * growth,
            ),
            ((1 + closes) * cap_u, turns * cap_u),
        )
        assistant_account.add(
            (1, turns),
            (round(base_a + mean_u), turns * base_a + cap_u * (growth + turns) + cap_a * growth),
            (cap_a, turns * cap_a),
        )

    def _user_settings(self) -> GenerationSettings:
        sim = self.config.simulation
        return GenerationSettings(
            sim.user_temperature, sim.user_max_tokens, self.config.generation.seed
        )

    def _items(self) -> Iterator[Item]:
        """The rows to simulate (with `--shard`, this shard's, keeping their indexes)."""
        items = iter_items(
            self.source, FIELDS, limit=self.config.run.limit, skip=self.validation.skipped_rows
        )
        return share(items, of(self.config.run.shard))

    async def run(self) -> dict[str, Any]:
        """Simulate every conversation, write them and their summary; returns the summary."""
        config, sim = self.config, self.config.simulation
        prices = prices_of([self.assistant, self.user], config.pricing)  # once, before sending
        budget = budget_for(config.pricing.max_cost_usd, prices)

        def meter(model: Model) -> Meter | None:
            return meter_for(budget, model, prices[model.name])

        self.output.rows.parent.mkdir(parents=True, exist_ok=True)
        store = Store(self.output.store)
        write_json(self.output.record, self.made)  # before the first call, as run.json
        lookup = not config.run.no_cache
        concurrency = config.run.concurrency
        assistant = Role(
            Caller(self.assistant, CallPolicy.of(config), concurrency, meter(self.assistant)),
            Ledger(store, lookup=lookup),
            config.generation.settings(),
        )
        user_settings = self._user_settings()
        user_model = self.user
        if user_model is self.assistant:  # one model in both roles: one caller, one cap
            user_caller = assistant.caller
        else:
            user_caller = Caller(user_model, CallPolicy.of(config), concurrency, meter(user_model))
        user = SimulatedUser(
            Role(user_caller, Ledger(store, lookup=lookup), user_settings, SCHEMA),
            load_instructions(sim.user_prompt),
        )
        samples = config.run.samples
        records: list[dict[str, Any]] = []
        metered = budget is not None and (assistant.caller.meter or user_caller.meter)
        starts = Starts(budget, 2 * sim.max_turns) if budget and metered else None
        talk = _Talk(assistant, user, sim.max_turns, samples, records, starts)
        indexes: list[int] = []  # each written row's index among all rows (for a shard)

        def jobs() -> Iterator[tuple[int, tuple[Item, int]]]:
            for n, item in enumerate(self._items()):
                indexes.append(item.index)
                yield from ((n * samples + k, (item, k)) for k in range(samples))

        total = self.validation.n_rows * samples
        progress = RunProgress(total, enabled=config.progress, label="simulating")
        try:
            with self.output.rows.open("wb") as out, progress:
                writer = OrderedWriter(out)
                stopped = await drive(jobs(), talk.converse, writer, progress, concurrency)
        finally:
            store.close()
            await self.assistant.aclose()
            if self.user is not self.assistant:
                await self.user.aclose()
        optional = summary_extras(self.source, self.validation, config.run.shard, indexes)
        cost = command_cost(
            {
                "assistant": role_cost(
                    {self.assistant.name: prices[self.assistant.name]}, assistant.ledger.by_model
                ),
                "simulated_user": role_cost(
                    {self.user.name: prices[self.user.name]}, user.role.ledger.by_model
                ),
            },
            budget.record(writer.written, total) if budget else None,
        )
        summary = simulation_summary(
            records,
            samples=samples,
            assistant=self.assistant.name,
            user=self.user.name,
            n_rows=self.validation.n_rows,
            max_turns=sim.max_turns,
            usage={
                ASSISTANT: assistant.usage.as_dict(),
                SIMULATED_USER: user.role.usage.as_dict(),
            },
            cost=cost,
            options={
                k: str(v) if k in ("user_prompt", "prices") and v else v
                for k, v in config.options("simulate").items()
            },
            extras=optional,
        )
        written = write_json(self.output.summary, summary, only_set=True)
        if stopped is not None:
            raise reached_error(stopped, writer.written, total, "conversation(s)", written)
        return written


@dataclass
class _Talk:
    assistant: Role
    user: SimulatedUser
    max_turns: int
    samples: int
    records: list[dict[str, Any]]  # per conversation, what the summary needs
    starts: Starts | None = None  # with a budget: when a conversation may start

    async def converse(self, job: tuple[Item, int]) -> tuple[dict[str, Any], bool]:
        """One conversation, turn by turn: its output row, and whether it failed. Short of
        budget, the turns of a conversation started earlier go first (its `order`), and a
        new one starts only as the money left could finish those started (`Starts`), so
        that a budget finishes conversations rather than starting more."""
        item, sample = job
        order = item.index * self.samples + sample
        if self.starts is None:
            return await self._converse(item, sample, order)
        await self.starts.start(order)
        try:
            return await self._converse(item, sample, order)
        finally:
            self.starts.end(order)

    async def _converse(self, item: Item, sample: int, order: int) -> tuple[dict[str, Any], bool]:
        fields = item.fields
        goal, context = str(fields["question"]), fields.get("user_context")
        history = as_messages(fields["chat_history"], label="Earlier conversation")
        chat: list[Message] = []
        used = {"assistant": Usage(), "user": Usage()}
        turns, ended, error, plain = 0, None, None, 0
        try:
            while True:
                asks = self.user.messages(goal, context, history, chat)
                said = await self.user.turn(
                    asks, sample, replied=turns > 0, tokens=used["user"], order=order
                )
                self._step(order)
                plain += said.plain
                if said.ends:
                    if said.text:
                        chat.append({"role": "user", "content": said.text})
                    ended = "user"
                    break
                chat.append({"role": "user", "content": said.text})
                reply = await self.assistant.call([*history, *chat], sample, order=order)
                self._step(order)
                used["assistant"].add(reply)
                chat.append({"role": "assistant", "content": visible(reply.text)})
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


    def _step(self, order: int) -> None:
        if self.starts is not None:
            self.starts.step(order)
