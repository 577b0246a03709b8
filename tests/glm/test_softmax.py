"""Softmax (multinomial) regression: parity with statsmodels MNLogit and scikit-learn."""
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import statsmodels.api as sm
from numpy.testing import assert_allclose
from sklearn.datasets import load_wine
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.preprocessing import StandardScaler

from problin import LogisticRegression, SeparationWarning


def synthetic_softmax(n=3000, d=4, k=4, seed=0, scale=0.7):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) + np.linspace(-1, 1, d)
    A = X @ rng.normal(0.0, scale, (d, k)) + rng.normal(0, 0.3, k)
    P = np.exp(A - A.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    y = (rng.random(n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1)
    return X, y


def wine_subset():
    data = load_wine(as_frame=True)
    return data.data[["alcohol", "malic_acid", "ash"]], data.target


DATASETS = {
    "wine": wine_subset,
    "synthetic": synthetic_softmax,
    "synthetic-5": lambda: synthetic_softmax(n=2000, d=3, k=5, seed=4),
}


@pytest.fixture(params=sorted(DATASETS))
def dataset(request):
    return DATASETS[request.param]()


def test_ml_contrasts_and_standard_errors_match_mnlogit(dataset):
    X, y = dataset
    ours = LogisticRegression().fit(X, y)
    ref = sm.MNLogit(np.asarray(y), sm.add_constant(np.asarray(X, dtype=float))).fit(
        method="newton", tol=1e-14, maxiter=100, disp=0)
    table = ours.summary()
    K = np.unique(y).size
    assert ours.converged_ and ours.solver_ == "newton"
    assert table.index.names == ["class", "parameter"]
    assert len(table) == (K - 1) * (X.shape[1] + 1)
    # statsmodels: params[j, k] for parameter j of contrast k; ours: class-major
    assert_allclose(table["coef"], np.asarray(ref.params).T.ravel(), rtol=1e-6, atol=1e-10)
    assert_allclose(table["std_err"], np.asarray(ref.bse).T.ravel(), rtol=1e-6)
    assert_allclose(table["z"], np.asarray(ref.tvalues).T.ravel(), rtol=1e-6)
    assert_allclose(table.attrs["log_likelihood"], ref.llf, rtol=1e-10)
    assert_allclose(ours.predict_proba(X), ref.predict(sm.add_constant(np.asarray(X, float))),
                    rtol=1e-6, atol=1e-12)
    # the reference class has zero logits: coef_ row 0 is zero
    assert np.all(ours.coef_[0] == 0) and ours.intercept_[0] == 0
    assert ours.coef_.shape == (K, X.shape[1]) and ours.intercept_.shape == (K,)


@pytest.mark.parametrize("alpha", [0.1, 1.0, 10.0])
def test_penalised_softmax_matches_sklearn_multinomial(alpha, dataset):
    X, y = dataset
    X = StandardScaler().fit_transform(np.asarray(X, dtype=float))
    ours = LogisticRegression(alpha=alpha).fit(X, y)
    ref = SkLogisticRegression(C=1.0 / alpha, solver="newton-cholesky", tol=1e-14,
                               max_iter=1000).fit(X, y)
    assert_allclose(ours.coef_, ref.coef_, rtol=1e-6, atol=1e-9)
    assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-6, atol=1e-9)
    assert_allclose(ours.predict_proba(X), ref.predict_proba(X), rtol=1e-6, atol=1e-12)
    assert abs(ours.intercept_.sum()) < 1e-9  # the K intercepts sum to zero
    table = ours.summary()
    assert len(table) == np.unique(y).size * (X.shape[1] + 1)
    assert np.all(np.isfinite(table["std_err"]))


@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_all_solvers_reach_the_same_softmax_optimum(alpha):
    X, y = synthetic_softmax(n=1500, d=3, k=3, seed=2)
    fits = {s: LogisticRegression(alpha=alpha, solver=s).fit(X, y)
            for s in ("newton", "lbfgs", "gradient", "coordinate")}
    for solver, fit in fits.items():
        assert fit.converged_, solver
        assert_allclose(fit.coef_, fits["newton"].coef_, rtol=1e-5, atol=1e-8, err_msg=solver)
        assert_allclose(fit.intercept_, fits["newton"].intercept_, rtol=1e-5, atol=1e-8)


def test_penalised_covariance_is_the_constrained_inverse_hessian():
    """With all K blocks and intercepts summing to zero, covariance_ is H^+ on that subspace."""
    X, y = synthetic_softmax(n=800, d=2, k=3, seed=5)
    fit = LogisticRegression(alpha=2.0).fit(X, y)
    cov = fit.covariance_
    p = X.shape[1] + 1
    v = np.zeros(3 * p)
    v[::p] = 1.0
    assert_allclose(cov @ v, 0.0, atol=1e-10)  # no variance along the invariance
    assert_allclose(cov, cov.T, atol=1e-14)
    assert np.all(np.linalg.eigvalsh(cov)[1:] > 0)


def test_sparse_and_dense_give_the_same_softmax_fit():
    X, y = synthetic_softmax(n=1500, d=6, k=3, seed=3)
    X[np.abs(X) < 0.7] = 0.0
    for alpha in (0.0, 0.5):
        dense = LogisticRegression(alpha=alpha).fit(X, y)
        sparse = LogisticRegression(alpha=alpha).fit(sp.csr_matrix(X), y)
        assert_allclose(sparse.coef_, dense.coef_, rtol=1e-8, atol=1e-12)
        scale = np.abs(dense.covariance_).max()  # entries near 0 compare to the matrix
        assert_allclose(sparse.covariance_, dense.covariance_, rtol=1e-8, atol=1e-8 * scale)


def test_string_labels_and_the_reference_class():
    X, y = synthetic_softmax(n=1200, d=3, k=3, seed=6)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    default = LogisticRegression().fit(X, names)
    assert list(default.classes_) == ["setosa", "versicolor", "virginica"]
    assert set(default.summary().index.get_level_values("class")) == {"versicolor", "virginica"}
    # choosing another reference class: same probabilities, other contrasts
    other = LogisticRegression(classes=["virginica", "setosa", "versicolor"]).fit(X, names)
    assert list(other.classes_) == ["virginica", "setosa", "versicolor"]
    assert set(other.summary().index.get_level_values("class")) == {"setosa", "versicolor"}
    assert_allclose(other.predict_proba(X), default.predict_proba(X)[:, [2, 0, 1]], rtol=1e-7)
    assert np.array_equal(other.predict(X), default.predict(X))
    contrast = default.coef_[1] - default.coef_[2]  # versicolor vs virginica
    assert_allclose(other.coef_[2] - other.coef_[0], contrast, rtol=1e-7)


@pytest.mark.parametrize("make, error, match", [
    (lambda y: dict(classes=[0, 1, 2, 3]), ValueError, r"classes 3 have no samples in y"),
    (lambda y: dict(classes=[0, 1]), ValueError, r"labels that are not in classes: 2"),
    (lambda y: dict(classes=[0, 0, 1, 2]), ValueError, "duplicate"),
    (lambda y: dict(classes=[[0, 1], [2, 3]]), ValueError, "1-D"),
])
def test_bad_classes(make, error, match):
    X, y = synthetic_softmax(n=300, d=2, k=3, seed=1)
    with pytest.raises(error, match=match):
        LogisticRegression(**make(y)).fit(X, y)


def test_one_class_is_an_error():
    X, _ = synthetic_softmax(n=50, d=2, k=3)
    with pytest.raises(ValueError, match="at least 2 classes.*only one class: 'a'"):
        LogisticRegression().fit(X, np.array(["a"] * 50))


def test_multiclass_separation_warns():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = np.where(X[:, 0] > 1.0, 2, (rng.random(300) < 0.5).astype(int))
    with pytest.warns(SeparationWarning, match="class 2 is completely separated from the other classes"):
        fit = LogisticRegression().fit(X, y)
    assert np.all(np.isfinite(fit.coef_))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LogisticRegression(alpha=1.0).fit(X, y)


def test_sample_weights_equal_repeated_rows():
    X, y = synthetic_softmax(n=400, d=3, k=3, seed=8)
    w = np.random.default_rng(1).integers(0, 4, size=len(y))
    weighted = LogisticRegression().fit(X, y, sample_weight=w)
    repeated = LogisticRegression().fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    assert_allclose(weighted.coef_, repeated.coef_, rtol=1e-8, atol=1e-12)
    assert_allclose(weighted.covariance_, repeated.covariance_, rtol=1e-7, atol=1e-14)


def test_probabilities_are_exact_in_log_space():
    X, y = synthetic_softmax(n=600, d=2, k=3, seed=9)
    fit = LogisticRegression().fit(X, y)
    far = np.array([[1e4, -1e4], [-1e4, 1e4], [0.0, 0.0]])
    log_p = fit.predict_log_proba(far)
    assert np.all(np.isfinite(log_p)) and np.all(log_p <= 0)
    assert_allclose(np.exp(log_p).sum(axis=1), 1.0, rtol=1e-12)
    assert isinstance(fit.summary(), pd.DataFrame)
