"""summary(ci="profile"): the bounds equal brute-force profiles (each grid point refitted
by scipy.optimize.minimize on the log-likelihood written here in numpy, the crossing
interpolated), for ML logistic, Poisson and Gamma (the deviance over the fitted
dispersion, R's confint.glm), and Firth's penalised likelihood."""

import numpy as np
import pytest
from scipy import interpolate, optimize, special
from scipy.stats import chi2

from problin import LogisticRegression, ProbitRegression
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


def _brute_force(nll, b_hat, j, bound, scale=1.0, q=Q):
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
    spline = interpolate.CubicSpline(grid, r - np.sign(bound - b_hat[j]) * np.sqrt(q))
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


def test_probit_profile_equals_brute_force():
    X, Xc, rng = _data(2)
    y = (X @ [0.8, -0.4] + rng.normal(size=X.shape[0]) > 0).astype(float)
    model = ProbitRegression(alpha=0.0).fit(X, y)
    table = model.summary(0.9, ci="profile", X=X, y=y)

    def nll(b):
        e = Xc @ b
        return -np.sum(y * special.log_ndtr(e) + (1 - y) * special.log_ndtr(-e))
    b_hat = np.r_[model.intercept_, model.coef_.ravel()]
    for j in range(3):
        for bound in table.iloc[j][["ci_low", "ci_high"]]:
            assert bound == pytest.approx(
                _brute_force(nll, b_hat, j, bound, q=chi2.ppf(0.9, 1)), abs=1e-6)


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


# R 4.2.2, logistf 1.26.1 (default: profile penalised-likelihood intervals), converged
# tightly (endometrial: brglm2's data as in tests/glm/test_firth.py, read from a CSV):
#   ctl <- logistf.control(xconv = 1e-14, gconv = 1e-14, lconv = 1e-14, maxit = 500)
#   pctl <- logistpl.control(xconv = 1e-14, lconv = 1e-14, maxit = 500, ortho = FALSE)
#   f <- logistf(case ~ age + oc + vic + vicl + vis + dia, data = sex2, control = ctl,
#                plcontrol = pctl); f$ci.lower; f$ci.upper
#   g <- logistf(HG ~ NV + PI + EH, data = endometrial, control = ctl, plcontrol = pctl)
_LOGISTF_PL = {
    "sex2": ([-0.818559106359, -1.973788382837, -0.941436330166, 1.273021571200,
              -3.260861117529, -1.608087889529, 0.774568169217],
             [1.073151216026, -0.307425141576, 0.789202021261, 3.435432730915,
              -1.117734946984, 0.015184679066, 8.030293522159]),
    "endometrial": ([1.082537108448, 0.609724436303, -0.124458720852, -4.365183247263],
                    [7.209280498247, 7.854631713877, 0.040455473181, -1.232721057217]),
}


@pytest.mark.parametrize("name", ["sex2", "endometrial"])
def test_firth_profile_equals_logistf(name):
    from tests.glm.test_firth import _ENDOMETRIAL, _sex2
    X, y = _sex2() if name == "sex2" else (_ENDOMETRIAL[:, :3], _ENDOMETRIAL[:, 3])
    model = LogisticRegression(alpha=0.0, penalty="firth", tol=1e-12).fit(X, y)
    table = model.summary(ci="profile", X=X, y=y)
    low, high = _LOGISTF_PL[name]
    np.testing.assert_allclose(table["ci_low"], low, rtol=0, atol=1e-6)
    np.testing.assert_allclose(table["ci_high"], high, rtol=0, atol=1e-6)
    assert "penalised likelihood" in table.attrs["ci_note"]


# R 4.2.2 (MASS's profile.glm, the confint.glm method), on the rows made below saved
# with 17 digits, its spline over a fine grid (del = 0.02; the default del = zmax / 5
# differs from these by up to 5e-6):
#   p <- glm(yp ~ x0 + x1, family = poisson, data = d, control = glm.control(1e-14, 100))
#   g <- glm(yg ~ x0 + x1, family = Gamma(link = "log"), data = d, control = ...)
#   confint(profile(p, del = 0.02, maxsteps = 400)); confint(profile(g, ...))
# Gamma: the deviance over summary(g)$dispersion (Pearson's, 0.538902772507), cut at
# qnorm(0.975), not at an F quantile.
_R_CONFINT = {
    "poisson": ([0.0382266006572, 0.2546801352878, -0.4409994395492],
                [0.374718857194, 0.578088985545, -0.108873978574]),
    "gamma": ([0.0960693204456, 0.2467191327632, -0.4189479399483],
              [0.363280678520, 0.558526680157, -0.106899613287]),
}


@pytest.mark.parametrize("family", ["poisson", "gamma"])
def test_glm_profile_equals_r_confint(family):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 2))
    mu = np.exp(np.c_[np.ones(120), X] @ [0.3, 0.4, -0.3])
    yp = rng.poisson(mu).astype(float)
    yg = rng.gamma(2.0, mu / 2.0)
    model = (PoissonRegression(tol=1e-12).fit(X, yp) if family == "poisson"
             else GammaRegression(tol=1e-12).fit(X, yg))
    table = model.summary(ci="profile", X=X, y=yp if family == "poisson" else yg)
    low, high = _R_CONFINT[family]
    np.testing.assert_allclose(table["ci_low"], low, rtol=0, atol=2e-8)
    np.testing.assert_allclose(table["ci_high"], high, rtol=0, atol=2e-8)
