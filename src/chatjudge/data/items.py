"""Items: validated rows with their prompt text rendered, ready for a judge."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from chatjudge.chat.fields import FieldSpec, column_of
from chatjudge.chat.render import DEFAULT_VIEW, JudgeView, judge_texts
from chatjudge.data.sources import RawRow, Source
from chatjudge.data.tool_rows import read_row_tools, trajectory_texts
from chatjudge.data.validate import RowCheck, check_row, has_slot
from chatjudge.errors import DataValidationError, Problem, UsageError
from chatjudge.options.shard import Shard

MAX_PROBLEMS_SHOWN = 200


@dataclass(slots=True)
class Item:
    """One row to judge: `fields` as given, a conversation in OpenAI's chat format with
    tools (`chatjudge.chat.row_messages.read_conversation`), `text` as the prompt shows them, and
    `tools` the definitions its conversations may call: its `tools` column normalised, or,
    where it has none, derived from its calls."""

    index: int  # 0-based position among judged rows
    row: int  # 1-based row number in the input
    id: str
    fields: dict[str, Any]
    text: dict[str, str]
    data: dict[str, Any]  # the whole row, every column (renamed by the column map)
    tools: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class Validation:
    """What validation found: the rows to judge and, with `skip_invalid`, those left out."""

    n_rows: int  # valid rows, the ones that will be judged (with a shard: its share)
    skipped_rows: frozenset[int] = frozenset()  # 1-based numbers of invalid rows left out
    problems: list[Problem] = field(default_factory=list)  # the first MAX_PROBLEMS_SHOWN
    n_problems: int = 0
    derived_tool_definitions: int = 0  # rows to judge whose tools were derived from calls
    unparsed_tool_arguments: int = 0  # their tool calls whose arguments are not JSON
    tool_rows: int = 0  # rows to judge with tool definitions, given or derived
    # Every row's message lists read as they are written (OpenAI's format): the items take
    # them as they are instead of reading them again (`iter_items`).
    read_as_written: bool = False

    def skipped(self) -> list[dict[str, Any]]:
        """The problems as plain records (for summary.json and the report)."""
        return [{"row": p.row, "field": p.field, "message": p.message} for p in self.problems]


def validate(
    source: Source,
    fields: Sequence[FieldSpec],
    *,
    limit: int | None = None,
    skip_invalid: bool = False,
    shard: Shard | None = None,
    checked_tools: tuple[str, ...] | None = None,
) -> Validation:
    """Check every row (up to `limit`) before anything is sent; `checked_tools`: the run's
    (`--checked-tools`), to which a row without its own expects calls.

    Raises DataValidationError listing each problem by row and field, unless `skip_invalid`:
    then invalid rows are left out and listed, and only a dataset with no valid row fails.
    With a `shard`, every row is still checked (each of N drivers refuses the same bad
    data), and `n_rows` counts the shard's share of the valid rows.
    """
    problems: list[Problem] = []
    total = 0
    seen: dict[str, int] = {}
    count = 0
    invalid: set[int] = set()
    outside = 0  # valid rows of other shards
    derived = unparsed = with_tools = 0
    reshaped = False
    slot = has_slot(fields)
    for raw in _limited(source, limit):
        count += 1
        check = (
            RowCheck([Problem(raw.number, "(row)", raw.error)])
            if raw.data is None
            else check_row(raw.number, raw.data, fields, checked_tools, slot=slot)
        )
        found = check.problems
        reshaped = reshaped or check.reshaped
        if raw.data is not None and raw.data.get("id") is not None:
            key = str(raw.data["id"])
            if key in seen:
                found.append(
                    Problem(raw.number, "id", f"duplicate id {key!r} (first at row {seen[key]})")
                )
            else:
                seen[key] = raw.number
        total += len(found)
        if found:
            invalid.add(raw.number)
        elif shard is not None and not shard.holds(id_of(raw.data, raw.number)):
            outside += 1
        else:
            derived += check.derived_tools
            unparsed += check.unparsed_arguments
            with_tools += check.has_tools
        if len(problems) < MAX_PROBLEMS_SHOWN:
            problems.extend(found[: MAX_PROBLEMS_SHOWN - len(problems)])
    if count == 0:
        raise DataValidationError([Problem(0, "(data)", "the dataset has no rows")])
    for column in source.unmapped():
        columns = ", ".join(sorted(source.columns)) or "none"
        raise UsageError(
            f"--map {column}={source.column_map[column]}: the data has no column {column!r} "
            f"(its columns: {columns})"
        )
    if total and (not skip_invalid or len(invalid) == count):
        raise DataValidationError(problems, total)
    return Validation(
        count - len(invalid) - outside,
        frozenset(invalid),
        problems,
        total,
        derived,
        unparsed,
        with_tools,
        not reshaped,
    )


def iter_items(
    source: Source,
    fields: Sequence[FieldSpec],
    *,
    limit: int | None = None,
    view: JudgeView = DEFAULT_VIEW,
    skip: frozenset[int] = frozenset(),
    as_written: bool = False,
    read_tools: bool = True,
) -> Iterator[Item]:
    """Yield items of an already validated source, rendering their fields once as `view`
    shows them to a judge; `skip`: the row numbers validation left out; `as_written`:
    validation found that every row's message lists read as they are written
    (`Validation.read_as_written`), so they are not read again. `read_tools=False` leaves
    each row as written, without tools (a deterministic scorer reads what it needs)."""
    names = [f.name for f in fields]
    slot = has_slot(fields)
    conversations = [f.name for f in fields if f.conversation]
    rows = _limited(source.validated(), limit)
    if skip:
        rows = (raw for raw in rows if raw.number not in skip)
    for index, raw in enumerate(rows):
        data = raw.data
        assert data is not None, "iter_items needs a validated source"
        defined: list[dict[str, Any]] = []
        if read_tools:
            texts = trajectory_texts(data, slot)
            if texts is not None:  # JSON text, judged as the list it holds (checked valid)
                data = {**data, **texts.read}
            columns = (column_of(n, data) for n in conversations)
            tools = read_row_tools(data, columns, as_written=as_written)
            if tools.columns:  # read into another shape: the caller's row is left as it was
                data = {**data, **tools.columns}
            defined = tools.tools
        values = {n: data.get(column_of(n, data)) for n in names}
        text = judge_texts(fields, data, view, defined)
        yield Item(index, raw.number, id_of(data, raw.number), values, text, data, defined)


def id_of(data: dict[str, Any], number: int) -> str:
    """A row's id: its `id` column as text, else its row number."""
    item_id = data.get("id")
    return str(item_id) if item_id is not None else str(number)


def _limited(rows: Iterable[RawRow], limit: int | None) -> Iterator[Any]:
    if limit is None:  # no generator of its own: a layer less for every row to pass
        return iter(rows)
    return _first(rows, limit)


def _first(rows: Iterable[RawRow], limit: int) -> Iterator[Any]:
    for i, raw in enumerate(rows):
        if i >= limit:
            return
        yield raw
