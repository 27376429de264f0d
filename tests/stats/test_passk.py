"""pass^k and pass@k: the estimators against their definitions (every k-subset of a task's
tries counted by hand), the grouping of tries by task, a try's majority over judge samples,
and the range of k with the tasks left out."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from chatjudge.stats.bootstrap import bootstrap_ci, bootstrap_metrics
from chatjudge.stats.passk import (
    count_tries,
    on_logit,
    pass_at,
    pass_hat,
    pass_k,
    resting_on,
    share_interval,
    succeeded,
)


def test_two_successes_of_four_tries_at_k_2() -> None:
    # C(2,2)/C(4,2) = 1/6: of the 6 pairs of tries, only the pair of both successes;
    # pass@2 = 1 - C(2,2)/C(4,2) = 5/6: every pair but the two failures.
    assert pass_hat(np.array([4]), np.array([2]), 2)[0] == pytest.approx(1 / 6)
    assert pass_at(np.array([4]), np.array([2]), 2)[0] == pytest.approx(5 / 6)


@pytest.mark.parametrize("n", range(2, 9))
def test_every_k_subset_counted_by_hand(n: int) -> None:
    for c in range(n + 1):
        tries = [1] * c + [0] * (n - c)
        for k in range(1, n + 1):
            subsets = list(itertools.combinations(tries, k))
            all_pass = sum(all(s) for s in subsets) / len(subsets)
            any_pass = sum(any(s) for s in subsets) / len(subsets)
            assert pass_hat(np.array([n]), np.array([c]), k)[0] == pytest.approx(all_pass)
            assert pass_at(np.array([n]), np.array([c]), k)[0] == pytest.approx(any_pass)
            assert all_pass == pytest.approx(math.comb(c, k) / math.comb(n, k))


def test_k_beyond_the_fewest_tries_is_refused() -> None:
    with pytest.raises(ValueError, match="fewest tries"):
        pass_hat(np.array([4, 2]), np.array([1, 1]), 3)
    with pytest.raises(ValueError, match="successes"):
        pass_hat(np.array([2]), np.array([3]), 1)


def test_tries_are_counted_per_task_in_order_of_first_try() -> None:
    n, c = count_tries(["b", "a", "b", "b", "a", "c"], np.array([1, 0, 1, 0, 1, 1]))
    assert n.tolist() == [3, 2, 1] and c.tolist() == [2, 1, 1]


def test_a_try_succeeds_on_a_strict_majority_of_its_judge_samples() -> None:
    # the means of 3 samples (2 of 3, 1 of 3), of 2 samples (a tie), of 4 (3 of 4)
    assert succeeded(np.array([2 / 3, 1 / 3, 0.5, 0.75, 1.0, 0.0])).tolist() == [
        1.0, 0.0, 0.0, 1.0, 1.0, 0.0,
    ]  # fmt: skip


def test_k_runs_to_the_fewest_tries_and_single_tries_are_left_out_and_counted() -> None:
    n = np.array([4, 1, 3, 1, 5])
    c = np.array([2, 1, 3, 0, 1])
    found = pass_k(n, c)
    assert found is not None
    assert sorted(found.pass_hat) == sorted(found.pass_at) == [1, 2, 3]  # min n of kept = 3
    assert (found.n_tasks, found.single_try) == (3, 2)
    assert (found.min_tries, found.max_tries) == (3, 5)
    # at k = 2: tasks (4, 2), (3, 3), (5, 1): 1/6, 1, 0
    assert found.pass_hat[2].value == pytest.approx((1 / 6 + 1 + 0) / 3)
    assert found.pass_at[2].value == pytest.approx((5 / 6 + 1 + 2 / 5) / 3)
    assert found.pass_hat[1].value == pytest.approx(found.pass_at[1].value)  # both c / n
    for estimate in [*found.pass_hat.values(), *found.pass_at.values()]:
        assert estimate.n == 3
        assert estimate.ci95 is not None
        assert estimate.ci95[0] <= estimate.value <= estimate.ci95[1]


def test_no_task_of_two_tries_gives_nothing() -> None:
    assert pass_k(np.array([1, 1]), np.array([0, 1])) is None


def test_the_interval_resamples_tasks() -> None:
    # 90 tasks of 4 tries, 2 of 4 right, 4 of 4 or none: pass^2 per task 1/6, 1 or 0; its
    # interval is a task bootstrap's, about 1.96 SE of the 90 task values wide each way
    n = np.full(90, 4)
    c = np.tile([2, 4, 0], 30)
    found = pass_k(n, c)
    assert found is not None
    values = pass_hat(n, c, 2)
    half = 1.96 * values.std() / math.sqrt(90)
    lo, hi = found.pass_hat[2].ci95  # type: ignore[misc]
    assert found.pass_hat[2].value == pytest.approx(values.mean())
    assert hi - lo == pytest.approx(2 * half, rel=0.15)


def test_tasks_at_one_end_get_an_interval_valid_at_every_size() -> None:
    # 50 tasks that never pass twice: the bootstrap's interval would be [0, 0]; the share
    # interval keeps room above (Clopper-Pearson's 1 - 0.025 ** (1 / 50), about 0.071)
    found = pass_k(np.full(50, 4), np.tile([1, 0], 25))
    assert found is not None
    assert found.pass_hat[2].value == 0.0
    lo, hi = found.pass_hat[2].ci95  # type: ignore[misc]
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 50))
    assert found.pass_at[4].ci95[0] < 1.0  # type: ignore[index]  # pass@4: 25 tasks at 1


def test_ten_tasks_that_all_fail_are_still_guarded() -> None:
    # every task at 0 at every k: no bootstrap sees above 0; 10 tasks all failing are as
    # likely as 1 in 40 when the true share is 0.31
    found = pass_k(np.full(10, 4), np.zeros(10))
    assert found is not None
    for k in range(1, 5):
        lo, hi = found.pass_hat[k].ci95  # type: ignore[misc]
        assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 10))  # about 0.31


def test_fifty_tasks_at_forty_percent_get_about_the_bootstraps_width() -> None:
    # 50 tasks of 4 tries, 22 never right and 10 always (pass^1 0.38, as recorded agent runs
    # give): 28 tasks away from 0 and 40 from 1 are enough for the bootstrap. The guard of
    # 30 took [0.17, 0.64] here; a percentile bootstrap gives [0.27, 0.49].
    n = np.full(50, 4)
    c = np.repeat([0, 1, 2, 3, 4], [22, 6, 6, 6, 10])
    found = pass_k(n, c)
    assert found is not None
    lo, hi = found.pass_hat[1].ci95  # type: ignore[misc]
    plain = bootstrap_ci(pass_hat(n, c, 1))
    assert plain is not None
    assert lo == pytest.approx(plain[0], abs=0.02) and hi == pytest.approx(plain[1], abs=0.02)
    assert hi - lo < 0.26


def test_nine_tasks_away_from_an_end_take_the_share_interval() -> None:
    # 50 tasks of 4 tries, 41 never right and 9 right once or twice: too few away from 0
    n = np.full(50, 4)
    c = np.repeat([0, 1, 2], [41, 5, 4])
    found = pass_k(n, c)
    assert found is not None
    values = pass_hat(n, c, 1)
    lo, hi = found.pass_hat[1].ci95  # type: ignore[misc]
    share = share_interval(float(values.mean()), 50)
    assert lo <= share[0] and hi >= share[1]


def test_a_mean_carried_by_a_few_tasks_takes_the_share_interval() -> None:
    # 100 tasks of 8 tries, pass^5: 20 tasks above 0, but 5 at 1 carry the mean (15 at 1/56):
    # it rests on (5 + 15/56)^2 / (5 + 15/56^2), about 5.5 tasks, where the bootstrap-t
    # lags the tail (the truth above it in 5% of draws, bench part (d))
    n = np.full(100, 8)
    c = np.repeat([0, 5, 8], [80, 15, 5])
    values = pass_hat(n, c, 5)
    assert resting_on(values) == pytest.approx((5 + 15 / 56) ** 2 / (5 + 15 / 56**2))
    found = pass_k(n, c)
    assert found is not None
    lo, hi = found.pass_hat[5].ci95  # type: ignore[misc]
    share = share_interval(float(values.mean()), 100)
    assert hi >= share[1]  # the far end, where the truth escapes
    # the mirror, pass@5 near 1 (from 1 - c tries' pass^5): the lower end is the far one
    found = pass_k(n, 8 - c)
    assert found is not None
    lo, hi = found.pass_at[5].ci95  # type: ignore[misc]
    assert lo <= 1 - share[1]
    # 0/1 distances rest on the count away from the end; middling ones on about all
    assert resting_on(np.repeat([0.0, 1.0], [93, 7])) == pytest.approx(7)
    assert resting_on(np.full(50, 0.5)) == pytest.approx(50)


def test_the_share_interval_is_clopper_pearsons() -> None:
    # 7 of 50: the beta quantiles B(0.025; 7, 44) and B(0.975; 8, 43)
    assert share_interval(7 / 50, 50) == pytest.approx((0.05819, 0.26740), abs=1e-5)
    assert share_interval(1.0, 10) == pytest.approx((0.025 ** (1 / 10), 1.0))


def _bootstrap_t(values: np.ndarray, resamples: int, seed: int) -> tuple[float, float]:
    """The 95% bootstrap-t interval of a mean, by hand: tasks drawn by index, each
    resample's t = (its mean - the mean) / its standard error."""
    index = np.random.default_rng(seed).integers(0, values.size, (resamples, values.size))
    drawn = values[index]
    error = values.std(ddof=1) / math.sqrt(values.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (drawn.mean(axis=1) - values.mean()) / (
            drawn.std(axis=1, ddof=1) / math.sqrt(values.size)
        )
    low, high = np.quantile(t[~np.isnan(t)], [0.025, 0.975])
    return values.mean() - high * error, values.mean() - low * error


def test_skewed_task_estimates_get_the_studentized_interval() -> None:
    # 200 hard tasks of 8 tries: pass^4 per task is C(c, 4) / 70, mostly 0 with a long tail
    # up to 1 (skewness 4.5). The percentile interval lags the tail (its upper end here
    # about 0.072); the bootstrap-t, computed by hand, reaches about 0.082.
    tally = {0: 60, 1: 40, 2: 30, 3: 25, 4: 15, 5: 12, 6: 8, 7: 6, 8: 4}
    c = np.repeat(list(tally), list(tally.values()))
    n = np.full(c.size, 8)
    found = pass_k(n, c)
    assert found is not None
    values = pass_hat(n, c, 4)
    assert np.count_nonzero(values) == 45  # 30 or more away from 0: the bootstrap's own
    lo, hi = found.pass_hat[4].ci95  # type: ignore[misc]
    by_hand = _bootstrap_t(values, 20_000, 1)
    width = by_hand[1] - by_hand[0]
    # within the noise of 2,000 resamples' 2.5% tail (the percentile interval's upper end
    # lies 20% of the width below)
    assert lo == pytest.approx(by_hand[0], abs=0.08 * width)
    assert hi == pytest.approx(by_hand[1], abs=0.08 * width)
    mean = values.mean()
    assert hi - mean > 1.5 * (mean - lo)  # leaning to the tail, as the truth does


def test_a_share_with_many_tasks_at_each_value_is_not_widened_by_the_guard() -> None:
    # pass^2 of 2 tries is 0 or 1: 100 tasks at each value are a plain share, whose interval
    # is about 0.5 +- 1.96 x 0.035; no guard is needed.
    n = np.full(200, 2)
    found = pass_k(n, np.repeat([0, 2], 100))
    assert found is not None
    lo, hi = found.pass_hat[2].ci95  # type: ignore[misc]
    assert lo == pytest.approx(0.5 - 1.96 * 0.5 / math.sqrt(200), abs=0.01)
    assert hi == pytest.approx(0.5 + 1.96 * 0.5 / math.sqrt(200), abs=0.01)
    # 198 tasks at 1/6 (2 of 4 right) and 2 at 1/2: all away from the ends, but a share
    # with 2 at the rarer value, too few for the bootstrap: the share interval holds
    n = np.full(200, 4)
    values = pass_hat(n, np.repeat([2, 3], [198, 2]), 2)
    found = pass_k(n, np.repeat([2, 3], [198, 2]))
    assert found is not None
    share = share_interval(float(values.mean()), 200)
    lo, hi = found.pass_hat[2].ci95  # type: ignore[misc]
    assert lo <= share[0] and hi >= share[1]
    assert hi - lo > 0.015  # where the bootstrap alone gives about 0.006


def _logit_bootstrap_t(values: np.ndarray, resamples: int, seed: int) -> tuple[float, float]:
    """The 95% bootstrap-t interval of a mean's logit, by hand, mapped back: tasks drawn by
    index, each resample's t = (logit of its mean - logit of the mean) / its error, the
    delta method's sd / sqrt(T) / (m (1 - m))."""
    index = np.random.default_rng(seed).integers(0, values.size, (resamples, values.size))
    drawn = values[index]
    m, means = values.mean(), drawn.mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (np.log(means / (1 - means)) - math.log(m / (1 - m))) / (
            drawn.std(axis=1, ddof=1) / math.sqrt(values.size) / (means * (1 - means))
        )
    low, high = np.quantile(t[np.isfinite(t)], [0.025, 0.975])
    scale = values.std(ddof=1) / math.sqrt(values.size) / (m * (1 - m))
    centre = math.log(m / (1 - m))
    return tuple(1 / (1 + np.exp(-(centre - q * scale))) for q in (high, low))  # type: ignore[return-value]


def test_a_mean_near_one_takes_the_bootstrap_t_of_its_logit() -> None:
    # 50 tasks of 8 tries of middling difficulty, pass@5 0.8875 (1 from 4 successes on): the
    # mean's skew toward 0 is smaller on the logit scale, where the plain bootstrap-t's upper
    # end cost up to 1.3 times the needed width (bench part (d)); the logit's pulls it in.
    n = np.full(50, 8)
    c = np.repeat(np.arange(9), [2, 8, 5, 5, 4, 11, 3, 10, 2])
    values = pass_at(n, c, 5)
    assert values.mean() == pytest.approx(0.8875) and on_logit(values)
    found = pass_k(n, c)
    assert found is not None
    lo, hi = found.pass_at[5].ci95  # type: ignore[misc]
    by_hand = _logit_bootstrap_t(values, 20_000, 1)
    width = by_hand[1] - by_hand[0]
    assert lo == pytest.approx(by_hand[0], abs=0.08 * width)
    assert hi == pytest.approx(by_hand[1], abs=0.08 * width)
    # the plain bootstrap-t, from the same resamples of the same columns, reaches further up
    columns = {f"{kind}{k}": f(n, c, k) for k in range(1, 9) for kind, f in
               (("hat", pass_hat), ("at", pass_at))}  # fmt: skip
    plain = bootstrap_metrics(columns, method="studentized")["at5"].ci95
    assert plain is not None
    assert hi - values.mean() < 0.96 * (plain[1] - values.mean())
    # two task values, or a mean beyond [0.1, 0.9], keep the plain bootstrap-t
    assert not on_logit(pass_hat(n, c, 8)) and not on_logit(np.repeat([0.0, 1.0], 25))
