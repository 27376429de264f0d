"""`chatjudge realism`'s terminal table: each measure real, simulated, the difference with
its interval, and whether it is claimed; the discriminator below."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from chatjudge.report.realism_page import figure

if TYPE_CHECKING:
    from chatjudge.formats.realism import Realism


def realism_table(result: Realism) -> Group:
    table = Table(title=f"realism: {result.n_goals} goal(s), k={result.k}", title_justify="left")
    for column in ("measure", "real", "simulated", "difference [95% CI]", "p (Holm)", "claimed"):
        table.add_column(column)
    measures = [*result.behaviours.items(), *(
        (f"metric {n}", m) for n, m in result.metric_gaps.items())]  # fmt: skip
    for name, m in measures:
        table.add_row(escape(name), figure(m.real), figure(m.simulated),
                      figure(m.difference, signed=True), f"{m.p_holm:.3g}",
                      "yes" if m.claimed else "no")  # fmt: skip
    lines: list[Text] = []
    d = result.discriminator
    if d is not None:
        told = "claimed" if d.claimed else "not claimed"
        lines.append(
            Text(f"discriminator accuracy {figure(d.accuracy)} ({told}; 0.5: cannot tell)")
        )
    if result.cut_share is not None:
        lines.append(Text(f"cut by the turn cap: {result.cut_share:.0%}"))
    if result.failed:
        lines.append(Text("failed: " + ", ".join(f"{k} {v}" for k, v in result.failed.items())))
    return Group(table, *lines)
