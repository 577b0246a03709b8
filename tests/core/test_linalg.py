"""Gram kernels, Cholesky with jitter and column identification (problin._core.linalg)."""
import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal

from problin._core.blocks import iter_blocks
from problin._core.linalg import (
    Cholesky,
    add_weighted_gram,
    cholesky,
    equilibrated_cholesky,
    identified_columns,
    new_gram,
    symmetrize,
)


def _rel_err(A, B):
    return float(np.max(np.abs(A - B)) / max(np.max(np.abs(B)), 1e-300))


def _blocked_gram(X, r, rows, use_buffer=True):
    d = X.shape[1]
    G = new_gram(d)
    buffer = None
    for _, _, Xb, rb in iter_blocks(X, r, rows=rows):
        if use_buffer and buffer is None and not sp.issparse(Xb):
            buffer = np.empty(Xb.shape)
        out = add_weighted_gram(G, Xb, rb, buffer if use_buffer else None)
        assert out is G
    return symmetrize(G)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 6)) * np.array([1, 10, 0.1, 3, 1, 2])
    return X, rng


def test_new_gram_is_fortran_zeros():
    G = new_gram(4)
    assert G.shape == (4, 4) and G.dtype == np.float64
    assert G.flags.f_contiguous
    assert not G.any()


@pytest.mark.parametrize("rows", [1000, 97, 7])
@pytest.mark.parametrize("weights", ["nonneg", "with_zeros", "signed"])
@pytest.mark.parametrize("use_buffer", [True, False])
def test_blocked_gram_matches_dense(data, rows, weights, use_buffer):
    X, rng = data
    n = X.shape[0]
    r = rng.random(n) * 3
    if weights == "with_zeros":
        r[::3] = 0.0
    if weights == "signed":
        r = rng.normal(size=n)
    G = _blocked_gram(X, r, rows, use_buffer)
    want = X.T @ np.diag(r) @ X
    assert _rel_err(G, want) < 1e-12
    np.testing.assert_array_equal(G, G.T)


@pytest.mark.parametrize("weights", ["nonneg", "signed"])
def test_gram_float32_block(data, weights):
    X, rng = data
    X32 = X.astype(np.float32)
    r = rng.random(X.shape[0]) if weights == "nonneg" else rng.normal(size=X.shape[0])
    G = _blocked_gram(X32, r, rows=128)
    X64 = X32.astype(np.float64)  # the float32 values, exactly
    assert _rel_err(G, X64.T @ np.diag(r) @ X64) < 1e-12


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("weights", ["nonneg", "signed"])
def test_gram_sparse(fmt, weights):
    rng = np.random.default_rng(5)
    Xs = sp.random(400, 7, density=0.3, format="csr", random_state=6)
    Xd = Xs.toarray()
    r = rng.random(400) if weights == "nonneg" else rng.normal(size=400)
    G = new_gram(7)
    # Whole-matrix update in the requested format, then blocked CSR.
    add_weighted_gram(G, Xs.asformat(fmt), r)
    symmetrize(G)
    want = Xd.T @ np.diag(r) @ Xd
    assert _rel_err(G, want) < 1e-12
    assert _rel_err(_blocked_gram(Xs, r, rows=33), want) < 1e-12


def test_sparse_float32_gram():
    Xs = sp.random(300, 5, density=0.4, format="csr", random_state=1, dtype=np.float32)
    r = np.random.default_rng(1).random(300)
    Xd = Xs.toarray().astype(np.float64)
    assert _rel_err(_blocked_gram(Xs, r, rows=50), Xd.T @ np.diag(r) @ Xd) < 1e-6


@pytest.mark.parametrize("weights", ["nonneg", "signed"])
def test_gram_accumulates_into_c_ordered_matrix(data, weights):
    X, rng = data
    r = rng.random(X.shape[0]) if weights == "nonneg" else rng.normal(size=X.shape[0])
    G = np.zeros((X.shape[1], X.shape[1]))  # C order
    add_weighted_gram(G, X, r)
    symmetrize(G)
    assert _rel_err(G, X.T @ np.diag(r) @ X) < 1e-12


