"""Class statistics of data far from zero that drift along the rows (sorted data).

The Chan-Golub-LeVeque merge is first order in the difference of two means;
formed from two absolute means at 1e8 it would keep only ~8 digits of a
difference of order 1. Means held as ``origin + offset`` keep them all: one
pass, any block size and 30 merged chunks all agree with an exact reference.
"""
from fractions import Fraction

import numpy as np
import pytest
from numpy.testing import assert_allclose

from problin._core.moments.class_stats import class_stats, empty_stats, merge_means
from problin._core.moments.least_squares import moments

N, D, K = 1500, 3, 3


def _sorted_far_data(seed=0):
    """1e8 + a trend along the (sorted) rows + noise of order 1."""
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(-1.0, 1.0, N))
    X = 1e8 + 0.7 * t[:, None] * np.array([1.0, -0.5, 0.8]) + 0.3 * rng.uniform(-1, 1, (N, D))
    return X, rng.integers(0, K, N), rng.integers(1, 4, N).astype(float)


def _exact(X, codes, w):
    """Counts, means and scatters of every class, in exact rational arithmetic."""
    out = []
    for k in range(K):
        rows = [[Fraction(v) for v in r] for r in X[codes == k]]
        wk = [Fraction(v) for v in w[codes == k]]
        n = sum(wk)
        mu = [sum(a * r[j] for a, r in zip(wk, rows)) / n for j in range(D)]
        dev = [[r[j] - mu[j] for j in range(D)] for r in rows]
        S = [[sum(a * e[i] * e[j] for a, e in zip(wk, dev)) for j in range(D)] for i in range(D)]
        out.append((n, mu, S))
    return out


X, CODES, W = _sorted_far_data()
EXACT = {weighted: _exact(X, CODES, W if weighted else np.ones(N)) for weighted in (False, True)}


def _check_exact(stats, ref):
    for k, (n, mu, S) in enumerate(ref):
        assert stats.counts[k] == n
        # the mean to ~1e-12 of the spread (not of its distance from zero) ...
        err = [float(Fraction(stats.origin[k, j]) + Fraction(stats.offset[k, j]) - mu[j])
               for j in range(D)]
        assert np.max(np.abs(err)) < 1e-12
        # ... and every scatter entry to ~1e-12 relative
        S = np.array([[float(v) for v in row] for row in S])
        scale = np.sqrt(np.outer(np.diag(S), np.diag(S)))
        assert np.max(np.abs(stats.sq[k] - np.diag(S)) / np.diag(S)) < 1e-12
        got = stats.scatter[k] if stats.kind == "full" else None
        if got is not None:
            assert np.max(np.abs(got - S) / scale) < 1e-12


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("how", ["one pass", "small blocks", "30 chunks"])
def test_sorted_data_at_1e8_match_the_exact_statistics(how, weighted):
    w = W if weighted else None
    if how == "30 chunks":
        stats = empty_stats(K, D, "full")
        for idx in np.array_split(np.arange(N), 30):
            stats = stats + class_stats(X[idx], CODES[idx], K, None if w is None else w[idx])
    else:
        stats = class_stats(X, CODES, K, w, rows=N if how == "one pass" else 37, workers=1)
    _check_exact(stats, EXACT[weighted])


@pytest.mark.parametrize("kind", ["tied", "diag"])
def test_tied_and_diag_chunked_merges_equal_one_pass(kind):
    one = class_stats(X, CODES, K, W, kind)
    merged = empty_stats(K, D, kind)
    for idx in np.array_split(np.arange(N), 30):
        merged = merged + class_stats(X[idx], CODES[idx], K, W[idx], kind)
    full = class_stats(X, CODES, K, W, "full")
    assert np.max(np.abs(merged.sq - full.sq) / full.sq) < 1e-12
    assert np.max(np.abs(one.sq - full.sq) / full.sq) < 1e-12
    assert np.array_equal(merged.means, one.means)
    if kind == "tied":
        S = full.scatter.sum(axis=0)
        scale = np.sqrt(np.outer(np.diag(S), np.diag(S)))
        for s in (one, merged):
            assert np.max(np.abs(s.scatter - S) / scale) < 1e-12
    n = sum(nk for nk, _, _ in EXACT[True])
    mu = [sum(nk * m[j] for nk, m, _ in EXACT[True]) / n for j in range(D)]
    dev = np.array([[float(m[j] - mu[j]) for j in range(D)] for _, m, _ in EXACT[True]])
    assert np.max(np.abs(merged.centred_means() - dev)) < 1e-12


def test_merge_means_is_one_update_for_classes_and_least_squares():
    """``Moments`` (least squares) merge with the same update: 30 chunks of the
    sorted data equal one pass."""
    T = X[:, :1] - 1e8
    one = moments(X[:, 1:], T)
    merged = None
    for idx in np.array_split(np.arange(N), 30):
        part = moments(X[idx, 1:], T[idx])
        merged = part if merged is None else merged + part
    scale = np.sqrt(np.outer(np.diag(one.scatter), np.diag(one.scatter)))
    assert np.max(np.abs(merged.scatter - one.scatter) / scale) < 1e-12
    assert np.max(np.abs((merged.origin - one.origin) + (merged.offset - one.offset))) < 1e-12
    # an empty side leaves the other unchanged; weights broadcast over classes
    n, origin, offset, delta, c = merge_means(np.array([0.0, 2.0]), np.zeros((2, 1)),
                                              np.zeros((2, 1)), np.array([3.0, 0.0]),
                                              np.full((2, 1), 1e8), np.full((2, 1), 0.5))
    assert n.tolist() == [3.0, 2.0] and c.tolist() == [0.0, 0.0]
    assert origin.tolist() == [[1e8], [0.0]] and offset.tolist() == [[0.5], [0.0]]


@pytest.mark.parametrize("kind", ["full", "diag"])
def test_blocks_that_start_far_from_their_mean_are_centred_again(kind):
    """Each class is first centred on the mean of its first 32 rows; here those
    sit ~6 standard deviations from the class mean, so the block is centred again."""
    rng = np.random.default_rng(3)
    codes = np.arange(1800) % K
    Xo = rng.normal(size=(1800, D))
    Xo[:3 * 32] += 1e4
    w = rng.uniform(0.5, 2.0, 1800)
    ref = _exact(Xo, codes, w)
    stats = class_stats(Xo, codes, K, w, kind, rows=1800, workers=1)
    for k, (n, mu, S) in enumerate(ref):
        assert_allclose(stats.counts[k], float(n), rtol=1e-13)
        assert_allclose(stats.means[k], [float(m) for m in mu], rtol=1e-13)
        S = np.array([[float(v) for v in row] for row in S])
        assert_allclose(stats.sq[k], np.diag(S), rtol=1e-12)
        if kind == "full":
            assert_allclose(stats.scatter[k], S, rtol=1e-12)
