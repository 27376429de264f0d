"""The command session (`chatjudge.calls.session`): one budget across runs, the store and
every model closed exactly once however a command ends, a dry session that sends and
writes nothing, and commands that reach the call path only through it."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import sqlite3
from pathlib import Path

import pytest

import chatjudge
from chatjudge.api import build_engine
from chatjudge.calls.run_sync import run_sync
from chatjudge.calls.session import Budget, NotSent, Seat, Session
from chatjudge.chat.types import GenerationSettings, ModelRequest
from chatjudge.errors import BudgetReachedError, ChatJudgeError
from chatjudge.models import Model, get_model
from chatjudge.options import ClientOptions, RunConfig
from chatjudge.produce import build_generation
from tests.runner.conftest import pointwise_rows, write_jsonl
from tests.support.stub_openai import StubServer

COMMANDS = ("runner/engine.py", "produce/generation.py", "produce/simulation.py")
BELOW = (
    "chatjudge.calls.budget",
    "chatjudge.calls.prices",
    "chatjudge.calls.ledger",
    "chatjudge.calls.pool",
    "chatjudge.calls.estimate",
    "chatjudge.store",
)
REEXPORTED = {"Ledger", "Pool"}  # what `chatjudge.calls` re-exports from those modules
PRICED = {"price_in": 100.0, "price_out": 200.0, "max_tokens": 64}


def imported(path: Path) -> set[str]:
    """Every module a file imports, at its top or inside a function, and each name taken
    from a package (`from chatjudge.calls import Ledger` -> `chatjudge.calls.Ledger`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("command", COMMANDS)
def test_a_command_reaches_the_call_path_only_through_its_session(command: str) -> None:
    names = imported(Path(chatjudge.__file__).parent / command)
    assert "chatjudge.calls.session" in names
    below = {n for n in names if any(n == m or n.startswith(m + ".") for m in BELOW)}
    assert below == set(), f"{command} imports {sorted(below)}: go through the session"
    assert {n for n in names if n in {f"chatjudge.calls.{r}" for r in REEXPORTED}} == set()


def test_the_check_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from chatjudge.store.reader import StoreReader\n")
    assert "chatjudge.store.reader" in imported(source)


def engine_config(stub: StubServer) -> RunConfig:
    return RunConfig.from_options({"base_url": stub.base_url, **PRICED}, progress=False)


def test_one_budget_lasts_across_two_runs(
    stub: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs on one budget: the second spends only what the first left, stops at it
    (where a budget of its own would have let it finish), and its summary counts both."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    rows = pointwise_rows(8)
    first, second = (
        write_jsonl(tmp_path / "a.jsonl", rows[:4]),
        write_jsonl(tmp_path / "b.jsonl", rows[4:]),
    )
    config = engine_config(stub)

    def engine(data: Path, out: str):  # noqa: ANN202
        return build_engine(data, "interactivity-accuracy", "openai/stub", tmp_path / out,
                            column_map=None, config=config)  # fmt: skip

    alone = run_sync(engine(first, "alone").run()).summary["cost"]["total_usd"]
    assert alone > 0
    # A call's worst case (its input bound in bytes) is about what 4 calls cost here: the
    # first run finishes within 1.75 times its cost, the second could not within 2.75.
    limit = 2.25 * alone
    shared = Budget(limit)
    stub.stats.reset()
    done = run_sync(engine(first, "a").run(budget=shared)).summary["cost"]
    assert done["budget"]["spent_usd"] == pytest.approx(alone)
    assert shared.spent_usd == pytest.approx(alone)
    with pytest.raises(BudgetReachedError) as cut:
        run_sync(engine(second, "b").run(budget=shared))
    record = cut.value.summary["cost"]["budget"]
    assert record["reached"] is True and record["max_usd"] == limit
    assert record["spent_usd"] == pytest.approx(shared.spent_usd) and shared.spent_usd <= limit
    assert record["done"] < 4 and stub.stats.requests < 8  # 4 more would have fit alone
    assert cut.value.summary["cost"]["total_usd"] == pytest.approx(shared.spent_usd - alone)


class Closes:
    """Counts a model's `aclose` calls (and still closes it)."""

    def __init__(self, model: Model, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        close = model.aclose

        async def counted() -> None:
            self.count += 1
            await close()

        monkeypatch.setattr(model, "aclose", counted)


def stub_model(stub: StubServer, name: str) -> Model:
    client = ClientOptions(base_url=stub.base_url)
    return get_model(f"openai/{name}", client, call_with="messages", check_key=False)


def request() -> ModelRequest:
    return ModelRequest([{"role": "user", "content": "hi"}], GenerationSettings(0.0, 16, None))


def test_the_store_and_every_model_close_once_when_a_command_fails(
    stub: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model in two roles and another: each closed once, the store closed with the reply
    sent before the fault kept in it; closing again does nothing."""
    both, other = stub_model(stub, "both"), stub_model(stub, "other")
    closes = [Closes(both, monkeypatch), Closes(other, monkeypatch)]
    seats = [Seat("assistant", both), Seat("simulated_user", both), Seat("judge", other)]
    config = RunConfig.from_options({}, progress=False)
    store = tmp_path / "calls.sqlite"
    session = Session(seats, config, store, total=1)

    async def fail() -> None:
        async with session:
            assert session.caller(seats[0]) is session.caller(seats[1])  # one cap for both
            reply, latency = await session.caller(seats[0]).send(request())
            session.ledger(seats[0]).commit("k", both.name, reply, latency, 16)
            raise RuntimeError("a fault in the command")

    with pytest.raises(RuntimeError, match="a fault"):
        asyncio.run(fail())
    assert [c.count for c in closes] == [1, 1] and stub.stats.requests == 1
    with pytest.raises(sqlite3.ProgrammingError):  # closed
        session.ledger(seats[0]).store.get("k")
    with contextlib.closing(sqlite3.connect(store)) as db:
        assert db.execute("SELECT count(*) FROM calls").fetchone() == (1,)
    asyncio.run(session.close())
    assert [c.count for c in closes] == [1, 1]


def test_a_store_that_cannot_be_opened_still_closes_the_models(
    stub: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = stub_model(stub, "m")
    closes = Closes(model, monkeypatch)
    (tmp_path / "calls.sqlite").mkdir()  # a directory where the store should be
    session = Session([Seat("judge", model)], RunConfig.from_options({}, progress=False),
                           tmp_path / "calls.sqlite", total=1)  # fmt: skip

    async def enter() -> None:
        async with session:
            pytest.fail("the session opened")

    with pytest.raises(ChatJudgeError):
        asyncio.run(enter())
    assert closes.count == 1


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_dry_session_sends_nothing_and_writes_nothing(stub: StubServer, tmp_path: Path) -> None:
    """Directly: the dry caller counts the call and raises `NotSent`, with no store made.
    Through `generate`: after a run of 3 rows of 7, the dry run counts the 4 left and 3
    answered by the store, sends nothing and leaves every file as it was."""
    model = stub_model(stub, "m")
    seat = Seat("model_under_test", model)
    config = RunConfig.from_options(PRICED, command="generate", progress=False)
    session = Session([seat], config, tmp_path / "none" / "calls.sqlite", total=1,
                           dry_run=True)  # fmt: skip

    async def dry() -> None:
        async with session:
            with pytest.raises(NotSent):
                await session.caller(seat).send(request())

    asyncio.run(dry())
    (account,) = session.estimate("generate", 1).roles
    assert account.calls == (1, 1) and account.output_cap_tokens == (16, 16)
    assert stub.stats.requests == 0 and not (tmp_path / "none").exists()

    prompts = write_jsonl(tmp_path / "p.jsonl", [
        {"id": f"p{i}", "prompt": f"Question {i}: say hi"} for i in range(7)
    ])  # fmt: skip
    out = tmp_path / "gen" / "g.jsonl"

    def generation(dry_run: bool = False, **more: object):  # noqa: ANN202
        options = {"base_url": stub.base_url, **PRICED, **more}
        config = RunConfig.from_options(options, command="generate", progress=False)
        return build_generation(prompts, "openai/stub", "response", out, column_map=None,
                                config=config, dry_run=dry_run)  # fmt: skip

    run_sync(generation(limit=3).run())
    sent, before = stub.stats.requests, tree(tmp_path / "gen")
    assert sent == 3
    estimate = run_sync(generation(dry_run=True).estimate())
    (account,) = estimate.roles
    assert account.calls == (4, 4) and account.answered_by_store == 3
    assert stub.stats.requests == sent and tree(tmp_path / "gen") == before
