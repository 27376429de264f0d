"""The page's charts, chosen from what the summary and the results hold."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from chatjudge.formats.io import read_model
from chatjudge.formats.shared import Metric
from chatjudge.formats.summary import PassKRecord, Summary
from chatjudge.report.charts import Bar, Interval, Section, count_bars, interval_chart
from chatjudge.report.format import (
    format_ci,
    format_share,
    format_value,
    is_share,
    metric_label,
)
from chatjudge.report.load import ResultStats
from chatjudge.rundir import GATE
from chatjudge.summarize.tries import PASS_AT, PASS_HAT, passk_name

MAX_BARS = 12  # more distinct score values than this are grouped into ranges
OUTCOMES = (  # pairwise metrics, from the candidate's side, and how they are drawn
    ("candidate_win_rate", "Candidate wins", "win"),
    ("tie_rate", "Tie", "tie"),
    ("baseline_win_rate", "Baseline wins", "loss"),
)
AGREEMENT_KEY = "inter_judge_agreement"


def build_sections(
    summary: Summary,
    stats: ResultStats,
    run_dir: Path | None = None,
    *,
    calibrated: dict[str, Any] | None = None,
    judged: bool = True,
) -> list[Section]:
    """The page's charts; `run_dir` holding a `gate.json` puts the gate's first;
    `calibrated`: human-calibrated estimates (`chatjudge report --human`); `judged`:
    False for a judge-free protocol's run, whose scores are its rules' counts and shares."""
    metrics = summary.metrics
    sections = [_score_section(name, stats.scores[name], judged) for name in stats.numeric_scores()]
    if run_dir is not None and (run_dir / GATE).is_file():
        # Only a gate's run directory holds one: a run's report loads none of the gate's.
        from chatjudge.formats.analyses import Gate
        from chatjudge.report.gate_section import gate_sections

        sections[:0] = gate_sections(read_model(run_dir / GATE, Gate))
    if any(name in metrics for name, _, _ in OUTCOMES):
        sections.append(_outcome_section(metrics, stats))
    else:
        sections += [_choice_section(n, stats.scores[n]) for n in stats.choice_scores()]
    if "position_consistency" in metrics:
        sections.append(_consistency_section(metrics["position_consistency"], stats))
    if summary.style_control:
        sections.append(style_section(summary.style_control, metrics))
    if calibrated:
        sections += calibration_sections(calibrated)
    if summary.pass_k:
        sections += passk_sections(summary.pass_k, metrics)
    per_judge = summary.per_judge
    judges = [j for j in per_judge if j != AGREEMENT_KEY and isinstance(per_judge[j], dict)]
    if judges:
        sections += _panel_sections(per_judge, judges)
    return sections


def _score_section(name: str, counts: Counter[Any], judged: bool = True) -> Section:
    values = sorted(counts)
    if len(values) <= MAX_BARS:
        bars = [Bar(_number(v), counts[v]) for v in values]
    elif all(float(v).is_integer() for v in values):
        bars = _whole_bins(counts)
    else:
        bars = _binned(counts)
    key = f"score-{name}"
    if not judged:  # a count (matched_calls) or share of the rules, each item's own
        note = f"Items by their {name}, from the protocol's rules (no judge)."
        chart = count_bars(bars, x_title=name, key=key)
        return Section(key=key, title=metric_label(name), note=note, chart=chart)
    return Section(
        key=key,
        title=f"{metric_label(name)} scores",
        note="Judged items by score (an item's score is the mean over its judge calls).",
        chart=count_bars(bars, x_title=f"{name} score", key=key),
    )


def _whole_bins(counts: Counter[Any]) -> list[Bar]:
    """Whole numbers (a count of calls) in ranges of whole numbers: `0–4`, `5–9`, ..."""
    lo, hi = int(min(counts)), int(max(counts))
    width = -(-(hi - lo + 1) // MAX_BARS)
    bins = [0] * (-(-(hi - lo + 1) // width))
    for value, n in counts.items():
        bins[(int(value) - lo) // width] += n
    bars = []
    for i, n in enumerate(bins):
        a, b = lo + i * width, min(lo + (i + 1) * width - 1, hi)
        bars.append(Bar(f"{a}–{b}" if b > a else str(a), n))
    return bars


def _binned(counts: Counter[Any]) -> list[Bar]:
    lo, hi = min(counts), max(counts)
    width = (hi - lo) / MAX_BARS or 1
    bins = [0] * MAX_BARS
    for value, n in counts.items():
        bins[min(int((value - lo) / width), MAX_BARS - 1)] += n
    return [
        Bar(f"{_number(lo + i * width)}–{_number(lo + (i + 1) * width)}", n)
        for i, n in enumerate(bins)
    ]


def _items(n: int) -> str:
    return f"{n:,} item" if n == 1 else f"{n:,} items"


def _percent(value: float) -> str:
    return format_share(value, digits=0)


def _number(value: float) -> str:
    return f"{value:g}" if float(value).is_integer() else f"{value:.2f}".rstrip("0")


def _choice_section(name: str, counts: Counter[Any]) -> Section:
    return Section(
        key=f"choice-{name}",
        title=metric_label(name),
        note="Judged items by verdict.",
        chart=count_bars(
            [Bar(str(v), n) for v, n in counts.most_common()], x_title=name, key=f"choice-{name}"
        ),
    )


def _outcome_section(metrics: Mapping[str, Metric], stats: ResultStats) -> Section:
    choice: Counter[Any] = Counter()
    for name in stats.choice_scores():
        choice.update(stats.scores[name])
    names = {"candidate_win_rate": "CANDIDATE", "tie_rate": "TIE", "baseline_win_rate": "BASELINE"}
    rows = [
        Interval(
            label=label,
            value=metrics[name].value,
            ci95=metrics[name].ci95,
            tone=tone,
            key=name,
            note=_items(choice[names[name]]),
        )
        for name, label, tone in OUTCOMES
        if name in metrics
    ]
    return Section(
        key="outcomes",
        title="Candidate vs baseline",
        note="Share of judged items won by each side, from the candidate's side; "
        "whiskers are 95% bootstrap intervals.",
        chart=interval_chart(
            rows,
            fmt=format_share,
            tick_fmt=_percent,
            x_title="share of judged items",
            domain=(0.0, 1.0),
            key="outcomes",
        ),
    )


def _consistency_section(metric: Metric, stats: ResultStats) -> Section:
    agreed, disagreed = stats.consistent[True], stats.consistent[False]
    row = Interval(
        label="Same verdict in both orders",
        value=metric.value,
        ci95=metric.ci95,
        tone="primary",
        key="position_consistency",
        note=f"{agreed:,} of {agreed + disagreed:,}",
    )
    return Section(
        key="consistency",
        title="Position consistency",
        note="Each item was judged with the responses in both orders; an inconsistent "
        "pair counts as a tie.",
        chart=interval_chart(
            [row],
            fmt=format_share,
            tick_fmt=_percent,
            x_title="share of judged items",
            domain=(0.0, 1.0),
            key="consistency",
        ),
    )


def _panel_sections(per_judge: dict[str, Any], judges: list[str]) -> list[Section]:
    names: list[str] = []
    for judge in judges:
        names += [n for n in per_judge[judge].get("metrics", {}) if n not in names]
    sections = []
    for name in names:
        rows = [
            Interval(
                label=judge,
                value=m.get("value"),
                ci95=m.get("ci95"),
                key=f"{name}:{judge}",
                note=f"n = {m.get('n', 0):,}",
            )
            for judge in judges
            if (m := per_judge[judge].get("metrics", {}).get(name)) is not None
        ]
        sections.append(
            _metric_section(
                name,
                rows,
                key=f"judge-{name}",
                title=f"{metric_label(name)} by judge",
                note="Each judge of the panel on its own, with 95% bootstrap intervals.",
            )
        )
    pairs = per_judge.get(AGREEMENT_KEY) or []
    if pairs:
        rows = [
            Interval(
                label=" vs ".join(p["judges"]),
                value=p.get("agreement"),
                tone="neutral",
                key="agreement:" + "|".join(p["judges"]),
                note=f"n = {p.get('n', 0):,}",
            )
            for p in pairs
        ]
        sections.append(
            Section(
                key="judge-agreement",
                title="Agreement between judges",
                note="Share of items on which two judges gave the same verdict.",
                chart=interval_chart(
                    rows,
                    fmt=format_share,
                    tick_fmt=_percent,
                    x_title="share of items",
                    domain=(0.0, 1.0),
                    key="judge-agreement",
                ),
            )
        )
    return sections


def style_section(control: dict[str, Any], metrics: Mapping[str, Metric]) -> Section:
    """The raw preference beside its length- and style-controlled (corrected) versions."""
    raw = control["raw_preference"]  # the style model's own figures, no metric of the run
    rows = [
        Interval("Raw", raw.get("value"), raw.get("ci95"), "neutral", "raw_preference",
                 f"n = {raw.get('n', 0):,}"),
        *(
            Interval(label, metrics[name].value, metrics[name].ci95, "primary", name,
                     f"n = {metrics[name].n:,}")
            for name, label in (
                ("length_controlled_preference", "Length-controlled"),
                ("style_controlled_preference", "Style-controlled"),
            )
            if name in metrics
        ),
    ]  # fmt: skip
    return Section(
        key="style-control",
        title="Preference corrected for length and style",
        note=f"{control.get('sentence', '')} Corrected rates come from a logistic model of "
        "the verdict on the responses' length and markdown differences, read at zero "
        "difference; it assumes the judge's style preference is the same for both models.",
        chart=interval_chart(
            rows,
            fmt=format_share,
            tick_fmt=_percent,
            x_title="candidate preferred (ties count half)",
            domain=(0.0, 1.0),
            key="style-control",
        ),
    )


def calibration_sections(calibrated: dict[str, Any]) -> list[Section]:
    """Per metric, the human-calibrated (PPI++) estimate beside the judge-only and
    human-only ones."""
    sections = []
    for name, c in calibrated.items():
        judge, human = c["judge_only"], c["human_only"]
        rows = [
            Interval("Judge only", judge.get("value"), judge.get("ci95"), "neutral",
                     f"{name}:judge_only", f"n = {judge.get('n', 0):,}"),
            Interval("Humans only", human.get("value"), human.get("ci95"), "neutral",
                     f"{name}:human_only", f"n = {c['n_labels']:,}"),
            Interval("Calibrated", c.get("value"), c.get("ci95"), "primary",
                     f"{name}:calibrated", f"worth {c['effective_labels']:,.0f} labels"),
        ]  # fmt: skip
        sections.append(
            _metric_section(
                name,
                rows,
                key=f"calibration-{name}",
                title=f"{metric_label(name)}, human-calibrated (corrected)",
                note="Prediction-powered inference (PPI++): what the human raters would say "
                "over all judged rows, from their labels and the judge's verdicts, with 95% "
                "intervals. Valid only if the labelled rows are a random sample of the run.",
            )
        )
    return sections


def passk_sections(tried: PassKRecord, metrics: Mapping[str, Metric]) -> list[Section]:
    """Per 0/1 metric, pass^k and pass@k against k: how fast success on every try falls,
    and success on some try rises, as an agent is asked again."""
    # imported here: only a run that tries its tasks more than once draws curves
    from chatjudge.report.curve_chart import Series, curve_chart

    sections = []
    ks = range(1, tried.max_k + 1)
    for name in tried.metrics:
        lines = []
        for kind, mark, label, tone in ((PASS_HAT, "^", "pass^k: all k tries", "primary"),
                                        (PASS_AT, "@", "pass@k: some try", "win")):  # fmt: skip
            points = []
            for k in ks:
                key = passk_name(name, kind, k)
                m = metrics.get(key)
                value, ci = (m.value, m.ci95) if m is not None else (None, None)
                text = f"pass{mark}{k} {format_value(key, value)} {format_ci(key, ci, value)}"
                points.append(Interval(str(k), value, ci, tone, key, text))
            lines.append(Series(label, points, tone, f"{name}_{kind}"))
        sections.append(
            Section(
                key=f"passk-{name}",
                title=f"{metric_label(name)}: pass^k and pass@k",
                note=f"Over {tried.n_tasks:,} tasks tried {tried.min_tries:,} times or "
                f"more ({tried.single_try_tasks:,} tried once left out): pass^k, the "
                "chance that k tries all succeed, and pass@k, that at least one does, with "
                "95% intervals over tasks.",
                chart=curve_chart(lines, x_title="k (tries)", key=f"passk-{name}"),
            )
        )
    return sections


def _metric_section(name: str, rows: list[Interval], *, key: str, title: str, note: str) -> Section:
    """Several estimates of one metric as intervals on its own scale (shares on 0-100%)."""
    share = is_share(name)
    chart = interval_chart(
        rows,
        fmt=partial(format_value, name),
        x_title=metric_label(name),
        domain=(0.0, 1.0) if share else None,
        bars=share,
        key=key,
        tick_fmt=_percent if share else None,
    )
    return Section(key=key, title=title, note=note, chart=chart)
