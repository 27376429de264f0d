"""Did the judge change between two runs? A test paired by item on a fixed check set.

Each run asked the judge about every check item several times. Under "the judge did not
change", an item's verdicts from both runs are draws from one distribution, so they are
exchangeable within the item: the test shuffles each item's pooled verdicts between the
two runs (keeping each run's count) and compares the summed distance between the runs'
verdict distributions, item by item (total variation), with its shuffled values. The
judge's own disagreement within a run is thus the yardstick, item by item, and the test is
exact at any number of items and samples (up to the Monte Carlo error of its p-value,
which is never below the true one: (1 + hits) / (1 + resamples)).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import combinations

import numpy as np

RESAMPLES = 2000


def change_p_value(
    baseline: Sequence[Sequence[Hashable]],
    candidate: Sequence[Sequence[Hashable]],
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> float:
    """The p-value of "the judge's verdicts did not change", from each item's verdicts in
    both runs (`baseline[i]`, `candidate[i]`: item i's, in any order). An item without a
    verdict on one side counts for nothing."""
    pairs = [(list(a), list(b)) for a, b in zip(baseline, candidate, strict=True) if a and b]
    if not pairs:
        return 1.0
    rng = np.random.default_rng(seed)
    observed = 0.0
    shuffled = np.zeros(resamples)
    groups: dict[tuple[int, int], list[list[int]]] = {}
    for a, b in pairs:
        codes = {v: k for k, v in enumerate(dict.fromkeys([*a, *b]))}
        groups.setdefault((len(a), len(b)), []).append([codes[v] for v in (*a, *b)])
    for (n_a, n_b), rows in groups.items():
        labels = np.array(rows)  # items × (n_a + n_b), codes below n_a + n_b
        kinds = int(labels.max()) + 1
        observed += float(_distance(labels[None], n_a, n_b, kinds).sum())
        order = rng.random((resamples, *labels.shape)).argsort(axis=2)
        permuted = np.take_along_axis(np.broadcast_to(labels, order.shape), order, axis=2)
        shuffled += _distance(permuted, n_a, n_b, kinds).sum(axis=1)
    hits = int(np.count_nonzero(shuffled >= observed - 1e-9))
    return (1 + hits) / (1 + resamples)


def _distance(labels: np.ndarray, n_a: int, n_b: int, kinds: int) -> np.ndarray:
    """Total variation between the first `n_a` and the last `n_b` verdicts of each item
    (`kinds`: the verdicts' codes are below it)."""
    onehot = labels[..., None] == np.arange(kinds)
    share_a = onehot[..., :n_a, :].sum(axis=-2) / n_a
    share_b = onehot[..., n_a:, :].sum(axis=-2) / n_b
    distance: np.ndarray = 0.5 * np.abs(share_a - share_b).sum(axis=-1)
    return distance


def disagreement(items: Sequence[Sequence[Hashable]]) -> float | None:
    """The judge's disagreement with itself: the share of an item's pairs of verdicts that
    differ, averaged over items of two verdicts or more (None: none has two)."""
    shares = [
        sum(x != y for x, y in combinations(v, 2)) / (len(v) * (len(v) - 1) / 2)
        for v in items
        if len(v) >= 2
    ]
    return sum(shares) / len(shares) if shares else None
