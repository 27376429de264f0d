"""The held-out proof of `chatjudge realism --tune`: the discriminator's accuracy on the
held-out goals with the original and the tuned instructions, their paired difference, and
whether any behaviour's gap to the real users widened.

The difference is per goal (tuned minus original accuracy: both orders of (real, first
simulated) each), its mean with realism's interval (`figures.mean_figure`, bounded by
[-1, 1]). A gain is shown only when its upper end lies below 0.

A behaviour's gap is the mean over goals of the simulated mean minus the real value; it
widened when |gap tuned| - |gap original| is large. Under the null that the tuned user
behaves as the original, a goal's two simulations are exchangeable, so the statistic
recomputed with each goal's pair swapped at random has its distribution: the one-sided
p = (1 + #{T* >= T}) / (1 + B) is exact; Holm's correction runs across the behaviours at 5%.
(Uniformity, a statistic of all goals together, is not tested here.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from chatjudge.formats.realism import Figure, TunedHeldOut, Widened
from chatjudge.stats.intervals import SHARE, Range
from chatjudge.user_realism.behaviour import BEHAVIOURS, behaviour_matrix
from chatjudge.user_realism.figures import mean_figure
from chatjudge.user_realism.permutation import RESAMPLES, holm
from chatjudge.user_realism.sample import GoalSample

LEVEL = 0.05
_CHANCE = 0.5
_TIES = 1e-9


def held_out(
    held: Sequence[str],
    before: Mapping[str, GoalSample],
    after: Mapping[str, GoalSample],
    *,
    seed: int,
    resamples: int = RESAMPLES,
) -> TunedHeldOut:
    """The held-out figures of the goals `held`, simulated with the original instructions
    (`before`) and the tuned ones (`after`); a goal missing on a side is left out there."""
    acc_before = _accuracy(before, held)
    acc_after = _accuracy(after, held)
    both = [g for g in held if g in acc_before and g in acc_after]
    diff = np.array([acc_after[g] - acc_before[g] for g in both], dtype=float)
    return TunedHeldOut(
        n=len(held),
        ids=list(held),
        before=_figure(list(acc_before.values()), SHARE),
        after=_figure(list(acc_after.values()), SHARE),
        difference=_figure(diff.tolist(), Range(-1.0, 1.0)),
        n_goals=len(both),
        behaviours=widened(held, before, after, seed=seed, resamples=resamples),
    )


def gain_shown(found: TunedHeldOut) -> bool:
    """The paired interval lies below 0, and no behaviour widened."""
    ci = found.difference.ci95
    return ci is not None and ci[1] < 0 and not any(w.widened for w in found.behaviours.values())


def overshoot(found: TunedHeldOut) -> bool:
    """The tuned accuracy's interval lies below 0.5: the judge takes the simulated user for
    the real one more often than not."""
    ci = found.after.ci95
    return ci is not None and ci[1] < _CHANCE


def widened(
    held: Sequence[str],
    before: Mapping[str, GoalSample],
    after: Mapping[str, GoalSample],
    *,
    seed: int,
    resamples: int = RESAMPLES,
) -> dict[str, Widened]:
    """Each behaviour measured on both sides of at least two goals: its gap with each
    prompt and the test of its widening."""
    both = [g for g in held if g in before and g in after and before[g].simulated
            and after[g].simulated]  # fmt: skip
    if not both:
        return {}
    first = behaviour_matrix([before[g] for g in both])
    second = behaviour_matrix([after[g] for g in both])
    real = first[:, 0, :]
    sides = np.stack([_sim_means(first), _sim_means(second)])  # 2 x goals x measures
    tested: dict[str, tuple[float, float, float, int]] = {}
    rng = np.random.default_rng([seed, 4])
    for k, name in enumerate(BEHAVIOURS):
        keep = ~np.isnan(real[:, k]) & ~np.isnan(sides[:, :, k]).any(axis=0)
        if keep.sum() < 2:
            continue
        r, b, a = real[keep, k], sides[0, keep, k], sides[1, keep, k]
        observed = _statistic(a - r, b - r)
        swap = rng.integers(0, 2, size=(resamples, len(r))).astype(bool)
        drawn = _statistic(np.where(swap, b, a) - r, np.where(swap, a, b) - r)
        scale = _TIES * (float(np.abs(np.concatenate([a, b, r])).max()) + 1.0)
        p = (1 + int(np.count_nonzero(drawn >= observed - scale))) / (1 + resamples)
        tested[name] = (float((b - r).mean()), float((a - r).mean()), p, int(keep.sum()))
    adjusted = holm([t[2] for t in tested.values()])
    return {
        name: Widened(before=b, after=a, p=p, p_holm=q, widened=q <= LEVEL, n_goals=n)
        for (name, (b, a, p, n)), q in zip(tested.items(), adjusted, strict=True)
    }


def _statistic(after_gap: np.ndarray, before_gap: np.ndarray) -> np.ndarray:
    """|mean gap tuned| - |mean gap original|, over goals (the last axis)."""
    return np.abs(after_gap.mean(axis=-1)) - np.abs(before_gap.mean(axis=-1))


def _sim_means(matrix: np.ndarray) -> np.ndarray:
    """Per goal and measure, the mean over its simulated conversations (NaN when none)."""
    sims = matrix[:, 1:, :]
    counts = (~np.isnan(sims)).sum(axis=1)
    total = np.nansum(sims, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, total / np.maximum(counts, 1), np.nan)


def _accuracy(samples: Mapping[str, GoalSample], held: Sequence[str]) -> dict[str, float]:
    return {
        g: sum(samples[g].discriminations) / len(samples[g].discriminations)
        for g in held
        if g in samples and samples[g].discriminations
    }


def _figure(values: list[float], known: Range) -> Figure:
    if not values:
        return Figure(value=float("nan"), ci95=None, too_few="no goal with a verdict")
    return mean_figure(np.array(values, dtype=float), known)
