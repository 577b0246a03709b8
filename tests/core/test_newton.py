"""The Newton engine, the first-order solvers and the separation diagnostic."""
import numpy as np
import pytest
import scipy.sparse as sp
import statsmodels.api as sm

from problin._core.model.design import Design
from problin._core.model.families import BernoulliLogit, BernoulliProbit
from problin._core.model.objective import GLMObjective
from problin._core.model.separation import separated_rows
from problin._core.solvers.ascent import (
    Standardiser,
    coordinate_descent,
    gradient_descent,
)
from problin._core.solvers.newton import SolverResult, backtrack, newton


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)) * np.array([1.0, 3.0, 0.5, 2.0]) + np.array([0.0, 1.0, -1.0, 2.0])
    beta = np.array([0.3, -0.8, 0.5, 0.2, 0.1])
    eta = beta[0] + X @ beta[1:]
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    return X, y


@pytest.fixture(scope="module")
def data():
    return _data()


def _objective(X, y, family=None, **kw):
    return GLMObjective(Design(X, True), family or BernoulliLogit(), y, **kw)


def _value_grad(obj, theta):
    return obj.value_grad(theta, obj.linear_predictor(theta))


@pytest.fixture(scope="module")
def logit_fit(data):
    X, y = data
    return newton(_objective(X, y), np.zeros(5))


# ---------------------------------------------------------------- Newton

def test_newton_matches_statsmodels_logit(data, logit_fit):
    X, y = data
    res = logit_fit
    assert isinstance(res, SolverResult)
    assert res.converged and res.message == "converged"
    ref = sm.Logit(y, sm.add_constant(X)).fit(disp=0, method="newton", tol=1e-14, maxiter=100)
    np.testing.assert_allclose(res.theta, ref.params, rtol=1e-8)
    assert -res.value == pytest.approx(ref.llf, rel=1e-12)
    Href = -ref.model.hessian(ref.params)
    np.testing.assert_allclose(res.hessian, Href, rtol=0, atol=1e-10 * np.abs(Href).max())
    assert not res.rank_deficient


def test_newton_probit_matches_statsmodels(data):
    X, y = data
    ref = sm.Probit(y, sm.add_constant(X)).fit(disp=0, method="newton", tol=1e-14, maxiter=100)
    for information in ("observed", "expected"):
        res = newton(_objective(X, y, BernoulliProbit(), information=information), np.zeros(5))
        assert res.converged
        np.testing.assert_allclose(res.theta, ref.params, rtol=1e-8)
        assert -res.value == pytest.approx(ref.llf, rel=1e-12)


def test_history_is_non_increasing_and_consistent(logit_fit, data):
    X, y = data
    res = logit_fit
    h = np.asarray(res.history)
    assert len(h) == res.n_iter + 1
    assert np.all(np.diff(h) <= 0)
    assert h[0] == pytest.approx(len(y) * np.log(2), rel=1e-14)  # theta0 = 0
    assert res.value == pytest.approx(h[-1], rel=1e-14, abs=0)
    obj = _objective(X, y)
    np.testing.assert_allclose(res.eta, obj.linear_predictor(res.theta), rtol=1e-12, atol=1e-12)
    assert obj.value(res.theta, res.eta) == pytest.approx(res.value, rel=1e-14)


def test_final_gradient_and_hessian(logit_fit, data):
    X, y = data
    res = logit_fit
    obj = _objective(X, y)
    f, g = _value_grad(obj, res.theta)
    np.testing.assert_allclose(res.grad, g, rtol=1e-12, atol=1e-12)
    # The gradient vanishes at the optimum (scale: sum |x_ij| ~ 1e3).
    assert np.max(np.abs(g)) < 1e-8
    # Hessian = finite differences of the gradient (central, step 1e-5).
    p = res.theta.size
    fd = np.empty((p, p))
    step = 1e-5
    for j in range(p):
        e = np.zeros(p)
        e[j] = step
        fd[:, j] = (_value_grad(obj, res.theta + e)[1] - _value_grad(obj, res.theta - e)[1]) / (
            2 * step)
    np.testing.assert_allclose(res.hessian, fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max())
    np.testing.assert_array_equal(res.hessian, res.hessian.T)
    # And it is the analytic X^T diag(p(1-p)) X.
    Z = np.column_stack([np.ones(len(y)), X])
    pr = 1 / (1 + np.exp(-Z @ res.theta))
    np.testing.assert_allclose(res.hessian, Z.T @ ((pr * (1 - pr))[:, None] * Z), rtol=1e-11)


