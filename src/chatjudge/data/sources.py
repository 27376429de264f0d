"""Row sources: JSONL, CSV, Parquet files, lists of dicts and pandas DataFrames.

A source can be iterated more than once (validation reads everything before the
first judge call, judging reads it again), and file sources stream, so memory
stays flat however large the file is.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chatjudge import jsoncodec
from chatjudge.errors import UsageError


@dataclass(slots=True)
class RawRow:
    """One input record: `number` is 1-based (the line number for JSONL)."""

    number: int
    data: dict[str, Any] | None
    error: str | None = None


class Source:
    """A re-iterable sequence of raw rows with columns renamed by `column_map`."""

    def __init__(
        self, data: Any, column_map: Mapping[str, str] | None = None, *, exact_ints: bool = False
    ) -> None:
        """`exact_ints`: an integer beyond 64 bits in a file keeps every digit, for rows
        whose values are compared (`tool-trajectory`'s arguments: `jsoncodec.loads`)."""
        self.column_map = dict(column_map or {})
        self._data = data
        self._exact = exact_ints
        self.name = _describe(data)
        self.columns: set[str] = set()  # columns seen so far (kept only with a column map)

    def __iter__(self) -> Iterator[RawRow]:
        return self._renamed(_rows(self._data, exact=self._exact))

    def validated(self) -> Iterator[RawRow]:
        """The rows again once validation has read them: a JSONL line is not measured
        for depth again (a row nested too deep is invalid: it is left out or stops the
        run), which costs a third of decoding it."""
        return self._renamed(_rows(self._data, checked=True, exact=self._exact))

    def _renamed(self, rows: Iterator[RawRow]) -> Iterator[RawRow]:
        if not self.column_map:
            return rows
        return (self._rename(r) for r in rows)

    def _rename(self, row: RawRow) -> RawRow:
        if row.data is not None:
            self.columns.update(row.data)
            row.data = {self.column_map.get(k, k): v for k, v in row.data.items()}
        return row

    def unmapped(self) -> list[str]:
        """Columns of the column map that no row read so far has: a `--map` typo."""
        return [c for c in self.column_map if c not in self.columns]

    def file(self) -> Path | None:
        """The file the rows come from; None for rows given from Python."""
        return Path(self._data) if isinstance(self._data, str | Path) else None


def _describe(data: Any) -> str:
    if isinstance(data, str | Path):
        path = Path(data)
        if not path.is_file():
            raise UsageError(f"data file not found: {path}")
        if _kind(path) is None:
            raise UsageError(f"{path}: unknown data format; use .jsonl, .csv or .parquet")
        return path.stem
    if isinstance(data, list):
        return "list"
    if type(data).__name__ == "DataFrame":
        return "dataframe"
    raise UsageError(
        f"unsupported data of type {type(data).__name__}: "
        "pass a .jsonl/.csv/.parquet path, a list of dicts or a pandas DataFrame"
    )


def _kind(path: Path) -> str | None:
    suffix = path.suffix.lower()
    return {
        ".jsonl": "jsonl",
        ".ndjson": "jsonl",
        ".json": "jsonl",
        ".csv": "csv",
        ".parquet": "parquet",
        ".pq": "parquet",
    }.get(suffix)


def _rows(data: Any, *, checked: bool = False, exact: bool = False) -> Iterator[RawRow]:
    """The rows of `data`, from the reader of its kind itself (not through a generator of
    this function's: every row of a large file would pass one more)."""
    if isinstance(data, list):
        return _list_rows(data)
    if not isinstance(data, str | Path):
        return _dataframe_rows(data, exact)
    path = Path(data)
    kind = _kind(path)
    if kind == "jsonl":
        return _jsonl_rows(path, None if checked else jsoncodec.INPUT_DEPTH, exact)
    if kind == "csv":
        return _csv_rows(path, exact)
    return _parquet_rows(path, exact)


def _list_rows(data: list[Any]) -> Iterator[RawRow]:
    for i, rec in enumerate(data, 1):
        yield RawRow(i, rec) if isinstance(rec, dict) else RawRow(i, None, _not_object(rec))


def _not_object(value: Any) -> str:
    return f"expected an object with named fields, got {type(value).__name__}"


def _jsonl_rows(path: Path, max_depth: int | None, exact: bool) -> Iterator[RawRow]:
    with path.open("rb") as fh:
        for number, line in enumerate(fh, 1):
            if not line or line.isspace():  # not `strip()`: it copies every line
                continue
            try:
                rec = jsoncodec.loads(
                    line, parse_constant=_missing, max_depth=max_depth, exact_ints=exact
                )
            except ValueError as exc:  # bad bytes are told apart only here, off the hot path
                yield RawRow(number, None, _not_utf8(line) or f"unparseable JSON line: {exc}")
                continue
            yield (
                RawRow(number, rec)
                if isinstance(rec, dict)
                else RawRow(number, None, _not_object(rec))
            )


def _missing(_: str) -> None:
    """NaN and Infinity (which pandas writes into JSONL) are missing values, as in Parquet:
    a goal of "nan" must never reach a model."""
    return None


def _not_utf8(line: bytes) -> str | None:
    """Where a line stops being UTF-8, for an error that points at the bytes; None if it is."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = line[exc.start : exc.start + 1].hex()
        return f"not valid UTF-8: byte 0x{byte} at column {exc.start + 1} (save the file as UTF-8)"
    return None


def _csv_rows(path: Path, exact: bool) -> Iterator[RawRow]:
    with path.open("rb") as binary:  # find bad bytes first: a CSV row may span several lines
        bad = [(n, why) for n, line in enumerate(binary, 1) if (why := _not_utf8(line))]
    if bad:
        for number, why in bad:
            yield RawRow(number, None, f"line {number} of the file is {why}")
        return
    with path.open("r", encoding="utf-8-sig", newline="") as fh:  # -sig: a BOM is no data
        for number, rec in enumerate(csv.DictReader(fh), 1):
            if None in rec:
                yield RawRow(number, None, "more cells than header columns")
                continue
            yield RawRow(number, {k: _decode_cell(v, exact) for k, v in rec.items()})


def _decode_cell(value: str | None, exact: bool) -> Any:
    """A CSV cell holding a JSON message list is decoded; anything else stays text."""
    if value is None or value == "":
        return None
    if value.lstrip().startswith("["):
        try:
            decoded = jsoncodec.loads(value, max_depth=jsoncodec.INPUT_DEPTH, exact_ints=exact)
        except ValueError:
            return value
        if isinstance(decoded, list):
            return decoded
    return value


def _parquet_rows(path: Path, exact: bool) -> Iterator[RawRow]:
    import pyarrow.parquet as pq

    number = 0
    for batch in pq.ParquetFile(path).iter_batches(batch_size=1024):
        for rec in batch.to_pylist():
            number += 1
            yield RawRow(number, {k: _decode_value(v, exact) for k, v in rec.items()})


def _dataframe_rows(frame: Any, exact: bool) -> Iterator[RawRow]:
    columns = [str(c) for c in frame.columns]
    for number, values in enumerate(frame.itertuples(index=False, name=None), 1):
        row = {c: _decode_value(v, exact) for c, v in zip(columns, values, strict=True)}
        yield RawRow(number, row)


def _decode_value(value: Any, exact: bool) -> Any:
    """Normalise what pandas/pyarrow hand back: NaN is missing, arrays are lists."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if hasattr(value, "tolist") and not isinstance(value, str):
        value = value.tolist()
    if isinstance(value, str) and value.lstrip().startswith("["):
        return _decode_cell(value, exact)
    return value
