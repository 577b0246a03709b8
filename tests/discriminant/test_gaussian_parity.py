"""Gaussian discriminant analysis equals scikit-learn and the closed forms of Bishop 2006, §4.2."""
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.special import log_softmax, logsumexp
from scipy.stats import multivariate_normal
from sklearn import discriminant_analysis as skda
from sklearn.covariance import EmpiricalCovariance
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine

from problin import (
    GaussianDiscriminantAnalysis,
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
    SingularCovarianceWarning,
)

LOADERS = {"iris": load_iris, "wine": load_wine, "breast-cancer": load_breast_cancer,
           "digits": load_digits}


def _data(name):
    return LOADERS[name](return_X_y=True)


def _closed_form_log_joint(X, priors, means, covs):
    """``log pi_k + log N(x | mu_k, Sigma_k)`` with scipy's density."""
    return np.column_stack([np.log(p) + multivariate_normal(m, c).logpdf(X)
                            for p, m, c in zip(priors, means, covs)])


class RidgeCovariance(EmpiricalCovariance):
    """The ML covariance plus ``diag(reg)`` (to give sklearn's QDA our reg_covar, which
    is a fraction of each feature's variance over all the data)."""

    def __init__(self, reg=0.0):
        super().__init__()
        self.reg = reg

    def fit(self, X, y=None):
        super().fit(X)
        self.covariance_ = self.covariance_ + np.diag(np.broadcast_to(self.reg, X.shape[1]))
        return self


@pytest.mark.parametrize("name", ["iris", "wine", "breast-cancer", "digits"])
def test_lda_equals_sklearn_lsqr(name):
    X, y = _data(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingularCovarianceWarning)  # digits: constant pixels
        ours = LinearDiscriminantAnalysis().fit(X, y)
    ref = skda.LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)
    assert_allclose(ours.predict_proba(X), ref.predict_proba(X), rtol=0, atol=1e-8)
    assert_allclose(ours.means_, ref.means_, rtol=1e-12)
    assert_allclose(ours.priors_, ref.priors_, rtol=1e-12)
    assert np.mean(ours.predict(X) == ref.predict(X)) == 1.0
    if name != "digits":  # well-posed: the same covariance and coefficients
        assert_allclose(ours.covariances_, ref.covariance_, rtol=1e-10, atol=1e-12)
        if ref.coef_.shape[0] == 1:  # binary: sklearn keeps w_1 - w_0
            assert_allclose(ours.coef_[1] - ours.coef_[0], ref.coef_[0], rtol=1e-8,
                            atol=1e-9 * np.abs(ref.coef_).max())  # cond(Sigma) ~ 1e9
        else:
            # sklearn's w_k = Sigma^-1 mu_k; ours take the means about the overall
            # mean (shift-invariant weights): they differ by a term shared by all
            # classes, so the contrasts against the first class agree.
            ours_w, ref_w = ours.coef_ - ours.coef_[0], ref.coef_ - ref.coef_[0]
            assert_allclose(ours_w, ref_w, rtol=1e-8, atol=1e-10 * np.abs(ref.coef_).max())
            assert_allclose(ours.intercept_ - ours.intercept_[0],
                            ref.intercept_ - ref.intercept_[0], rtol=1e-8,
                            atol=1e-10 * np.abs(ref.intercept_).max())


@pytest.mark.parametrize("name", ["iris", "wine", "breast-cancer"])
def test_qda_equals_sklearn(name):
    # The installed scikit-learn (1.9) divides the class scatter by n_k (the ML estimate),
    # as we do (docs/design.md: older versions divided by n_k - 1).
    X, y = _data(name)
    ours = QuadraticDiscriminantAnalysis().fit(X, y)
    ref = skda.QuadraticDiscriminantAnalysis(store_covariance=True, tol=0.0).fit(X, y)
    assert_allclose(ours.predict_proba(X), ref.predict_proba(X), rtol=0, atol=1e-8)
    assert_allclose(ours.covariances_, np.array(ref.covariance_), rtol=1e-9,
                    atol=1e-12 * np.abs(ours.covariances_).max())


@pytest.mark.parametrize("name, reg", [("iris", 0.1), ("wine", 1e-3), ("digits", 0.5)])
def test_regularised_qda_equals_sklearn_with_the_same_covariance(name, reg):
    X, y = _data(name)
    ours = QuadraticDiscriminantAnalysis(reg_covar=reg).fit(X, y)
    v = np.var(X, axis=0)
    v[v == 0] = np.mean(v[v > 0])  # a constant feature (digits): the others' mean variance
    ref = skda.QuadraticDiscriminantAnalysis(
        solver="eigen", covariance_estimator=RidgeCovariance(reg * v)).fit(X, y)
    assert_allclose(ours.predict_proba(X), ref.predict_proba(X), rtol=0, atol=1e-8)


