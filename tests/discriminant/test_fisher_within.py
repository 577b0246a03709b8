"""FisherDiscriminant(within="sum"): the texts' two-class direction ``(Sigma_1 +
Sigma_2)^-1 (mu_2 - mu_1)`` with unweighted class covariances (issue 37, item 4),
against direct numpy computations."""
import numpy as np
import pytest
from scipy import linalg
from sklearn.utils._param_validation import InvalidParameterError

from problin import FisherDiscriminant

RNG = np.random.default_rng(4)
X1 = RNG.normal(size=(30, 3)) @ np.diag([1.0, 2.0, 0.5])
X2 = RNG.normal(size=(70, 3)) @ np.array([[1.0, 0.5, 0.0], [0.0, 1.0, 0.3], [0.0, 0.0, 2.0]])
X2 += [1.0, -1.0, 2.0]
X = np.r_[X1, X2]
Y = np.r_[np.zeros(30, int), np.ones(70, int)]


def _cov(A, w=None):
    return np.cov(A.T, aweights=w, bias=True)


def test_two_classes_give_the_texts_direction():
    model = FisherDiscriminant(within="sum").fit(X, Y)
    S = _cov(X1) + _cov(X2)
    w = np.linalg.solve(S, X2.mean(axis=0) - X1.mean(axis=0))
    w /= np.sqrt(w @ (S / 2) @ w)  # unit variance under the mean class covariance
    np.testing.assert_allclose(model.components_[0], w, rtol=1e-12)
    # ... which differs from the count-weighted pooled scatter's with unequal classes
    pooled = FisherDiscriminant().fit(X, Y).components_[0]
    S_W = 30 * _cov(X1) + 70 * _cov(X2)
    v = np.linalg.solve(S_W, X2.mean(axis=0) - X1.mean(axis=0))
    np.testing.assert_allclose(pooled / np.linalg.norm(pooled), v / np.linalg.norm(v),
                               rtol=1e-12)
    assert np.linalg.norm(w / np.linalg.norm(w) - v / np.linalg.norm(v)) > 1e-2


def test_weights_enter_the_class_covariances_and_means():
    w = RNG.uniform(0.5, 3.0, X.shape[0])
    model = FisherDiscriminant(within="sum").fit(X, Y, sample_weight=w)
    w1, w2 = w[:30], w[30:]
    S = _cov(X1, w1) + _cov(X2, w2)
    d = np.average(X2, axis=0, weights=w2) - np.average(X1, axis=0, weights=w1)
    v = np.linalg.solve(S, d)
    np.testing.assert_allclose(model.components_[0], v / np.sqrt(v @ (S / 2) @ v), rtol=1e-11)


def test_three_classes_solve_the_eigenproblem_with_the_mean_class_covariance():
    X3 = RNG.normal(size=(50, 3)) * [0.5, 1.0, 1.5] + [-2.0, 1.0, 0.0]
    XX, yy = np.r_[X, X3], np.r_[Y, np.full(50, 2)]
    model = FisherDiscriminant(within="sum").fit(XX, yy)
    parts = [X1, X2, X3]
    within = sum(_cov(A) for A in parts) / 3
    m = XX.mean(axis=0)
    between = sum(len(A) * np.outer(A.mean(0) - m, A.mean(0) - m) for A in parts) / len(XX)
    lambdas, V = linalg.eigh(between, within)
    V = V[:, ::-1][:, :2]
    signs = np.sign(np.sum(V * model.components_.T, axis=0))
    np.testing.assert_allclose(model.components_.T, V * signs, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.explained_variance_ratio_,
                               lambdas[::-1][:2] / lambdas.clip(0).sum(), rtol=1e-9)


def test_equal_class_sizes_give_the_pooled_direction():
    XX, yy = np.r_[X1, X2[:30]], np.r_[np.zeros(30), np.ones(30)]
    np.testing.assert_allclose(FisherDiscriminant(within="sum").fit(XX, yy).components_,
                               FisherDiscriminant().fit(XX, yy).components_, rtol=1e-10)


def test_an_unknown_within_is_refused():
    with pytest.raises(InvalidParameterError, match="within"):
        FisherDiscriminant(within="weighted").fit(X, Y)