def test_add_weighted_gram_accumulates_on_existing_values(data):
    X, rng = data
    r = rng.random(X.shape[0])
    G = new_gram(X.shape[1])
    G[:] = np.eye(X.shape[1])
    add_weighted_gram(G, X, r)
    symmetrize(G)
    assert _rel_err(G, np.eye(X.shape[1]) + X.T @ np.diag(r) @ X) < 1e-12


def test_symmetrize_copies_upper_to_lower():
    A = np.arange(16.0).reshape(4, 4, order="F").copy(order="F")
    U = np.triu(A)
    out = symmetrize(A)
    assert out is A
    np.testing.assert_array_equal(A, U + np.triu(U, 1).T)


# ---------------------------------------------------------------- Cholesky

def _spd(d, rng, cond=1e3):
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    ev = np.logspace(0, np.log10(cond), d)
    return (Q * ev) @ Q.T


@pytest.mark.parametrize("d", [1, 2, 5, 20])
def test_cholesky_solve_logdet_inverse(d):
    rng = np.random.default_rng(d)
    A = _spd(d, rng)
    A = (A + A.T) / 2
    chol = cholesky(A)
    assert isinstance(chol, Cholesky)
    assert chol.jitter == 0.0
    b = rng.normal(size=d)
    B = rng.normal(size=(d, 3))
    np.testing.assert_allclose(chol.solve(b), np.linalg.solve(A, b), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(chol.solve(B), np.linalg.solve(A, B), rtol=1e-10, atol=1e-12)
    sign, logdet = np.linalg.slogdet(A)
    assert sign == 1
    assert chol.logdet() == pytest.approx(logdet, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(chol.inverse(), np.linalg.inv(A), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(A @ chol.inverse(), np.eye(d), atol=1e-10)


@pytest.mark.parametrize("d", [1, 11, 63, 64, 99])
def test_inverse_is_exactly_symmetric(d):
    # Below 64 the inverse is U^-1 U^-T by one numpy product, which numpy forms by
    # syrk (no symmetrize follows: the covariances downstream rely on exact symmetry).
    A = _spd(d, np.random.default_rng(d))
    inv = cholesky((A + A.T) / 2).inverse()
    np.testing.assert_array_equal(inv, inv.T)


def test_cholesky_does_not_modify_input_and_accepts_lists():
    A = np.array([[4.0, 2.0], [2.0, 3.0]])
    A0 = A.copy()
    chol = cholesky(A)
    np.testing.assert_array_equal(A, A0)
    chol2 = cholesky(A.tolist())
    np.testing.assert_allclose(chol2.solve([1.0, 2.0]), np.linalg.solve(A, [1.0, 2.0]))
    assert chol.logdet() == pytest.approx(np.log(8.0))


def test_cholesky_scale_invariance_of_jitter_decision():
    rng = np.random.default_rng(3)
    A = _spd(4, rng)
    for scale in (1e-200, 1e-8, 1.0, 1e8, 1e200):
        chol = cholesky(A * scale)
        assert chol.jitter == 0.0
        assert chol.logdet() == pytest.approx(np.linalg.slogdet(A)[1] + 4 * np.log(scale),
                                              rel=1e-12)


@pytest.mark.parametrize("A", [
    np.array([[1.0, 1.0], [1.0, 1.0]]),
    # Entries with exact square roots, so the second pivot is exactly zero
    # (a pivot that only rounds to +4e-16 is factored without jitter).
    np.array([[4.0, 4.0, 0.0], [4.0, 4.0, 0.0], [0.0, 0.0, 5.0]]),
    np.diag([1.0, 0.0, 2.0]),
    np.zeros((3, 3)),
], ids=["dup2", "dup3", "zero_diag", "zero"])
def test_cholesky_jitter_on_singular_psd(A):
    chol = cholesky(A)
    assert chol.jitter > 0
    scale = max(np.mean(np.abs(np.diag(A))), 1e-300)
    first = max(scale * 1e-12, 1e-12)
    assert first <= chol.jitter <= first * 1e11  # within the documented schedule
    x = chol.solve(np.ones(A.shape[0]))
    assert np.all(np.isfinite(x))
    assert np.isfinite(chol.logdet())
    # The factor is that of A + jitter I.
    c = chol.factor[0]
    np.testing.assert_allclose(c.T @ c, A + chol.jitter * np.eye(A.shape[0]),
                               atol=1e-12 * max(scale, 1.0))


def test_cholesky_jitter_is_smallest_that_works():
    A = np.array([[1.0, 1.0], [1.0, 1.0]])
    assert cholesky(A).jitter == pytest.approx(1e-12)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_cholesky_non_finite_raises(bad):
    A = np.eye(3)
    A[1, 2] = A[2, 1] = bad
    with pytest.raises(np.linalg.LinAlgError, match="non-finite"):
        cholesky(A)


def test_cholesky_indefinite_raises():
    with pytest.raises(np.linalg.LinAlgError):
        cholesky(np.diag([1.0, -1.0]))
    with pytest.raises(np.linalg.LinAlgError):
        cholesky(np.array([[1.0, 2.0], [2.0, 1.0]]))


# ---------------------------------------------------------------- identified_columns

def _gram(X):
    return X.T @ X


def test_identified_columns_full_rank_keeps_all():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 6)) * np.array([1e-4, 1, 1e4, 3, 1, 1])
    X[:, 4] = X[:, 3] + 1e-3 * rng.normal(size=200)  # nearly but not exactly collinear
    mask = identified_columns(_gram(X))
    assert mask.dtype == bool
    assert mask.all()


@pytest.mark.parametrize("share", [1e-3, 1e-8, 1e-11])
def test_a_prior_identifies_the_columns_it_covers_however_weak(share):
    # A duplicated column: the data leave x1 - x4 free; a prior on x4 alone, of
    # `share` of its diagonal, pins it. Below 1e-9 rtol used to call it unidentified.
    rng = np.random.default_rng(2)
    base = rng.normal(size=(300, 4))
    G = _gram(np.column_stack([base, base[:, 1]]))
    prior = np.zeros(5)
    prior[4] = share * G[4, 4]
    H = G + np.diag(prior)
    assert identified_columns(H, prior_diag=prior).all()
    assert equilibrated_cholesky(H, prior_diag=prior) is not None
    assert not identified_columns(G, prior_diag=np.zeros(5))[4]  # no prior: not identified
    # A prior lost in rounding (below _PRIOR_SHARE of the diagonal) identifies nothing.
    tiny = np.zeros(5)
    tiny[4] = 1e-15 * G[4, 4]
    assert not identified_columns(G + np.diag(tiny), prior_diag=tiny)[4]


@pytest.mark.parametrize("case", ["duplicate", "scaled_copy", "zero", "combination", "all"])
def test_identified_columns_flags_redundant_columns(case):
    rng = np.random.default_rng(1)
    n = 300
    base = rng.normal(size=(n, 4))
    if case == "duplicate":
        X, groups = np.column_stack([base, base[:, 1]]), [{1, 4}]
    elif case == "scaled_copy":
        X, groups = np.column_stack([base[:, :2], -3.5 * base[:, 0], base[:, 2:]]), [{0, 2}]
    elif case == "zero":
        X, groups = np.column_stack([base[:, :2], np.zeros(n), base[:, 2:]]), [{2}]
    elif case == "combination":
        X = np.column_stack([base, base[:, 0] - 2 * base[:, 3]])
        groups = [{0, 3, 4}]
    else:
        X = np.column_stack([base, np.zeros(n), 1e3 * base[:, 2], base[:, 0]])
        groups = [{4}, {2, 5}, {0, 6}]
    H = _gram(X)
    mask = identified_columns(H)
    assert mask.shape == (X.shape[1],)
    assert mask.sum() == np.linalg.matrix_rank(X)
    for g in groups:
        if len(g) == 1:  # a zero column is never identified
            assert not mask[list(g)].any()
        else:  # exactly one member of a collinear group is dropped
            assert mask[list(g)].sum() == len(g) - 1
    kept = np.flatnonzero(mask)
    assert np.linalg.matrix_rank(X[:, kept]) == kept.size
    assert mask[[j for j in range(X.shape[1]) if not any(j in g for g in groups)]].all()


def test_identified_columns_intercept_and_constant_column():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(100, 2))
    Z = np.column_stack([np.ones(100), x, np.full(100, 7.0)])  # [1, X] with constant column
    mask = identified_columns(_gram(Z))
    assert mask.sum() == 3
    assert mask[1] and mask[2]
    assert mask[[0, 3]].sum() == 1


