"""The fast paths of the Newton engine reach the exact engine's optimum.

Sketched warm start and steps, float32 Hessians and truncated Newton (PCG
with exact Hessian-vector products) are speed devices only: each must land
on the same optimum, with the same covariance, as plain Newton.
"""
import numpy as np
import pytest
from numpy.testing import assert_allclose

from problin._core.model.design import Design
from problin._core.model.families import (
    BernoulliLogit,
    BernoulliProbit,
    CategoricalSoftmax,
)
from problin._core.model.objective import GLMObjective
from problin._core.model.objective_softmax import SoftmaxObjective
from problin._core.solvers.newton import newton


def _binary(n, d, family, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) + 0.3 * rng.standard_normal((n, 1))
    eta = 0.4 + X @ rng.normal(0.0, 0.3, d)
    p = family.mean(eta)
    y = (rng.random(n) < p).astype(float)
    return X, y


def _rows(n, m, seed=1):
    return np.sort(np.random.default_rng(seed).choice(n, size=m, replace=False))


@pytest.mark.parametrize("family", [BernoulliLogit(), BernoulliProbit()], ids=["logit", "probit"])
def test_sketched_newton_equals_exact_newton(family):
    X, y = _binary(60_000, 12, family)
    objective = GLMObjective(Design(X, True), family, y)
    theta0 = np.zeros(13)
    exact = newton(objective, theta0)
    fast = newton(GLMObjective(Design(X, True), family, y), theta0, sketch=_rows(60_000, 3000))
    assert exact.converged and fast.converged
    se = np.sqrt(np.diag(np.linalg.inv(exact.hessian)))
    assert np.all(np.abs(fast.theta - exact.theta) <= 1e-7 * se)
    # the final Hessian is in double precision and at the answer
    assert_allclose(fast.hessian, exact.hessian, rtol=1e-6, atol=1e-9 * np.abs(exact.hessian).max())


def test_truncated_newton_equals_exact_newton_for_softmax():
    rng = np.random.default_rng(3)
    n, d, k = 40_000, 6, 4
    X = rng.standard_normal((n, d))
    A = X @ rng.normal(0.0, 0.5, (d, k))
    P = np.exp(A - A.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    t = (rng.random(n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1)
    family = CategoricalSoftmax(k, contrast=True)

    def objective():
        return SoftmaxObjective(Design(X, True), family, t)

    theta0 = np.zeros((k - 1) * (d + 1))
    exact = newton(objective(), theta0)
    fast = newton(objective(), theta0, sketch=_rows(n, 2000), exact_final=False)
    assert exact.converged and fast.converged
    assert fast.hessian is None  # never built: that is the point of this path
    se = np.sqrt(np.diag(np.linalg.inv(exact.hessian)))
    assert np.all(np.abs(fast.theta - exact.theta) <= 1e-6 * se)
    assert fast.value <= exact.value * (1 + 1e-14)


def test_hessian_vector_products_match_the_hessian():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((500, 4))
    t = rng.integers(0, 3, 500)
    obj = SoftmaxObjective(Design(X, True), CategoricalSoftmax(3, contrast=False), t,
                           prior_precision=np.full(15, 0.5))
    theta = rng.normal(0, 0.3, 15)
    eta = obj.linear_predictor(theta)
    H = obj.value_grad_hess(theta, eta)[2]
    v = rng.normal(size=15)
    assert_allclose(obj.hessp(theta, eta, v), H @ v, rtol=1e-12, atol=1e-12)
    y = (rng.random(500) < 0.4).astype(float)
    glm = GLMObjective(Design(X, True), BernoulliProbit(), y, prior_precision=np.full(5, 2.0))
    theta = rng.normal(0, 0.3, 5)
    eta = glm.linear_predictor(theta)
    H = glm.value_grad_hess(theta, eta)[2]
    assert_allclose(glm.hessp(theta, eta, v[:5]), H @ v[:5], rtol=1e-12, atol=1e-12)


def test_softmax_gradient_buffer_is_not_carried_between_points():
    """All rows' gradient weights go into one array the objective keeps: gradients at
    two points, then the first again, equal those of a fresh objective."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((300, 4))
    t = rng.integers(0, 3, 300)
    from problin._core.model.design_small import SmallDenseDesign
    make = lambda: SoftmaxObjective(SmallDenseDesign(X), CategoricalSoftmax(3), t)  # noqa: E731
    obj = make()
    thetas = [rng.normal(0.0, 0.5, obj.n_params) for _ in range(2)]
    grads = [obj.value_grad(th, obj.linear_predictor(th))[1] for th in thetas + thetas[:1]]
    for th, g in zip(thetas + thetas[:1], grads):
        fresh = make()
        assert_allclose(g, fresh.value_grad(th, fresh.linear_predictor(th))[1], rtol=0, atol=0)


def test_small_binary_last_step_reports_the_hessian_at_the_answer():
    """On small data Newton's last step is fused with the Hessian at the answer (seeds
    0-2: a last decrement above tol^2); where the last decrement is below tol^2 (seeds
    3-5) the Hessian in hand is kept, within 1e-6 of the answer's."""
    from problin._core.model.design_small import SmallDenseDesign
    for seed in range(6):
        X, y = _binary(800, 6, BernoulliLogit(), seed=seed)
        obj = GLMObjective(SmallDenseDesign(X), BernoulliLogit(), y)
        res = newton(obj, np.zeros(obj.n_params))
        assert res.converged
        f, g, H = obj.value_grad_hess(res.theta, obj.linear_predictor(res.theta))
        # (eta accumulated step by step vs X theta formed afresh: rounding apart)
        error = np.max(np.abs(res.hessian - H)) / np.max(np.abs(H))
        assert error <= (1e-14 if seed < 3 else 1e-6)
        assert abs(res.value - f) <= 1e-12 * abs(f)


@pytest.mark.parametrize("intercept", [True, False])
def test_softmax_hessp_in_float32_is_the_double_product_to_float32_rounding(intercept):
    rng = np.random.default_rng(6)
    X = rng.standard_normal((3000, 8)) * np.array([1e-3, 1, 1, 1e3, 1, 1, 1, 1])
    design = Design.standardised(X, intercept)
    P = rng.dirichlet(np.ones(5), size=3000)[:, 1:].copy()
    Theta = rng.normal(size=(4, design.n_params))
    sw = rng.uniform(0.5, 2.0, 3000)
    for w in (None, sw):
        double = design.softmax_hessp(P, w, Theta)
        single = design.softmax_hessp(P, w, Theta, single=True)
        assert np.max(np.abs(single - double)) <= 1e-5 * np.max(np.abs(double))
        assert np.max(np.abs(single - double)) > 0  # (it did run in float32)
