"""Input data: sources, validation and items."""

from chatjudge.data.items import Item, Validation, iter_items, validate
from chatjudge.data.sources import RawRow, Source

__all__ = ["Item", "RawRow", "Source", "Validation", "iter_items", "validate"]
