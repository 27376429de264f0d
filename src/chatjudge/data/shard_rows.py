"""A shard's rows (`--shard I/N`, the rule in `chatjudge.options.shard`): the items one of N
drivers takes, and the data's fingerprint, by which `chatjudge merge` joins only shards
of the same data.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator

from chatjudge.data.items import Item, id_of
from chatjudge.data.sources import Source
from chatjudge.options.shard import Shard


def of(text: str | None) -> Shard | None:
    """The shard an option value names (None: every row)."""
    return None if text is None else Shard.parse(text)


def share(items: Iterable[Item], shard: Shard | None) -> Iterator[Item]:
    """The items of `shard`, keeping their indexes among all rows (so that merged shards
    come back in the unsharded order)."""
    if shard is None:  # no generator of its own: a layer less for every item to pass
        return iter(items)
    return (item for item in items if shard.holds(item.id))


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
