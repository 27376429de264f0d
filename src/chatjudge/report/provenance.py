"""Who judged, as the report and the terminal show it: the evaluator fingerprint (12
characters; "—" for a run older than it) and what the providers reported serving each
judge's replies with, flagged where it varies within a run or between two."""

from __future__ import annotations

from collections.abc import Mapping

from chatjudge.formats.analyses import Gate
from chatjudge.formats.provenance import UNKNOWN, Served, short
from chatjudge.formats.summary import Summary


def fingerprint(summary: Summary) -> tuple[str, str]:
    """The evaluator fingerprint, short and whole ("—" twice for an older run)."""
    evaluator = summary.evaluator
    if evaluator is None:
        return UNKNOWN, UNKNOWN
    return evaluator.short, evaluator.fingerprint


def served_lines(summary: Summary) -> list[tuple[str, bool]]:
    """Per judge, what its provider reported serving it with, and whether that varies."""
    return [
        (f"{judge}: {served_text(served)}", served.varies())
        for judge, served in (summary.served or {}).items()
    ]


def served_text(served: Served) -> str:
    """`gpt-4o-2024-08-06 ×120; system fingerprints fp_a ×100, fp_b ×20`."""
    parts = [_counts(served.models) or "no model reported"]
    if served.system_fingerprints:
        parts.append("system fingerprints " + _counts(served.system_fingerprints))
    if served.unreported and served.models:
        parts.append(f"{served.unreported:,} unreported")
    return "; ".join(parts)


def served_between(sides: Mapping[str, Mapping[str, Served]]) -> list[str]:
    """Judges whose providers reported other models or system fingerprints on one side than
    on the other (two runs a gate compares): a change behind the same name."""
    if len(sides) != 2:
        return []
    (a_role, a), (b_role, b) = sides.items()
    found = []
    for judge in sorted(a.keys() & b.keys()):
        x, y = a[judge], b[judge]
        if set(x.models) != set(y.models) or set(x.system_fingerprints) != set(
            y.system_fingerprints
        ):
            found.append(
                f"{judge} was served as {served_text(x)} in the {a_role}, as "
                f"{served_text(y)} in the {b_role}"
            )
    return found


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{name} ×{n:,}" for name, n in counts.items())


def gate_lines(gate: Gate) -> list[str]:
    """Each side's evaluator fingerprint, and a provider's report that changed between them."""
    if not gate.evaluators:
        return []
    shown = ", ".join(f"{role} {short(e)}" for role, e in gate.evaluators.items())
    lines = [f"Evaluator fingerprints: {shown}."]
    for change in served_between(gate.served):
        lines.append(f"The provider reported another model or system behind one name: {change}.")
    check = gate.judge_check
    if check is not None:
        agreement = " → ".join(_share(a) for a in check.agreement.values())
        tests = ", ".join(f"{c} p = {p:.4f}" for c, p in check.p_values.items())
        verdict = (
            "the judge changed (gated anyway: --allow-judge-change)"
            if check.changed
            else "no change of the judge beyond its own noise"
        )
        lines.append(
            f"Judge check on {check.n_items} items: agreement {agreement}; {tests} (level "
            f"{check.level:g}, Bonferroni): {verdict}."
        )
    return lines


def check_line(summary: Summary) -> str | None:
    """The run's judge check in a sentence (None: the run had none)."""
    check = summary.judge_check
    if check is None:
        return None
    ci = f" [{check.ci95[0]:.2f}, {check.ci95[1]:.2f}]" if check.ci95 else ""
    cost = "unknown" if check.cost_usd is None else f"${check.cost_usd:,.4f}"
    noise = _share(check.disagreement)
    return (
        f"Judge check ({check.file}, sha256 {check.file_sha256[:12]}): agreement with the "
        f"reference {_share(check.agreement)}{ci} on {check.n} items × {check.samples}; "
        f"the judge's disagreement with itself {noise}; cost {cost}, apart from the data's."
    )


def _share(value: float | None) -> str:
    return UNKNOWN if value is None else f"{value:.2f}"
