"""The penalty type: value, gradient, Hessian and products consistent with each other
(central differences), the flat penalty adding nothing, the softmax intercept-sum term in
closed form, and objectives composing a penalty."""
import numpy as np
import pytest

from problin._core.model.design import Design
from problin._core.model.families import BernoulliLogit
from problin._core.model.family_softmax import CategoricalSoftmax
from problin._core.model.objective import GLMObjective
from problin._core.model.objective_softmax import SoftmaxObjective
from problin._core.model.penalty import FlatPenalty, GaussianPenalty, PenaltyBase, add_penalty
from problin._core.model.prior import PriorPrecision
from problin._core.solvers.ascent import coordinate_descent, gradient_descent
from problin._core.solvers.newton import newton
from problin._core.solvers.quasi_newton import lbfgs


def _precisions(rng):
    """A structured precision (diagonal + the softmax intercept-sum term, 3 blocks of 4)
    and a dense correlated one (a general prior N(m0, S0))."""
    M, p = 3, 4
    diag = np.tile([0.0, 0.5, 0.5, 0.5], M)
    v = np.zeros(M * p)
    v[::p] = 1.0
    A = rng.standard_normal((M * p, M * p))
    return [PriorPrecision(diag, [(v, 1.0)]), PriorPrecision(A @ A.T / 12 + np.eye(M * p))]


@pytest.mark.parametrize("which", [0, 1])
def test_gaussian_penalty_derivatives_agree_with_central_differences(which):
    rng = np.random.default_rng(which)
    P = _precisions(rng)[which]
    pen = GaussianPenalty(P, rng.standard_normal(12))
    theta, v = rng.standard_normal(12), rng.standard_normal(12)
    h = 1e-5
    E = np.eye(12)
    fd_grad = np.array([(pen.value(theta + h * e) - pen.value(theta - h * e)) / (2 * h)
                        for e in E])
    np.testing.assert_allclose(pen.gradient(theta), fd_grad, rtol=1e-8, atol=1e-8)
    fd_hv = (pen.gradient(theta + h * v) - pen.gradient(theta - h * v)) / (2 * h)
    np.testing.assert_allclose(pen.hessp(theta, v), fd_hv, rtol=1e-8, atol=1e-8)
    H = pen.add_hessian(theta, np.zeros((12, 12)))
    np.testing.assert_allclose(H @ v, pen.hessp(theta, v), rtol=1e-13, atol=1e-13)
    # The fused additions are the parts' sums.
    g0, H0 = rng.standard_normal(12), rng.standard_normal((12, 12))
    f, g = pen.add_gradient(theta, 2.5, g0)
    assert f == pytest.approx(2.5 + pen.value(theta), rel=1e-15)
    np.testing.assert_allclose(g, g0 + pen.gradient(theta), rtol=1e-15)
    np.testing.assert_allclose(pen.add_hessp(theta, v, H0 @ v), (H0 + H) @ v, rtol=1e-12)
    np.testing.assert_allclose(pen.add_hessian(theta, H0), H0 + H, rtol=1e-15)
    assert pen.gaussian is pen and not pen.flat and pen.smooth and pen.exact_hessian


def test_intercept_sum_term_closed_form():
    """alpha/2 |w|^2 on the slopes plus c/2 (sum_k b_k)^2 on the intercepts."""
    rng = np.random.default_rng(3)
    P = _precisions(rng)[0]
    pen = GaussianPenalty(P, np.zeros(12))
    theta = rng.standard_normal(12)
    blocks = theta.reshape(3, 4)
    expected = 0.25 * np.sum(blocks[:, 1:] ** 2) + 0.5 * blocks[:, 0].sum() ** 2
    assert pen.value(theta) == pytest.approx(expected, rel=1e-14)
    np.testing.assert_array_equal(pen.hessian_diagonal(), P.diag)
    # The common shift of the intercepts is penalised by the rank-one term alone.
    shift = np.zeros(12)
    shift[::4] = 1.0
    assert pen.hessp(theta, shift) @ shift == pytest.approx(9.0, rel=1e-15)