def test_identified_columns_all_zero_and_weighted():
    assert not identified_columns(np.zeros((3, 3))).any()
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 3))
    X = np.column_stack([X, X[:, 0] + X[:, 1]])
    w = rng.random(50)
    assert identified_columns(X.T @ (w[:, None] * X)).sum() == 3


def test_identified_columns_drops_the_later_column():
    # Documented: columns are taken in order, so the later of a collinear pair goes.
    rng = np.random.default_rng(4)
    x = rng.normal(size=(80, 3))
    X = np.column_stack([x[:, 0], 2 * x[:, 0], x[:, 1], x[:, 2], x[:, 1] + x[:, 2]])
    np.testing.assert_array_equal(identified_columns(_gram(X)),
                                  [True, False, True, True, False])
    X = np.column_stack([np.zeros(80), x[:, 0], x[:, 0]])
    np.testing.assert_array_equal(identified_columns(_gram(X)), [False, True, False])


def test_identified_columns_is_scale_invariant():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(60, 3))
    X = np.column_stack([x, x[:, 0] - x[:, 1]])
    for scales in ([1, 1, 1, 1], [1e-6, 1e6, 1, 1e3], [1e8, 1, 1e-8, 1]):
        Xs = X * np.array(scales, dtype=float)
        np.testing.assert_array_equal(identified_columns(_gram(Xs)), [True, True, True, False])


