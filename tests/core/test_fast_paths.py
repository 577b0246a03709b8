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