def test_final_hessian_optional(data):
    X, y = data
    res = newton(_objective(X, y), np.zeros(5), final_hessian=False)
    assert res.converged
    assert res.hessian is None and res.grad is None


def test_prior_precision_stationarity(data):
    X, y = data
    rng = np.random.default_rng(1)
    R = rng.normal(size=(5, 5))
    P = R @ R.T + np.diag([0.0, 1.0, 2.0, 3.0, 4.0])
    m = rng.normal(size=5)
    for prior_mean in (None, m):
        obj = _objective(X, y, prior_precision=P, prior_mean=prior_mean)
        res = newton(obj, np.zeros(5))
        assert res.converged
        theta = res.theta
        Z = np.column_stack([np.ones(len(y)), X])
        pr = 1 / (1 + np.exp(-Z @ theta))
        mean = np.zeros(5) if prior_mean is None else prior_mean
        stationarity = Z.T @ (pr - y) + P @ (theta - mean)
        assert np.max(np.abs(stationarity)) < 1e-8
        np.testing.assert_allclose(res.grad, stationarity, atol=1e-10)
        np.testing.assert_allclose(res.hessian, Z.T @ ((pr * (1 - pr))[:, None] * Z) + P,
                                   rtol=1e-11)
        f = obj.value(theta, res.eta)
        r = theta - mean
        assert f == pytest.approx(obj.family.loss(y, res.eta) + 0.5 * r @ P @ r, rel=1e-14)


def test_prior_shrinks_towards_mean(data):
    """Larger prior precision on the coefficients pulls them towards the prior mean."""
    X, y = data
    norms = []
    for alpha in (0.0, 1.0, 10.0, 1e3, 1e8):
        P = alpha * np.diag([0.0, 1, 1, 1, 1])
        res = newton(_objective(X, y, prior_precision=P), np.zeros(5))
        assert res.converged
        norms.append(np.linalg.norm(res.theta[1:]))
    assert norms == sorted(norms, reverse=True)
    assert norms[-1] < 1e-5


def test_max_iter_one_not_converged(data):
    X, y = data
    res = newton(_objective(X, y), np.zeros(5), max_iter=1)
    assert not res.converged
    assert res.n_iter == 1
    assert "maximum" in res.message
    assert len(res.history) == 2 and res.history[1] < res.history[0]
    # The returned derivatives belong to the returned point.
    obj = _objective(X, y)
    np.testing.assert_allclose(res.grad, _value_grad(obj, res.theta)[1], rtol=1e-12)


def test_newton_from_optimum_and_sparse_and_float32(data, logit_fit):
    X, y = data
    res = newton(_objective(X, y), logit_fit.theta)
    assert res.converged and res.n_iter == 1
    np.testing.assert_allclose(res.theta, logit_fit.theta, rtol=1e-8, atol=1e-10)
    res = newton(GLMObjective(Design(sp.csr_matrix(X), True), BernoulliLogit(), y), np.zeros(5))
    np.testing.assert_allclose(res.theta, logit_fit.theta, rtol=1e-10)
    res = newton(GLMObjective(Design(X.astype(np.float32), True, rows=64), BernoulliLogit(), y),
                 np.zeros(5))
    ref = newton(_objective(X.astype(np.float32).astype(np.float64), y), np.zeros(5))
    np.testing.assert_allclose(res.theta, ref.theta, rtol=1e-10)


def test_newton_with_sample_weights_equals_row_repetition(data):
    X, y = data
    rng = np.random.default_rng(2)
    counts = rng.integers(0, 3, size=len(y))
    counts[:2] = 1
    w = counts.astype(float)
    res_w = newton(_objective(X, y, sample_weight=w), np.zeros(5))
    rep = np.repeat(np.arange(len(y)), counts)
    res_r = newton(_objective(X[rep], y[rep]), np.zeros(5))
    np.testing.assert_allclose(res_w.theta, res_r.theta, rtol=1e-9)
    assert res_w.value == pytest.approx(res_r.value, rel=1e-12)


def test_rank_deficient_design_is_flagged(data):
    X, y = data
    Xd = np.column_stack([X, X[:, 1]])
    res = newton(_objective(Xd, y), np.zeros(6))
    assert res.converged
    assert res.rank_deficient
    assert np.all(np.isfinite(res.theta))
    full = newton(_objective(X, y), np.zeros(5))
    assert res.value == pytest.approx(full.value, rel=1e-12)
    # The duplicated coefficient's total is identified.
    assert res.theta[2] + res.theta[5] == pytest.approx(full.theta[2], rel=1e-7)
    np.testing.assert_allclose(res.eta, full.eta, rtol=1e-8, atol=1e-9)


