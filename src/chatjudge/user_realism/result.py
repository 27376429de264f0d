"""`realism.json`: the statistics of the goals the command measured (`compare`), with what
the command itself knows filled in (goals read, `--samples`, the share cut by the turn cap,
the failures by step)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chatjudge.formats.io import write_json
from chatjudge.user_realism.command import REALISM, Outcome

if TYPE_CHECKING:
    from chatjudge.formats.realism import Realism


def statistics(outcome: Outcome, options: dict[str, Any], *, seed: int = 0) -> Realism:
    """The one call into the statistics (`chatjudge.user_realism.statistics`)."""
    from chatjudge.user_realism.statistics import compare

    measured = compare(outcome.samples, seed=seed, metric_ranges=outcome.metric_ranges)
    failed = Counter(f["step"] for f in outcome.failed)
    return measured.model_copy(
        update={
            "goals": len(outcome.reals),
            "samples": options.get("samples", 1),
            "cut_share": outcome.cut_share,
            "failed": dict(failed),
            "options": options,
        }
    )


def write_realism(out: Path, result: Realism) -> dict[str, Any]:
    return write_json(out / REALISM, result)
