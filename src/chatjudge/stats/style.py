"""Style control: the candidate's preference rate at equal length and markdown style.

LLM judges prefer longer, more heavily formatted answers. Following AlpacaEval's
length-controlled win rate and Chatbot Arena's style control, the item's outcome from
the candidate's side (1 win, 0.5 tie, 0 loss: a fractional outcome, quasi-binomial
likelihood) is regressed on the normalized differences (a - b) / (a + b) (a: candidate,
b: baseline; 0 when both are 0) of the responses' length and of their counts of
markdown headers, list items and bold spans. The features are scaled by their standard
deviation but not centred, so the intercept is the preference at zero difference and
the controlled rate is sigmoid(intercept), the rate read at equal length (and style).
A feature that is constant in the data (no markdown at all, say) is dropped instead of
making the fit singular. The 95% interval is a percentile bootstrap over items, the
resampling unit of the raw rate, with `N_RESAMPLES` resamples fitted together
(`chatjudge.stats.logistic`), a cost that grows with the items. Past
`MAX_BOOTSTRAP_ITEMS` items the interval is the normal one from the sandwich (robust)
standard error of the intercept, items again independent: at that size the two agree
(`bench/bias_calibration.py` compares them at 2,000 items: width ratio 1.00) and the
bootstrap would cost more CPU per item than judging it (bench/README.md).

Length is counted in approximate tokens, characters / 4 (no judge reports its tokenizer
to the summary); the normalized difference does not depend on that scale, only on the
approximation characters ~ tokens. Markdown is counted as Arena counts it, code blocks
left out: header lines (`#` to `######`), list items (`-`, `*`, `+`, `1.`) and bold
spans (`**x**`, `__x__`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from chatjudge.stats.bootstrap import Estimate, percentile_interval
from chatjudge.stats.intervals import SHARE, guard, small_why
from chatjudge.stats.logistic import expit, fit_logistic, sandwich_cov

FEATURES = ("length", "headers", "lists", "bold")
LENGTH_UNIT = "approximate tokens (characters / 4)"
N_RESAMPLES = 1000
MAX_BOOTSTRAP_ITEMS = 1_000  # past this the bootstrap costs more than the run's judging CPU
_Z95 = 1.959963984540054
_CHUNK_CELLS = 1 << 21  # resampled item weights held at once (16 MB)
_DRAW_ROWS = 16  # resamples drawn at once (even: see `_draws`): 4 arrays of 128 B an item
_CODE = re.compile(r"```[^`]*```")
_HEADER = re.compile(r"^#{1,6}\s", re.MULTILINE)
_LIST = re.compile(r"^\s*(?:\d+\.|[-*+])\s", re.MULTILINE)
_BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")


def response_text(value: Any) -> str:
    """A response field as text: a string as is, a message list as its contents joined."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(
            str(m.get("content", "")) if isinstance(m, dict) else str(m) for m in value
        )
    return str(value)


def style_counts(text: str) -> tuple[float, float, float, float]:
    """(approximate tokens, header lines, list items, bold spans) of one response."""
    prose = _CODE.sub("", text)
    return (
        len(text) / 4,
        float(len(_HEADER.findall(prose))),
        float(len(_LIST.findall(prose))),
        float(len(_BOLD.findall(prose))),
    )


def normalized_difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(a - b) / (a + b) elementwise, 0 where both are 0."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    total = a + b
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total == 0, 0.0, (a - b) / np.where(total == 0, 1.0, total))


@dataclass(frozen=True, slots=True)
class Controlled:
    """A controlled preference rate, its 95% interval and item count, and the fit behind it.

    `coefficients` are on the logit scale per standard deviation of each feature kept
    (`intercept`: the preference at zero difference); `dropped` lists the features that
    were constant in the data.
    """

    value: float | None
    ci95: tuple[float, float] | None
    n: int
    coefficients: dict[str, float]
    dropped: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The `{"value", "ci95", "n"}` metric object of summary.json."""
        return Estimate(self.value, self.ci95, self.n).to_dict()


@dataclass(frozen=True, slots=True)
class StyleControl:
    """The raw preference (ties count half) and its length- and style-controlled versions."""

    raw: Estimate
    length: Controlled
    style: Controlled
    sentence: str

    def to_dict(self) -> dict[str, Any]:
        """summary.json's `style_control` object (the rates themselves are metrics)."""
        return {
            "raw_preference": self.raw.to_dict(),
            "length_coefficients": self.length.coefficients,
            "style_coefficients": self.style.coefficients,
            "dropped": list(self.style.dropped),
            "length_unit": LENGTH_UNIT,
            "n_resamples": N_RESAMPLES,
            "sentence": self.sentence,
        }


