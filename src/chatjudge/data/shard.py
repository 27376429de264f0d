"""`--shard I/N`: which rows one of N drivers takes.

A row belongs to shard I when the SHA-256 of its id's text, read as an integer, is I
modulo N: the share depends on the id alone, never on the row's position, the machine or
Python's per-process `hash`, so N drivers reading the same data take disjoint shares that
cover every row once, and `chatjudge merge` can join what they wrote (when they read the
same data: `fingerprint` tells).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from chatjudge.data.items import Item, id_of
from chatjudge.data.sources import Source

_FORM = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclass(frozen=True, slots=True)
class Shard:
    index: int  # I, from 0 to count - 1
    count: int  # N

    @classmethod
    def parse(cls, text: str) -> Shard:
        """`I/N` with 0 <= I < N; anything else is a ValueError saying what is expected."""
        found = _FORM.fullmatch(text)
        if found is None or not 0 <= int(found[1]) < int(found[2]):
            raise ValueError("a shard is I/N, from 0/N to (N-1)/N (e.g. 0/4 ... 3/4)")
        return cls(int(found[1]), int(found[2]))

    def holds(self, item_id: str) -> bool:
        """Whether the row whose id is `item_id` is this shard's."""
        digest = hashlib.sha256(item_id.encode("utf-8")).digest()
        return int.from_bytes(digest, "big") % self.count == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def of(text: str | None) -> Shard | None:
    """The shard an option value names (None: every row)."""
    return None if text is None else Shard.parse(text)


def share(items: Iterable[Item], shard: Shard | None) -> Iterator[Item]:
    """The items of `shard`, keeping their indexes among all rows (so that merged shards
    come back in the unsharded order)."""
    if shard is None:
        yield from items
        return
    yield from (item for item in items if shard.holds(item.id))


def fingerprint(source: Source) -> str:
    """The SHA-256 that tells whether two commands read the same data: of the file's bytes
    for a file (an edited file differs), else (a list of dicts, a DataFrame) of the rows'
    ids in order and their count."""
    digest = hashlib.sha256()
    path = source.file()
    if path is not None:
        with path.open("rb") as file:
            while chunk := file.read(1 << 20):
                digest.update(chunk)
        return digest.hexdigest()
    count = 0
    for row in source:
        count += 1
        digest.update(json.dumps(id_of(row.data or {}, row.number)).encode() + b"\n")
    digest.update(f"{count} rows".encode())
    return digest.hexdigest()