def test_rank_deficient_newton_gives_minimum_norm_split(data):
    X, y = data
    Xd = np.column_stack([X, X[:, 1]])
    res = newton(_objective(Xd, y), np.zeros(6))
    assert res.theta[2] == pytest.approx(res.theta[5], rel=1e-6)


def test_backtrack_armijo():
    X, y = _data(100, seed=3)
    obj = _objective(X, y)
    theta = np.zeros(5)
    eta = obj.linear_predictor(theta)
    f, g = obj.value_grad(theta, eta)
    d = -g  # descent direction, far too long a step at t = 1
    Xd = obj.design.matvec(d)
    t, f_new, eta_new = backtrack(obj, theta, eta, f, float(g @ d), d, Xd)
    assert t is not None and 0 < t < 1
    assert f_new <= f + 1e-4 * t * float(g @ d)
    np.testing.assert_allclose(eta_new, obj.linear_predictor(theta + t * d), atol=1e-12)
    # An ascent direction: no step decreases f.
    t, f_same, eta_same = backtrack(obj, theta, eta, f, -float(g @ d), -d, -Xd)
    assert t is None and f_same == f and eta_same is eta


# ---------------------------------------------------------------- first-order solvers

@pytest.mark.parametrize("solver", [gradient_descent, coordinate_descent])
@pytest.mark.parametrize("prior", [False, True])
def test_first_order_solvers_reach_newton_optimum(data, solver, prior):
    X, y = data
    P = np.diag([0.0, 2.0, 1.0, 0.5, 3.0]) if prior else None
    obj = _objective(X, y, prior_precision=P)
    ref = newton(obj, np.zeros(5), tol=1e-14)
    res = solver(obj, np.zeros(5), tol=1e-10)
    assert res.converged
    np.testing.assert_allclose(res.theta, ref.theta, rtol=1e-6, atol=1e-9)
    assert res.value == pytest.approx(ref.value, rel=1e-12)
    h = np.asarray(res.history)
    assert np.all(np.diff(h) <= 1e-12 * np.abs(h[:-1]))


@pytest.mark.parametrize("solver", [gradient_descent, coordinate_descent])
def test_first_order_solvers_probit_and_no_intercept(data, solver):
    X, y = data
    obj = GLMObjective(Design(X, False), BernoulliProbit(), y)
    ref = newton(obj, np.zeros(4), tol=1e-14)
    res = solver(obj, np.zeros(4), tol=1e-10)
    assert res.converged
    np.testing.assert_allclose(res.theta, ref.theta, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("solver", [gradient_descent, coordinate_descent])
def test_first_order_solvers_iteration_cap(data, solver):
    X, y = data
    res = solver(_objective(X, y), np.zeros(5), max_iter=1, tol=1e-12)
    assert not res.converged
    assert res.n_iter == 1


def _dense_map(design, family=None):
    """The matrix of the Standardiser, column by column."""
    T = Standardiser(GLMObjective(design, family or BernoulliLogit(), np.zeros(design.n_samples)))
    return T, np.column_stack([T.column(j) for j in range(design.n_params)])


def test_standardiser(data):
    X, _ = data
    design = Design(X, True)
    T, M = _dense_map(design)
    Z = np.column_stack([np.ones(len(X)), X])
    S = Z @ M  # standardised design: [1, (X - mean) / std]
    np.testing.assert_allclose(S[:, 0], 1.0)
    np.testing.assert_allclose(S[:, 1:].mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(S[:, 1:].std(axis=0), 1.0, rtol=1e-12)
    u = np.arange(1.0, 6.0)
    np.testing.assert_allclose(T.apply(u), M @ u, rtol=1e-14)
    np.testing.assert_allclose(T.apply_transpose(u), M.T @ u, rtol=1e-14)
    for j in range(design.n_params):
        np.testing.assert_allclose(T.design_column(design, j), Z @ M[:, j], rtol=1e-12,
                                   atol=1e-12)
    _, M0 = _dense_map(Design(X, False))
    np.testing.assert_allclose(np.diag(M0), 1 / X.std(axis=0), rtol=1e-12)
    # A constant column keeps scale 1 rather than dividing by zero.
    _, Mc = _dense_map(Design(np.column_stack([X, np.full(len(X), 2.0)]), True))
    assert np.all(np.isfinite(Mc)) and Mc[-1, -1] == 1.0


# ---------------------------------------------------------------- separation

def test_separation_complete():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 2))
    y = (x[:, 0] - 0.5 * x[:, 1] > 0.2).astype(float)
    for X in (x, sp.csr_matrix(x)):
        assert separated_rows(Design(X, True), y).all()