def style_features(candidate: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    """Per item, the normalized differences of `style_counts` (n, 4) of the two sides."""
    return normalized_difference(np.asarray(candidate), np.asarray(baseline)).reshape(-1, 4)


def style_control(
    outcome: Sequence[float] | np.ndarray,
    candidate: np.ndarray,
    baseline: np.ndarray,
    *,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> StyleControl:
    """Raw, length-controlled and style-controlled preference from per-item outcomes
    (1, 0.5, 0 from the candidate's side) and each side's `style_counts` (n, 4).

    The three share one bootstrap resampling of the items. The raw preference takes the
    interval of its kind (`chatjudge.stats.intervals.guard`); on a small sample the
    controlled ones are held to at least it (their hull with it), as the gate holds them.
    """
    y = np.asarray(outcome, dtype=float)
    features = style_features(candidate, baseline)
    if len(features) != len(y):
        raise ValueError(f"{len(y)} outcomes but {len(features)} rows of style counts")
    if not np.all((y >= 0) & (y <= 1)):
        raise ValueError("outcomes must lie in [0, 1] (1 win, 0.5 tie, 0 loss)")
    length, style = (
        controlled_fits(y, features[:, :k], FEATURES[:k], n_resamples=n_resamples, seed=seed)
        for k in (1, len(FEATURES))
    )
    raw = _raw(y, n_resamples, seed)
    if raw.ci95 is not None and small_why(y) is not None:
        length, style = (_held_to(c, raw.ci95) for c in (length, style))
    return StyleControl(raw=raw, length=length, style=style, sentence=explain(raw, length, style))


def controlled_fits(
    outcome: np.ndarray,
    features: np.ndarray,
    names: Sequence[str],
    *,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> Controlled:
    """The preference at zero `features` (n, f), with its bootstrap interval over items.
    Calls with the same `seed` and item count share their resamples.
    """
    y = np.asarray(outcome, dtype=float)
    x = np.asarray(features, dtype=float).reshape(len(y), -1)
    n = len(y)
    if n == 0:
        return Controlled(None, None, 0, {})
    scale = x.std(axis=0)
    kept = [j for j in range(x.shape[1]) if scale[j] > 1e-12]
    dropped = tuple(names[j] for j in range(x.shape[1]) if j not in kept)
    design = np.column_stack([np.ones(n), x[:, kept] / scale[kept]])
    beta = fit_logistic(design, y, np.ones((1, n)))[0]
    coefficients = {"intercept": float(beta[0])}
    coefficients |= {names[j]: float(b) for j, b in zip(kept, beta[1:], strict=True)}
    ci = None
    if n > MAX_BOOTSTRAP_ITEMS:
        se = float(np.sqrt(sandwich_cov(design, y, beta)[0, 0]))
        ci = (float(expit(beta[0] - _Z95 * se)), float(expit(beta[0] + _Z95 * se)))
    elif n >= 2 and n_resamples > 0:
        boot = _bootstrap_intercepts(y, design, beta, n_resamples, seed)
        ci = percentile_interval(expit(boot), 0.95)
    return Controlled(float(expit(beta[0])), ci, n, coefficients, dropped)


def _held_to(controlled: Controlled, floor: tuple[float, float]) -> Controlled:
    """A controlled rate's interval widened to hold the raw preference's valid one."""
    if controlled.value is None:
        return controlled
    lo, hi = controlled.ci95 if controlled.ci95 is not None else floor
    return replace(controlled, ci95=(min(lo, floor[0]), max(hi, floor[1])))


def explain(raw: Estimate, length: Controlled, style: Controlled) -> str:
    """One sentence: how much of the raw preference's distance from 50% length explains."""
    if raw.value is None or length.value is None or style.value is None:
        return "No item was judged, so there is nothing to control for."
    tail = f" ({_pct(style.value)} at equal length and markdown style)."
    if "length" in length.dropped:
        return (
            "The length difference is the same on every item, so it cannot be told apart "
            f"from the preference; the raw preference is {_pct(raw.value)}" + tail
        )
    points = (raw.value - 0.5) * 100
    side = "above" if points >= 0 else "below"
    explained = (raw.value - length.value) * 100 * (1 if points >= 0 else -1)
    at_equal = f"at equal length the candidate is preferred {_pct(length.value)} of the time"
    distance = f"the raw preference's {abs(points):.1f} points {side} 50%"
    if explained > abs(points):  # the controlled preference lies on the other side of 50%
        return (
            f"Length explains all of {distance}, and more: at equal length the preference "
            f"crosses 50%, and the candidate is preferred {_pct(length.value)} of the time{tail}"
        )
    if explained > 0:
        return f"Length explains {explained:.1f} of {distance}; {at_equal}{tail}"
    return f"Length explains none of {distance}; {at_equal}{tail}"


def _pct(value: float) -> str:
    return f"{value * 100:.1f}%"


def _raw(y: np.ndarray, n_resamples: int, seed: int) -> Estimate:
    """The mean outcome with its interval from the same resamples as the fits, guarded as
    a summary share is (Clopper-Pearson without ties, else the betting floor when small)."""
    n = len(y)
    if n == 0:
        return Estimate(None, None, 0)
    ci = None
    if n >= 2 and n_resamples > 0:
        blocks = item_weights(n, n_resamples, seed, rows=_DRAW_ROWS)
        means = np.concatenate([w @ y / n for w in blocks])
        ci = percentile_interval(means, 0.95)
    return guard(Estimate(float(y.mean()), ci, n), y, SHARE)


def item_weights(
    n: int, n_resamples: int, seed: int, *, rows: int | None = None
) -> Iterator[np.ndarray]:
    """Item bootstrap resamples as weights (how often each of n items was drawn), in chunks
    of (resamples, n) that bound memory; the same seed gives the same resamples.

    `rows` (even) yields them at most that many resamples at a time instead, for a caller
    that treats each resample alone (a mean): whole chunks are 16 MB, and the fits need
    them whole, since the resamples fitted together share one Newton loop.
    """
    rng = np.random.default_rng(seed)
    step = max(1, _CHUNK_CELLS // n)
    for start in range(0, n_resamples, step):
        k = min(step, n_resamples - start)
        if rows is not None:
            yield from (counts.astype(float) for _, counts in _draws(rng, n, k, rows))
            continue
        weights = np.empty((k, n))
        for row, counts in _draws(rng, n, k, _DRAW_ROWS):
            weights[row : row + len(counts)] = counts
        yield weights


def _draws(rng: np.random.Generator, n: int, k: int, rows: int) -> Iterator[tuple[int, np.ndarray]]:
    """k resamples of n items as counts, `rows` resamples at a time, with the first one's
    index. Parts of an even number of resamples take the same numbers from `rng` as one draw
    of all k (the sizes of the parts change nothing), and hold 0.5 MB at 1,000 items instead
    of 48 MB (a large run's summary reaches its peak memory here)."""
    for row in range(0, k, rows):
        m = min(rows, k - row)
        drawn = rng.integers(0, n, size=(m, n)) + (np.arange(m) * n)[:, None]
        yield row, np.bincount(drawn.ravel(), minlength=m * n).reshape(m, n)


def _bootstrap_intercepts(
    y: np.ndarray, design: np.ndarray, beta: np.ndarray, n_resamples: int, seed: int
) -> np.ndarray:
    """The intercept refitted on each item resample (warm-started at `beta`)."""
    return np.concatenate(
        [
            fit_logistic(design, y, weights, start=beta)[:, 0]
            for weights in item_weights(len(y), n_resamples, seed)
        ]
    )
