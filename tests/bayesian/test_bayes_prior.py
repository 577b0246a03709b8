"""BayesianLogisticRegression under the texts' prior N(m0, S0) on the raw parameters.

Bishop (2006), eq. 4.140: ``p(w) = N(w | m_0, S_0)``. The exact posterior and marginal
likelihood of a one-slope model come from a fine grid (quadrature). The column sits
far from zero (x + 3): the solver centres it, and the prior must still be on the raw
intercept. Tolerances as in test_bayes_exact.py (README, "Bayesian logistic
regression"): Laplace and variational means within 0.3 posterior standard deviations
of the exact mean, their standard deviations within 30 %; MCMC within 4 Monte Carlo
standard errors; the Laplace evidence within 0.1 nats of the exact integral (its
O(1/N) error), the variational bound below it.
"""
import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose
from scipy.special import expit, log_expit
from tests.bayesian.conftest import two_parameter_problem

import problin
from problin import BayesianLogisticRegression
from problin._core.bayes.mcmc import ess_bulk

M0 = np.array([-1.0, 0.8])                 # [intercept, slope]
S0 = np.array([[1.0, 0.6], [0.6, 2.0]])    # a correlated precision


def _log_post(B, W, x, y):
    """Unnormalised log posterior on a grid of (b, w), prior N(M0, S0^-1)."""
    R = np.stack([B - M0[0], W - M0[1]], axis=-1)
    prior = -0.5 * np.einsum("...i,ij,...j->...", R, S0, R)
    return log_expit((2 * y - 1) * (B[..., None] + W[..., None] * x)).sum(-1) + prior


@pytest.fixture(scope="module")
def problem():
    X, y = two_parameter_problem(n=50, seed=3)
    X = X + 3.0
    x = X[:, 0]
    # The grid: +-9 standard deviations of the Laplace fit (numpy's, below) along its
    # principal axes, theta = c + L z (the slope and the raw intercept correlate).
    c, H, _ = _newton_map(X, y)
    L = np.linalg.cholesky(np.linalg.inv(H))
    z = np.linspace(-9.0, 9.0, 241)  # (a Riemann sum of a smooth density: spectral)
    Z1, Z2 = np.meshgrid(z, z, indexing="ij")
    theta = c + np.stack([Z1.ravel(), Z2.ravel()], axis=1) @ L.T
    lp = _log_post(theta[:, 0], theta[:, 1], x, y)
    top = lp.max()
    p = np.exp(lp - top)
    cell = (z[1] - z[0]) ** 2 * np.linalg.det(L)
    # ln p(t) = ln int p(t | theta) N(theta | M0, S0^-1) dtheta
    log_z = np.log(p.sum() * cell) + top + 0.5 * np.linalg.slogdet(S0)[1] - np.log(2 * np.pi)
    p /= p.sum()
    edge = p.reshape(z.size, z.size)
    assert max(edge[0].max(), edge[-1].max(), edge[:, 0].max(), edge[:, -1].max()) < 1e-12
    mean = p @ theta
    C = theta - mean
    cov = (C * p[:, None]).T @ C
    models = {inference: BayesianLogisticRegression(
        inference=inference, prior_mean=M0, prior_precision=S0, n_samples=4000, tol=1e-10,
        random_state=0, progress=False).fit(X, y)
        for inference in ("laplace", "variational", "mcmc")}
    return {"X": X, "y": y, "mean": mean, "cov": cov, "log_z": log_z, "models": models}


def _newton_map(X, y):
    """The MAP by Newton's method in numpy, from the prior mean (no problin code)."""
    Phi = np.column_stack([np.ones(len(y)), X[:, 0]])
    theta = M0.copy()
    for _ in range(30):
        p = expit(Phi @ theta)
        H = Phi.T @ (Phi * (p * (1 - p))[:, None]) + S0
        theta = theta - np.linalg.solve(H, Phi.T @ (p - y) + S0 @ (theta - M0))
    p = expit(Phi @ theta)
    H = Phi.T @ (Phi * (p * (1 - p))[:, None]) + S0
    f = -float(np.sum(log_expit((2 * y - 1) * (Phi @ theta)))) \
        + 0.5 * float((theta - M0) @ S0 @ (theta - M0))
    return theta, H, f


