"""Weighted logistic regression with fractional outcomes, many fits at once.

Style control (`chatjudge.stats.style`) and Bradley-Terry ratings with style covariates
(`chatjudge.stats.ratings`) fit the same model: an outcome in [0, 1] (a tie is 0.5, the
quasi-binomial likelihood) on a few columns, once on the data and once per bootstrap
resample. A resample of items is a row of weights (how often each item was drawn), so
all resamples are fitted together by Newton's method, each Newton step one matrix
product, warm-started from the fit on the data. A tiny ridge (`RIDGE`, on the summed
loss) keeps a fit finite when the outcome is separable (a candidate that wins every
item) or a resample leaves a column constant; with real data it moves a coefficient by
far less than its interval.
"""

from __future__ import annotations

import math
import sys

import numpy as np

RIDGE = 1e-4
_MAX_NEWTON = 100
_TOL = 1e-9
_FAR = 0.5  # a Newton step longer than this (on the logit scale) is checked
_EXP_MAX = math.log(sys.float_info.max)  # exp of any larger float overflows
_SMALL_EXPIT = 200_000  # elements: `expit` computes up to this many itself, past it scipy
_EXPIT_BLOCK = 1 << 12  # elements it turns into Python floats at once


def fit_logistic(
    design: np.ndarray,
    outcome: np.ndarray,
    weights: np.ndarray,
    *,
    start: np.ndarray | None = None,
    ridge: float = RIDGE,
) -> np.ndarray:
    """Coefficients maximising the weighted fractional-logistic likelihood, one fit per row
    of `weights`.

    `design` is (n, d), or (k, n, d) for k fits with their own columns; `outcome` is (n,)
    or (k, n) with values in [0, 1]; `weights` is (k, n). Returns a (k, d) array.
    """
    x = np.asarray(design, dtype=float)
    w = np.atleast_2d(np.asarray(weights, dtype=float))
    y = np.asarray(outcome, dtype=float)
    k, d = len(w), x.shape[-1]
    beta = np.zeros((k, d)) if start is None else np.array(np.broadcast_to(start, (k, d)))
    shared = x.ndim == 2
    # Shared columns: each Hessian is curvature @ (outer products of the rows), one product.
    outer = (x[:, :, None] * x[:, None, :]).reshape(len(x), d * d) if shared else None
    eye = ridge * np.eye(d)
    for _ in range(_MAX_NEWTON):
        # In place, in two (k, n) arrays besides `w` (the same operations, so the same
        # bits): with 1,000 resamples fitted together each is 8 KB an item, and a small
        # run's peak memory is reached here.
        p = expit(_linear(x, beta))
        work = np.subtract(p, y)
        work *= w  # the residual, w * (p - y)
        grad = work @ x if shared else np.einsum("kn,knd->kd", work, x)
        np.multiply(w, p, out=work)
        work *= np.subtract(1, p, out=p)  # the curvature, w * p * (1 - p)
        del p
        if shared:
            hessian = (work @ outer).reshape(k, d, d)
        else:
            hessian = np.einsum("kn,kni,knj->kij", work, x, x)
        del work
        grad += ridge * beta
        hessian += eye
        step = np.linalg.solve(hessian, grad[..., None])[..., 0]
        size = np.abs(step).max(axis=1)
        far = size > _FAR
        if far.any():  # near the optimum a Newton step of this concave loss always helps
            step[far] *= _halving(x, y, w, beta, step, far, ridge)[:, None]
        beta = beta - step
        if size.max() < _TOL:
            break
    return beta


def sandwich_cov(design: np.ndarray, outcome: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """The robust (sandwich) covariance of one unweighted fit's coefficients: (d, d).

    Quasi-binomial outcomes make the model's own variance wrong by a dispersion factor;
    the sandwich H^-1 (sum g g^T) H^-1 does not depend on it. `bench/bias_calibration.py`
    uses it where a bootstrap per simulated run would be too slow.
    """
    x = np.asarray(design, dtype=float)
    p = expit(x @ beta)
    g = (p - outcome)[:, None] * x
    bread = np.linalg.inv((x * (p * (1 - p))[:, None]).T @ x)
    return np.asarray(bread @ (g.T @ g) @ bread)


def expit(x: np.ndarray | float) -> np.ndarray:
    """The logistic sigmoid 1 / (1 + exp(-x)), element-wise, bit for bit what
    `scipy.special.expit` returns (the same formula on the C library's exp).

    Importing `scipy.special` (scipy's array-API layer and `numpy.f2py` with it) costs
    more CPU and memory than a small run's whole summary, so up to `_SMALL_EXPIT` elements
    the formula is computed here, with `math.exp`; larger arrays go to scipy's ufunc, where
    the loop would cost more than the import (bench/README.md has the crossover). Not `np.exp`:
    its SIMD loops differ from the C library's exp by an ulp on about 2% of values, which
    would change summaries' digits.
    """
    a = np.asarray(x, dtype=float)
    if a.size > _SMALL_EXPIT:
        from scipy.special import expit as ufunc  # imported here: see above

        return np.asarray(ufunc(a))
    e = np.negative(a, out=np.empty(a.shape))  # exp(-x) is computed in this array, in place
    overflow = e > _EXP_MAX  # where the C library's exp overflows (math.exp raises)
    flat = np.minimum(e, _EXP_MAX, out=e).reshape(-1)  # a view: e is contiguous
    for start in range(0, a.size, _EXPIT_BLOCK):  # a block's floats at a time: 130 KB
        part = flat[start : start + _EXPIT_BLOCK].tolist()
        flat[start : start + len(part)] = np.fromiter(map(math.exp, part), float, len(part))
    e[overflow] = math.inf
    e += 1.0
    return np.divide(1.0, e, out=e)  # 1 / (1 + exp(-x))


def _halving(
    x: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    beta: np.ndarray,
    step: np.ndarray,
    far: np.ndarray,
    ridge: float,
) -> np.ndarray:
    """Step sizes (1, 1/2, 1/4...) for the fits in `far` so that none's loss rises; a rise
    at rounding level is no rise."""
    xs = x if x.ndim == 2 else x[far]
    ys = y if y.ndim == 1 else y[far]
    ws, bs, ss = w[far], beta[far], step[far]
    value = _loss(xs, ys, ws, bs, ridge)
    scale = np.ones(len(ws))
    for _ in range(40):
        new = _loss(xs, ys, ws, bs - scale[:, None] * ss, ridge)
        worse = new > value + 1e-12 * np.abs(value)
        if not worse.any():
            break
        scale[worse] /= 2
    return scale


def _linear(x: np.ndarray, beta: np.ndarray) -> np.ndarray:
    if x.ndim == 2:
        return np.asarray(beta @ x.T)
    return np.einsum("knd,kd->kn", x, beta)


def _loss(
    x: np.ndarray, y: np.ndarray, w: np.ndarray, beta: np.ndarray, ridge: float
) -> np.ndarray:
    eta = _linear(x, beta)
    fit = np.logaddexp(0.0, eta)
    fit -= np.multiply(eta, y, out=eta)  # in place: w * (logaddexp(0, eta) - y * eta)
    fit *= w
    return np.asarray(fit.sum(axis=1) + 0.5 * ridge * (beta * beta).sum(axis=1))
