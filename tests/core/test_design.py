"""The implicit-intercept design operator against explicit numpy on [1, X]."""
import numpy as np
import pytest
import scipy.sparse as sp

from problin._core.model.design import Design

N, D = 700, 5


def _make(kind, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, D)) * np.array([1.0, 10.0, 0.01, 3.0, 1.0]) + np.array(
        [0.0, 5.0, -1.0, 100.0, 0.0])
    X[rng.random((N, D)) < 0.3] = 0.0
    if kind == "f64":
        return X, X
    if kind == "f32":
        X32 = X.astype(np.float32)
        return X32, X32.astype(np.float64)  # reference on the float32 values exactly
    if kind == "csr":
        return sp.csr_matrix(X), X
    if kind == "csr32":
        Xs = sp.csr_matrix(X.astype(np.float32))
        return Xs, Xs.toarray().astype(np.float64)
    if kind == "f64_fortran":
        return np.asfortranarray(X), X
    raise AssertionError(kind)


KINDS = ["f64", "f32", "csr", "csr32", "f64_fortran"]
ROWS = [None, 64, 1]


def _full(Xd, intercept):
    return np.column_stack([np.ones(Xd.shape[0]), Xd]) if intercept else Xd


def _rel(a, b):
    return float(np.max(np.abs(np.asarray(a) - b)) / max(np.max(np.abs(b)), 1e-300))


@pytest.fixture(params=KINDS)
def kind(request):
    return request.param


@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("rows", ROWS)
def test_shapes_and_matvec_rmatvec(kind, intercept, rows):
    X, Xd = _make(kind)
    design = Design(X, intercept, rows=rows)
    assert design.n_samples == N and design.n_features == D
    assert design.n_params == D + int(intercept)
    assert design.intercept is intercept
    Z = _full(Xd, intercept)
    rng = np.random.default_rng(1)
    theta = rng.normal(size=design.n_params)
    eta = design.matvec(theta)
    assert eta.dtype == np.float64 and eta.shape == (N,)
    assert _rel(eta, Z @ theta) < 1e-12
    v = rng.normal(size=N)
    out = design.rmatvec(v)
    assert out.dtype == np.float64 and out.shape == (design.n_params,)
    assert _rel(out, Z.T @ v) < 1e-12
    # Lists are accepted.
    assert _rel(design.matvec(list(theta)), Z @ theta) < 1e-12
    assert _rel(design.rmatvec(list(v)), Z.T @ v) < 1e-12


@pytest.mark.parametrize("intercept", [True, False])
def test_matvec_with_zero_intercept_and_zero_theta(kind, intercept):
    X, Xd = _make(kind)
    design = Design(X, intercept)
    np.testing.assert_array_equal(design.matvec(np.zeros(design.n_params)), np.zeros(N))
    theta = np.arange(design.n_params, dtype=float)
    if intercept:
        theta[0] = 0.0
    assert _rel(design.matvec(theta), _full(Xd, intercept) @ theta) < 1e-12


@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("rows", ROWS)
@pytest.mark.parametrize("signed", [False, True])
def test_grad_and_gram_and_gram(kind, intercept, rows, signed):
    X, Xd = _make(kind)
    design = Design(X, intercept, rows=rows)
    Z = _full(Xd, intercept)
    rng = np.random.default_rng(2)
    g = rng.normal(size=N)
    h = rng.normal(size=N) if signed else rng.random(N)
    grad, H = design.grad_and_gram(g, h)
    p = design.n_params
    assert grad.shape == (p,) and H.shape == (p, p)
    assert grad.dtype == np.float64 and H.dtype == np.float64
    assert _rel(grad, Z.T @ g) < 1e-12
    want = Z.T @ (h[:, None] * Z)
    assert _rel(H, want) < 1e-12
    np.testing.assert_array_equal(H, H.T)
    assert _rel(design.gram(h), want) < 1e-12


def test_gram_rows_are_independent_of_block_size(kind):
    X, _ = _make(kind)
    h = np.random.default_rng(3).random(N)
    ref = Design(X, True).gram(h)
    for rows in (1, 2, 7, 699, 700, 10000):
        assert _rel(Design(X, True, rows=rows).gram(h), ref) < 1e-13


@pytest.mark.parametrize("intercept", [True, False])
def test_column(kind, intercept):
    X, Xd = _make(kind)
    design = Design(X, intercept)
    Z = _full(Xd, intercept)
    for j in range(design.n_params):
        col = design.column(j)
        assert col.dtype == np.float64 and col.shape == (N,)
        np.testing.assert_array_equal(col, Z[:, j])


