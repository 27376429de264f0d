"""The unit of work a model call is made for: an item judged, a row (and sample) answered,
a conversation simulated. What the call path needs to know of it travels with the task
that does it (a context variable, as inspect_ai keeps its per-sample state), set once
where the unit starts, never passed by hand through the layers between:
- `order`: its place when the budget is short (`budget.Meter.admit`): the calls of a unit
  started earlier go first;
- `sample`: which try of its task it is, for the seeds and store keys of its calls
  (`role.Role`);
- the dry run's accounting (`--dry-run`, `estimate.DryCaller`): `steps_left`, the model
  calls its turn may still make after the current one (a tool loop's steps), and
  `projection`, what counts for the whole unit once it reaches a call the store does not
  hold (a conversation, counted from its start).
Outside any unit (a single call, a test) the defaults hold: order 0, sample 0.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")


class Unit:
    __slots__ = ("order", "projection", "sample", "steps_left")

    def __init__(
        self, order: int = 0, sample: int = 0, projection: Callable[[], None] | None = None
    ) -> None:
        self.order = order
        self.sample = sample
        self.projection = projection
        self.steps_left = 0

    def project(self) -> bool:
        """Dry run: count the unit by its projection, once; False where it has none (its
        calls are counted one by one)."""
        projection = self.projection
        if projection is None:
            return False
        self.projection = None
        projection()
        return True


_NONE = Unit()
_current: ContextVar[Unit] = ContextVar("chatjudge_unit", default=_NONE)


def current() -> Unit:
    """The unit of work the running task does."""
    return _current.get()


@contextmanager
def within(unit: Unit) -> Iterator[Unit]:
    """The code in the block does `unit` (and the tasks it starts, which copy the context)."""
    token = _current.set(unit)
    try:
        yield unit
    finally:
        _current.reset(token)


async def done_within(unit: Unit, work: Awaitable[T]) -> T:
    """`work` awaited as `unit`'s: `within` for one awaitable."""
    token = _current.set(unit)
    try:
        return await work
    finally:
        _current.reset(token)
