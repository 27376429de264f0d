"""The page's items in chunks: their order, where each chunk starts, and a huge item alone."""

from __future__ import annotations

import base64
import gzip
import io
import json

from chatjudge.report.embed import CHUNK_BYTES, CHUNK_ITEMS, ChunkWriter, ItemIndex


def read_chunks(data: bytes) -> list[list[dict]]:
    return [json.loads(gzip.decompress(base64.b64decode(line))) for line in data.splitlines()]


def test_chunks_keep_the_order_and_a_huge_item_closes_its_chunk() -> None:
    out = io.BytesIO()
    writer = ChunkWriter(out)
    n = 10 * CHUNK_ITEMS + 7  # more chunks than are ever compressed at once
    huge = 3 * CHUNK_ITEMS + 5
    for i in range(n):
        text = "x" * (CHUNK_BYTES if i == huge else 10)
        writer.add(json.dumps({"id": i, "text": text}).encode())
    writer.finish()
    chunks = read_chunks(out.getvalue())
    assert [item["id"] for chunk in chunks for item in chunk] == list(range(n))
    assert writer.starts == [sum(len(c) for c in chunks[:k]) for k in range(len(chunks))]
    assert all(len(c) <= CHUNK_ITEMS for c in chunks)
    closed = next(c for c in chunks if c[-1]["id"] == huge)  # the chunk ends with it
    assert len(closed) == huge % CHUNK_ITEMS + 1


def test_the_index_holds_a_column_per_field_and_leaves_out_empty_ones() -> None:
    index = ItemIndex()
    index.add({"id": "a", "index": 1, "status": "ok", "scores": {"x": 2}, "consistent": None})
    index.add({"id": 7, "index": 0, "status": "failed", "scores": {"y": "TIE"}})
    columns = index.columns([0])
    assert columns == {
        "id": ["a", "7"],
        "index": [1, 0],
        "ok": [1, 0],
        "scores": {"x": [2, None], "y": [None, "TIE"]},
        "chunks": [0],
    }
