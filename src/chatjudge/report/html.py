"""Writing a run's self-contained HTML page (the comparison page is `compare_page`'s).

The page is one file: styles, script and SVG charts are inlined and the items are
embedded compressed, in chunks the inline script inflates when a row or an item needs
them, beside a plain index of what the table filters and sorts on (`chatjudge.report.embed`),
so it opens from disk with no network and stays usable with 100,000 items. Items are
streamed from `results.jsonl` into the file.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import IO, Any

from markupsafe import Markup

from chatjudge import jsoncodec
from chatjudge.formats.shared import Metric
from chatjudge.formats.summary import Summary
from chatjudge.outputs import check_written
from chatjudge.protocols import BUILTIN, ScoreSpec, get_protocol
from chatjudge.protocols.kinds import kind_named, kind_of
from chatjudge.report.embed import ChunkWriter, ItemIndex
from chatjudge.report.format import (
    format_ci,
    format_count,
    format_value,
    is_pass_k,
    is_share,
    metric_label,
)
from chatjudge.report.load import ResultStats, slim_item, whole_item
from chatjudge.report.page import render_page
from chatjudge.report.provenance import check_line, fingerprint, served_lines
from chatjudge.report.sections import build_sections
from chatjudge.report.terminal import cost_rows
from chatjudge.rundir import REPORT, RunDir

MAX_FILTER_VALUES = 20  # a score with more distinct values gets no value filter
_BUFFER = 1 << 20  # the spool's write buffer: a large run's chunks in fewer writes
HINTS = {
    "interactivity": "mean score, 1 (low) to 3 (high)",
    "itr": "interactivity rate: mean of (score − 2.5) × 2, × 100",
    "accuracy": "share of answers judged correct",
    "candidate_win_rate": "share of items the candidate wins",
    "baseline_win_rate": "share of items the baseline wins",
    "tie_rate": "share of items judged a tie",
    "position_consistency": "same verdict with the responses swapped",
    "length_controlled_preference": "corrected: the candidate's preference (ties half) "
    "at equal response length, from a logistic model; not the judge's raw rate",
    "style_controlled_preference": "corrected: the preference at equal length and markdown "
    "(headers, lists, bold); not the judge's raw rate",
    "turns": "assistant replies per conversation",
    "assistant_tokens": "tokens the assistant wrote per conversation",
    "ended_by_user": "the simulated user was satisfied and ended it",
    "ended_by_max_turns": "cut at the turn cap",
}


def json_for_script(value: Any) -> Markup:
    """JSON that is safe inside a `<script>` element: `</script>` in the data cannot end it.

    `<`, `>` and `&` only occur inside JSON strings, where their `\\u` escapes mean the same.
    NaN becomes null, which the page's `JSON.parse` can read.
    """
    return Markup(_script_json(value))


def _script_json(value: Any) -> str:
    return _script_bytes(value).decode()


def _script_bytes(value: Any) -> bytes:
    """`_script_json`'s UTF-8: `<`, `>` and `&` are never a byte of a longer character."""
    return _escaped(jsoncodec.dumps(value))


def _escaped(text: bytes) -> bytes:
    # most items hold none of the three: looking is cheaper than copying the text thrice
    if b"<" in text:
        text = text.replace(b"<", b"\\u003c")
    if b">" in text:
        text = text.replace(b">", b"\\u003e")
    if b"&" in text:
        text = text.replace(b"&", b"\\u0026")
    return text


class ReportBuilder:
    """Builds a run's page while the run goes on: each finished item is counted and
    spooled at once, so when the run ends only the summary is left to render.

    `write_report` feeds it from `results.jsonl`; `chatjudge run` feeds it each record
    as the engine writes it, which takes the pass over the results off the end of a run.
    """

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.stats = ResultStats()
        self.index = ItemIndex()
        # Closed by finish() or close(): the spool outlives this constructor on purpose.
        spool = tempfile.TemporaryFile(dir=self.run_dir, buffering=_BUFFER)  # noqa: SIM115
        self._spool: IO[bytes] = spool
        self._chunks = ChunkWriter(spool)

    def add(self, item: dict[str, Any], line: bytes | None = None) -> None:
        """Count, index and spool one results record; `line`: its JSON as `results.jsonl`
        holds it, spooled as it is where the page needs all of it (`whole_item`: no raw
        reply, as a deterministic scorer's records), instead of being written again."""
        self.stats.add(item)
        self.index.add(item)
        if line is None or not whole_item(item):
            line = jsoncodec.dumps(slim_item(item))
        self._chunks.add(line)

    def finish(self, summary: Summary, calibrated: dict[str, Any] | None = None) -> Path:
        """Write `run_dir/report.html` with `summary` and every item added; return its path.
        `calibrated`: see `write_report`."""
        try:
            self._chunks.finish()
            self._spool.seek(0)
            # Base64 lines, ASCII: read back 64 KB at a time, so that a large run's page
            # never holds its items in memory whole.
            chunks = (Markup(c.decode()) for c in iter(partial(self._spool.read, 1 << 16), b""))
            index = json_for_script(self.index.columns(self._chunks.starts))
            page = self.run_dir / REPORT
            return _write_page(summary, calibrated, self.stats, index, chunks, page)
        finally:
            self.close()

    def close(self) -> None:
        self._chunks.close()
        self._spool.close()


