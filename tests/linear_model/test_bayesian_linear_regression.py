"""BayesianLinearRegression: evidence parity, sequential updates, predictive distribution."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import BayesianRidge
from sklearn.pipeline import make_pipeline

from problin import (
    BayesianLinearRegression,
    CollinearityWarning,
    ConvergenceWarning,
    LinearRegression,
    PolynomialBasis,
)


def data(n=120, d=4, k=None, seed=0, noise=0.5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) + 2.0
    W = rng.normal(size=(d,) if k is None else (d, k))
    T = X @ W - 1.0 + noise * rng.normal(size=(n,) if k is None else (n, k))
    return X, T


def bayesian_ridge(fit_intercept=True):
    return BayesianRidge(alpha_1=1e-12, alpha_2=1e-12, lambda_1=1e-12, lambda_2=1e-12,
                         tol=1e-12, max_iter=100_000, compute_score=True,
                         fit_intercept=fit_intercept)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("shape", [(120, 4), (40, 30)])
def test_evidence_approximation_equals_sklearn_bayesian_ridge(fit_intercept, shape):
    X, t = data(*shape)
    model = BayesianLinearRegression(fit_intercept=fit_intercept).fit(X, t)
    ref = bayesian_ridge(fit_intercept).fit(X, t)
    # scikit-learn's alpha_ is the noise precision (our beta), lambda_ the prior's (our alpha).
    assert model.alpha_ == pytest.approx(ref.lambda_, rel=1e-5)
    assert model.beta_ == pytest.approx(ref.alpha_, rel=1e-5)
    # scores_[-1] is ln p(t | alpha, beta) at the final values plus the hyperprior
    # terms l1 ln(l) - l2 l + a1 ln(a) - a2 a, of order 1e-11 here.
    assert model.log_evidence_ == pytest.approx(ref.scores_[-1], rel=1e-5)
    np.testing.assert_allclose(model.coef_, ref.coef_, atol=1e-5 * np.abs(ref.coef_).max())
    np.testing.assert_allclose(model.intercept_, ref.intercept_, atol=1e-5 * abs(ref.intercept_) + 1e-8)


def test_log_evidence_is_the_closed_form_marginal_likelihood():
    """ln N(t | 0, beta^-1 I + alpha^-1 Phi Phi^T), evaluated directly."""
    from scipy.stats import multivariate_normal
    X, t = data(n=40, d=3)
    model = BayesianLinearRegression(alpha=0.7, beta=2.5, fit_intercept=False).fit(X, t)
    cov = np.eye(40) / 2.5 + X @ X.T / 0.7
    assert model.log_evidence_ == pytest.approx(multivariate_normal(np.zeros(40), cov).logpdf(t),
                                                rel=1e-10)
    S = np.linalg.solve(0.7 * np.eye(3) + 2.5 * X.T @ X, np.eye(3))
    np.testing.assert_allclose(model.coef_, 2.5 * S @ X.T @ t, rtol=1e-10)
    np.testing.assert_allclose(model.posterior_cov_, S, rtol=1e-10)
    assert model.gamma_ == pytest.approx(np.trace(2.5 * X.T @ X @ S), rel=1e-10)


def test_multiple_outputs_share_alpha_and_beta():
    X, T = data(k=3)
    model = BayesianLinearRegression().fit(X, T)
    assert model.coef_.shape == (3, 4) and model.intercept_.shape == (3,)
    single = BayesianLinearRegression(alpha=model.alpha_, beta=model.beta_)
    for k in range(3):
        np.testing.assert_allclose(single.fit(X, T[:, k]).coef_, model.coef_[k], rtol=1e-10)
    # the fixed point of the summed evidence
    Tc, Xc = T - T.mean(0), X - X.mean(0)
    sse = np.sum((Tc - Xc @ model.coef_.T) ** 2)
    assert model.alpha_ == pytest.approx(3 * model.gamma_ / np.sum(model.coef_ ** 2), rel=1e-8)
    assert model.beta_ == pytest.approx(3 * (len(X) - model.gamma_) / sse, rel=1e-8)


@pytest.mark.parametrize("params", [{}, {"alpha": 2.0, "beta": 3.0},
                                    {"alpha": 2.0, "beta": 3.0, "fit_intercept": False}])
def test_partial_fit_in_chunks_equals_fit(params):
    X, T = data(n=200, k=2)
    whole = BayesianLinearRegression(**params).fit(X, T)
    chunked = BayesianLinearRegression(**params)
    for rows in np.array_split(np.arange(len(X)), 7):
        chunked.partial_fit(X[rows], T[rows])
    for name in ("coef_", "intercept_", "posterior_cov_", "alpha_", "beta_"):
        np.testing.assert_allclose(getattr(chunked, name), getattr(whole, name), rtol=1e-10,
                                   atol=1e-10)


def test_partial_fit_is_the_seeds_sequential_update():
    """S_{N+1}^-1 = S_N^-1 + beta phi phi^T, m_{N+1} = S_{N+1}(S_N^-1 m_N + beta t phi)."""
    X, t = data(n=30, d=3)
    alpha, beta = 1.5, 4.0
    model = BayesianLinearRegression(alpha=alpha, beta=beta, fit_intercept=False)
    precision, shift = alpha * np.eye(3), np.zeros(3)  # S_0^-1 and S_0^-1 m_0
    for n in range(len(X)):
        model.partial_fit(X[n:n + 1], t[n:n + 1])
        precision = precision + beta * np.outer(X[n], X[n])
        shift = shift + beta * t[n] * X[n]
        m = np.linalg.solve(precision, shift)
        np.testing.assert_allclose(model.coef_, m, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(np.linalg.solve(model.posterior_cov_, np.eye(3)), precision,
                                   rtol=1e-9)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_predictive_std_equals_the_closed_form(fit_intercept):
    X, t = data()
    model = BayesianLinearRegression(fit_intercept=fit_intercept).fit(X, t)
    Xnew = data(n=10, seed=9)[0] * 1.5
    mean, std = model.predict(Xnew, return_std=True)
    Phi = np.column_stack([np.ones(10), Xnew]) if fit_intercept else Xnew
    var = 1.0 / model.beta_ + np.einsum("ij,jk,ik->i", Phi, model.posterior_cov_, Phi)
    np.testing.assert_allclose(std, np.sqrt(var), rtol=1e-10)
    np.testing.assert_allclose(mean, Phi @ model.posterior_mean_, rtol=1e-10)
    if fit_intercept:  # the same as a flat prior on the intercept: huge prior variance on phi_0
        Phi_train = np.column_stack([np.ones(len(X)), X])
        prec = model.beta_ * Phi_train.T @ Phi_train + np.diag([1e-10] + [model.alpha_] * 4)
        np.testing.assert_allclose(model.posterior_cov_, np.linalg.inv(prec), rtol=1e-6)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), split=st.integers(2, 40))
def test_predictive_std_shrinks_as_data_arrive(seed, split):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(41, 2))
    t = X @ [0.5, -1.0] + 0.2 * rng.normal(size=41)
    Xq = rng.normal(size=(5, 2)) * 3
    model = BayesianLinearRegression(alpha=2.0, beta=25.0)
    model.partial_fit(X[:split], t[:split])
    before = model.predict(Xq, return_std=True)[1]
    model.partial_fit(X[split:], t[split:])
    after = model.predict(Xq, return_std=True)[1]
    assert np.all(after <= before + 1e-12)
    assert np.all(after >= 1.0 / 5.0 - 1e-12)  # never below the noise 1/sqrt(beta)


@pytest.mark.parametrize("n, params", [(10, {"alpha": 5e-3, "beta": 11.1}), (20, {})])
def test_evidence_over_polynomial_degree_peaks_in_the_middle(n, params):
    """Bishop's figure 3.14: sin(2 pi x) + N(0, 0.3^2) noise, degrees 0..9; alpha and beta
    as in the book, or estimated by the evidence approximation."""
    rng = np.random.default_rng(0)
    x = np.linspace(0, 1, n)[:, None]
    t = np.sin(2 * np.pi * x[:, 0]) + rng.normal(scale=0.3, size=n)
    evidence, train_error = [], []
    for degree in range(10):
        # the book's raw powers x^j: a fixed alpha is a prior on their weights
        basis = PolynomialBasis(degree, include_bias=True, standardize=False)
        bayes = BayesianLinearRegression(fit_intercept=False, **params)
        evidence.append(make_pipeline(basis, bayes).fit(x, t)[-1].log_evidence_)
        with warnings.catch_warnings():  # degree 9 on 10 points: Phi^T Phi near singular
            warnings.simplefilter("ignore", CollinearityWarning)
            ls = make_pipeline(basis, LinearRegression(fit_intercept=False)).fit(x, t)
        train_error.append(np.mean((ls.predict(x) - t) ** 2))
    best = int(np.argmax(evidence))
    assert 3 <= best <= 5, evidence
    assert evidence[best] > evidence[-1] + 0.5 and evidence[best] > evidence[0] + 5
    assert np.all(np.diff(train_error) <= 1e-10), train_error
    assert train_error[-1] < train_error[best]


def test_sample_posterior_has_the_posterior_moments():
    X, t = data(n=60, d=2)
    model = BayesianLinearRegression().fit(X, t)
    draws = model.sample_posterior(40_000, random_state=0)
    assert draws.shape == (40_000, 3)
    np.testing.assert_allclose(draws.mean(0), model.posterior_mean_,
                               atol=4 * np.sqrt(np.diag(model.posterior_cov_) / 40_000).max())
    np.testing.assert_allclose(np.cov(draws.T), model.posterior_cov_, rtol=0.05,
                               atol=0.03 * np.abs(model.posterior_cov_).max())
    same = model.sample_posterior(3, random_state=0)
    np.testing.assert_array_equal(same, model.sample_posterior(3, random_state=0))
    multi = BayesianLinearRegression().fit(X, np.column_stack([t, -t]))
    assert multi.sample_posterior(5, random_state=1).shape == (5, 2, 3)


def test_one_precision_fixed_the_other_estimated():
    X, t = data()
    Xc, tc = X - X.mean(0), t - t.mean()
    model = BayesianLinearRegression(alpha=3.0).fit(X, t)
    assert model.alpha_ == 3.0
    sse = np.sum((tc - Xc @ model.coef_) ** 2)
    assert model.beta_ == pytest.approx((len(X) - model.gamma_) / sse, rel=1e-8)
    model = BayesianLinearRegression(beta=2.0).fit(X, t)
    assert model.beta_ == 2.0
    assert model.alpha_ == pytest.approx(model.gamma_ / np.sum(model.coef_ ** 2), rel=1e-8)


def test_a_tiny_total_weight_gives_the_prior_not_a_negative_precision():
    """Weights summing to 1e-8 left the evidence update's n - gamma negative: beta and
    then alpha below 0, NaN evidence and standard deviations. With no weight left for
    the noise the hyperprior decides: finite, positive, the prior's wide predictions."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = X @ [1.0, 2.0, 3.0] + rng.normal(size=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # (a flat evidence: no data)
        model = BayesianLinearRegression().fit(X, y, sample_weight=np.full(50, 2e-10))
    assert model.alpha_ > 0 and model.beta_ > 0 and np.isfinite(model.log_evidence_)
    mean, std = model.predict(X[:3], return_std=True)
    assert np.all(np.isfinite(mean)) and np.all(std > 1.0)


