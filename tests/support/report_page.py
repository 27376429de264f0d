"""What a run's `report.html` embeds, read back as its script reads it: the items, gzipped
and base64-encoded one chunk a line, and their plain index (`chatjudge.report.embed`)."""

from __future__ import annotations

import base64
import gzip
import json
import re
from typing import Any


def script_block(html: str, block_id: str) -> str:
    """The text of the page's `<script id=block_id>` element."""
    block = re.search(rf'<script type="[^"]+" id="{block_id}">(.*?)</script>', html, re.S)
    assert block is not None, block_id
    return block.group(1)


def embedded_items(html: str) -> list[dict[str, Any]]:
    """The items a page embeds, read as its script reads them: gunzip each base64 chunk."""
    chunks = script_block(html, "items-data").split()
    return [it for c in chunks for it in json.loads(gzip.decompress(base64.b64decode(c)))]


def embedded_index(html: str) -> dict[str, Any]:
    """The page's plain index of its items (ids, statuses, scores, ...)."""
    return json.loads(script_block(html, "items-index"))