@pytest.mark.parametrize("rows", ROWS)
def test_column_moments(kind, rows):
    X, Xd = _make(kind)
    rtol = 1e-12  # float32 blocks are summed in float64
    for intercept in (True, False):
        mean, std = Design(X, intercept, rows=rows).column_moments()
        assert mean.shape == (D,) and std.shape == (D,)
        assert mean.dtype == np.float64 and std.dtype == np.float64
        np.testing.assert_allclose(mean, Xd.mean(axis=0), rtol=rtol, atol=1e-14)
        # One-pass variance (documented as only a preconditioner): relative
        # error ~ eps * (mean/std)^2, small for these columns.
        np.testing.assert_allclose(std, Xd.std(axis=0), rtol=rtol)


def test_column_moments_sparse_float32_refined_in_float64():
    X, Xd = _make("csr32")
    mean, std = Design(X, True).column_moments()
    np.testing.assert_allclose(mean, Xd.mean(axis=0), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(std, Xd.std(axis=0), rtol=1e-12)


def test_column_moments_constant_and_zero_columns():
    X = np.column_stack([np.full(50, 3.0), np.zeros(50), np.arange(50.0)])
    for A in (X, sp.csr_matrix(X), X.astype(np.float32)):
        mean, std = Design(A, True, rows=8).column_moments()
        np.testing.assert_allclose(mean, [3.0, 0.0, 24.5])
        assert std[0] == pytest.approx(0.0, abs=1e-7)
        assert std[1] == 0.0
        assert std[2] == pytest.approx(np.arange(50.0).std(), rel=1e-12)
        assert np.all(np.isfinite(std)) and np.all(std >= 0)


def test_design_does_not_modify_x_or_vectors(kind):
    X, _ = _make(kind)
    X0 = X.copy()
    design = Design(X, True, rows=50)
    rng = np.random.default_rng(4)
    g, h, theta = rng.normal(size=N), rng.random(N), rng.normal(size=D + 1)
    g0, h0, t0 = g.copy(), h.copy(), theta.copy()
    design.matvec(theta)
    design.rmatvec(g)
    design.grad_and_gram(g, h)
    design.column_moments()
    design.column(2)
    if sp.issparse(X):
        assert (X != X0).nnz == 0
    else:
        np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(g, g0)
    np.testing.assert_array_equal(h, h0)
    np.testing.assert_array_equal(theta, t0)


def test_float32_products_are_refined_in_float64():
    # Products of float32 data are accumulated in float64: no float32 rounding of eta.
    rng = np.random.default_rng(5)
    X32 = (rng.normal(size=(200, 3)) * 1e3).astype(np.float32)
    theta = np.array([0.1, 1 / 3, -2 / 7, 1e-5])
    Xd = X32.astype(np.float64)
    design = Design(X32, True, rows=16)
    np.testing.assert_allclose(design.matvec(theta), theta[0] + Xd @ theta[1:], rtol=1e-13,
                               atol=1e-10)
    g = rng.normal(size=200) / 3
    np.testing.assert_allclose(design.rmatvec(g)[1:], Xd.T @ g, rtol=1e-12)


def test_intercept_only_design():
    X = np.empty((10, 0))
    design = Design(X, True)
    np.testing.assert_array_equal(design.matvec(np.array([2.0])), np.full(10, 2.0))
    np.testing.assert_array_equal(design.rmatvec(np.ones(10)), [10.0])
    h = np.arange(10.0)
    grad, H = design.grad_and_gram(np.ones(10), h)
    np.testing.assert_array_equal(grad, [10.0])
    np.testing.assert_array_equal(H, [[h.sum()]])


@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("rows", [None, 64, 7])
def test_rmatmat_of_a_function_of_rows_equals_the_whole_product(kind, intercept, rows):
    """``X^T G`` with ``G`` formed by row ranges (a chunk of blocks at a time, their
    column sums per chunk) equals the product with G whole, for every block size
    and a row count that is no multiple of the chunk."""
    X, Xd = _make(kind)
    design = Design(X, intercept, rows=rows)
    G = np.random.default_rng(2).normal(size=(N, 4))
    asked = []

    def rows_of_G(lo, hi):
        asked.append((lo, hi))
        return G[lo:hi]

    expected = (_full(Xd, intercept).T @ G).T
    got = design.rmatmat(rows_of_G, 4)
    assert got.shape == (4, design.n_params)
    assert _rel(got, expected) < 1e-12
    assert _rel(design.rmatmat(G), expected) < 1e-12
    if not sp.issparse(X):  # every row asked for exactly once
        covered = np.zeros(N, dtype=int)
        for lo, hi in asked:
            covered[lo:hi] += 1
        assert (covered == 1).all()
