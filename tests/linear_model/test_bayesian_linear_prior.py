"""BayesianLinearRegression with a general Gaussian prior N(m_0, S_0), S_0^-1 = alpha P."""
import numpy as np
import pytest
from scipy.stats import multivariate_normal

from problin import BayesianLinearRegression


def data(n=80, d=3, k=None, seed=0, offset=2.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) + offset
    W = rng.normal(size=(d,) if k is None else (d, k))
    T = X @ W - 1.0 + 0.5 * rng.normal(size=(n,) if k is None else (n, k))
    return X, T


def prior(d=3, seed=5):
    """A non-trivial prior: mean away from zero, correlated precision."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(d, d))
    return rng.normal(size=d) * 2.0, A @ A.T + 0.5 * np.eye(d)


def seeds_posterior(Phi, t, m0, P0, beta):
    """S_N^-1 = S_0^-1 + beta Phi^T Phi, m_N = S_N (S_0^-1 m_0 + beta Phi^T t) by numpy."""
    precision = P0 + beta * Phi.T @ Phi
    S = np.linalg.solve(precision, np.eye(len(m0)))
    return S @ (P0 @ m0 + beta * Phi.T @ t), S


@pytest.mark.parametrize("alpha", [1.0, 0.3])
def test_posterior_is_the_seeds_closed_form_without_intercept(alpha):
    X, t = data()
    m0, P = prior()
    model = BayesianLinearRegression(alpha=alpha, beta=2.5, fit_intercept=False, prior_mean=m0,
                                     prior_precision=P).fit(X, t)
    m, S = seeds_posterior(X, t, m0, alpha * P, 2.5)
    np.testing.assert_allclose(model.coef_, m, rtol=1e-10)
    np.testing.assert_allclose(model.posterior_cov_, S, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(model.posterior_mean_, m, rtol=1e-10)
    assert model.gamma_ == pytest.approx(np.trace(2.5 * X.T @ X @ S), rel=1e-10)
    # the evidence: ln N(t | Phi m_0, beta^-1 I + Phi S_0 Phi^T)
    cov = np.eye(len(X)) / 2.5 + X @ np.linalg.solve(alpha * P, X.T)
    assert model.log_evidence_ == pytest.approx(
        multivariate_normal(X @ m0, cov).logpdf(t), rel=1e-10)


def test_intercept_is_flat_and_the_prior_acts_on_the_centred_weights():
    X, t = data()
    m0, P = prior()
    model = BayesianLinearRegression(alpha=1.0, beta=3.0, prior_mean=m0,
                                     prior_precision=P).fit(X, t)
    Xc, tc = X - X.mean(axis=0), t - t.mean()
    m, S = seeds_posterior(Xc, tc, m0, P, 3.0)
    np.testing.assert_allclose(model.coef_, m, rtol=1e-10)
    assert model.intercept_ == pytest.approx(t.mean() - X.mean(axis=0) @ m, rel=1e-10)
    # the joint posterior of [b, w]: the limit of a vanishing prior precision on b
    Phi = np.column_stack([np.ones(len(X)), X])
    P_joint = np.zeros((4, 4))
    P_joint[0, 0], P_joint[1:, 1:] = 1e-10, P
    m_joint, S_joint = seeds_posterior(Phi, t, np.r_[0.0, m0], P_joint, 3.0)
    np.testing.assert_allclose(model.posterior_mean_, m_joint, rtol=1e-6)
    np.testing.assert_allclose(model.posterior_cov_, S_joint, rtol=1e-6)


def test_default_prior_given_explicitly_is_the_isotropic_model():
    X, T = data(k=2)
    ref = BayesianLinearRegression().fit(X, T)
    for params in ({"prior_mean": np.zeros(3)}, {"prior_precision": np.ones(3)},
                   {"prior_precision": np.eye(3), "prior_mean": np.zeros((2, 3))}):
        model = BayesianLinearRegression(**params).fit(X, T)
        for name in ("coef_", "intercept_", "alpha_", "beta_", "log_evidence_",
                     "posterior_cov_"):
            np.testing.assert_allclose(getattr(model, name), getattr(ref, name), rtol=1e-9)
    # alpha scales P: alpha * (c P) == (alpha c) * P
    a = BayesianLinearRegression(alpha=2.0, beta=1.0, prior_precision=3.0 * np.eye(3)).fit(X, T)
    b = BayesianLinearRegression(alpha=6.0, beta=1.0).fit(X, T)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12)
    assert a.log_evidence_ == pytest.approx(b.log_evidence_, rel=1e-12)


def test_diagonal_precision_equals_the_matrix_and_outputs_have_their_own_means():
    X, T = data(k=2)
    p = np.array([0.5, 4.0, 2.0])
    M0 = np.array([[1.0, -1.0, 0.5], [0.0, 2.0, 3.0]])
    vec = BayesianLinearRegression(prior_precision=p, prior_mean=M0).fit(X, T)
    mat = BayesianLinearRegression(prior_precision=np.diag(p), prior_mean=M0).fit(X, T)
    for name in ("coef_", "alpha_", "beta_", "log_evidence_", "posterior_cov_"):
        np.testing.assert_allclose(getattr(vec, name), getattr(mat, name), rtol=1e-9)
    fixed = BayesianLinearRegression(alpha=vec.alpha_, beta=vec.beta_, prior_precision=p)
    for k in range(2):
        single = fixed.set_params(prior_mean=M0[k]).fit(X, T[:, k])
        np.testing.assert_allclose(single.coef_, vec.coef_[k], rtol=1e-9)


def test_estimated_precisions_are_the_generalised_fixed_point():
    """alpha = K gamma / sum_k (m_k - m_0)^T P (m_k - m_0), beta = K (N - gamma) / SSE,
    gamma = beta tr(S_N Phi^T Phi)."""
    X, T = data(k=2, n=60)
    m0, P = prior()
    model = BayesianLinearRegression(prior_mean=m0, prior_precision=P).fit(X, T)
    Xc, Tc = X - X.mean(axis=0), T - T.mean(axis=0)
    S = np.linalg.solve(model.alpha_ * P + model.beta_ * Xc.T @ Xc, np.eye(3))
    gamma = model.beta_ * np.trace(S @ Xc.T @ Xc)
    assert model.gamma_ == pytest.approx(gamma, rel=1e-9)
    D = model.coef_ - m0
    assert model.alpha_ == pytest.approx(2 * gamma / np.einsum("ki,ij,kj->", D, P, D), rel=1e-8)
    sse = np.sum((Tc - Xc @ model.coef_.T) ** 2)
    assert model.beta_ == pytest.approx(2 * (len(X) - gamma) / sse, rel=1e-8)
    # and the posterior at those precisions is the closed form
    for k in range(2):
        m, _ = seeds_posterior(Xc, Tc[:, k], m0, model.alpha_ * P, model.beta_)
        np.testing.assert_allclose(model.coef_[k], m, rtol=1e-9)
    beta_only = BayesianLinearRegression(alpha=1.0, prior_mean=m0, prior_precision=P).fit(X, T)
    assert beta_only.alpha_ == 1.0
    sse = np.sum((Tc - Xc @ beta_only.coef_.T) ** 2)
    assert beta_only.beta_ == pytest.approx(2 * (len(X) - beta_only.gamma_) / sse, rel=1e-8)


@pytest.mark.parametrize("params", [{"alpha": 1.0, "beta": 2.0}, {"alpha": 0.5},
                                    {}, {"alpha": 1.0, "beta": 2.0, "fit_intercept": False}])
def test_partial_fit_in_chunks_equals_fit(params):
    X, T = data(n=150, k=2)
    m0, P = prior()
    params = dict(params, prior_mean=m0, prior_precision=P)
    whole = BayesianLinearRegression(**params).fit(X, T)
    chunked = BayesianLinearRegression(**params)
    for rows in np.array_split(np.arange(len(X)), 6):
        chunked.partial_fit(X[rows], T[rows])
    for name in ("coef_", "intercept_", "posterior_cov_", "alpha_", "beta_", "log_evidence_"):
        np.testing.assert_allclose(getattr(chunked, name), getattr(whole, name), rtol=1e-10,
                                   atol=1e-10)


def test_partial_fit_is_the_sequential_update_from_the_prior():
    """The posterior becomes the prior: S_{n+1}^-1 = S_n^-1 + beta phi phi^T, m_{n+1} =
    S_{n+1} (S_n^-1 m_n + beta t phi), starting from S_0^-1 = alpha P and m_0."""
    X, t = data(n=25)
    m0, P = prior()
    beta = 4.0
    model = BayesianLinearRegression(alpha=1.0, beta=beta, fit_intercept=False, prior_mean=m0,
                                     prior_precision=P)
    precision, mean = P.copy(), m0.copy()
    for n in range(len(X)):
        model.partial_fit(X[n:n + 1], t[n:n + 1])
        shift = precision @ mean + beta * t[n] * X[n]
        precision = precision + beta * np.outer(X[n], X[n])
        mean = np.linalg.solve(precision, shift)
        np.testing.assert_allclose(model.coef_, mean, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.linalg.solve(model.posterior_cov_, np.eye(3)), precision,
                               rtol=1e-9)


def test_prediction_and_samples_use_the_general_posterior():
    X, t = data()
    m0, P = prior()
    model = BayesianLinearRegression(prior_mean=m0, prior_precision=P).fit(X, t)
    Xnew = data(n=7, seed=3)[0]
    Phi = np.column_stack([np.ones(7), Xnew])
    mean, std = model.predict(Xnew, return_std=True)
    var = 1.0 / model.beta_ + np.einsum("ij,jk,ik->i", Phi, model.posterior_cov_, Phi)
    np.testing.assert_allclose(std, np.sqrt(var), rtol=1e-10)
    np.testing.assert_allclose(mean, Phi @ model.posterior_mean_, rtol=1e-10)
    draws = model.sample_posterior(20_000, random_state=0)
    np.testing.assert_allclose(np.cov(draws.T), model.posterior_cov_, rtol=0.05,
                               atol=0.03 * np.abs(model.posterior_cov_).max())


def test_a_strong_prior_pins_the_weights_to_its_mean():
    X, t = data()
    m0 = np.array([5.0, -5.0, 1.0])
    model = BayesianLinearRegression(alpha=1e12, prior_mean=m0).fit(X, t)
    np.testing.assert_allclose(model.coef_, m0, atol=1e-6)


@pytest.mark.parametrize("params, error, match", [
    ({"prior_mean": np.zeros(4)}, ValueError, r"prior_mean has shape \(4,\); expected \(3,\)"),
    ({"prior_mean": np.zeros((2, 3))}, ValueError, "prior_mean has shape"),
    ({"prior_mean": [0.0, np.nan, 1.0]}, ValueError, "prior_mean contains NaN"),
    ({"prior_mean": ["a", "b", "c"]}, TypeError, "prior_mean must be numeric"),
    ({"prior_precision": np.eye(2)}, ValueError, r"prior_precision has shape \(2, 2\)"),
    ({"prior_precision": np.ones((3, 3, 1))}, ValueError, "prior_precision has shape"),
    ({"prior_precision": [1.0, 0.0, 2.0]}, ValueError, "must be positive"),
    ({"prior_precision": [1.0, -1.0, 2.0]}, ValueError, "must be positive"),
    ({"prior_precision": np.diag([1.0, -0.5, 2.0])}, ValueError, "positive definite"),
    ({"prior_precision": np.ones((3, 3))}, ValueError, "positive definite"),
    ({"prior_precision": np.triu(np.ones((3, 3)))}, ValueError, "symmetric"),
    ({"prior_precision": np.full((3, 3), np.inf)}, ValueError, "NaN or infinity"),
])
def test_bad_priors_are_clear_errors(params, error, match):
    X, t = data()
    with pytest.raises(error, match=match):
        BayesianLinearRegression(**params).fit(X, t)


def test_a_bad_prior_leaves_earlier_partial_fits_untouched():
    X, t = data()
    model = BayesianLinearRegression(alpha=1.0, beta=1.0).partial_fit(X[:40], t[:40])
    seen = model.moments_.weight
    with pytest.raises(ValueError, match="prior_mean"):
        model.set_params(prior_mean=np.zeros(5)).partial_fit(X[40:], t[40:])
    assert model.moments_.weight == seen
    model.set_params(prior_mean=None).partial_fit(X[40:], t[40:])
    whole = BayesianLinearRegression(alpha=1.0, beta=1.0).fit(X, t)
    np.testing.assert_allclose(model.coef_, whole.coef_, rtol=1e-10)