@pytest.mark.parametrize("name", ["iris", "wine"])
@pytest.mark.parametrize("kind", ["full", "tied", "diag", "spherical"])
def test_every_covariance_type_equals_the_closed_form(name, kind):
    X, y = _data(name)
    model = GaussianDiscriminantAnalysis(covariance_type=kind, reg_covar=1e-3).fit(X, y)
    K, D = model.means_.shape
    # The ML estimates (Bishop 2006, §4.2.2), computed directly.
    n_k = np.bincount(y)
    S = [np.cov(X[y == k].T, bias=True) for k in range(K)]
    tied = sum(n_k[k] / len(y) * S[k] for k in range(K))
    reg = 1e-3 * np.var(X, axis=0)  # reg_covar: a fraction of each feature's variance
    covs = {"full": [S[k] + np.diag(reg) for k in range(K)],
            "tied": [tied + np.diag(reg)] * K,
            "diag": [np.diag(np.diag(S[k]) + reg) for k in range(K)],
            "spherical": [(np.trace(tied) / D + np.mean(reg)) * np.eye(D)] * K}[kind]
    a = _closed_form_log_joint(X, n_k / len(y), model.means_, covs)
    assert_allclose(model.predict_log_proba(X), log_softmax(a, axis=1), rtol=1e-9, atol=1e-9)
    assert_allclose(model.score_samples(X), logsumexp(a, axis=1), rtol=1e-10)
    expected_cov = {"full": np.array(covs), "tied": covs[0],
                    "diag": np.array([np.diag(c) for c in covs]), "spherical": covs[0][0, 0]}
    assert_allclose(model.covariances_, expected_cov[kind], rtol=1e-10)


@pytest.mark.parametrize("kind", ["tied", "spherical"])
def test_coef_and_intercept_are_the_seeds_linear_discriminants(kind):
    X, y = _data("wine")
    model = GaussianDiscriminantAnalysis(covariance_type=kind, priors=[0.5, 0.3, 0.2]).fit(X, y)
    a = X @ model.coef_.T + model.intercept_
    # a_k(x) = w_k^T x + w_k0 differs from log p(x, C_k) by a term common to all classes.
    assert_allclose(log_softmax(a, axis=1), model.predict_log_proba(X), atol=1e-9)
    cov = model.covariances_ * np.eye(X.shape[1]) if kind == "spherical" else model.covariances_
    # The linear discriminants (Bishop 2006, eqs. 4.68-4.70), class means about the mean m.
    m = X.mean(axis=0)
    w = np.linalg.solve(cov, (model.means_ - m).T).T
    assert_allclose(model.coef_, w, rtol=1e-8)
    w0 = -0.5 * np.sum((model.means_ - m) * w, axis=1) + np.log([0.5, 0.3, 0.2]) - w @ m
    assert_allclose(model.intercept_, w0, rtol=1e-8)


def test_priors_override_only_the_prior_term():
    X, y = _data("breast-cancer")
    base = LinearDiscriminantAnalysis().fit(X, y)
    rare = LinearDiscriminantAnalysis(priors=[0.99, 0.01]).fit(X, y)
    assert_allclose(rare.priors_, [0.99, 0.01])
    assert_allclose(rare.covariances_, base.covariances_)  # still the ML sum (n_k/n) S_k
    shift = np.log(0.99 / 0.01) - np.log(base.priors_[0] / base.priors_[1])
    assert_allclose(rare.decision_function(X), base.decision_function(X) - shift, atol=1e-8)


def test_decision_function_is_the_log_odds_for_two_classes():
    X, y = _data("breast-cancer")
    model = QuadraticDiscriminantAnalysis().fit(X, y)
    lp = model.predict_log_proba(X)
    assert_allclose(model.decision_function(X), lp[:, 1] - lp[:, 0], atol=1e-8)
    assert model.decision_function(X[:5]).shape == (5,)


def test_far_away_points_give_finite_log_probabilities():
    X, y = _data("iris")
    model = QuadraticDiscriminantAnalysis().fit(X, y)
    far = np.full((3, 4), 1e4)
    lp = model.predict_log_proba(far)
    assert np.all(np.isfinite(lp)) and np.all(lp <= 0)
    assert_allclose(logsumexp(lp, axis=1), 0.0, atol=1e-12)
    assert np.all(np.isfinite(model.score_samples(far)))


def test_data_far_from_the_origin_lose_no_precision():
    X, y = _data("iris")
    near = GaussianDiscriminantAnalysis("full").fit(X, y)
    far = GaussianDiscriminantAnalysis("full").fit(X + 1e6, y)
    assert_allclose(far.covariances_, near.covariances_, rtol=1e-7)
    assert_allclose(far.predict_proba(X + 1e6), near.predict_proba(X), atol=1e-6)


def test_compare_runs_every_generative_model():
    from problin.model_selection import compare_classifiers
    X, y = _data("breast-cancer")
    names = ["lda", "qda", "gaussian-nb", "bernoulli-nb", "multinomial-nb"]
    table = compare_classifiers(X, y, names, cv=3)
    assert sorted(table["model"]) == sorted(names)
    assert np.all(np.isfinite(table["log_loss"])) and table["accuracy"].min() > 0.8
