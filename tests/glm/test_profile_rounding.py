"""Profile intervals on separated data are the root of the brute-force profile (scipy
refits of the (penalised) log-likelihood written in the tests, the fixed parameter's
crossing of the chi² cut-off), the same from the fitted estimate and from it scaled by
1 + 1e-13. Once a bracket on the bound was read from the KKT model before its inner fit
had converged (the quadratic model of a flat direction under-promises), and Firth's
objective switched Hessians with its call history: a Firth intercept's bound moved from
2.2997 (the root) to 2.2296 with the start's rounding, another sat 0.24 inside the root."""

import warnings

import numpy as np
import pytest
from scipy import optimize
from scipy.stats import chi2

from problin import LogisticRegression, SeparationWarning
from tests.glm.test_profile_ci import _logistic_nll

Q = chi2.ppf(0.95, 1)


def _separated(seed):
    """Rows with an (almost) separating direction and a logistic model fitted to them."""
    rng = np.random.default_rng(seed)
    n, p = rng.integers(30, 100), rng.integers(1, 4)
    X = rng.normal(size=(n, p))
    return X, (X[:, 0] + 0.3 * X[:, -1] > rng.normal() * 0.3).astype(float)


def _deviance(nll, b_hat, j, value, f_hat):
    """``2 (min nll - f_hat)`` with parameter ``j`` held at ``value`` (BFGS)."""
    idx = [k for k in range(b_hat.size) if k != j]

    def fixed(u):
        b = b_hat.copy()
        b[j], b[idx] = value, u
        return nll(b)
    return 2 * (optimize.minimize(fixed, b_hat[idx], method="BFGS",
                                  options={"gtol": 1e-10}).fun - f_hat)


def _bounds(model, X, y, scale):
    """``(ci_low, ci_high)`` of every parameter, the fit's estimate scaled by ``scale``."""
    fit = model._result
    model._set_fit(fit.replace(theta_standard=fit.theta_standard * scale))
    try:
        return model.summary(ci="profile", X=X, y=y)[["ci_low", "ci_high"]].to_numpy()
    finally:
        model._set_fit(fit)


def _check(model, X, y, firth, bounds):
    """Each ``(j, side)`` of ``bounds``: the profile's bound, unperturbed and with the
    estimate nudged by 1e-13, is the brute-force root (brentq within 0.01 of it)."""
    plain, nudged = (_bounds(model, X, y, s) for s in (1.0, 1.0 + 1e-13))
    np.testing.assert_allclose(nudged, plain, atol=1e-6)
    nll = _logistic_nll(np.c_[np.ones(len(y)), X], y, firth)
    b_hat = np.r_[model.intercept_, model.coef_.ravel()]
    f_hat = optimize.minimize(nll, b_hat, method="BFGS", options={"gtol": 1e-10}).fun
    for j, side in bounds:
        near = plain[j, side]
        root = optimize.brentq(lambda v: _deviance(nll, b_hat, j, v, f_hat) - Q,
                               near - 0.01, near + 0.01, xtol=1e-10)
        assert plain[j, side] == pytest.approx(root, abs=1e-6)
        assert nudged[j, side] == pytest.approx(root, abs=1e-6)
    return plain


def test_firth_bounds_on_separated_data_are_the_root_whatever_the_rounding():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(float)
    model = LogisticRegression(penalty="firth").fit(X, y)
    # (the intercept's upper and x1's lower bound moved with the rounding)
    _check(model, X, y, True, [(0, 1), (2, 0)])


def test_firth_bound_not_closed_off_by_an_unconverged_model():
    X, y = _separated(49)  # (the intercept's upper bound was 0.857: 2 delta = Q - 0.73)
    _check(LogisticRegression(penalty="firth").fit(X, y), X, y, True, [(0, 1)])


def test_ml_bounds_on_separated_data_are_the_root_whatever_the_rounding():
    X, y = _separated(9)  # (the intercept's upper bound was -0.1098, the root -0.1082)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeparationWarning)
        model = LogisticRegression(alpha=0.0).fit(X, y)
    plain = _check(model, X, y, False, [(0, 1)])
    np.testing.assert_array_equal(np.isinf(plain), [[1, 0], [0, 1], [1, 1], [0, 1]])


def test_firth_fit_where_the_exact_hessian_is_too_indefinite_to_factor():
    """The fit raised LinAlgError (the exact Hessian's check factored it with jitter,
    which failed); it takes the held-leverage curvature there, to the penalised
    likelihood's maximum."""
    X, y = _separated(33)
    model = LogisticRegression(penalty="firth").fit(X, y)
    nll = _logistic_nll(np.c_[np.ones(len(y)), X], y, True)
    b_hat = np.r_[model.intercept_, model.coef_.ravel()]
    best = optimize.minimize(nll, b_hat, method="BFGS", options={"gtol": 1e-10})
    assert model._result.converged
    np.testing.assert_allclose(b_hat, best.x, rtol=1e-6)