def test_separation_complete_one_dimensional():
    for seed in range(3):
        rng = np.random.default_rng(seed)
        x = rng.normal(size=40)
        y = (x > 0).astype(float)
        assert separated_rows(Design(x[:, None], True), y).all()
    x = np.array([-2.0, -1.0, 1.0, 2.0])
    assert separated_rows(Design(x[:, None], True), np.array([0, 0, 1, 1.0])).all()
    assert separated_rows(Design(x[:, None], False), np.array([0, 0, 1, 1.0])).all()


def test_separation_quasi_complete():
    # x1 > 0 only in class 1, x1 < 0 only in class 0; rows with x1 == 0 hold
    # both classes with random x2, so only the x1 != 0 rows are separated.
    rng = np.random.default_rng(1)
    n = 20
    x1 = np.r_[rng.uniform(0.5, 2, n), -rng.uniform(0.5, 2, n), np.zeros(n)]
    y = np.r_[np.ones(n), np.zeros(n), rng.integers(0, 2, n)]
    y[2 * n], y[2 * n + 1] = 0, 1
    X = np.column_stack([x1, rng.normal(size=3 * n)])
    expected = np.r_[np.ones(2 * n, bool), np.zeros(n, bool)]
    for A in (X, sp.csr_matrix(X)):
        np.testing.assert_array_equal(separated_rows(Design(A, True), y), expected)
    # Zero-weight rows are ignored (never flagged).
    w = np.ones(3 * n)
    w[:5] = 0.0
    mask = separated_rows(Design(X, True), y, w)
    np.testing.assert_array_equal(mask, expected & (w > 0))


def test_separation_quasi_with_a_single_tied_point():
    # Classic quasi-separation: the classes touch at one x value shared by both.
    x = np.array([-3.0, -2.0, -1.0, 0.0, 0.0, 1.0, 2.0, 3.0])
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1.0])
    mask = separated_rows(Design(x[:, None], True), y)
    np.testing.assert_array_equal(mask, [True, True, True, False, False, True, True, True])


def test_separation_none_on_overlapping_data(data):
    X, y = data
    assert not separated_rows(Design(X, True), y).any()
    assert not separated_rows(Design(sp.csr_matrix(X), True), y).any()
    x = np.array([-1.0, 0.5, 1.0, -0.5])
    assert not separated_rows(Design(x[:, None], True), np.array([0, 0, 1, 1.0])).any()


def test_separation_with_intercept_only_direction():
    # All rows of one class: the intercept alone separates everything.
    X = np.random.default_rng(4).normal(size=(10, 2))
    assert separated_rows(Design(X, True), np.ones(10)).all()
    assert separated_rows(Design(X, True), np.zeros(10)).all()


