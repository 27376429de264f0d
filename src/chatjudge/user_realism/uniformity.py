"""Stylistic uniformity: how alike users write, as the mean pairwise Jaccard similarity of
their 2-gram sets over each user's first 50 tokens, one user a goal on each side (the real
one and the first simulated one).

Computed exactly over every pair. What the claims and the jackknife need are, for each of
the 2G users, the sums of its similarities to the real users and to the simulated users of
the other goals (its own goal's other user left out). The statistic simulated minus real is
then linear in which user of each goal is labelled real, so the within-goal permutation test
is a sign-flip test on one number a goal, and leaving a goal out subtracts two sums.
Intersections come from matrix products: the 2-grams that many users share go through a
dense product (BLAS), the rest through a sparse one, where each costs the square of its
count of users; a block of rows at a time, each pair once."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

TOKENS = 50  # each user's first tokens read
_TOKEN = re.compile(r"\w+|[^\w\s]")  # a word, or one mark of punctuation; case kept
_BLOCK = 512  # rows of the similarity matrix computed at a time
# A 2-gram shared by more than this share of users goes through the dense product: its
# pairs cost more in the sparse product (one step each) than its column does in BLAS.
_DENSE_SHARE = 1 / 32
_DENSE_MAX = 1024


@dataclass(frozen=True, slots=True)
class Similarities:
    """Per user (reals first, then simulated, goal by goal), the sums of its Jaccard
    similarities to the real users and to the simulated users of the other goals."""

    to_real: np.ndarray
    to_simulated: np.ndarray

    @property
    def n_goals(self) -> int:
        return len(self.to_real) // 2

    def means(self) -> tuple[float, float]:
        """The mean pairwise similarity among real users and among simulated users."""
        g = self.n_goals
        pairs = g * (g - 1)  # ordered pairs: each unordered pair is summed from both ends
        return (
            float(self.to_real[:g].sum() / pairs),
            float(self.to_simulated[g:].sum() / pairs),
        )

    def swap_values(self) -> np.ndarray:
        """Per goal, the simulated user's sum to everyone minus the real user's. Their sum
        over goals over G(G - 1) is simulated minus real; swapping which user of a goal is
        real flips its sign."""
        g = self.n_goals
        total = self.to_real + self.to_simulated
        return np.asarray(total[g:] - total[:g], dtype=float)

    def leave_one_out(self) -> tuple[np.ndarray, np.ndarray]:
        """The two means with each goal left out in turn (the jackknife's values)."""
        g = self.n_goals
        pairs = (g - 1) * (g - 2)
        real = (self.to_real[:g].sum() - 2 * self.to_real[:g]) / pairs
        simulated = (self.to_simulated[g:].sum() - 2 * self.to_simulated[g:]) / pairs
        return np.asarray(real, dtype=float), np.asarray(simulated, dtype=float)


def first_tokens(messages: Sequence[str]) -> list[str]:
    """A user's first tokens over its messages in order: words and punctuation, case kept,
    since case and punctuation are part of a style."""
    found: list[str] = []
    for message in messages:
        found += _TOKEN.findall(message)
        if len(found) >= TOKENS:
            break
    return found[:TOKENS]


def similarities(users: Sequence[Sequence[str]]) -> Similarities:
    """The sums of pairwise similarities for 2G users' token lists: G real users then
    their G simulated ones, in the same goal order."""
    n = len(users)
    if n % 2:
        raise ValueError("similarities needs a real and a simulated user per goal")
    from scipy.linalg.blas import sgemm  # imported here: only realism needs it

    matrix = _bigram_matrix(users)
    sizes = np.asarray(matrix.sum(axis=1), dtype=np.float32).ravel()
    sizes[sizes == 0] = 0.5  # a user with no 2-gram: similarity 0 to all, never 0 / 0
    dense, sparse = _split_columns(matrix)
    side = np.zeros((n, 2), dtype=np.float32)
    side[: n // 2, 0] = 1  # a column's side: real...
    side[n // 2 :, 1] = 1  # ...or simulated
    sums = np.zeros((n, 2), dtype=np.float64)
    for start in range(0, n, _BLOCK):
        stop = min(start + _BLOCK, n)
        inter = (sparse[start:stop] @ sparse[start:].T).toarray()
        # ...plus the dense columns' product, added in place by BLAS: `inter.T` is the
        # Fortran-ordered (columns x rows) array it writes.
        sgemm(1.0, dense[start:].T, dense[start:stop].T, 1.0, inter.T, trans_a=1, overwrite_c=1)
        union = np.add.outer(sizes[start:stop], sizes[start:])
        np.subtract(union, inter, out=union)
        sim = np.divide(inter, union, out=inter)
        rows = np.arange(stop - start)
        sim[:, : stop - start][np.tril_indices(stop - start)] = 0  # each pair once
        real_rows = rows[start + rows < n // 2]
        sim[real_rows, real_rows + n // 2] = 0  # a goal's own simulated user
        sums[start:stop] += sim @ side[start:]
        sums[start:] += sim.T @ side[start:stop]
    return Similarities(sums[:, 0], sums[:, 1])


def _bigram_matrix(users: Sequence[Sequence[str]]) -> Any:
    """A users x 2-grams 0/1 sparse matrix (CSC): which 2-grams each user wrote."""
    from scipy.sparse import csc_matrix  # imported here: only realism reads it

    ids: dict[str, int] = {}
    flat = [ids.setdefault(token, len(ids)) for tokens in users for token in tokens]
    lengths = np.fromiter((len(tokens) for tokens in users), dtype=np.int64, count=len(users))
    codes = np.asarray(flat, dtype=np.int64)
    owner = np.repeat(np.arange(len(users), dtype=np.int64), lengths)
    same = owner[:-1] == owner[1:] if codes.size else np.zeros(0, dtype=bool)
    bigrams = codes[:-1][same] * max(len(ids), 1) + codes[1:][same]
    if len(ids) ** 2 * len(users) >= 1 << 62:  # keys as below would overflow: number them
        bigrams = np.unique(bigrams, return_inverse=True)[1].ravel()
    keys = np.sort(bigrams * len(users) + owner[:-1][same])  # by 2-gram, then user
    keys = keys[np.diff(keys, prepend=-1) != 0]  # a user's 2-gram once
    bigrams, rows = np.divmod(keys, len(users))
    starts = np.flatnonzero(np.diff(bigrams, prepend=-1))  # each 2-gram's first key
    indptr = np.append(starts, len(keys))
    data = np.ones(len(keys), dtype=np.float32)
    return csc_matrix((data, rows, indptr), shape=(len(users), len(starts)))


def _split_columns(matrix: Any) -> tuple[np.ndarray, Any]:
    """The commonest 2-grams' columns as a dense matrix, the others still sparse."""
    counts = np.asarray(matrix.sum(axis=0)).ravel()
    common = np.flatnonzero(counts > max(2.0, _DENSE_SHARE * matrix.shape[0]))
    common = common[np.argsort(-counts[common], kind="stable")[:_DENSE_MAX]]
    rest = np.setdiff1d(np.arange(matrix.shape[1]), common)
    dense = np.ascontiguousarray(matrix[:, common].toarray(), dtype=np.float32)
    return dense, matrix[:, rest].tocsr()
