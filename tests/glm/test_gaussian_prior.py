"""The penalised GLMs under a Gaussian prior N(m0, S0) on the raw parameters.

``prior_mean``/``prior_precision`` add ``1/2 (theta - m0)^T S0 (theta - m0)`` to the
negative log-likelihood (Bishop 2006, eq. 4.140: the MAP under that prior). Each fit
equals a damped Newton solve of that penalised likelihood written here in numpy (the
per-row loss and its derivatives of each family, no problin code) to 1e-10, on columns
far from zero and of very different spreads (the solver works in a centred,
equilibrated basis; the prior is on the raw intercept and slopes).
"""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy.special import expit, log_expit, log_ndtr

import problin
from problin import (
    GammaRegression,
    LogisticRegression,
    PoissonRegression,
    ProbitRegression,
)

M0 = np.array([0.2, 0.3, -0.01])
S0 = np.array([[2.0, 0.5, 0.01], [0.5, 1.0, 0.03], [0.01, 0.03, 0.05]])


def _data(kind, seed=0, n=300):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2)) * [0.5, 20.0] + [3.0, 100.0]
    eta = 0.4 + 1.5 * (X[:, 0] - 3.0) - 0.02 * (X[:, 1] - 100.0)
    if kind == "poisson":
        return X, rng.poisson(np.exp(eta)).astype(float)
    if kind == "gamma":
        return X, rng.gamma(2.0, np.exp(eta) / 2.0)
    return X, (rng.random(n) < expit(eta)).astype(int)


def _loss(kind, eta, y):
    """Per-row loss (negative log-likelihood at unit dispersion, up to constants) and
    its first and second derivatives in eta."""
    if kind == "logit":
        p = expit(eta)
        return -log_expit((2 * y - 1) * eta), p - y, p * (1 - p)
    if kind == "probit":
        q = 2 * y - 1
        r = np.exp(-0.5 * eta ** 2 - log_ndtr(q * eta)) / np.sqrt(2 * np.pi)
        return -log_ndtr(q * eta), -q * r, r * (r + q * eta)
    if kind == "poisson":
        mu = np.exp(eta)
        return mu - y * eta, mu - y, mu
    # gamma, log link: half the unit deviance, y e^-eta + eta (+ const)
    e = y * np.exp(-eta)
    return e + eta, 1.0 - e, e


def newton_map(kind, X, y, m, S):
    """Damped Newton in numpy on sum loss + (theta - m)^T S (theta - m) / 2."""
    Phi = np.column_stack([np.ones(len(y)), X])

    def f(theta):
        r = theta - m
        return float(np.sum(_loss(kind, Phi @ theta, y)[0]) + 0.5 * r @ S @ r)

    theta = m.astype(float).copy()
    for _ in range(100):
        _, g, h = _loss(kind, Phi @ theta, y)
        H = Phi.T @ (Phi * h[:, None]) + S
        step = np.linalg.solve(H, Phi.T @ g + S @ (theta - m))
        t, f0 = 1.0, f(theta)
        while f(theta - t * step) > f0 and t > 1e-12:
            t /= 2
        theta = theta - t * step
        if np.max(np.abs(t * step)) < 1e-15 * (1 + np.max(np.abs(theta))):
            break
    _, _, h = _loss(kind, Phi @ theta, y)
    return theta, Phi.T @ (Phi * h[:, None]) + S


def _params(model):
    return np.r_[np.ravel(model.intercept_), np.ravel(model.coef_)]


@pytest.mark.parametrize("kind, cls", [("logit", LogisticRegression),
                                       ("probit", ProbitRegression),
                                       ("poisson", PoissonRegression),
                                       ("gamma", GammaRegression)])
def test_map_equals_a_direct_newton_solve(kind, cls):
    X, y = _data("logit" if kind == "probit" else kind)
    model = cls(prior_mean=M0, prior_precision=S0, tol=1e-10).fit(X, y)
    theta, H = newton_map(kind, X, y, M0, S0)
    assert_allclose(_params(model), theta, rtol=0, atol=1e-10)
    if kind != "gamma":  # (the Gamma's covariance is scale_ times its expected information's)
        assert_allclose(model.covariance_ @ H, np.eye(3), atol=1e-8)
    assert np.isnan(model.aic_)  # (a penalised fit: not maximum likelihood)


