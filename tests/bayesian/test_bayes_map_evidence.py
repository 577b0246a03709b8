"""MAP = LogisticRegression's fit, and the Laplace evidence (basis comparison; alpha=None in
test_bayes_alpha.py)."""
import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.datasets import load_iris
from tests.glm.conftest import breast_cancer_subset, synthetic_logit

from problin import BayesianLogisticRegression, LogisticRegression, PolynomialBasis


@pytest.mark.parametrize("alpha", [0.1, 1.0, 30.0])
def test_map_equals_logistic_regression(alpha):
    X, y = synthetic_logit(n=1000, d=4, seed=1)
    bayes = BayesianLogisticRegression(alpha=alpha).fit(X, y)  # default broad intercept prior
    glm = LogisticRegression(alpha=alpha).fit(X, y)
    assert_allclose(bayes.coef_, glm.coef_, rtol=0, atol=1e-8)
    assert_allclose(bayes.intercept_, glm.intercept_, rtol=0, atol=1e-8)
    assert_allclose(bayes.posterior_cov_, glm.covariance_, rtol=1e-5)


def test_flat_intercept_prior_is_exactly_the_glm():
    X, y = breast_cancer_subset()  # unscaled features: intercept ~ 20 with sd ~ 2
    bayes = BayesianLogisticRegression(alpha=2.0, intercept_alpha=0.0).fit(X, y)
    glm = LogisticRegression(alpha=2.0).fit(X, y)
    assert_allclose(bayes.posterior_mean_, np.r_[glm.intercept_, glm.coef_[0]], rtol=0,
                    atol=1e-8)
    assert np.isfinite(bayes.log_evidence_)


def test_a_flat_intercept_prior_is_the_limit_of_broad_ones_in_the_evidence():
    """A flat prior of unit density on the intercept is the limit of N(0, 1 / a) as a -> 0
    times sqrt(2 pi / a) (its density at the MAP, inverted): the Laplace evidence with
    intercept_alpha=0 subtracted ln(2 pi) per flat entry instead of adding it (-25.71
    where the formula gives -23.87 on these data)."""
    X, y = synthetic_logit(n=60, d=2, seed=3)
    flat = BayesianLogisticRegression(alpha=0.7, intercept_alpha=0.0).fit(X, y)
    for a in (1e-10, 1e-12):
        broad = BayesianLogisticRegression(alpha=0.7, intercept_alpha=a).fit(X, y)
        expected = broad.log_evidence_ + 0.5 * np.log(2 * np.pi / a)
        assert flat.log_evidence_ == pytest.approx(expected, abs=1e-5)


def test_softmax_map_and_covariance_equal_logistic_regression():
    X, y = load_iris(return_X_y=True)
    bayes = BayesianLogisticRegression(alpha=0.5, intercept_alpha=0.0).fit(X, y)
    glm = LogisticRegression(alpha=0.5).fit(X, y)
    assert_allclose(bayes.coef_, glm.coef_, rtol=0, atol=1e-8)
    assert_allclose(bayes.intercept_, glm.intercept_, rtol=0, atol=1e-8)
    # The intercepts' common shift is flat (an improper prior): each model reports
    # the covariance on its own constraint (the GLM's raw intercepts sum to zero,
    # the Bayesian model's intercepts at the centre of the data), so compare what
    # both identify: every slope and the intercepts' differences.
    K, p = 3, X.shape[1] + 1
    D = np.eye(K * p)
    D[p::p] -= np.eye(1, K * p).ravel()  # b_k - b_0 for k > 0
    D = D[1:]  # (b_0 alone is not identified)
    assert_allclose(D @ bayes.posterior_cov_ @ D.T, D @ glm.covariance_ @ D.T,
                    rtol=1e-5, atol=1e-8)
    assert bayes.posterior_mean_.shape == (15,) and bayes.posterior_cov_.shape == (15, 15)
    proba = bayes.predict_proba(X)
    assert_allclose(proba.sum(axis=1), 1.0)
    assert np.mean(bayes.predict(X) == y) > 0.9
    table = bayes.summary()
    assert table.index.names == ["class", "parameter"] and table.shape == (15, 6)


