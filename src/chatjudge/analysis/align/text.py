"""`chatjudge align` as people read it in a terminal: the candidates' cross-validated
agreement, the held-out table and the verdict."""

from __future__ import annotations

from chatjudge.analysis.align.align_run import ALIGNED_PROTOCOL
from chatjudge.formats.alignment import Alignment


def alignment_lines(a: Alignment) -> str:
    held = a.held_out
    d = held.difference
    lines = [
        f"{a.judge} aligned on {len(a.select_ids)} of {a.n_labelled} labelled rows "
        f"(seed {a.seed}), measured on {held.n} held-out rows",
        "  select part, cross-validated agreement: "
        + ", ".join(f"{k} {v:.3f}" for k, v in a.selection.items()),
        f"  chosen: {a.chosen} ({len(a.rules)} rules, {len(a.example_ids)} examples)",
        "  held out       agreement  kappa",
    ]
    for name, f in (("original", held.before), ("aligned", held.after)):
        kappa = "-" if f.kappa is None else f"{f.kappa:.3f}"
        lines.append(f"  {name:<14} {f.agreement:9.3f}  {kappa}")
    lines.append(
        f"  difference {d.value:+.3f} [{d.ci95[0]:+.3f}, {d.ci95[1]:+.3f}] ({d.method}; "
        f"{d.improved} rows better, {d.regressed} worse of {d.n})"
    )
    if a.human_ceiling is not None:
        lines.append(f"  humans agree with each other: {a.human_ceiling.agreement:.3f}")
    verdict = "recommended" if a.recommended else "not recommended"
    lines.append(f"{verdict}: {a.reason} ({ALIGNED_PROTOCOL} written)")
    return "\n".join(lines)