# ---------------------------------------------------------------- solve_psd

def test_solve_psd_positive_definite_matches_solve():
    from problin._core.linalg import solve_psd
    rng = np.random.default_rng(6)
    A = _spd(6, rng)
    A = (A + A.T) / 2
    b = rng.normal(size=6)
    x, rank = solve_psd(A, b)
    assert rank == 6
    np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-10)


def test_solve_psd_singular_gives_minimum_norm_solution():
    from problin._core.linalg import solve_psd
    rng = np.random.default_rng(7)
    R = rng.normal(size=(5, 3))
    A = R @ R.T  # rank 3
    b = A @ rng.normal(size=5)  # consistent right-hand side
    x, rank = solve_psd(A, b)
    assert rank == 3
    assert np.all(np.isfinite(x))
    np.testing.assert_allclose(A @ x, b, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(x, np.linalg.pinv(A, rcond=1e-10) @ b, rtol=1e-8, atol=1e-10)
    # Exactly singular (duplicated column) with exact-zero pivot.
    A = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 2.0]])
    x, rank = solve_psd(A, np.array([2.0, 2.0, 4.0]))
    assert rank == 2
    np.testing.assert_allclose(x, [1.0, 1.0, 2.0], rtol=1e-12)
    x, rank = solve_psd(np.zeros((3, 3)), np.ones(3))
    assert rank == 0
    np.testing.assert_array_equal(x, np.zeros(3))


@pytest.mark.parametrize("seed", [3, 6, 17])
def test_solve_psd_numerically_singular_that_cholesky_accepts(seed):
    from scipy.linalg import lapack

    from problin._core.linalg import solve_psd
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(50, 3))
    Z = np.column_stack([Z, 3 * Z[:, 1]])
    # Entry by entry, so the duplicated rows/columns are bitwise consistent.
    A = np.array([[np.dot(Z[:, i], Z[:, j]) for j in range(4)] for i in range(4)])
    b = A @ rng.normal(size=4)
    if lapack.dpotrf(A, lower=0)[1] != 0:
        pytest.skip("this BLAS rejects the factorisation: the fallback path is taken")
    x, rank = solve_psd(A, b)
    assert rank == 3
    np.testing.assert_allclose(x, np.linalg.pinv(A, rcond=1e-10) @ b, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_symmetrize_copies_the_upper_triangle_in_any_memory_order(order, dtype):
    A = np.asarray(np.random.default_rng(2).normal(size=(7, 7)), dtype=dtype, order=order)
    upper = np.triu(A)
    G = symmetrize(A)
    assert G is A and G.dtype == dtype
    assert_array_equal(G, upper + np.triu(upper, 1).T)