def test_softmax_moderated_predictive_matches_sampling():
    X, y = load_iris(return_X_y=True)
    model = BayesianLogisticRegression(alpha=0.05, n_samples=20000, random_state=0).fit(X, y)
    rows = X[::10]
    assert np.max(np.abs(model.predict_proba(rows) - model.predict_proba(rows, "sample"))) < 0.03
    mu, var = model.predict_activation(rows)
    assert mu.shape == var.shape == (rows.shape[0], 3) and np.all(var > 0)


def test_evidence_prefers_the_true_basis():
    rng = np.random.default_rng(5)
    x = rng.uniform(-2, 2, size=(400, 1))
    cubic = PolynomialBasis(degree=3).fit_transform(x)
    linear_y = (rng.random(400) < 1 / (1 + np.exp(-2 * x[:, 0]))).astype(int)
    cubic_y = (rng.random(400) < 1 / (1 + np.exp(-(2 * x[:, 0] ** 3 - 3 * x[:, 0])))).astype(int)

    def evidence(features, y):
        return BayesianLogisticRegression(alpha=None).fit(features, y).log_evidence_

    assert evidence(x, linear_y) > evidence(cubic, linear_y)
    assert evidence(cubic, cubic_y) > evidence(x, cubic_y) + 10


def test_summary_has_the_glm_shape():
    X, y = breast_cancer_subset()
    bayes = BayesianLogisticRegression(alpha=1.0).fit(X, y)
    glm = LogisticRegression(alpha=1.0).fit(X, y)
    table, glm_table = bayes.summary(level=0.9), glm.summary(level=0.9)
    assert table.shape == glm_table.shape and list(table.index) == list(glm_table.index)
    assert list(table.columns) == ["mean", "sd", "z", "p_opposite", "ci_low", "ci_high"]
    assert_allclose(table["z"], table["mean"] / table["sd"])
    assert_allclose(table["mean"], glm_table["coef"], atol=1e-8)
    assert_allclose(table["sd"], glm_table["std_err"], rtol=1e-5)
    assert_allclose(table["ci_low"], glm_table["ci_low"], rtol=1e-5)
    assert table.attrs["inference"] == "laplace" and table.attrs["level"] == 0.9


def test_sparse_input_gives_the_dense_posterior():
    import scipy.sparse as sp
    X, y = synthetic_logit(n=400, d=4, seed=2)
    X[np.abs(X) < 0.5] = 0.0
    dense = BayesianLogisticRegression(alpha=None).fit(X, y)
    sparse = BayesianLogisticRegression(alpha=None).fit(sp.csr_matrix(X), y)
    assert_allclose(sparse.posterior_mean_, dense.posterior_mean_, atol=1e-8)
    assert_allclose(sparse.predict_proba(sp.csr_matrix(X)), dense.predict_proba(X), atol=1e-10)


@pytest.mark.parametrize("weighted", [False, True])
def test_posterior_does_not_depend_on_the_order_of_the_rows(weighted):
    """The intercept's prior sits at the centre of the data, which was the mean of 4,096
    evenly spaced rows: permuting more rows than that moved the posterior (1e-8 relative
    here, more for a tighter intercept prior). It is now the mean of every row, in memory
    and on Dask alike."""
    from problin import BayesianLogisticRegression
    rng = np.random.default_rng(5)
    n = 20_000
    X = rng.normal(size=(n, 3)) * [1.0, 5.0, 0.2] + [100.0, -50.0, 3.0]
    y = (X[:, 0] - 100.0 + 0.2 * (X[:, 1] + 50.0) + rng.logistic(size=n) > 0).astype(int)
    w = rng.uniform(0.5, 2.0, n) if weighted else None
    order = rng.permutation(n)
    fits = [BayesianLogisticRegression(intercept_alpha=1e-2).fit(
        X[rows], y[rows], sample_weight=None if w is None else w[rows])
        for rows in (np.arange(n), order)]
    scale = np.abs(fits[0].posterior_mean_).max()
    np.testing.assert_allclose(fits[1].posterior_mean_, fits[0].posterior_mean_, rtol=0,
                               atol=1e-12 * scale)
    np.testing.assert_allclose(fits[1].posterior_cov_, fits[0].posterior_cov_, rtol=1e-10)
