"""NB2 with alpha by maximum likelihood against statsmodels' discrete
``NegativeBinomial`` (joint ML of beta and alpha, SEs from the joint observed Hessian)."""
import warnings

import numpy as np
import pytest
import statsmodels.api as sm

from problin._core.model import negative_binomial as nb
from problin._core.model.design import Design
from problin._core.model.distributions import NegativeBinomial
from problin._core.model.exponential_family import make_family
from problin._core.model.fitted_rows import in_hand
from problin._core.model.objective import GLMObjective
from problin._core.solvers.newton import newton


@pytest.fixture(scope="module")
def randhie():
    """400 rows of statsmodels' bundled RAND health insurance data: doctor visits."""
    data = sm.datasets.randhie.load_pandas().data.iloc[:400]
    y = data["mdvis"].to_numpy(float)
    X = data[["lncoins", "idp", "lpi", "physlm"]].to_numpy(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (statsmodels' own convergence chatter)
        model = sm.NegativeBinomial(y, sm.add_constant(X), loglike_method="nb2")
        ref = model.fit(method="newton", maxiter=100, tol=1e-14, disp=0)
    return X, y, model, ref


def test_alpha_derivatives_match_statsmodels_score_and_hessian(randhie):
    X, y, model, ref = randhie
    params = ref.params * np.r_[np.ones(X.shape[1] + 1), 1.3]  # off the optimum in alpha
    Z = sm.add_constant(X)
    mu, alpha = np.exp(Z @ params[:-1]), params[-1]
    ll, score, second = nb.alpha_derivatives(y, mu, alpha)
    assert ll == pytest.approx(model.loglike(params), rel=1e-13)
    assert score == pytest.approx(model.score(params)[-1], rel=1e-11)
    hess = model.hessian(params)
    assert second == pytest.approx(hess[-1, -1], rel=1e-11)
    np.testing.assert_allclose(Z.T @ nb.cross_derivative(y, mu, mu, alpha), hess[:-1, -1],
                               rtol=1e-11)


def test_alternating_fit_and_joint_covariance_match_statsmodels(randhie):
    """beta with alpha fixed by problin's Newton engine, alpha by update_alpha, until
    alpha settles; the joint SEs by the rank-one update of beta's covariance."""
    X, y, _, ref = randhie
    design = Design(X, intercept=True)
    theta = np.zeros(X.shape[1] + 1)
    theta[0] = np.log(y.mean())

    def fit_means(alpha: float):
        nonlocal theta
        objective = GLMObjective(design, make_family(NegativeBinomial(alpha)), y)
        theta = newton(objective, theta, tol=1e-14).theta
        return in_hand(y, np.exp(design.matvec(theta)))

    poisson_mu = np.exp(np.log(y.mean()) * np.ones_like(y))
    found = nb.fit_alpha(fit_means, nb.moment_alpha(in_hand(y, poisson_mu)))
    assert found.converged and found.n_iter < 25
    assert found.alpha == pytest.approx(ref.params[-1], rel=1e-8)
    np.testing.assert_allclose(theta, ref.params[:-1], rtol=1e-8)
    assert found.log_likelihood == pytest.approx(ref.llf, rel=1e-12)
    Z = sm.add_constant(X)
    mu = np.exp(Z @ theta)
    family = make_family(NegativeBinomial(found.alpha))
    _, _, h = family.derivatives(y, Z @ theta, None, "observed")
    cov_beta = np.linalg.solve(Z.T @ (h[:, None] * Z), np.eye(Z.shape[1]))
    cross = -Z.T @ nb.cross_derivative(y, mu, mu, found.alpha)
    second = -nb.alpha_derivatives(y, mu, found.alpha)[2]
    cov, cov_ba, var_alpha = nb.joint_covariance(cov_beta, cross, second)
    np.testing.assert_allclose(np.sqrt(np.diag(cov)), ref.bse[:-1], rtol=1e-7)
    assert np.sqrt(var_alpha) == pytest.approx(ref.bse[-1], rel=1e-7)
    np.testing.assert_allclose(cov_ba, ref.cov_params()[:-1, -1], rtol=1e-6)
    # alpha fixed gives slightly smaller SEs of beta (the information lost to alpha)
    assert np.all(np.sqrt(np.diag(cov_beta)) < np.sqrt(np.diag(cov)))


def test_frequency_weights_are_repeated_rows_and_no_overdispersion_is_reported():
    rng = np.random.default_rng(7)
    mu = rng.uniform(1, 5, 60)
    y = rng.poisson(rng.gamma(2.0, mu / 2.0)).astype(float)
    w = rng.integers(1, 4, 60).astype(float)
    rep = np.repeat(np.arange(60), w.astype(int))
    a = nb.update_alpha(in_hand(y, mu, w), 0.3)
    b = nb.update_alpha(in_hand(y[rep], mu[rep]), 0.3)
    assert a.converged and a.alpha == pytest.approx(b.alpha, rel=1e-10)
    assert abs(a.score) < 1e-6
    # underdispersed counts (binomial): the likelihood rises to the Poisson limit
    under = rng.binomial(6, 0.5, 200).astype(float)
    flat = nb.update_alpha(in_hand(under, np.full(200, under.mean())), 0.5)
    assert not flat.converged and flat.alpha == 0.0 and flat.n_iter == 0
    assert "no overdispersion" in flat.message
    whole = nb.fit_alpha(lambda alpha: in_hand(under, np.full(200, under.mean())), 0.5)
    assert not whole.converged and whole.alpha == 0.0 and whole.n_iter == 1
    with pytest.raises(ValueError, match="start value of alpha must be positive"):
        nb.update_alpha(in_hand(y, mu), 0.0)