def test_laplace_is_the_map_and_inverse_hessian_and_its_evidence(problem):
    """Laplace: the MAP and ``H^-1`` of Newton in numpy (1e-10), and the evidence by
    its definition, ``-f(MAP) + ln|S0| / 2 - ln|H| / 2`` (Bishop 2006, eq. 4.137), within
    rounding; that is within Laplace's error of the exact integral."""
    model = problem["models"]["laplace"]
    theta, H, f = _newton_map(problem["X"], problem["y"])
    assert_allclose(model.posterior_mean_, theta, rtol=0, atol=1e-10)
    assert_allclose(model.posterior_cov_ @ H, np.eye(2), atol=1e-10)
    laplace = -f + 0.5 * np.linalg.slogdet(S0)[1] - 0.5 * np.linalg.slogdet(H)[1]
    assert_allclose(model.log_evidence_, laplace, rtol=0, atol=1e-9)
    assert abs(model.log_evidence_ - problem["log_z"]) < 0.1
    assert problem["models"]["variational"].log_evidence_ <= problem["log_z"]


@pytest.mark.parametrize("inference", ["laplace", "variational"])
def test_gaussian_approximations_within_documented_tolerance(problem, inference):
    model, mean, cov = problem["models"][inference], problem["mean"], problem["cov"]
    sd = np.sqrt(np.diag(cov))
    assert np.all(np.abs(model.posterior_mean_ - mean) <= 0.3 * sd)
    assert np.all(np.abs(np.sqrt(np.diag(model.posterior_cov_)) / sd - 1) <= 0.3)
    corr = model.posterior_cov_[0, 1] / np.sqrt(np.prod(np.diag(model.posterior_cov_)))
    assert abs(corr - cov[0, 1] / np.prod(sd)) <= 0.1


def test_mcmc_within_four_monte_carlo_errors(problem):
    model, mean, cov = problem["models"]["mcmc"], problem["mean"], problem["cov"]
    assert np.max(model.rhat_) < 1.01
    mcse = np.sqrt(np.diag(model.posterior_cov_) / model.ess_)
    assert np.all(np.abs(model.posterior_mean_ - mean) <= 4 * mcse)
    centred = model.samples_ - mean
    for i, j in [(0, 0), (0, 1), (1, 1)]:
        prod = centred[:, :, i] * centred[:, :, j]
        se = prod.std(ddof=1) / np.sqrt(ess_bulk(prod))
        assert abs(prod.mean() - cov[i, j]) <= 4 * se, (i, j)


def test_alpha_scales_the_precision_and_a_vector_is_its_diagonal(problem):
    """``S_0^-1 = alpha P`` as BayesianLinearRegression's; a vector is a diagonal; sparse
    rows (never centred) give the dense rows' posterior; ``prior_mean`` alone takes
    ``diag(intercept_alpha, alpha)`` on the raw intercept."""
    X, y = problem["X"], problem["y"]
    a = BayesianLogisticRegression(alpha=2.0, prior_mean=M0, prior_precision=S0).fit(X, y)
    b = BayesianLogisticRegression(prior_mean=M0, prior_precision=2.0 * S0).fit(X, y)
    assert_allclose(a.posterior_mean_, b.posterior_mean_, rtol=1e-12)
    assert_allclose(a.log_evidence_, b.log_evidence_, rtol=1e-12)
    d = np.array([0.5, 2.0])
    vec = BayesianLogisticRegression(prior_mean=M0, prior_precision=d).fit(X, y)
    mat = BayesianLogisticRegression(prior_mean=M0, prior_precision=np.diag(d)).fit(X, y)
    alone = BayesianLogisticRegression(alpha=2.0, intercept_alpha=0.5, prior_mean=M0).fit(X, y)
    sparse = BayesianLogisticRegression(prior_mean=M0, prior_precision=d).fit(
        sp.csr_matrix(X), y)
    for other in (mat, alone, sparse):
        assert_allclose(other.posterior_mean_, vec.posterior_mean_, rtol=1e-9)
        assert_allclose(other.posterior_cov_, vec.posterior_cov_, rtol=1e-8)
        assert_allclose(other.log_evidence_, vec.log_evidence_, rtol=1e-10)


