"""The unit of work (`chatjudge.calls.unit`): what a call needs of the item, row or
conversation it is for travels with the task that does it, set once where the unit starts;
no command threads it through its own functions."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest

import chatjudge
from chatjudge.calls import Caller, CallPolicy, RetryConfig, Role
from chatjudge.calls.budget import Budget, Meter
from chatjudge.calls.ledger import Ledger
from chatjudge.calls.prices import Price
from chatjudge.calls.unit import Unit, current, done_within, within
from chatjudge.chat.types import GenerationSettings, ModelRequest
from chatjudge.models.function import FunctionModel
from chatjudge.store import Store

# The folders whose functions must not carry a unit's state by hand (issue 42, item 2).
UNIT_FREE = ("produce", "runner", "analysis")
CARRIED = {"order"}  # the unit's place in the budget's line: `Unit.order`, read by the budget


def parameters(path: Path) -> list[tuple[str, int, str]]:
    """Every (function, line, parameter) of a module, methods and nested functions too."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            a = node.args
            names = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
            name = getattr(node, "name", "<lambda>")
            found += [(name, node.lineno, p.arg) for p in names if p is not None]
    return found


@pytest.mark.parametrize("folder", UNIT_FREE)
def test_no_function_of_a_command_takes_order_as_a_parameter(folder: str) -> None:
    root = Path(chatjudge.__file__).parent / folder
    modules = sorted(root.rglob("*.py"))
    assert modules, f"{folder} holds no module"
    taking = [
        f"{path.relative_to(root.parent)}:{line} {name}({param})"
        for path in modules
        for name, line, param in parameters(path)
        if param in CARRIED
    ]
    assert taking == [], "the unit of work carries these (chatjudge.calls.unit)"


def test_the_check_sees_a_method_a_keyword_and_a_lambda(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "class A:\n    async def f(self, *, order=0): ...\n"
        "g = lambda order: order\ndef h(x):\n    def inner(order): ...\n"
    )
    assert [p for p in parameters(module) if p[2] == "order"] == [
        ("f", 2, "order"),
        ("<lambda>", 3, "order"),
        ("inner", 5, "order"),
    ]


async def test_each_task_sees_the_unit_it_does_and_outside_any_the_defaults() -> None:
    """Concurrent units do not see each other's; a task started inside one inherits it;
    leaving a unit restores the one before."""
    assert (current().order, current().sample) == (0, 0)
    seen: dict[str, tuple[int, int]] = {}

    async def work(name: str, unit: Unit) -> None:
        with within(unit):
            await asyncio.sleep(0)
            inner = asyncio.create_task(_where())
            seen[name] = await inner

    await asyncio.gather(work("a", Unit(3, 1)), work("b", Unit(7, 2)))
    assert seen == {"a": (3, 1), "b": (7, 2)}
    assert await done_within(Unit(9), _where()) == (9, 0)
    assert (current().order, current().sample) == (0, 0)


async def _where() -> tuple[int, int]:
    await asyncio.sleep(0)
    return current().order, current().sample


def test_a_projection_counts_once() -> None:
    counted: list[int] = []
    unit = Unit(1, 0, lambda: counted.append(1))
    assert unit.project() and not unit.project() and counted == [1]
    assert not Unit().project()


def request(text: str) -> ModelRequest:
    return ModelRequest([{"role": "user", "content": text}], GenerationSettings(max_tokens=100))


async def test_the_budget_serves_waiting_attempts_by_their_units_order() -> None:
    """Room for one attempt at a time: attempts of units 5 and 1 wait while one is in
    flight; the unit started earlier (order 1) goes first, though it asked second."""
    meter = Meter(Budget(1.0), Price(1.0, 2.0, "test"))
    worst = meter.worst(request("x"))
    meter.budget.limit_usd = 1.5 * worst
    first = await meter.admit(request("x"))
    admitted: list[int] = []

    async def attempt(order: int) -> None:
        with within(Unit(order)):
            meter.settle(await meter.admit(request("x")), None, billed=False)
            admitted.append(order)

    late = asyncio.create_task(attempt(5))
    await asyncio.sleep(0)
    early = asyncio.create_task(attempt(1))
    await asyncio.sleep(0)
    assert admitted == []
    meter.settle(first, None, billed=False)
    await asyncio.gather(late, early)
    assert admitted == [1, 5]


async def test_a_roles_call_is_its_units_sample(tmp_path: Path) -> None:
    """Sample k of a unit is asked with seed + k and stored under its own key: the same
    messages in another sample are another call; in the same sample, the store answers."""
    asked: list[int | None] = []

    async def model(messages, settings=None):  # noqa: ANN001, ANN202
        asked.append(len(asked))
        return f"reply {len(asked)}"

    caller = Caller(FunctionModel(model, call_with="messages"), CallPolicy(RetryConfig()), 4)
    store = Store(tmp_path / "calls.sqlite")
    try:
        role = Role(caller, Ledger(store, lookup=True), GenerationSettings(0.5, 32, 10))
        messages = [{"role": "user", "content": "hi"}]
        with within(Unit(0, 2)):
            _, sent = role.prepare(messages)
            two = await role.call(messages)
            again = await role.call(messages)
        assert sent.settings.seed == 12 and two.text == again.text == "reply 1"
        other = await done_within(Unit(4, 3), role.call(messages))
        assert other.text == "reply 2" and len(asked) == 2
    finally:
        store.close()
