"""What merging run directories and produced files shares: the checks that the inputs are
the shards of one configuration, the joined store, the summed usage and cost, and the
shards' lines put back in input order."""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from chatjudge.calls.prices import command_cost
from chatjudge.data.shard import Shard
from chatjudge.errors import UsageError
from chatjudge.options import option_fields
from chatjudge.rundir import BudgetRecord, Cost, RoleCostRecord
from chatjudge.store import Store
from chatjudge.store.migrations import SCHEMA_VERSION

ONLY_SHARD = frozenset({"shard"})  # the one option in which shards of one run differ
_CALLS = "key, model, raw, input_tokens, output_tokens, latency, created"


def refuse(what: str, problems: Sequence[str]) -> UsageError:
    """The error that stops a merge: what is wrong, then every problem on its own line."""
    return UsageError(f"cannot merge: {what}:\n  " + "\n  ".join(problems))


def check_cover(shards: Sequence[tuple[str, str | None]]) -> int:
    """Check that `shards` ((where, `I/N`) pairs) are N shards of one split, each once, and
    return N; a missing, repeated or foreign shard is a usage error naming them all."""
    unsharded = [where for where, text in shards if text is None]
    if unsharded:
        raise refuse("not written with --shard", unsharded)
    parsed = [(where, Shard.parse(text)) for where, text in shards if text is not None]
    counts = sorted({shard.count for _, shard in parsed})
    if len(counts) > 1:
        raise refuse(
            f"shards of different N ({', '.join(map(str, counts))})",
            [f"{where}: shard {shard}" for where, shard in parsed],
        )
    n = counts[0]
    by_index: dict[int, list[str]] = defaultdict(list)
    for where, shard in parsed:
        by_index[shard.index].append(where)
    problems = [
        f"shard {index}/{n} is given {len(wheres)} times: {', '.join(wheres)}"
        for index, wheres in sorted(by_index.items())
        if len(wheres) > 1
    ]
    missing = [f"{index}/{n}" for index in range(n) if index not in by_index]
    if missing:
        problems.append(f"missing shard(s) {', '.join(missing)}: each of the {n} is needed once")
    if problems:
        raise refuse(f"the shards do not cover 0..{n - 1} once each", problems)
    return n


def option_differences(a: Mapping[str, Any], b: Mapping[str, Any], command: str) -> list[str]:
    """The result-changing options of `command` whose values differ, but the shard."""
    found = []
    for name, info in option_fields(command):
        extra = info.json_schema_extra
        if name in ONLY_SHARD or not isinstance(extra, dict) or not extra.get("fingerprint"):
            continue
        x, y = _plain(a.get(name)), _plain(b.get(name))
        if x != y:
            found.append(f"option {name}: {x!r} vs {y!r}")
    return found


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def check_new(out: Path, files: Iterable[Path], inputs: Iterable[Path]) -> None:
    """The merge writes a new output: never over an input, nor over an earlier output."""
    if out.resolve() in {Path(p).resolve() for p in inputs}:
        raise UsageError(f"--out {out} is one of the shards: write the merge elsewhere")
    there = [str(f) for f in files if f.exists()]
    if there:
        raise UsageError(
            f"--out {out} already holds {', '.join(there)}: choose a new --out, or remove them"
        )


def merge_stores(stores: Sequence[Path], target: Path) -> None:
    """Write every call of the shards' stores into a new store at `target` (the current
    schema, as a run makes it), so that the merged output resumes as an unsharded one
    would: the same command sends nothing. The shards' stores are only read."""
    Store(target).close()  # created, migrated and checked as a run does it
    db = sqlite3.connect(f"file:{quote(str(target.resolve()))}", uri=True, isolation_level=None)
    try:
        for path in stores:
            _absorb(db, path)
    finally:
        db.close()