@pytest.mark.parametrize("family", [BernoulliLogit(), BernoulliProbit()])
@pytest.mark.parametrize("scale", [1e-8, 1e-3, 1e-1])
def test_hessian_change_bound_holds(family, scale):
    """The cheap bound is never below the exact relative change of the Hessian
    in its own metric, max |v^T (H_new - H) v| / v^T H v (a generalised eigenvalue).
    (On data above SMALL_ELEMENTS: smaller data rebuild the Hessian instead.)"""
    from scipy.linalg import eigh

    from problin._core.model.design_small import SMALL_ELEMENTS
    from problin._core.solvers.newton_exact import _hessian_change
    X, y = _data(n=SMALL_ELEMENTS // 5 + 1000)
    obj = _objective(X, y, family)
    assert obj.design.n_samples * obj.n_params > SMALL_ELEMENTS
    theta = newton(obj, np.zeros(5)).theta
    step = scale * np.random.default_rng(1).normal(size=5)
    eta_old, eta_new = obj.linear_predictor(theta), obj.linear_predictor(theta + step)
    H = obj.value_grad_hess(theta, eta_old)[2]
    H_new = obj.value_grad_hess(theta + step, eta_new)[2]
    exact = np.max(np.abs(eigh(H_new - H, H, eigvals_only=True)))
    obj.row_derivatives(eta_old)  # the engine calls it with eta_old's derivatives cached
    bound = _hessian_change(obj, eta_old, eta_new, H).bound
    assert bound >= exact
    if scale == 1e-8:
        assert bound <= 1e-6  # small steps pass the engine's 1e-6 test


def test_small_data_bound_the_hessians_change_uniformly_or_rebuild_it(data):
    # Below SMALL_ELEMENTS the row-wise bound costs more than a new Hessian: only the
    # family's uniform bound expm1(L max |delta eta|) is tried (logit: L = 1; the probit
    # has none: inf); the engine's result carries the Hessian at the answer to its 1e-6.
    from scipy.linalg import eigh

    from problin._core.solvers.newton_exact import _hessian_change
    X, y = data
    obj = _objective(X, y)
    result = newton(obj, np.zeros(5))
    eta = obj.linear_predictor(result.theta)
    assert _hessian_change(obj, eta, eta, result.hessian).bound == 0.0
    assert _hessian_change(obj, eta, eta + 1e-7, result.hessian).bound == pytest.approx(1e-7)
    assert _hessian_change(obj, eta, eta + 1e-5, result.hessian).bound == pytest.approx(1e-5,
                                                                                 rel=1e-4)
    assert _hessian_change(obj, eta, eta + 1e6, result.hessian).bound == np.inf  # no overflow
    assert _hessian_change(_objective(X, y, BernoulliProbit()), eta, eta + 1e-9,
                           result.hessian).bound == np.inf  # no uniform bound for the probit
    H = obj.value_grad_hess(result.theta, eta)[2]
    assert np.max(np.abs(eigh(result.hessian - H, H, eigvals_only=True))) <= 1e-6


@pytest.mark.parametrize("K", [2, 3, 6])
@pytest.mark.parametrize("scale", [1e-3, 1e-1, 1.0])
def test_uniform_hessian_change_bound_holds(K, scale):
    """expm1(L max |delta eta|) is never below the exact relative change of the Hessian
    in its own metric (a generalised eigenvalue): logit (K = 2, L = 1) and softmax
    (L = 2), for steps from small to large, with and without weights."""
    from scipy.linalg import eigh

    from problin._core.model.family_softmax import CategoricalSoftmax
    from problin._core.model.objective_softmax import SoftmaxObjective
    rng = np.random.default_rng(K)
    X = rng.normal(size=(300, 3))
    t = rng.integers(0, K, 300)
    for sw in (None, rng.uniform(0.1, 3.0, 300)):
        design = Design(X, True)
        if K == 2:
            obj = GLMObjective(design, BernoulliLogit(), t.astype(float), sw)
        else:
            obj = SoftmaxObjective(design, CategoricalSoftmax(K), t, sw)
        theta = rng.normal(size=obj.n_params)
        step = scale * rng.normal(size=obj.n_params)
        eta_old = obj.linear_predictor(theta)
        eta_new = obj.linear_predictor(theta + step)
        H = obj.value_grad_hess(theta, eta_old)[2]
        H_new = obj.value_grad_hess(theta + step, eta_new)[2]
        exact = np.max(np.abs(eigh(H_new - H, H, eigvals_only=True)))
        L = obj.family.curvature_lipschitz
        assert np.expm1(L * np.max(np.abs(eta_new - eta_old))) >= exact * (1 - 1e-9)


@pytest.mark.parametrize("family, link", [("gamma", "log"), ("poisson", "log"),
                                          ("inverse_gaussian", "log")])
def test_last_steps_decrement_bound_holds(family, link):
    """After the last Newton step (no pass at its end) the gradient is bounded by the
    Hessian's uniform change along the step times the decrement before it: the bound the
    engine reports is never below the decrement measured at the answer, and it is far
    below tol^2 there (which the GLM regressors' test in likelihood units reads instead of
    a gradient pass)."""
    from problin._core.model.exponential_family import make_family
    from problin._core.model.design_small import SMALL_ELEMENTS
    rng = np.random.default_rng(7)
    n = SMALL_ELEMENTS // 4 + 500
    X = rng.normal(size=(n, 3))
    mu = np.exp(0.5 + X @ np.array([0.3, -0.2, 0.1]))
    y = rng.poisson(mu).astype(float) if family == "poisson" else rng.gamma(2.0, mu / 2.0)
    obj = GLMObjective(Design(X, True), make_family(family, link), y)
    result = newton(obj, np.zeros(4), tol=1e-8)
    assert result.converged
    if family == "inverse_gaussian":  # (its observed curvature has no uniform bound)
        assert result.decrement_bound is None
        return
    assert result.decrement_bound is not None
    g = obj.value_grad(result.theta, obj.linear_predictor(result.theta))[1]
    measured = float(g @ np.linalg.solve(result.hessian, g)) / 2
    assert measured <= result.decrement_bound + 1e-300
    assert result.decrement_bound <= 1e-16 * n
