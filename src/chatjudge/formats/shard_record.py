"""The shard record a sharded `generate` or `simulate` keeps in its summary (`shard`)."""

from __future__ import annotations

from chatjudge.formats.shared import Record


class ShardRecord(Record):
    """`--shard I/N` of `generate` or `simulate`: which shard of which data, and where its rows
    stand among all rows, so that `chatjudge merge` puts the shards' rows back in input order."""

    shard: str  # I/N
    data: str  # the input's name
    indexes: list[int]  # each input row's position among all rows, in the order written
    data_sha256: str | None = None  # the data's fingerprint (see `RunInfo.data_sha256`)