def _absorb(db: sqlite3.Connection, path: Path) -> None:
    if not path.is_file():
        raise UsageError(f"{path} is missing: merge needs every shard's store")
    # Read-only; as immutable when closed cleanly, so no -wal and -shm files appear beside it.
    wal = path.with_name(path.name + "-wal").exists()
    uri = f"file:{quote(str(path.resolve()))}?{'mode=ro' if wal else 'immutable=1'}"
    try:
        db.execute("ATTACH DATABASE ? AS shard", (uri,))
    except sqlite3.Error as exc:
        raise UsageError(f"{path} cannot be read ({exc})") from exc
    try:
        (version,) = db.execute("PRAGMA shard.user_version").fetchone()
        if version != SCHEMA_VERSION:
            raise UsageError(
                f"{path} has store schema {version}, this chatjudge writes {SCHEMA_VERSION}: "
                "re-run that shard's command with this chatjudge first (it migrates the store)"
            )
        db.execute("BEGIN")
        db.execute(f"INSERT OR IGNORE INTO main.calls ({_CALLS}) SELECT {_CALLS} FROM shard.calls")
        db.execute(
            "INSERT OR IGNORE INTO main.meta (name, value) SELECT name, value FROM shard.meta"
        )
        db.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"{path} is not a readable chatjudge store ({exc})") from exc
    finally:
        if db.in_transaction:
            db.execute("ROLLBACK")
        db.execute("DETACH DATABASE shard")


def sum_usage(usages: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """Token and call counts, key by key."""
    total: dict[str, int] = {}
    for usage in usages:
        for key, value in usage.items():
            total[key] = total.get(key, 0) + value
    return total


def sum_costs(costs: Iterable[Cost | None]) -> Cost | None:
    """The shards' costs summed by role (unknown where any shard's is); each shard's budget
    (`--max-cost-usd`) adds up too: limits, spending and progress."""
    present = [c for c in costs if c is not None]
    if not present:
        return None
    roles: dict[str, RoleCostRecord] = {}
    for name in dict.fromkeys(n for c in present for n in c.roles):
        parts = [c.roles[name] for c in present if name in c.roles]
        usd = (
            None if any(p.usd is None for p in parts) else round(sum(p.usd or 0 for p in parts), 6)
        )
        sources = sorted({s for p in parts for s in p.source.split(", ") if s})
        roles[name] = RoleCostRecord(usd=usd, priced=usd is not None, source=", ".join(sources))
    budgets = [c.budget for c in present if c.budget is not None]
    budget = None
    if budgets:
        budget = BudgetRecord(
            max_usd=round(sum(b.max_usd for b in budgets), 6),
            spent_usd=round(sum(b.spent_usd for b in budgets), 6),
            reached=any(b.reached for b in budgets),
            done=sum(b.done for b in budgets),
            total=sum(b.total for b in budgets),
        )
    return command_cost(roles, budget)


def in_order(files: Sequence[Path], position: Callable[[int, int, bytes], int]) -> Iterator[bytes]:
    """The lines of `files` in the order of their positions among all rows; `position(file
    number, line number, line)` says where a line stands. Only offsets are kept in memory."""
    where: list[tuple[int, int, int]] = []  # (position, file number, offset)
    for number, path in enumerate(files):
        offset = 0
        with path.open("rb") as lines:
            for line_number, line in enumerate(lines):
                if line.strip():
                    where.append((position(number, line_number, line), number, offset))
                offset += len(line)
    where.sort()
    repeated = [str(p) for (p, _, _), (q, _, _) in zip(where, where[1:], strict=False) if p == q]
    if repeated:
        raise refuse(
            "two shards hold the same row (were they split from the same data?)",
            [f"row position(s) {', '.join(repeated[:10])}"],
        )
    handles = [path.open("rb") for path in files]
    try:
        for _, number, offset in where:
            handle = handles[number]
            handle.seek(offset)
            line = handle.readline()
            yield line if line.endswith(b"\n") else line + b"\n"
    finally:
        for handle in handles:
            handle.close()