def write_report(run_dir: Path, *, calibrated: dict[str, Any] | None = None) -> Path:
    """Write `run_dir/report.html` from `summary.json` and `results.jsonl`; return its path.

    `calibrated` (`calibrated` of `chatjudge.analysis.calibration.calibrate_run`) adds the
    human-calibrated estimates of `chatjudge report --human`."""
    run_dir = Path(run_dir)
    page = run_dir / REPORT
    check_written(page, [page], [], run_files=True)  # a link: refused before the results
    run = RunDir(run_dir)
    summary = run.summary
    builder = ReportBuilder(run_dir)
    try:
        for item in run.results():
            builder.add(item.model_dump(exclude_unset=True))  # as the engine hands it over
    except BaseException:
        builder.close()
        raise
    return builder.finish(summary, calibrated)


def _write_page(
    summary: Summary,
    calibrated: dict[str, Any] | None,
    stats: ResultStats,
    index: Markup,
    items: Iterator[Markup],
    path: Path,
) -> Path:
    numeric = stats.numeric_scores()
    kind = kind_named(summary.kind, scorer_of(summary))
    config = {
        "kind": summary.kind,
        "judgeFree": not kind.judged,
        "numericScores": numeric,
        "choiceScores": stats.choice_scores(),
        "scoreValues": {
            n: sorted(stats.scores[n]) for n in numeric if len(stats.scores[n]) <= MAX_FILTER_VALUES
        },
        "hasConsistency": bool(stats.consistent),
        "hasAgreement": stats.has_agreement,
        "nItems": stats.n_items,
        "label": {
            # Progress in the browser is kept per run: this names the run.
            "run": "|".join((summary.protocol, summary.judge, summary.created)),
            "protocol": summary.protocol,
            # a preference is labelled by picking a side, on no scale
            "scales": [] if kind.prefers else label_scales(summary.protocol, stats),
        },
    }
    context = {
        "summary": summary,
        "kind": kind,
        "metrics": _metric_cards(summary.metrics),
        "simulation": _metric_cards(summary.simulation or {}),
        "counts": _counts(summary, "Judged" if kind.judged else "Scored"),
        "evaluator": fingerprint(summary),
        "served": served_lines(summary),
        "judge_check": check_line(summary),
        "usage": _usage(summary) if kind.judged else [],  # a judge-free run sends nothing
        "sections": build_sections(
            summary, stats, path.parent, calibrated=calibrated, judged=kind.judged
        ),
        "config": json_for_script(config),
        "index": index,
        "items": items,
    }
    return render_page("report.html.j2", context, path)


def scorer_of(summary: Summary) -> str | None:
    """The scorer of a judge-free protocol's run (`tool-trajectory`), which the page shows
    without a judge; a summary of an older chatjudge names none, so a built-in protocol is
    asked."""
    scorer = summary.scorer
    if scorer is None and summary.protocol in BUILTIN:
        scorer = kind_of(get_protocol(summary.protocol)).scorer
    return scorer or None


def label_scales(protocol: str, stats: ResultStats) -> list[dict[str, Any]]:
    """The scales a person answers on in the page's labelling mode, one per numeric score.

    A built-in protocol gives each score's range; a custom protocol is not at hand when
    a run is reported, so its range is the one the judge's scores span. `values` lists
    the answers as buttons (integer scales of up to 11 values), else a number is typed.
    """
    specs: dict[str, ScoreSpec] = {}
    if protocol in BUILTIN:
        specs = {s.name: s for s in get_protocol(protocol).scores}
    scales = []
    for name in stats.numeric_scores():
        spec = specs.get(name)
        if spec is not None:
            lo, hi, integer, source = spec.min, spec.max, spec.integer, "protocol"
        else:
            seen = [float(v) for v in stats.scores[name]]
            lo, hi, source = min(seen), max(seen), "observed"
            integer = all(v.is_integer() for v in seen)
        values = list(range(int(lo), int(hi) + 1)) if integer and hi - lo <= 10 else None
        scales.append(
            {
                "name": name,
                "min": int(lo) if integer else lo,
                "max": int(hi) if integer else hi,
                "integer": integer,
                "values": values,
                "source": source,
            }
        )
    return scales


def _metric_cards(metrics: Mapping[str, Metric]) -> list[dict[str, Any]]:
    cards = []
    for name, m in metrics.items():
        if is_pass_k(name):
            continue  # pass^k and pass@k: a chart of their own, a curve per metric, no cards
        value, ci = m.value, m.ci95
        band = None
        if is_share(name) and value is not None:  # a 0-100% track with the interval drawn on it
            lo, hi = ci if ci else (value, value)
            band = {"lo": lo * 100, "width": (hi - lo) * 100, "value": value * 100}
        cards.append(
            {
                "name": name,
                "label": metric_label(name),
                "hint": HINTS.get(name, ""),
                "value": value,
                "ci95": ci,
                "n": m.n,
                "text": format_value(name, value),
                "ci_text": format_ci(name, ci, value),
                "band": band,
            }
        )
    return cards


def _counts(summary: Summary, done: str) -> list[dict[str, Any]]:
    return [
        {"key": key, "label": label, "value": value, "text": format_count(value)}
        for key, label, value in (
            ("n_items", "Items", summary.n_items),
            ("n_ok", done, summary.n_ok),
            ("n_failed", "Failed", summary.n_failed),
        )
    ]


def _usage(summary: Summary) -> list[tuple[str, str]]:
    usage = summary.usage
    rows = [
        ("judge calls", format_count(usage.get("calls"))),
        ("from cache", format_count(usage.get("cached_calls"))),
        ("input tokens", format_count(usage.get("input_tokens"))),
        ("output tokens", format_count(usage.get("output_tokens"))),
    ]
    for label, usd, note in cost_rows(summary.cost, summary.cost_usd):
        rows.append((label, f"{usd} ({note})" if note else usd))
    return rows
