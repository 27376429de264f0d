"""What every format shares: the record base (readers allow fields they do not know:
additions within a format), a file's version and its upgrades, and the metric shape."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

Upgrade = Callable[[dict[str, Any]], dict[str, Any]]


class Record(BaseModel):
    # Built when first used, not on import: a run uses a few of these models, and builds
    # none of the others (issue 29, item 8).
    model_config = ConfigDict(extra="allow", defer_build=True)


class Versioned(Record):
    """A file's model. `format` defaults to the version this chatjudge writes; `UPGRADES[v]`
    turns a file of version v into one of version v + 1 (the chain runs from the oldest
    version still read up to the current one). `UNVERSIONED` is the version of a file
    written without a `format` (None: such a file is refused); `WHAT` names the file in
    messages."""

    WHAT: ClassVar[str]
    UPGRADES: ClassVar[dict[int, Upgrade]] = {}
    UNVERSIONED: ClassVar[int | None] = None

    format: int

    def model_post_init(self, context: Any, /) -> None:
        # The version counts as given, always: a file written with only the fields its
        # writer gave (`exclude_unset`) still says which version it is.
        self.__pydantic_fields_set__.add("format")

    @classmethod
    def version(cls) -> int:
        """The version of the file this chatjudge writes (asked once per line read: kept)."""
        found = _VERSIONS.get(cls)
        if found is None:
            found = cls.model_fields["format"].default
            assert isinstance(found, int), cls
            _VERSIONS[cls] = found
        return found


_VERSIONS: dict[type[Versioned], int] = {}


class Metric(Record):
    value: float | None
    ci95: list[float] | None
    n: int
    # Why `ci95` is null where items count: too few, or too alike, for an interval valid at
    # this size of a metric with no known range (written only then; readers print it).
    too_few: str | None = None