@pytest.mark.parametrize("params, message", [
    ({"prior_precision": np.eye(3)}, r"prior_precision has shape \(3, 3\); expected \(2, 2\)"),
    ({"prior_mean": [1.0, 2.0, 3.0]}, r"prior_mean has shape \(3,\); expected \(2,\)"),
    ({"prior_mean": [0.0, np.nan]}, "prior_mean contains NaN or infinity"),
    ({"prior_precision": [[1.0, np.inf], [np.inf, 1.0]]}, "contains NaN or infinity"),
    ({"prior_precision": [[1.0, 0.5], [0.4, 1.0]]}, "must be symmetric"),
    ({"prior_precision": [[1.0, 2.0], [2.0, 1.0]]}, "positive definite.*Cholesky"),
    ({"prior_precision": [1.0, 0.0]}, "positive definite"),
    ({"prior_precision": S0, "intercept_alpha": 1.0}, "intercept_alpha=1.0 does not combine"),
    ({"prior_mean": M0, "alpha": None}, "alpha=None estimates the scale of prior_precision"),
    ({"prior_mean": M0, "intercept_alpha": 0.0}, "intercept_alpha must be > 0"),
    ({"prior_mean": M0, "inference": "variational", "alpha_prior": (1.0, 1.0)},
     "alpha_prior estimates the scale"),
])
def test_bad_priors_fail_clearly(problem, params, message):
    with pytest.raises(ValueError, match=message):
        BayesianLogisticRegression(**params).fit(problem["X"], problem["y"])


def test_softmax_refuses_and_files_keep_the_prior(problem, tmp_path):
    X, y = problem["X"], problem["y"]
    with pytest.raises(ValueError, match="binary models only"):
        BayesianLogisticRegression(prior_precision=np.ones(2)).fit(X, np.arange(50) % 3)
    model = problem["models"]["laplace"]
    assert "prior_mean, prior_precision^-1) on the raw" in str(model.summary_text())
    problin.save(model, tmp_path / "m.problin")
    loaded = problin.load(tmp_path / "m.problin")
    assert_allclose(loaded.prior_precision, S0, rtol=0)
    assert_allclose(loaded.prior_mean, M0, rtol=0)
    assert np.array_equal(loaded.predict_proba(X), model.predict_proba(X))
    again = loaded.fit(X, y)  # the loaded parameters fit the same model
    assert_allclose(again.posterior_mean_, model.posterior_mean_, rtol=1e-12)


def _raw_moments(model):
    r = model.posterior_mean_ - M0
    return float(r @ S0 @ r), float(np.sum(S0 * model.posterior_cov_))


@pytest.mark.parametrize("inference", ["laplace", "variational"])
def test_alpha_none_estimates_the_scale_of_the_precision(problem, inference):
    """``alpha=None`` with ``prior_precision``: as BayesianLinearRegression, the scale of
    ``S_0^-1 = alpha P`` by the evidence, over all p parameters in P's metric, checked on
    the raw posterior: MacKay's fixed point ``alpha (m - m0)^T P (m - m0) = p - alpha
    tr(P S_N)`` (Laplace); the bound's ``alpha = p / E[(w - m0)^T P (w - m0)]``, and
    with a Gamma(a0, b0) hyperprior ``q(alpha) = Gamma(a0 + p/2, b0 + E[...]/2)``."""
    X, y = problem["X"], problem["y"]
    model = BayesianLogisticRegression(alpha=None, inference=inference, prior_mean=M0,
                                       prior_precision=S0, tol=1e-12).fit(X, y)
    quad, trace = _raw_moments(model)
    a = model.alpha_
    if inference == "laplace":
        assert_allclose(a * quad, 2.0 - a * trace, rtol=1e-6)
        return
    assert_allclose(a, 2.0 / (quad + trace), rtol=1e-6)
    hyper = BayesianLogisticRegression(alpha=None, inference=inference, alpha_prior=(2.0, 3.0),
                                       prior_mean=M0, prior_precision=S0,
                                       tol=1e-12).fit(X, y)
    quad, trace = _raw_moments(hyper)
    assert_allclose(hyper.alpha_posterior_, (2.0 + 1.0, 3.0 + (quad + trace) / 2), rtol=1e-6)
    assert np.all(np.diff(hyper.history_) >= -1e-9 * np.abs(hyper.history_[1:]))
