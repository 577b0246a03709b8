"""summary(ci="profile"): the bounds equal brute-force profiles (each grid point refitted
by scipy.optimize.minimize on the log-likelihood written here in numpy, the crossing
interpolated), for ML logistic, Poisson and Gamma (the deviance over the fitted
dispersion, R's confint.glm), and Firth's penalised likelihood."""

import numpy as np
import pytest
from scipy import interpolate, optimize, special
from scipy.stats import chi2

from problin import LogisticRegression
from problin.glm import GammaRegression, PoissonRegression

Q = chi2.ppf(0.95, 1)


def _data(seed: int = 0, n: int = 120):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, np.c_[np.ones(n), X], rng


def _logistic_nll(Xc, y, firth):
    def f(b):
        e = Xc @ b
        value = np.sum(np.logaddexp(0, e) - y * e)
        if firth:
            p = special.expit(e)
            value -= 0.5 * np.linalg.slogdet(Xc.T @ (Xc * (p * (1 - p))[:, None]))[1]
        return value
    return f


def _brute_force(nll, b_hat, j, bound, scale=1.0):
    """The crossing of 2 (nll_p - nll_hat) / scale = Q near ``bound``: a grid of 9 fixed
    values 0.02 wide, each refitted from the estimate, the crossing of a cubic
    interpolant of the signed root (smooth and nearly linear) found by brentq."""
    idx = [k for k in range(b_hat.size) if k != j]
    f_hat = nll(b_hat)

    def profile(v):
        def g(u):
            b = b_hat.copy()
            b[j], b[idx] = v, u
            return nll(b)
        return optimize.minimize(g, b_hat[idx], method="BFGS",
                                 options={"gtol": 1e-11, "xrtol": 1e-14}).fun

    grid = np.linspace(bound - 0.01, bound + 0.01, 9)
    r = np.array([np.sign(v - b_hat[j]) * np.sqrt(max(2 * (profile(v) - f_hat) / scale, 0))
                  for v in grid])
    spline = interpolate.CubicSpline(grid, r - np.sign(bound - b_hat[j]) * np.sqrt(Q))
    return optimize.brentq(spline, grid[0], grid[-1], xtol=1e-13)


@pytest.mark.parametrize("firth", [False, True])
def test_logistic_profile_equals_brute_force(firth):
    X, Xc, rng = _data()
    y = (X @ [1.0, -0.5] + rng.logistic(size=X.shape[0]) > 0).astype(float)
    model = LogisticRegression(alpha=0.0, penalty="firth" if firth else "l2").fit(X, y)
    table = model.summary(ci="profile", X=X, y=y)
    b_hat = np.r_[model.intercept_, model.coef_.ravel()]
    nll = _logistic_nll(Xc, y, firth)
    for j in range(3):
        for bound in table.iloc[j][["ci_low", "ci_high"]]:
            assert bound == pytest.approx(_brute_force(nll, b_hat, j, bound), abs=1e-6)
    assert table.attrs["ci"] == "profile"
    assert "Profile-likelihood 95% intervals" in model.summary_text(ci="profile", X=X, y=y)


@pytest.mark.parametrize("family", ["poisson", "gamma"])
def test_glm_profile_equals_brute_force(family):
    X, Xc, rng = _data(1)
    mu = np.exp(Xc @ [0.3, 0.4, -0.3])
    if family == "poisson":
        y = rng.poisson(mu).astype(float)
        model = PoissonRegression().fit(X, y)
        nll = lambda b: np.sum(np.exp(Xc @ b) - y * (Xc @ b))  # noqa: E731
    else:
        y = rng.gamma(2.0, mu / 2.0)
        model = GammaRegression().fit(X, y)
        nll = lambda b: np.sum(y * np.exp(-(Xc @ b)) + Xc @ b)  # noqa: E731 (deviance / 2)
    table = model.summary(ci="profile", X=X, y=y)
    b_hat = np.r_[model.intercept_, model.coef_]
    for j in range(3):
        for bound in table.iloc[j][["ci_low", "ci_high"]]:
            assert bound == pytest.approx(
                _brute_force(nll, b_hat, j, bound, model.scale_), abs=1e-6)
    wald = model.summary()
    assert np.all(np.abs(table["ci_low"] - wald["ci_low"]) < 0.05)


def test_profile_needs_the_rows_and_a_known_kind():
    X, _, rng = _data()
    y = (X[:, 0] + rng.logistic(size=X.shape[0]) > 0).astype(float)
    model = LogisticRegression(alpha=0.0).fit(X, y)
    with pytest.raises(ValueError, match="training rows"):
        model.summary(ci="profile")
    with pytest.raises(ValueError, match="ci must be one of"):
        model.summary(ci="score")