def test_flat_penalty_adds_nothing():
    pen = FlatPenalty()
    theta, g, H = np.ones(3), np.arange(3.0), np.eye(3)
    assert pen.value(theta) == 0.0 and pen.flat and pen.gaussian is None
    f, g2 = pen.add_gradient(theta, 1.5, g)
    assert f == 1.5 and g2 is g and pen.add_hessian(theta, H) is H
    assert pen.add_hessp(theta, g, g) is g and pen.hessian_diagonal() is None
    np.testing.assert_array_equal(pen.gradient(theta), np.zeros(3))
    assert add_penalty(pen, theta, 1.5, g, None) == (1.5, g, None)


def _logistic(rng, n=200, d=3):
    X = rng.standard_normal((n, d))
    y = (X @ [1.0, -0.5, 0.25] + rng.logistic(size=n) > 0).astype(np.float64)
    return X, y


def test_objectives_compose_the_penalty():
    """A penalty given as an object is the prior given as arguments, to the bit; the
    sketch keeps it; both at once is an error."""
    rng = np.random.default_rng(4)
    X, y = _logistic(rng)
    P = PriorPrecision(np.array([0.0, 1.0, 1.0, 1.0]))
    a = GLMObjective(Design(X, True), BernoulliLogit(), y, None, P)
    b = GLMObjective(Design(X, True), BernoulliLogit(), y, penalty=GaussianPenalty(P, np.zeros(4)))
    theta = rng.standard_normal(4)
    fa, ga, Ha = a.value_grad_hess(theta, a.linear_predictor(theta))
    fb, gb, Hb = b.value_grad_hess(theta, b.linear_predictor(theta))
    assert fa == fb and np.array_equal(ga, gb) and np.array_equal(Ha, Hb)
    assert isinstance(GLMObjective(Design(X, True), BernoulliLogit(), y).penalty, FlatPenalty)
    assert b.subsample(np.arange(50)).penalty is b.penalty
    with pytest.raises(TypeError, match="either a penalty"):
        GLMObjective(Design(X, True), BernoulliLogit(), y, None, P, penalty=b.penalty)


@pytest.mark.parametrize("softmax", [False, True])
def test_general_gaussian_prior_fit_is_stationary(softmax):
    """Newton under N(m0, S0) with a correlated precision and non-zero mean on the raw
    parameters: the penalised score, computed directly, vanishes at the answer."""
    rng = np.random.default_rng(5)
    X, y = _logistic(rng)
    if softmax:
        t = np.digitize(X[:, 0] + rng.logistic(size=X.shape[0]), [-1.0, 1.0])
        family = CategoricalSoftmax(3, contrast=False)
        k = 12
    else:
        k = 4
    A = rng.standard_normal((k, k))
    P0, m0 = A @ A.T / k + 0.5 * np.eye(k), rng.standard_normal(k)
    pen = GaussianPenalty(P0, m0)
    if softmax:
        obj = SoftmaxObjective(Design(X, True), family, t, penalty=pen)
    else:
        obj = GLMObjective(Design(X, True), BernoulliLogit(), y, penalty=pen)
    res = newton(obj, np.zeros(k), tol=1e-12)
    Z = np.column_stack([np.ones(X.shape[0]), X])
    if softmax:
        E = Z @ res.theta.reshape(3, 4).T
        Pr = np.exp(E - E.max(axis=1, keepdims=True))
        Pr /= Pr.sum(axis=1, keepdims=True)
        score = ((Pr - np.eye(3)[t]).T @ Z).ravel()
    else:
        score = Z.T @ (1.0 / (1.0 + np.exp(-Z @ res.theta)) - y)
    assert res.converged
    np.testing.assert_allclose(score + P0 @ (res.theta - m0), 0.0, atol=1e-9)


class _Lasso(PenaltyBase):
    """A non-smooth penalty (L1 on the slopes): the smooth solvers must refuse it."""

    smooth = False

    def value(self, theta):
        return float(np.abs(theta[1:]).sum())


@pytest.mark.parametrize("solver", [newton, lbfgs, gradient_descent, coordinate_descent])
def test_smooth_solvers_refuse_a_non_smooth_penalty(solver):
    rng = np.random.default_rng(6)
    X, y = _logistic(rng, n=50)
    obj = GLMObjective(Design(X, True), BernoulliLogit(), y, penalty=_Lasso())
    with pytest.raises(ValueError, match="needs a smooth penalty; _Lasso is not"):
        solver(obj, np.zeros(4))
