"""`chatjudge agree` as people read it in a terminal: one line per figure of
`agreement.json` (with ties, without, correlation, Krippendorff's alpha)."""

from __future__ import annotations

from typing import Any

from chatjudge.stats.intervals import TOO_FEW


def agreement_lines(r: dict[str, Any]) -> str:
    """The agreement figures of `agree_with_humans`'s result, each with its 95% interval."""
    lines = [f"{r['judge']} vs humans on {r['n_items']} items ({r['protocol']})"]
    for key, title in (("with_ties", "with ties (S1)"), ("without_ties", "without ties (S2)")):
        a = r.get(key)
        if a and "error" in a:
            lines.append(f"  {title}: {a['error']}")
        elif a:
            kappa = (
                "-"
                if a["kappa"] is None
                else f"{a['kappa']:.3f} {_ci(a['kappa_ci95'], a.get('kappa_too_few'))}"
            )
            lines.append(
                f"  {title}: agreement {a['agreement']:.3f} {_ci(a['ci95'])}, "
                f"kappa {kappa}, n={a['n']}"
            )
    if "correlation" in r and "error" in r["correlation"]:
        lines.append(f"  {r['score']} vs mean human: {r['correlation']['error']}")
    elif "correlation" in r:
        c = r["correlation"]
        lines.append(
            f"  {r['score']} vs mean human: Spearman {c['spearman']:.3f} "
            f"{_ci(c['spearman_ci95'], c.get('too_few'))}, Kendall {c['kendall']:.3f} "
            f"{_ci(c['kendall_ci95'], c.get('too_few'))}, n={c['n']}"
        )
    if "krippendorff_alpha" in r:
        k = r["krippendorff_alpha"]
        for key in ("humans", "humans_and_judge"):
            v = k[key]
            value = (
                "-"
                if v["value"] is None
                else f"{v['value']:.3f} {_ci(v['ci95'], v.get('too_few'))}"
            )
            lines.append(f"  Krippendorff's alpha, {key.replace('_', ' ')}: {value}")
    return "\n".join(lines)


def _ci(ci: list[float] | None, too_few: str | None = None) -> str:
    """An interval, or "too few to say" where none is valid at this size."""
    if ci:
        return f"[{ci[0]:.3f}, {ci[1]:.3f}]"
    return f"({TOO_FEW})" if too_few else "-"
