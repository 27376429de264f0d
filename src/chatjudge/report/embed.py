"""How a run's items travel inside its page: compressed chunks, and an index left plain.

A page holding every item as one plain JSON block grows with every item's text written
out in full (bench/README.md, `report_size.py`). Here each item is the JSON of
`slim_item`, gathered into chunks of up to `CHUNK_ITEMS` items (or `CHUNK_BYTES`, so that
one huge item does not weigh on its neighbours), each chunk gzipped and then
base64-encoded, one chunk a line. A page opened from disk cannot fetch a neighbouring
file, so the chunks stay inside it; the page's script inflates a chunk with
`DecompressionStream` when a row or an item needs it.

What the table, its filters, its sort and the labelling sample read for every item (id,
input position, status, scores, consistency, agreement) is the index: plain JSON, one
column per field, read at once when the page opens.
"""

from __future__ import annotations

import base64
import zlib
from collections import deque
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

CHUNK_ITEMS = 100  # about the table's two pages; larger chunks compress little better
CHUNK_BYTES = 1 << 20  # a chunk is closed past this much JSON, whatever its count
LEVEL = 6  # zlib's level: bytes against CPU, measured in bench/README.md (`report_size.py`)
AHEAD = 4  # chunks compressed or waiting at most: what they hold in memory is bounded


class ChunkWriter:
    """Gathers items' JSON and writes each full chunk, gzipped and base64-encoded, to `out`
    as a line, in order; `starts` holds the position of each chunk's first item.

    zlib lets go of the GIL while it compresses, so chunks are compressed in a thread of
    their own, beside the run that hands the items over; at most `AHEAD` wait to be written.
    A page of one chunk (a small run) is compressed where it is finished: no thread.
    """

    def __init__(self, out: IO[bytes]) -> None:
        self._out = out
        self._lines: list[bytes] = []
        self._size = 0
        self._count = 0
        self.starts: list[int] = []
        self._pool: ThreadPoolExecutor | None = None  # started with the first chunk
        self._pending: deque[Future[bytes]] = deque()

    def add(self, line: bytes) -> None:
        """Add one item's JSON; the chunk is handed to the thread once it is full."""
        if not self._lines:
            self.starts.append(self._count)
        self._lines.append(line)
        self._size += len(line)
        self._count += 1
        if len(self._lines) >= CHUNK_ITEMS or self._size >= CHUNK_BYTES:
            self._hand_over()

    def finish(self) -> None:
        """Write every chunk, the last one too; then the thread ends."""
        if self._pool is None and self._lines:  # the only chunk
            self._out.write(_encoded(self._joined()))
            self._lines = []
        self._hand_over()
        while self._pending:
            self._out.write(self._pending.popleft().result())
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def _hand_over(self) -> None:
        if not self._lines:
            return
        data = self._joined()
        self._lines, self._size = [], 0
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor  # runs of more than one chunk

            self._pool = ThreadPoolExecutor(1, thread_name_prefix="chatjudge-report")
        self._pending.append(self._pool.submit(_encoded, data))
        pending = self._pending
        while pending and (len(pending) > AHEAD or pending[0].done()):
            self._out.write(pending.popleft().result())

    def _joined(self) -> bytes:
        return b"[" + b",".join(self._lines) + b"]"


def _encoded(data: bytes) -> bytes:
    """One chunk's line: gzip (its header, so that `DecompressionStream("gzip")` reads it),
    then base64."""
    gzip = zlib.compressobj(LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return base64.b64encode(gzip.compress(data) + gzip.flush()) + b"\n"


class ItemIndex:
    """The index's columns, one value per item in the order the chunks hold them."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.positions: list[int] = []
        self.ok: list[int] = []
        self.scores: dict[str, list[Any]] = {}
        self.consistent: list[bool | None] = []
        self.agreement: list[float | None] = []

    def add(self, item: dict[str, Any]) -> None:
        n = len(self.ids)
        self.ids.append(str(item.get("id")))
        self.positions.append(item.get("index", n))
        self.ok.append(1 if item.get("status") == "ok" else 0)
        scores = item.get("scores") or {}
        for name in scores:
            if name not in self.scores:  # a score first seen here: the items before lack it
                self.scores[name] = [None] * n
        for name, column in self.scores.items():
            column.append(scores.get(name))
        self.consistent.append(item.get("consistent"))
        self.agreement.append(item.get("agreement"))

    def columns(self, starts: list[int]) -> dict[str, Any]:
        """The index as the page reads it; a column that is null throughout is left out."""
        index: dict[str, Any] = {
            "id": self.ids,
            "index": self.positions,
            "ok": self.ok,
            "scores": self.scores,
            "chunks": starts,
        }
        for name, column in (("consistent", self.consistent), ("agreement", self.agreement)):
            if any(v is not None for v in column):
                index[name] = column
        return index
