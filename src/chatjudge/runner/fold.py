"""Folding, the last part of the engine: finished items into records and the summary.

An item is finished when all its calls are: its verdict is reduced from them by its
protocol's kind (`chatjudge.protocols.kinds`; a judge-free item's is its scores), its
record is appended to `results.jsonl` (the format is
`chatjudge.formats.results.ResultRecord`, built here as the plain dict it writes, not
validated: readers validate) and handed to the report, and the summary and the progress
bar count it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

from chatjudge import jsoncodec
from chatjudge.calls import RunProgress
from chatjudge.data import Item
from chatjudge.formats.results import result_row
from chatjudge.protocols.kinds import kind_of
from chatjudge.protocols.spec import Protocol
from chatjudge.runner.aggregate import CallOutcome
from chatjudge.runner.plan import ItemState
from chatjudge.summarize.run_summary import SummaryBuilder, count
from chatjudge.verdicts import Verdict

if TYPE_CHECKING:  # a deterministic protocol's scores: its module only with such a run
    from chatjudge.trajectories import Scored

# Sees each results record as it is written, and its line of `results.jsonl` (JSON bytes
# without the newline), which the report can spool as it is (`ReportBuilder.add`).
OnItem = Callable[[dict[str, Any], bytes], None]


class Folder:
    def __init__(
        self,
        protocol: Protocol,
        judges: list[str],
        summary: SummaryBuilder,
        progress: RunProgress,
        out: IO[bytes],
        on_item: OnItem | None,
    ) -> None:
        self.protocol = protocol
        self.kind = kind_of(protocol)
        self.judges = judges
        self.summary = summary
        self.progress = progress
        self.out = out
        self.on_item = on_item
        self.finished = 0

    def finish(self, state: ItemState) -> None:
        scored = state.scored
        if scored is None:
            self.write(self.record(state))
        else:  # a judge-free protocol's item: its one judge is the scorer
            self.write(scored_record(state.item, self.judges[0], scored))

    def write(self, record: dict[str, Any]) -> None:
        """Write, hand over and count one item's record."""
        # Buffered: the store is the durable record, results.jsonl is rebuilt by a re-run.
        line = jsoncodec.dumps(record)
        self.out.write(line)  # not `line + b"\n"`: a copy of every record
        self.out.write(b"\n")
        if self.on_item is not None:
            self.on_item(record, line)
        ok = count(self.summary, record)
        usage = record["usage"]
        self.progress.advance(failed=not ok, tokens=usage["input_tokens"] + usage["output_tokens"])
        self.finished += 1

    def record(self, state: ItemState) -> dict[str, Any]:
        """The item's results record, as `results.jsonl` holds it."""
        item, calls = state.item, state.calls
        failed = [c for c in calls if not c.ok]
        verdict: dict[str, Any]
        if failed:
            verdict = dict(
                status="failed", scores={}, error=failed[0].error, consistent=None, agreement=None
            )
        else:
            reduced = self.kind.reduce(self.protocol, calls)
            verdict = dict(
                status="ok",
                scores=reduced.scores,
                error=None,
                consistent=reduced.consistent,
                agreement=reduced.agreement,
            )
            if len(self.judges) > 1:
                reduce = self.kind.reduce
                verdict["judge_scores"] = {
                    name: reduce(self.protocol, [c for c in calls if c.judge == name]).scores
                    for name in self.judges
                }
        first_ok = next((c for c in calls if c.ok), None)
        return result_row(
            id=item.id,
            index=item.index,
            verdict=verdict,
            rationale=first_ok.verdict.rationale if first_ok and first_ok.verdict else {},
            raw=calls[0].raw,
            usage={
                "input_tokens": sum(c.input_tokens or 0 for c in calls),
                "output_tokens": sum(c.output_tokens or 0 for c in calls),
            },
            calls=[c.to_dict() for c in calls],
            # Every input column (protocol fields first, absent optional ones as null), so
            # that `gate --by/--cluster` can name any column of the data.
            fields={**item.fields, **item.data},
            simulation=simulation_of(item.data),
        )


def simulation_of(row: dict[str, Any]) -> dict[str, Any] | None:
    """What `chatjudge simulate` recorded of a conversation (its turns, how it ended, the
    assistant's tokens), carried into the judged record when the row has it."""
    if "turns" not in row or "ended" not in row:
        return None
    usage = row.get("usage")
    assistant = usage.get("assistant") if isinstance(usage, dict) else None
    tokens = assistant.get("output_tokens") if isinstance(assistant, dict) else None
    return {"turns": row["turns"], "ended": row["ended"], "assistant_tokens": tokens}


def scored_record(item: Item, judge: str, scored: Scored) -> dict[str, Any]:
    """The results record of an item a deterministic scorer scored (`judge`: its name): one
    call with the scores, written as a judge's call is, so that analyses read it as they read
    a judge's (its rationale is the item's, written once)."""
    call = CallOutcome(judge, sample=0, flipped=False, verdict=Verdict(scored.scores))
    verdict = dict(status="ok", scores=scored.scores, error=None, consistent=None, agreement=None)
    return result_row(
        id=item.id,
        index=item.index,
        verdict=verdict,
        rationale=scored.rationale,
        raw=None,
        usage={"input_tokens": 0, "output_tokens": 0},
        calls=[call.to_dict()],
        fields={**item.fields, **item.data},
        simulation=simulation_of(item.data),
        tool_calls=scored.comparison,
    )
