"""SmallDenseDesign computes what the blocked Design computes, to rounding."""
import numpy as np
import pytest

from problin._core.model.basis import ColumnBasis
from problin._core.model.design import Design
from problin._core.model.design_small import SMALL_ELEMENTS, SmallDenseDesign, is_small_dense
from problin._core.model.families import CategoricalSoftmax

RTOL = 1e-12


def _pair(X, intercept, basis_kind):
    if basis_kind == "none":
        basis = None
    elif basis_kind == "centred":
        basis = ColumnBasis.of(X, intercept, centre="always" if intercept else "auto")
    else:
        basis = ColumnBasis.of(X, intercept, centre="auto")
    return Design(X, intercept, rows=37, basis=basis), SmallDenseDesign(X, intercept, basis=basis)


def _data(seed=0, n=300, d=5, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * np.logspace(-3, 3, d) + np.linspace(0, 50, d)
    return X.astype(dtype)


CASES = [(intercept, basis, dtype) for intercept in (True, False)
         for basis in ("none", "scaled", "centred") for dtype in (np.float64, np.float32)
         if not (basis == "centred" and not intercept)]


@pytest.mark.parametrize("intercept,basis,dtype", CASES)
def test_products_equal_the_blocked_design(intercept, basis, dtype):
    X = _data(dtype=dtype)
    big, small = _pair(X, intercept, basis)
    if basis == "centred":
        assert small.basis.center is not None
    rng = np.random.default_rng(1)
    p, n = big.n_params, big.n_samples
    theta, v = rng.normal(size=p), rng.normal(size=n)
    Theta, G = rng.normal(size=(3, p)), rng.normal(size=(n, 3))
    h = rng.uniform(0.1, 2.0, n)
    np.testing.assert_allclose(small.matvec(theta), big.matvec(theta), rtol=RTOL, atol=1e-9)
    np.testing.assert_allclose(small.rmatvec(v), big.rmatvec(v), rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(small.matmat(Theta), big.matmat(Theta), rtol=RTOL, atol=1e-9)
    np.testing.assert_allclose(small.rmatmat(G), big.rmatmat(G), rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(small.rmatmat(lambda lo, hi: G[lo:hi], 3), big.rmatmat(G),
                               rtol=1e-10, atol=1e-9)
    for single in (False, True):
        g_s, H_s = small.grad_and_gram(v, h, single)
        g_b, H_b = big.grad_and_gram(v, h, single)
        np.testing.assert_allclose(g_s, g_b, rtol=1e-10, atol=1e-9)
        np.testing.assert_allclose(H_s, H_b, rtol=1e-5 if single else 1e-10,
                                   atol=(1e-4 if single else 1e-9) * np.abs(H_b).max())
        np.testing.assert_array_equal(H_s, H_s.T)
    rows = np.array([0, 7, 299])
    np.testing.assert_allclose(small.dense_rows(rows), big.dense_rows(rows), rtol=RTOL)


@pytest.mark.parametrize("keep", [True, False])
def test_advance_equals_the_blocked_design(keep):
    X = _data(seed=2)
    big, small = _pair(X, True, "scaled")
    rng = np.random.default_rng(3)
    eta, step = rng.normal(size=big.n_samples), rng.normal(size=big.n_params) * 1e-3

    def derivatives(lo, hi, eta_b):
        return float(np.sum(eta_b ** 2)), 2 * eta_b, np.full(hi - lo, 2.0)

    got = small.advance(eta, step, derivatives, "double", keep=keep)
    want = big.advance(eta, step, derivatives, "double", keep=keep)
    for a, b in zip(got, want):
        if b is None:
            assert a is None
        else:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-9)
    out = (np.empty(big.n_samples), np.empty(big.n_samples))
    got = small.advance(None, step, derivatives, None, out=out)
    assert got[2] is out[0] and got[3] is out[1] and got[5] is None


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("basis", ["scaled", "centred"])
def test_softmax_products_equal_the_blocked_design(weighted, basis):
    X = _data(seed=4, n=400, d=4)
    big, small = _pair(X, True, basis)
    rng = np.random.default_rng(5)
    family = CategoricalSoftmax(4)
    t = rng.integers(0, 4, big.n_samples)
    sw = rng.uniform(0.5, 2.0, big.n_samples) if weighted else None
    Theta = rng.normal(size=(3, big.n_params)) * 0.3
    eta = big.matmat(Theta)
    _, state = family.derivatives(t, eta, sw)
    H_b = big.softmax_gram(state, sw)
    H_s = small.softmax_gram(state, sw)
    np.testing.assert_allclose(H_s, H_b, rtol=1e-10, atol=1e-12 * np.abs(H_b).max())
    np.testing.assert_array_equal(H_s, H_s.T)
    V = rng.normal(size=Theta.shape)
    np.testing.assert_allclose(small.softmax_hessp(state.P, sw, V),
                               big.softmax_hessp(state.P, sw, V), rtol=1e-10, atol=1e-10)
    # The Hessian-vector product agrees with the block Hessian.
    np.testing.assert_allclose(H_s @ V.ravel(), small.softmax_hessp(state.P, sw, V).ravel(),
                               rtol=1e-9, atol=1e-9)


def test_softmax_gram_keeps_the_exact_complements():
    """Rows fitted with probability near 1: the diagonal blocks use 1 - p exactly."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(50, 2))
    big, small = _pair(X, True, "scaled")
    family = CategoricalSoftmax(3)
    t = rng.integers(0, 3, 50)
    eta = np.column_stack([np.full(50, 40.0), np.zeros(50)])  # p(class 1) = 1 - 4e-18
    _, state = family.derivatives(t, eta)
    np.testing.assert_allclose(small.softmax_gram(state), big.softmax_gram(state), rtol=1e-12)
    assert small.softmax_gram(state)[0, 0] > 0  # p (1 - p) ~ 4e-18 * 50, not 0


def test_which_data_are_small():
    assert is_small_dense(np.zeros((10, 3)), True)
    assert not is_small_dense(np.zeros((SMALL_ELEMENTS, 3)), True)
    assert not is_small_dense(np.zeros((10, 3)).tolist(), True)
    import scipy.sparse as sp
    assert not is_small_dense(sp.csr_matrix(np.zeros((10, 3))), True)


def _softmax_problem(seed, n=400, d=4, K=4):
    """A small design, a softmax state on it and its Hessian by the blocked design."""
    rng = np.random.default_rng(seed)
    X = _data(seed=seed, n=n, d=d)
    big, small = _pair(X, True, "scaled")
    Theta = rng.normal(size=(K - 1, small.n_params)) * 0.3
    _, state = CategoricalSoftmax(K).derivatives(rng.integers(0, K, n), small.matmat(Theta))
    return small, state, big.softmax_gram(state)


def _assert_hessian(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12 * np.abs(want).max())


def test_softmax_gram_of_interleaved_designs_of_one_shape():
    """The Hessian's buffers kept between fits are claimed per design: two live
    designs of the same shape (a nested fit) never read each other's products."""
    (a, state_a, want_a), (b, state_b, want_b) = _softmax_problem(7), _softmax_problem(8)
    for _ in range(2):  # alternating claims
        _assert_hessian(a.softmax_gram(state_a), want_a)
        _assert_hessian(b.softmax_gram(state_b), want_b)
    _assert_hessian(SmallDenseDesign(a.X, True, basis=a.basis).softmax_gram(state_a), want_a)


def test_softmax_gram_in_threads_equals_the_blocked_design():
    """Each thread keeps its own buffers: concurrent Hessians are each their design's."""
    from concurrent.futures import ThreadPoolExecutor
    problems = [_softmax_problem(seed) for seed in range(6)]

    def work(i):
        design, state, want = problems[i % 6]
        for _ in range(5):
            _assert_hessian(design.softmax_gram(state), want)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(work, range(24)))
