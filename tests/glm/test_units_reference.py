"""Logistic and probit fits on columns of wildly different units, against a 50-digit reference.

Issue 13: a column in units of 1e-8 next to one in units of 1e8, or a column
sitting at 1e6 +- 1 (a year, a price level), used to return zero coefficients
or a spurious CollinearityWarning. The reference solves the very same problem
(the float64 data taken exactly) by Newton's method in mpmath at 50 digits,
so every digit problin reports can be checked.
"""
import warnings

import mpmath
import numpy as np
import pytest

from problin import LogisticRegression, ProbitRegression


@pytest.fixture(autouse=True, scope="module")
def _mpmath_digits():
    """50 digits for this module's references, restored after it (a module-level
    ``mp.dps = ...`` would hold for every module collected after it)."""
    with mpmath.mp.workdps(50):
        yield


def _row_derivatives(link, eta, y):
    """``(loglik, d/deta, -d2/deta2)`` of one row, in mpmath."""
    if link == "logit":
        p = 1 / (1 + mpmath.exp(-eta))
        loglik = y * mpmath.log(p) + (1 - y) * mpmath.log(1 - p)
        return loglik, y - p, p * (1 - p)
    if y == 1:  # log Phi(eta): l' = lambda, -l'' = lambda (eta + lambda)
        lam = mpmath.npdf(eta) / mpmath.ncdf(eta)
        return mpmath.log(mpmath.ncdf(eta)), lam, lam * (eta + lam)
    mu = mpmath.npdf(eta) / mpmath.ncdf(-eta)  # log Phi(-eta)
    return mpmath.log(mpmath.ncdf(-eta)), -mu, mu * (mu - eta)


def mp_newton(X, y, link, n_iter=60):
    """Maximum-likelihood ``theta = [b, w]`` and ``sqrt(diag(H^-1))`` at 50 digits."""
    rows = [[mpmath.mpf(1)] + [mpmath.mpf(float(v)) for v in r] for r in X]
    p = len(rows[0])
    theta = mpmath.matrix(p, 1)
    for _ in range(n_iter):
        g, H = mpmath.matrix(p, 1), mpmath.matrix(p, p)
        for r, t in zip(rows, y):
            eta = mpmath.fsum(r[j] * theta[j] for j in range(p))
            _, d1, d2 = _row_derivatives(link, eta, int(t))
            for j in range(p):
                g[j] += d1 * r[j]
                for k in range(p):
                    H[j, k] += d2 * r[j] * r[k]
        step = mpmath.lu_solve(H, g)
        theta += step
        if mpmath.norm(step) < mpmath.mpf(10) ** -40 * (1 + mpmath.norm(theta)):
            break
    cov = mpmath.inverse(H)
    se = [mpmath.sqrt(cov[j, j]) for j in range(p)]
    return np.array([float(v) for v in theta]), np.array([float(v) for v in se])


def mixed_units_data(link, seed):
    """Columns in units 1e-8, 1 and 1e8, and one at 1e6 +- 1 (exact float64 data)."""
    rng = np.random.default_rng(seed)
    n = 300
    Z = rng.normal(size=(n, 4))
    eta = 0.3 + Z @ np.array([0.8, -0.6, 0.5, 0.7])
    if link == "logit":
        y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(int)
    else:
        from scipy.stats import norm
        y = (rng.random(n) < norm.cdf(eta)).astype(int)
    X = np.column_stack([Z[:, 0] * 1e-8, Z[:, 1], Z[:, 2] * 1e8, Z[:, 3] + 1e6])
    return X, y


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("model, link", [(LogisticRegression, "logit"),
                                         (ProbitRegression, "probit")])
def test_mixed_units_agree_with_50_digit_newton(model, link, seed):
    X, y = mixed_units_data(link, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no CollinearityWarning, no NumericalWarning
        fit = model().fit(X, y)
    theta_ref, se_ref = mp_newton(X, y, link)
    theta = np.concatenate([fit.intercept_, fit.coef_.ravel()])
    table = fit.summary()
    assert fit.converged_
    np.testing.assert_allclose(theta, theta_ref, rtol=1e-8)  # 8 significant digits
    np.testing.assert_allclose(table["coef"].to_numpy(), theta_ref, rtol=1e-8)
    np.testing.assert_allclose(table["std_err"].to_numpy(), se_ref, rtol=1e-6)
    np.testing.assert_allclose(np.sqrt(np.diag(fit.covariance_)), se_ref, rtol=1e-6)


@pytest.mark.parametrize("model", [LogisticRegression, ProbitRegression])
@pytest.mark.parametrize("scale", [1e-12, 1e-6, 1e6, 1e12])
def test_one_rescaled_column_keeps_its_coefficient(model, scale):
    """Multiplying one column by 1e+-6 or 1e+-12 used to give it a coefficient of
    exactly 0 with converged_ = True (the pivot threshold on the raw Hessian)."""
    X, y = mixed_units_data("logit", 3)
    X = X[:, [1]].repeat(3, axis=1) * [1.0, 1.0, 1.0]
    X[:, 1] = np.random.default_rng(4).normal(size=X.shape[0])
    X[:, 2] = np.random.default_rng(5).normal(size=X.shape[0])
    base = model().fit(X, y)
    Xs = X.copy()
    Xs[:, 0] *= scale
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = model().fit(Xs, y)
    np.testing.assert_allclose(fit.coef_[0, 0] * scale, base.coef_[0, 0], rtol=1e-10)
    np.testing.assert_allclose(fit.coef_[0, 1:], base.coef_[0, 1:], rtol=1e-10)
    np.testing.assert_allclose(fit.summary()["z"], base.summary()["z"], rtol=1e-8)
    np.testing.assert_allclose(fit.predict_proba(Xs), base.predict_proba(X), atol=1e-12)


@pytest.mark.parametrize("model", [LogisticRegression, ProbitRegression])
@pytest.mark.parametrize("shift", [1e5, 1e8])
def test_shifted_column_stays_identified(model, shift):
    """A column at 1e5 or more used to be flagged as not identified, its standard
    error NaN and the intercept's wrong by orders of magnitude."""
    rng = np.random.default_rng(7)
    X = np.round(rng.normal(size=(400, 2)) * 1024) / 1024  # shifts stay exact
    y = (rng.random(400) < 1 / (1 + np.exp(-(0.2 + X @ [1.0, -0.5])))).astype(int)
    base = model().fit(X, y)
    Xs = X + [shift, 0.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = model().fit(Xs, y)
    t0, t1 = base.summary(), fit.summary()
    np.testing.assert_allclose(t1["coef"].iloc[1:], t0["coef"].iloc[1:], rtol=1e-9)
    np.testing.assert_allclose(t1["std_err"].iloc[1:], t0["std_err"].iloc[1:], rtol=1e-9)
    # the intercept moves by -shift * w; its standard error follows exactly
    w = t0["coef"].iloc[1]
    np.testing.assert_allclose(t1["coef"].iloc[0], t0["coef"].iloc[0] - shift * w, rtol=1e-9)
    cov = base.covariance_
    var_b = cov[0, 0] - 2 * shift * cov[0, 1] + shift**2 * cov[1, 1]
    np.testing.assert_allclose(t1["std_err"].iloc[0], np.sqrt(var_b), rtol=1e-8)
    np.testing.assert_allclose(fit.predict_proba(Xs), base.predict_proba(X), atol=1e-12)