def test_semidefinite_prior_and_centred_ridge():
    """A zero row leaves its parameter unpenalised: ``diag(0, a, a)`` is ``alpha = a``;
    ``prior_mean`` alone centres ``alpha``'s ridge (the intercept unpenalised); a vector
    is a diagonal; sparse rows, L-BFGS and coordinate descent reach the same MAP."""
    X, y = _data("logit")
    a = 3.0
    ridge = LogisticRegression(alpha=a, tol=1e-10).fit(X, y)
    semi = LogisticRegression(prior_precision=[0.0, a, a], tol=1e-10).fit(X, y)
    assert_allclose(_params(semi), _params(ridge), rtol=0, atol=1e-10)
    centred = LogisticRegression(alpha=a, prior_mean=M0, tol=1e-10).fit(X, y)
    theta, _ = newton_map("logit", X, y, M0, np.diag([0.0, a, a]))
    assert_allclose(_params(centred), theta, rtol=0, atol=1e-10)
    full, _ = newton_map("logit", X, y, M0, S0)
    for solver, rows in [("lbfgs", sp.csr_matrix(X)), ("coordinate", X)]:
        other = LogisticRegression(prior_mean=M0, prior_precision=S0, solver=solver,
                                   tol=1e-10).fit(rows, y)
        assert_allclose(_params(other), full, rtol=0, atol=1e-7)


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 2 ** 31 - 1))
def test_any_prior_zeroes_the_penalised_score(seed):
    """Random symmetric positive definite ``S0`` and mean: the penalised score
    ``Phi^T (p - y) + S0 (theta - m0)`` vanishes at the fit."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(3, 3))
    S, m = A @ A.T + 0.1 * np.eye(3), rng.normal(size=3)
    X, y = _data("logit", seed=seed % 7, n=80)
    model = LogisticRegression(prior_mean=m, prior_precision=S, tol=1e-12).fit(X, y)
    theta = _params(model)
    Phi = np.column_stack([np.ones(len(y)), X])
    score = Phi.T @ (expit(Phi @ theta) - y) + S @ (theta - m)
    assert np.max(np.abs(score) / (1.0 + np.abs(Phi).sum(0))) < 1e-8


@pytest.mark.parametrize("params, message", [
    ({"prior_precision": S0, "alpha": 1.0}, "alpha=1.0 and prior_precision both"),
    ({"prior_mean": M0}, "prior_mean needs a precision"),
    ({"prior_precision": S0, "penalty": "firth"}, "penalty='firth'.*does not combine"),
    ({"prior_precision": np.eye(2)}, r"prior_precision has shape \(2, 2\); expected \(3, 3\)"),
    ({"prior_precision": S0, "prior_mean": [0.0, 1.0]}, r"prior_mean has shape \(2,\)"),
    ({"prior_precision": -S0}, "positive semidefinite: its smallest eigenvalue"),
    ({"prior_precision": [1.0, -1.0, 1.0]}, "positive semidefinite: its diagonal"),
    ({"prior_precision": S0 + np.triu(np.ones((3, 3)), 1)}, "must be symmetric"),
    ({"prior_precision": np.where(S0 > 1, np.nan, S0)}, "NaN or infinity"),
])
def test_bad_priors_fail_clearly(params, message):
    X, y = _data("logit", n=60)
    with pytest.raises(ValueError, match=message):
        LogisticRegression(**params).fit(X, y)


def test_firth_regressor_softmax_and_files(tmp_path):
    X, y = _data("poisson", n=60)
    with pytest.raises(ValueError, match="penalty='firth'.*does not combine"):
        PoissonRegression(penalty="firth", prior_mean=M0, alpha=1.0).fit(X, y)
    with pytest.raises(ValueError, match="binary models only"):
        LogisticRegression(prior_precision=np.ones(3)).fit(X, np.arange(60) % 3)
    model = PoissonRegression(prior_mean=M0, prior_precision=S0).fit(X, y)
    text = str(model.summary_text())
    assert "MAP, Gaussian prior" in text and "AIC and BIC omitted" in text
    problin.save(model, tmp_path / "m.problin")
    loaded = problin.load(tmp_path / "m.problin")
    assert_allclose(loaded.prior_precision, S0, rtol=0)
    assert np.array_equal(loaded.predict(X), model.predict(X))


def test_likelihood_ratio_tests_refuse_a_prior():
    """A penalised likelihood ratio has no chi² reference: refused as for ``alpha``."""
    X, y = _data("logit", n=60)
    model = LogisticRegression(prior_mean=M0, prior_precision=S0).fit(X, y)
    with pytest.raises(ValueError, match=r"L2 penalty \(prior_mean/prior_precision\)"):
        model.restricted_lr_test("x0 = 0", X=X, y=y)
    with pytest.raises(ValueError, match="prior_mean/prior_precision"):
        model.summary(pvalues="lr", X=X, y=y)
