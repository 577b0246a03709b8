"""Sufficient statistics of [X, t]: exact centring however the column means drift."""
import numpy as np
import pytest

from problin import LinearRegression
from problin._core.moments.least_squares import moments


def drifting_data(n=60_000, seed=0):
    """A column sorted around 1e8, one drifting from 0 to 1e6, one standard normal;
    the target depends on all three (and sits near 3e8)."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.sort(1e8 + rng.normal(size=n)),
                         np.linspace(0.0, 1e6, n) + rng.normal(size=n),
                         rng.normal(size=n)])
    t = X @ [3.0, 2e-6, -1.0] + rng.normal(size=n)
    return X, t


def exact_moments(X, T, w=None):
    """Two-pass reference: weighted mean, then the scatter of the explicitly centred data."""
    Z = np.column_stack([X, T]).astype(np.float64)
    w = np.ones(len(Z)) if w is None else w
    mean = w @ Z / w.sum()
    mean += w @ (Z - mean) / w.sum()  # the second pass's correction of the rounded mean
    C = (Z - mean) * np.sqrt(w)[:, None]
    return mean, C.T @ C


def assert_scatter_close(S, ref, rtol):
    """Entries relative to sqrt(S_ii S_jj): the scale-free error that a solve sees."""
    scale = np.sqrt(np.outer(np.diag(ref), np.diag(ref)))
    assert np.max(np.abs(S - ref) / scale) <= rtol


def assert_mean_close(mean, ref, S, weight):
    """Within 1e-15 of the value plus 1e-13 of the column's spread (a mean near zero
    has no digits relative to itself)."""
    tol = 1e-15 * np.abs(ref) + 1e-13 * np.sqrt(np.diag(S) / weight)
    assert np.all(np.abs(mean - ref) <= tol), (mean - ref) / tol


def lstsq_on_centred(X, t):
    Xc, tc = X - X.mean(axis=0), t - t.mean()
    return np.linalg.lstsq(Xc, tc, rcond=None)[0]


EXTENDED = np.finfo(np.longdouble).eps < 1e-18  # x86 80-bit or quad long double


def exact_least_squares(X, t):
    """Coefficients and intercept from normal equations of the centred data, all in
    long double (Gaussian elimination with partial pivoting): ~1e-19 x cond^2."""
    Xl, tl = X.astype(np.longdouble), t.astype(np.longdouble)
    Xc, tc = Xl - Xl.mean(axis=0), tl - tl.mean()
    A, b = Xc.T @ Xc, Xc.T @ tc
    p = len(b)
    for i in range(p):
        j = i + int(np.argmax(np.abs(A[i:, i])))
        A[[i, j]], b[[i, j]] = A[[j, i]], b[[j, i]]
        f = A[i + 1:, i] / A[i, i]
        A[i + 1:] -= f[:, None] * A[i]
        b[i + 1:] -= f * b[i]
    w = np.zeros(p, dtype=np.longdouble)
    for i in reversed(range(p)):
        w[i] = (b[i] - A[i, i + 1:] @ w[i + 1:]) / A[i, i]
    return w.astype(np.float64), float(tl.mean() - Xl.mean(axis=0) @ w)


@pytest.mark.parametrize("order", ["sorted", "reversed", "shuffled"])
def test_drifting_columns_match_lstsq_on_centred_data(order):
    X, t = drifting_data()
    rows = {"sorted": slice(None), "reversed": slice(None, None, -1),
            "shuffled": np.random.default_rng(1).permutation(len(X))}[order]
    X, t = np.ascontiguousarray(X[rows]), t[rows]
    model = LinearRegression().fit(X, t)
    np.testing.assert_allclose(model.coef_, lstsq_on_centred(X, t), rtol=1e-10)
    if EXTENDED:  # closer still to the exact solution (lstsq itself is off by ~1e-12)
        w, b = exact_least_squares(X, t)
        np.testing.assert_allclose(model.coef_, w, rtol=1e-12)
        # b = t_bar - x_bar^T w is ~3e8 - 3e8: coef errors of ~1e-14 show ~1e-14 of 3e8
        assert model.intercept_ == pytest.approx(b, abs=1e-13 * abs(X.mean(axis=0) @ w))


@pytest.mark.parametrize("rows", [None, 256, 4096])
def test_scatter_equals_the_explicitly_centred_scatter(rows):
    X, t = drifting_data()
    mean, S = exact_moments(X, t[:, None])
    stats = moments(X, t[:, None], rows=rows)
    assert stats.weight == len(X)
    assert_mean_close(stats.mean, mean, S, stats.weight)
    assert_scatter_close(stats.scatter, S, 1e-13)


def test_blocks_switching_between_raw_and_centred():
    """Stretches near zero (read in place) alternate with stretches far from zero
    (centred): every block is exact, and so is the merge of all of them."""
    rng = np.random.default_rng(2)
    n = 40_000
    level = np.repeat([0.0, 5e7, 0.0, -3.0, 1e3], n // 5)
    X = np.column_stack([level + rng.normal(size=n), rng.normal(size=n),
                         np.repeat([0.0, 0.0, 2.0, 0.0, 1e5], n // 5) + rng.normal(size=n)])
    t = X @ [1.0, -2.0, 0.5] + np.repeat([0.0, 1e4, 0.0, 0.0, 0.0], n // 5) + rng.normal(size=n)
    mean, S = exact_moments(X, t[:, None])
    for rows in (256, 1000, None):
        stats = moments(X, t[:, None], rows=rows)
        assert_mean_close(stats.mean, mean, S, stats.weight)
        assert_scatter_close(stats.scatter, S, 1e-13)


def test_one_pass_equals_chunks_threads_and_layouts():
    X, t = drifting_data(n=20_000)
    T = np.column_stack([t, -2.0 * t + 1e9])
    ref = moments(X, T)
    variants = [moments(X, T, rows=300, workers=1), moments(X, T, rows=300, workers=2),
                moments(np.asfortranarray(X), T), moments(X, T, rows=700, workers=3)]
    chunks = [moments(X[rows], T[rows]) for rows in np.array_split(np.arange(len(X)), 9)]
    merged = chunks[0]
    for part in chunks[1:]:
        merged = merged.merge(part)
    for stats in variants + [merged]:
        assert stats.weight == ref.weight
        assert_mean_close(stats.mean, ref.mean, ref.scatter, stats.weight)
        assert_scatter_close(stats.scatter, ref.scatter, 1e-13)


def test_partial_fit_on_sorted_data_equals_fit():
    X, t = drifting_data(n=30_000)
    whole = LinearRegression().fit(X, t)
    chunked = LinearRegression()
    for rows in np.array_split(np.arange(len(X)), 11):
        chunked.partial_fit(X[rows], t[rows])
    np.testing.assert_allclose(chunked.coef_, whole.coef_, rtol=1e-10)
    np.testing.assert_allclose(chunked.predict(X), whole.predict(X), rtol=1e-12)


def test_weights_and_float32_take_the_centred_path_exactly():
    X, t = drifting_data(n=12_000)
    rng = np.random.default_rng(3)
    w = rng.integers(0, 3, size=len(X)).astype(float)
    w[2000:4500] = 0.0  # whole blocks of zero weight add nothing
    mean, S = exact_moments(X, t[:, None], w)
    stats = moments(X, t[:, None], w, rows=500)
    assert_mean_close(stats.mean, mean, S, stats.weight)
    assert_scatter_close(stats.scatter, S, 1e-13)
    repeated = np.repeat(np.arange(len(X)), w.astype(int))
    dup = moments(X[repeated], t[repeated, None])
    assert stats.weight == dup.weight
    assert_scatter_close(stats.scatter, dup.scatter, 1e-13)
    X32 = (X[:, 1:] / 1e3).astype(np.float32)
    mean, S = exact_moments(X32.astype(np.float64), t[:, None])
    stats = moments(X32, t[:, None], rows=500)
    assert_mean_close(stats.mean, mean, S, stats.weight)
    assert_scatter_close(stats.scatter, S, 1e-13)


def test_merge_keeps_digits_of_large_means():
    """Batches whose means are ~1e8 and spreads ~1: the merge works on offsets from
    the origin, not on the rounded absolute means."""
    rng = np.random.default_rng(4)
    Z = 1e8 + np.cumsum(rng.normal(size=(3000, 2)), axis=0) * 1e-3
    mean, S = exact_moments(Z[:, :1], Z[:, 1:])
    merged = None
    for rows in np.array_split(np.arange(len(Z)), 30):
        part = moments(Z[rows, :1], Z[rows, 1:])
        merged = part if merged is None else merged + part
    assert_mean_close(merged.mean, mean, S, merged.weight)
    assert_scatter_close(merged.scatter, S, 1e-12)


def test_standardised_features_are_read_in_place_even_when_sorted_by_the_target(monkeypatch):
    """Features near zero never take the copying path, also when the rows are sorted by
    a target far from zero (the target shift follows it); the result stays exact."""
    from problin._core.moments import least_squares
    calls = []
    centred = least_squares._centred_block
    monkeypatch.setattr(least_squares, "_centred_block",
                        lambda *args: calls.append(1) or centred(*args))
    rng = np.random.default_rng(5)
    X = rng.normal(size=(50_000, 4))
    t = 1e6 + X @ [1.0, 2.0, 0.0, -1.0] + rng.normal(size=len(X))
    order = np.argsort(t)
    X, t = np.ascontiguousarray(X[order]), t[order]
    mean, S = exact_moments(X, t[:, None])
    for rows in (500, None):
        stats = moments(X, t[:, None], rows=rows)
        assert not calls
        assert_mean_close(stats.mean, mean, S, stats.weight)
        assert_scatter_close(stats.scatter, S, 1e-13)
    stats = moments(X + 10.0, t[:, None], rows=500)  # far from zero: copied, still exact
    assert len(calls) == 100
    assert_scatter_close(stats.scatter, S, 1e-13)


def test_constant_direction_finds_explicit_and_implicit_constants():
    """``X v`` is constant (and not zero) along the direction found; none where the
    constant is not in the span (a zero column, a column that varies by 1e-6)."""
    rng = np.random.default_rng(11)
    n = 300
    X = rng.normal(size=(n, 3))
    t = rng.normal(size=(n, 1))
    dummies = np.eye(4)[rng.integers(0, 4, n)]
    weights = rng.uniform(0.5, 2.0, n)
    for Z, w in [(np.column_stack([X, np.full(n, -3.0)]), None),
                 (np.column_stack([dummies, X]), None), (np.column_stack([X, dummies]), weights)]:
        v = moments(Z, t, w).constant_direction(n)
        assert v is not None and np.linalg.norm(v) == pytest.approx(1.0)
        Zv = Z @ v
        assert np.ptp(Zv) <= 1e-12 * np.abs(Zv).max() and np.abs(Zv).max() > 0.1
    for extra in (np.zeros(n), 1000.0 + 1e-3 * rng.normal(size=n)):
        assert moments(np.column_stack([X, extra]), t).constant_direction(n) is None
    assert moments(X, t).constant_direction(n) is None
