"""Wide dense data: the engine's wide path after a sketch's warm start (issue 33).

From SECANT_MIN_PARAMS parameters a sketched fit forms no Hessian of all rows (truncated
Newton on fused Hessian-vector products, from a float32 copy of X where allowed,
preconditioned by a sketch's Hessian); it must land on the exact Newton engine's
optimum, and where the covariance is wanted, form the exact Hessian at the answer.
"""
import numpy as np
import pytest
from numpy.testing import assert_allclose

from problin._core.model.design import Design
from problin._core.model.families import BernoulliLogit, BernoulliProbit
from problin._core.model.objective import GLMObjective
from problin._core.solvers.newton import SECANT_MIN_PARAMS, newton

N, D, M = 4000, 150, 2000  # p = 151 >= SECANT_MIN_PARAMS; a sketch of 13 p rows


class _Counting(GLMObjective):
    """A GLM objective that counts the Hessians of all rows it forms."""

    grams = 0

    def value_grad_hess(self, theta, eta, single=False):
        self.grams += 1
        return super().value_grad_hess(theta, eta, single)

    def advance(self, theta, eta, d, gram=None, accept_below=None):
        self.grams += gram is not None
        return super().advance(theta, eta, d, gram, accept_below)


def _data(family, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, D)) + 0.5 * rng.standard_normal((N, 1))  # correlated
    y = (rng.random(N) < family.mean(0.4 + X @ rng.normal(0.0, 0.15, D))).astype(float)
    return X, y


def _fits(family, exact_final, float32_copy=False):
    X, y = _data(family)
    theta0 = np.zeros(D + 1)
    exact = newton(GLMObjective(Design(X, True), family, y), theta0)
    wide = _Counting(Design(X, True), family, y)
    sketch = np.sort(np.random.default_rng(1).choice(N, size=M, replace=False))
    fast = newton(wide, theta0, sketch=sketch, exact_final=exact_final,
                  float32_copy=float32_copy)
    assert wide.n_params >= SECANT_MIN_PARAMS and exact.converged and fast.converged
    return exact, fast, wide.grams


@pytest.mark.parametrize("float32_copy", [False, True], ids=["double", "float32-products"])
@pytest.mark.parametrize("family", [BernoulliLogit(), BernoulliProbit()], ids=["logit", "probit"])
def test_wide_path_reaches_the_exact_newton_optimum(family, float32_copy):
    exact, fast, grams = _fits(family, exact_final=False, float32_copy=float32_copy)
    assert grams == 0 and fast.hessian is None  # no Hessian of all rows: the point of it
    assert_allclose(fast.theta, exact.theta, rtol=0, atol=1e-8 * np.abs(exact.theta).max())
    se = np.sqrt(np.diag(np.linalg.inv(exact.hessian)))
    assert np.all(np.abs(fast.theta - exact.theta) <= 1e-8 * se)  # within tol standard errors
    assert fast.value <= exact.value * (1 + 1e-14)


@pytest.mark.parametrize("family", [BernoulliLogit(), BernoulliProbit()], ids=["logit", "probit"])
def test_wide_path_forms_the_exact_hessian_once_for_the_covariance(family):
    exact, fast, grams = _fits(family, exact_final=True)
    assert grams == 1  # at the answer, in double precision
    assert_allclose(fast.theta, exact.theta, rtol=0, atol=1e-10 * np.abs(exact.theta).max())
    assert_allclose(np.linalg.inv(fast.hessian), np.linalg.inv(exact.hessian), rtol=1e-6,
                    atol=1e-12)


def test_line_derivatives_are_those_of_the_objective_along_the_line():
    X, y = _data(BernoulliLogit())
    objective = GLMObjective(Design(X[:300, :5], True), BernoulliLogit(), y[:300])
    rng = np.random.default_rng(2)
    theta, d = rng.normal(0, 0.3, 6), rng.normal(0, 0.3, 6)
    eta, Xd = objective.linear_predictor(theta), objective.linear_predictor(d)
    first, second = objective.line_derivatives(eta, Xd)
    _, g, H = objective.value_grad_hess(theta, eta)
    assert_allclose([first, second], [g @ d, d @ H @ d], rtol=1e-12)


@pytest.mark.parametrize("centre", [False, "always"], ids=["raw", "centred"])
def test_fused_hessian_product_is_the_gram_times_v(centre):
    X, _ = _data(BernoulliLogit())
    X = X[:3000, :40] + 5.0  # (far from zero: a centred basis standardises its blocks)
    design = Design.standardised(X, True, centre=centre)
    rng = np.random.default_rng(3)
    h, v = rng.random(X.shape[0]), rng.standard_normal(41)
    expected = design.gram(h) @ v
    assert_allclose(design.hessian_product(h, v), expected, rtol=1e-12, atol=0)
    assert_allclose(design.hessian_product(h, v, single=True), expected, rtol=2e-5,
                    atol=2e-5 * np.abs(expected).max())