def test_a_column_far_from_zero_beside_a_unit_one_is_resolved():
    """A column of spread 1e-6 at 1e4 (5.6 digits) beside a unit column: the rank rule
    put its rounding at the largest singular value's scale, not its own column's, and
    dropped it (coefficient -2.6e-14 for ~1e6). It now equals the centred data's fit."""
    rng = np.random.default_rng(0)
    x0, x1 = rng.normal(size=200), rng.normal(size=200)
    y = x0 + x1 + 0.1 * rng.normal(size=200)
    Z = np.c_[1e4 + 1e-6 * x0, x1]
    far = BayesianLinearRegression(alpha=1e-12, beta=100.0).fit(Z, y)
    centred = BayesianLinearRegression(alpha=1e-12, beta=100.0).fit(Z - [1e4, 0.0], y)
    np.testing.assert_allclose(far.coef_, centred.coef_, rtol=1e-6)
    assert far.coef_[0] * 1e-6 == pytest.approx(1.0, abs=0.05)


def test_predictive_std_at_rows_far_out_is_finite_and_exact():
    """At a row of 1e200 the predictive variance (1e397) overflowed: std inf, silently.
    Now formed on the row scaled by a power of two; checked in 50-digit arithmetic."""
    import mpmath as mp
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = X @ [1.0, 2.0, 3.0] + rng.normal(size=60)
    model = BayesianLinearRegression().fit(X, y)
    rows = np.array([[0.1, 0.2, 0.3], [1e200, 0.0, 0.0], [1e300, -1e300, 1e300]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, std = model.predict(rows, return_std=True)
    C = model.posterior_cov_  # of [intercept, coef]: the variance of x~^T w, plus 1 / beta
    with mp.workdps(50):
        for row, got in zip(rows, std):
            x = [mp.mpf(1)] + [mp.mpf(float(v)) for v in row]
            var = mp.fsum(x[i] * mp.mpf(float(C[i, j])) * x[j] for i in range(4)
                          for j in range(4))
            exact = mp.sqrt(var + 1 / mp.mpf(float(model.beta_)))
            assert got == pytest.approx(float(exact), rel=1e-9)
