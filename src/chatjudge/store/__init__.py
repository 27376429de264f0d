"""The resumable store of judge calls."""

from chatjudge.store.migrations import SCHEMA_VERSION
from chatjudge.store.sqlite import Store, StoredReply

__all__ = ["SCHEMA_VERSION", "Store", "StoredReply"]
