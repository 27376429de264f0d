"""The gate's corrections for the judge's known biases, always named as corrections.

- `--control length|style` (one pairwise run): the gate decides on the preference at
  equal length (and markdown style), from the same logistic fit the run's summary shows
  (`chatjudge.stats.style`), and keeps the raw difference beside it.
- `--human FILE`: the candidate run's metrics as the human raters would give them over
  all judged rows (PPI++, `chatjudge.analysis.calibration`), shown beside the decision;
  the decision itself stays on what the judge measured for both versions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import numpy as np

from chatjudge.analysis.calibration import calibrate_run
from chatjudge.errors import UsageError
from chatjudge.stats.paired import Difference
from chatjudge.stats.style import StyleControl, response_text, style_control, style_counts

Control = Literal["length", "style"]
Z95 = 1.959963984540054


def style_of(rows: list[dict[str, Any]], preference: np.ndarray, seed: int) -> StyleControl:
    """Raw, length- and style-controlled preference of one pairwise run's paired rows
    (`rows`: each row's fields; `preference`: 1 win, 0.5 tie, 0 loss, per row)."""
    counts = [
        [style_counts(response_text(f.get(side))) for f in rows]
        for side in ("response", "baseline_model_response")
    ]
    return style_control(preference, np.array(counts[0]), np.array(counts[1]), seed=seed)


def controlled_difference(style: StyleControl, control: Control, raw: Difference) -> Difference:
    """The controlled preference minus one half, as the difference the gate decides on."""
    chosen = style.length if control == "length" else style.style
    if chosen.value is None or chosen.ci95 is None:
        raise UsageError(f"--control {control}: too few rows to fit the {control} control")
    lo, hi = chosen.ci95
    return Difference(
        value=chosen.value - 0.5,
        ci95=(lo - 0.5, hi - 0.5),
        se=(hi - lo) / (2 * Z95),
        n_units=raw.n_units,
        n_rows=raw.n_rows,
        method=f"{control}-controlled logistic fit, bootstrap over rows",
    )


def corrected(style: StyleControl) -> dict[str, dict[str, Any]]:
    """gate.json's `corrected`: the controlled rates as summary metrics ({value, ci95, n})."""
    return {
        "length_controlled_preference": style.length.to_dict(),
        "style_controlled_preference": style.style.to_dict(),
    }


def calibrated(
    run_dir: Path, human: Path, column: str | None, score: str | None
) -> tuple[dict[str, Any], list[str]]:
    """The run's human-calibrated metrics and the warnings about the labelled sample."""
    found = calibrate_run(run_dir, human, column=column, score=score)
    return found["calibrated"], found["warnings"]
