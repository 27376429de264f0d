"""`chatjudge generate`: a model under test answers every row's prompt, as Vertex AI's
evaluation runs the candidate and the baseline model before judging them.

The model sees `history` as chat messages (a plain-text history as one system message
holding it) and `prompt` as the last user message (or messages), and its reply fills
`response` or `baseline_model_response`: the output is a dataset that
`chatjudge run -p pairwise-chat-quality` reads unchanged. A row whose call failed is
written with `status: "failed"` and its `error`, without the field, so that judging
refuses it instead of judging a reply that does not exist.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from chatjudge.calls import Caller, CallPolicy, Ledger, RunProgress, Usage
from chatjudge.calls.budget import budget_for, meter_for, reached_error
from chatjudge.calls.estimate import CostEstimate, DryCaller, WouldSend, finish, role_estimate
from chatjudge.calls.prices import command_cost, prices_of, role_cost
from chatjudge.conversation import as_messages
from chatjudge.data import Item, Source, Validation, iter_items
from chatjudge.data.shard import of, share
from chatjudge.errors import ModelError, UsageError
from chatjudge.fields import FieldSpec
from chatjudge.formats.io import write_json
from chatjudge.formats.produced import ProducedInfo
from chatjudge.models import Model
from chatjudge.options import RunConfig
from chatjudge.produce.driver import OrderedWriter, drive, summary_extras
from chatjudge.produce.replies import failure_cause, visible
from chatjudge.produce.roles import Role
from chatjudge.rundir import Produced
from chatjudge.store import Store
from chatjudge.store.reader import StoreReader
from chatjudge.summarize.generation import generation_summary
from chatjudge.types import Message

FIELDS = (
    FieldSpec(name="history", required=False, conversation=True, description="conversation so far"),
    FieldSpec(name="prompt", conversation=True, description="the user's next message"),
)
TARGETS = ("response", "baseline_model_response")


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

    async def estimate(self) -> CostEstimate:
        """`--dry-run`: the calls this generation would send (after what the store holds)
        and what they could cost; nothing is sent and nothing is written."""
        config = self.config
        name = self.model.name
        prices = prices_of([self.model], config.pricing)
        reader = StoreReader(self.output.store)
        try:
            role = Role(
                DryCaller(self.model, CallPolicy.of(config), config.run.concurrency),
                Ledger(reader, lookup=not config.run.no_cache),
                config.generation.settings(),
            )
            account = role_estimate(
                "model_under_test", self.model, prices[name], reader.mean_output_tokens(name)
            )
            for item in self._items():
                try:
                    await role.call(request_messages(item), 0)
                except WouldSend as would:
                    tokens = account.count(would.request.messages)
                    cap = would.request.settings.max_tokens
                    account.add((1, 1), (tokens, tokens), (cap, cap))
            account.answered_by_store = role.usage.cached_calls
        finally:
            reader.close()
        return finish("generate", self.validation.n_rows, [account], prices)

    def _items(self) -> Iterator[Item]:
        """The rows to answer (with `--shard`, this shard's, keeping their indexes)."""
        items = iter_items(
            self.source, FIELDS, limit=self.config.run.limit, skip=self.validation.skipped_rows
        )
        return share(items, of(self.config.run.shard))

    async def run(self) -> dict[str, Any]:
        """Answer every row and write the output and its summary; returns the summary."""
        config = self.config
        prices = prices_of([self.model], config.pricing)  # once, before anything is sent
        budget = budget_for(config.pricing.max_cost_usd, prices)
        self.output.rows.parent.mkdir(parents=True, exist_ok=True)
        store = Store(self.output.store)
        write_json(self.output.record, self.made)  # before the first call, as run.json
        meter = meter_for(budget, self.model, prices[self.model.name])
        role = Role(
            Caller(self.model, CallPolicy.of(config), config.run.concurrency, meter),
            Ledger(store, lookup=not config.run.no_cache),
            config.generation.settings(),
        )
        tokens: dict[int, float] = {}  # by row index
        failures: dict[str, int] = {}

        async def answer(item: Item) -> tuple[dict[str, Any], bool]:
            row = {k: v for k, v in item.data.items() if k != self.field}
            usage = dict(row["usage"]) if isinstance(row.get("usage"), dict) else {}
            try:
                reply = await role.call(request_messages(item), 0, order=item.index)
            except ModelError as exc:
                if exc.fatal:
                    raise
                kind, cause = failure_cause(exc)
                failures[kind] = failures.get(kind, 0) + 1
                row.update(status="failed", error=cause)
                return row, True
            used = Usage()
            used.add(reply)
            usage[self.field] = used.as_dict(cached=False)
            tokens[item.index] = float(reply.output_tokens or 0)
            text = visible(reply.text)  # what the model says, not the reasoning before it
            row.update({self.field: text, "status": "ok", "error": None, "usage": usage})
            return row, False

        indexes: list[int] = []  # each written row's index among all rows (for a shard)

        def jobs() -> Iterator[tuple[int, Item]]:
            for n, item in enumerate(self._items()):
                indexes.append(item.index)
                yield n, item

        progress = RunProgress(self.validation.n_rows, enabled=config.progress, label="generating")
        try:
            with self.output.rows.open("wb") as out, progress:
                writer = OrderedWriter(out)
                stopped = await drive(
                    jobs(),
                    answer,
                    writer,
                    progress,
                    config.run.concurrency,
                )
        finally:
            store.close()
            await self.model.aclose()
        n_failed = sum(failures.values())
        optional = summary_extras(self.source, self.validation, config.run.shard, indexes)
        n_done = writer.written
        cost = command_cost(
            {"model_under_test": role_cost(prices, role.ledger.by_model)},
            budget.record(n_done, self.validation.n_rows) if budget else None,
        )
        summary = generation_summary(
            tokens,
            model=self.model.name,
            field=self.field,
            n_rows=self.validation.n_rows,
            n_ok=n_done - n_failed,
            failures=failures,
            usage=role.usage.as_dict(),
            cost=cost,
            options=config.options("generate"),
            extras=optional,
        )
        written = write_json(self.output.summary, summary, only_set=True)
        if stopped is not None:
            raise reached_error(stopped, n_done, self.validation.n_rows, "row(s)", written)
        return written
