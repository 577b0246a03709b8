"""Mergeable per-class statistics: exact chunked merges, stable centring, weights."""
import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose

from problin._core.moments.class_stats import (
    between_scatter,
    class_stats,
    empty_stats,
    pooled_scatter,
)

RNG = np.random.default_rng(0)
N, D, K = 3000, 6, 3
X = RNG.normal(size=(N, D)) @ RNG.normal(size=(D, D)) + 5.0
CODES = RNG.integers(0, K, N)
W = RNG.uniform(0.0, 3.0, N)


def _direct(X, codes, w):
    out = []
    for k in range(K):
        m = codes == k
        mu = np.average(X[m], axis=0, weights=w[m])
        R = X[m] - mu
        out.append((w[m].sum(), mu, (R * w[m, None]).T @ R))
    return out


@pytest.mark.parametrize("kind", ["full", "tied", "diag"])
@pytest.mark.parametrize("weighted", [False, True])
def test_one_pass_equals_the_direct_formulas(kind, weighted):
    w = W if weighted else np.ones(N)
    s = class_stats(X, CODES, K, W if weighted else None, kind, rows=257)
    ref = _direct(X, CODES, w)
    assert_allclose(s.counts, [r[0] for r in ref], rtol=1e-13)
    assert_allclose(s.means, [r[1] for r in ref], rtol=1e-12)
    assert_allclose(s.sq, [np.diag(r[2]) for r in ref], rtol=1e-12)
    if kind == "full":
        assert_allclose(s.scatter, [r[2] for r in ref], rtol=1e-12, atol=1e-9)
    if kind != "diag":
        assert_allclose(pooled_scatter(s), sum(r[2] for r in ref), rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("kind", ["full", "tied", "diag"])
def test_chunks_merged_equal_one_pass(kind):
    one = class_stats(X, CODES, K, W, kind, rows=N)
    merged = empty_stats(K, D, kind)
    for lo, hi in [(0, 1), (1, 700), (700, 701), (701, 2999), (2999, 3000)]:
        merged = merged + class_stats(X[lo:hi], CODES[lo:hi], K, W[lo:hi], kind)
    for a, b in [(merged.counts, one.counts), (merged.means, one.means), (merged.sq, one.sq)]:
        assert_allclose(a, b, rtol=1e-12)
    if kind != "diag":
        assert_allclose(merged.scatter, one.scatter, rtol=1e-12, atol=1e-10)


def test_threads_blocks_and_sparse_input_agree():
    a = class_stats(X, CODES, K, W, "full", rows=100, workers=1)
    b = class_stats(X, CODES, K, W, "full", rows=100, workers=2)
    c = class_stats(sp.csr_matrix(X), CODES, K, W, "full", rows=100)
    for s in (b, c):
        assert_allclose(s.scatter, a.scatter, rtol=1e-12, atol=1e-10)
        assert_allclose(s.means, a.means, rtol=1e-13)


def test_centring_keeps_precision_far_from_the_origin():
    near = class_stats(X, CODES, K, kind="diag")
    far = class_stats(X + 1e8, CODES, K, kind="diag")
    assert_allclose(far.var(), near.var(), rtol=1e-6)  # raw moments would lose everything


def test_total_and_between_scatter_decompose_the_total_variance():
    s = class_stats(X, CODES, K, W, "tied")
    total = pooled_scatter(s) + between_scatter(s)
    mu = np.average(X, axis=0, weights=W)
    R = X - mu
    assert_allclose(total, (R * W[:, None]).T @ R, rtol=1e-11)
    assert_allclose(s.total_var(), np.diag(total) / W.sum(), rtol=1e-11)


def test_bad_codes_and_mismatched_merges_are_errors():
    with pytest.raises(ValueError, match="codes must lie"):
        class_stats(X, CODES + 1, K)
    with pytest.raises(ValueError, match="codes has shape"):
        class_stats(X, CODES[:-1], K)
    with pytest.raises(ValueError, match="cannot merge"):
        class_stats(X, CODES, K, kind="full") + class_stats(X, CODES, K, kind="diag")
    with pytest.raises(ValueError, match="kind"):
        empty_stats(K, D, "round")
