"""`--shard I/N`: which rows one of N drivers takes.

A row belongs to shard I when the SHA-256 of its id's text, read as an integer, is I
modulo N: the share depends on the id alone, never on the row's position, the machine or
Python's per-process `hash`, so N drivers reading the same data take disjoint shares that
cover every row once. Plain data with the options, beneath every user: options check the
value, data loading keeps the shard's rows (`chatjudge.data.shard_rows`), merge joins the
shards.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

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
