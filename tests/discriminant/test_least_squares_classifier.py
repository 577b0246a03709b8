"""LeastSquaresClassifier: W = pinv(X~) T, as numpy.linalg.lstsq computes it."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.utils.estimator_checks import parametrize_with_checks

from problin import CollinearityWarning, LeastSquaresClassifier

DATASETS = {
    "iris": lambda: load_iris(return_X_y=True),
    "wine": lambda: load_wine(return_X_y=True),
    "breast-cancer": lambda: load_breast_cancer(return_X_y=True),
}


def _lstsq(X, y, intercept=True):
    classes = np.unique(y)
    T = (y[:, None] == classes[None, :]).astype(float)  # 1-of-K codes
    Xt = np.column_stack([np.ones(len(y)), X]) if intercept else X
    return np.linalg.lstsq(Xt, T, rcond=None)[0]


@pytest.mark.parametrize("name", sorted(DATASETS))
@pytest.mark.parametrize("intercept", [True, False])
def test_weights_equal_lstsq(name, intercept):
    X, y = DATASETS[name]()
    model = LeastSquaresClassifier(fit_intercept=intercept).fit(X, y)
    W = _lstsq(X, y, intercept)
    coef = W[1:] if intercept else W
    np.testing.assert_allclose(model.coef_, coef.T, rtol=1e-6, atol=1e-9 * np.abs(coef).max())
    b = W[0] if intercept else np.zeros(W.shape[1])
    np.testing.assert_allclose(model.intercept_, b, rtol=1e-6, atol=1e-9)
    Xt = np.column_stack([np.ones(len(y)), X]) if intercept else X
    np.testing.assert_allclose(model._discriminants(X), Xt @ W, atol=1e-8)


def test_binary_decision_function_is_the_difference_of_the_two_discriminants():
    X, y = load_breast_cancer(return_X_y=True)
    model = LeastSquaresClassifier().fit(X, y)
    Y = model._discriminants(X)
    np.testing.assert_allclose(Y.sum(axis=1), 1.0, atol=1e-10)  # codes sum to 1
    np.testing.assert_allclose(model.decision_function(X), Y[:, 1] - Y[:, 0])
    assert np.array_equal(model.predict(X), model.classes_[np.argmax(Y, axis=1)])


def test_outputs_are_not_probabilities():
    X, y = load_iris(return_X_y=True)
    model = LeastSquaresClassifier().fit(X, y)
    assert not hasattr(model, "predict_proba")
    Y = model._discriminants(X)
    assert Y.min() < 0 or Y.max() > 1


def test_collinear_features_give_the_minimum_norm_weights():
    X, y = load_iris(return_X_y=True)
    X2 = np.column_stack([X, X[:, 0] + X[:, 2], X[:, 1]])
    with pytest.warns(CollinearityWarning, match="rank 4 of 6"):
        model = LeastSquaresClassifier().fit(X2, y)
    assert model.rank_ == 4
    # The fitted values are unique; the weights are the minimum-norm ones
    # (of the centred problem: the intercept is not penalised).
    np.testing.assert_allclose(model._discriminants(X2),
                               LeastSquaresClassifier().fit(X, y)._discriminants(X), atol=1e-9)
    T = (y[:, None] == np.arange(3)).astype(float)
    Xc = X2 - X2.mean(axis=0)
    W = np.linalg.lstsq(Xc, T - T.mean(axis=0), rcond=None)[0]
    np.testing.assert_allclose(model.coef_, W.T, atol=1e-9)


def test_sample_weight_equals_duplicated_rows():
    X, y = load_wine(return_X_y=True)
    w = np.random.default_rng(2).integers(0, 3, len(y))
    weighted = LeastSquaresClassifier().fit(X, y, sample_weight=w)
    repeated = LeastSquaresClassifier().fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(weighted.intercept_, repeated.intercept_, rtol=1e-8, atol=1e-12)


def test_sparse_input_equals_dense():
    import scipy.sparse as sp
    X, y = load_iris(return_X_y=True)
    dense = LeastSquaresClassifier().fit(X, y)
    sparse = LeastSquaresClassifier().fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-10)
    np.testing.assert_allclose(sparse.decision_function(sp.csr_matrix(X)),
                               dense.decision_function(X), atol=1e-10)


def test_bad_input():
    X, y = load_iris(return_X_y=True)
    Xn = X.copy()
    Xn[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        LeastSquaresClassifier().fit(Xn, y)
    with pytest.raises(ValueError, match="one class"):
        LeastSquaresClassifier().fit(X[:50], y[:50])
    with pytest.raises(ValueError, match="sample_weight"):
        LeastSquaresClassifier().fit(X, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="zero total sample weight"):
        LeastSquaresClassifier().fit(X, y, sample_weight=(y > 0).astype(float))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_row_order_and_relabelling_do_not_matter(seed):
    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(y))
    base = LeastSquaresClassifier().fit(X, y)
    shuffled = LeastSquaresClassifier().fit(X[perm], y[perm])
    np.testing.assert_allclose(shuffled.coef_, base.coef_, rtol=1e-9, atol=1e-12)
    relabel = rng.permutation(3)
    names = np.array(["x", "y", "z"])[relabel]
    other = LeastSquaresClassifier().fit(X, names[y])
    # Class labels move the columns of T, and so the rows of W, with them.
    order = np.argsort(names)  # position of each original class among sorted labels
    np.testing.assert_allclose(other.coef_[np.argsort(order)], base.coef_, atol=1e-10)
    assert np.array_equal(other.predict(X), names[base.predict(X)])


@parametrize_with_checks([LeastSquaresClassifier(), LeastSquaresClassifier(fit_intercept=False)])
def test_sklearn_compatible(estimator, check):
    check(estimator)
