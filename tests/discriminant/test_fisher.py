"""FisherDiscriminant: directions equal the closed forms; the projected classifier equals LDA."""
import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.utils.estimator_checks import parametrize_with_checks

from problin import CollinearityWarning, FisherDiscriminant


def _scatters(X, y):
    """Closed forms (Bishop 2006, §4.1.6): S_W = sum_k sum_n (x - m_k)(x - m_k)^T,
    S_B = sum_k n_k (...)."""
    m = X.mean(axis=0)
    S_W, S_B = np.zeros((X.shape[1],) * 2), np.zeros((X.shape[1],) * 2)
    for k in np.unique(y):
        Xk = X[y == k]
        R = Xk - Xk.mean(axis=0)
        S_W += R.T @ R
        S_B += len(Xk) * np.outer(Xk.mean(axis=0) - m, Xk.mean(axis=0) - m)
    return S_W, S_B


def _unit(v):
    return v / np.linalg.norm(v)


def _same_up_to_sign(A, B, tol):
    """Rows of A equal rows of B, each up to its sign."""
    signs = np.sign(np.sum(A * B, axis=1))[:, None]
    np.testing.assert_allclose(A, signs * B, rtol=tol, atol=tol * np.abs(B).max())


def _binary_sets():
    iris_X, iris_y = load_iris(return_X_y=True)
    cancer_X, cancer_y = load_breast_cancer(return_X_y=True)
    return {"iris-versicolor-virginica": (iris_X[iris_y > 0], iris_y[iris_y > 0]),
            "breast-cancer": (cancer_X[:, :10], cancer_y)}


MULTI = {"iris": load_iris, "wine": load_wine}


@pytest.mark.parametrize("name", sorted(_binary_sets()))
def test_binary_direction_is_the_closed_form(name):
    X, y = _binary_sets()[name]
    model = FisherDiscriminant().fit(X, y)
    c0, c1 = model.classes_
    S_W, _ = _scatters(X, y)
    w = np.linalg.solve(S_W, X[y == c1].mean(axis=0) - X[y == c0].mean(axis=0))
    assert model.components_.shape == (1, X.shape[1])
    np.testing.assert_allclose(_unit(model.components_[0]), _unit(w), rtol=1e-9, atol=1e-12)
    # Scaled to unit pooled within-class variance: w^T (S_W / n) w = 1.
    assert model.components_[0] @ (S_W / len(y)) @ model.components_[0] == pytest.approx(1.0)


@pytest.mark.parametrize("name", sorted(MULTI))
def test_multiclass_directions_are_generalised_eigenvectors(name):
    X, y = MULTI[name](return_X_y=True)
    model = FisherDiscriminant().fit(X, y)
    S_W, S_B = _scatters(X, y)
    n = len(y)
    vals, vecs = scipy.linalg.eigh(S_B / n, S_W / n)
    expected = vecs[:, ::-1][:, :2].T
    _same_up_to_sign(model.components_, expected, 1e-8)
    np.testing.assert_allclose(model.explained_variance_ratio_,
                               vals[::-1][:2] / vals.sum(), rtol=1e-9)


@pytest.mark.parametrize("name", sorted(MULTI) + ["breast-cancer"])
def test_matches_sklearn_lda_eigen(name):
    if name == "breast-cancer":
        X, y = load_breast_cancer(return_X_y=True)
    else:
        X, y = MULTI[name](return_X_y=True)
    model = FisherDiscriminant().fit(X, y)
    ref = LinearDiscriminantAnalysis(solver="eigen").fit(X, y)
    r = model.components_.shape[0]
    _same_up_to_sign(model.components_, ref.scalings_[:, :r].T, 1e-6)
    Z, Zref = model.transform(X), ref.transform(X)
    signs = np.sign(np.sum(Z * Zref, axis=0))
    np.testing.assert_allclose(Z, Zref * signs, rtol=1e-6, atol=1e-8 * np.abs(Zref).max())
    # With all K-1 directions the projected Gaussian classifier *is* LDA.
    np.testing.assert_allclose(model.predict_proba(X), ref.predict_proba(X), atol=1e-8)
    assert np.array_equal(model.predict(X), ref.predict(X))


def test_binary_threshold_rule_and_orientation():
    X, y = _binary_sets()["iris-versicolor-virginica"]
    model = FisherDiscriminant().fit(X, y)
    z = model.transform(X)[:, 0]
    assert z[y == 2].mean() > z[y == 1].mean()  # oriented from the first class to the last
    expected = np.where(z > model.threshold_, 2, 1)
    assert np.array_equal(model.predict(X), expected)
    odds = model.decision_function(X)
    assert np.array_equal(odds > 0, z > model.threshold_)


def test_priors_shift_the_log_posterior_by_log_prior_ratios():
    X, y = load_iris(return_X_y=True)
    plain = FisherDiscriminant().fit(X, y)
    priors = np.array([0.6, 0.3, 0.1])
    shifted = FisherDiscriminant(priors=priors).fit(X, y)
    np.testing.assert_allclose(shifted.components_, plain.components_)
    log_p = plain.predict_log_proba(X) + np.log(priors) - np.log(plain.priors_)
    log_p -= scipy.special.logsumexp(log_p, axis=1, keepdims=True)
    np.testing.assert_allclose(shifted.predict_log_proba(X), log_p, atol=1e-10)


def test_fewer_components_keep_the_leading_directions():
    X, y = load_wine(return_X_y=True)
    full = FisherDiscriminant().fit(X, y)
    one = FisherDiscriminant(n_components=1).fit(X, y)
    np.testing.assert_allclose(one.components_, full.components_[:1])
    assert one.fit_transform(X, y).shape == (len(y), 1)
    np.testing.assert_allclose(one.fit_transform(X, y), one.transform(X))
    assert one.get_feature_names_out().tolist() == ["fisherdiscriminant0"]


@pytest.mark.parametrize("n_components", [3, 10])
def test_n_components_beyond_k_minus_1_is_an_error(n_components):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=r"at most min\(K - 1, n_features\)"):
        FisherDiscriminant(n_components=n_components).fit(X, y)


def test_sample_weight_equals_duplicated_rows():
    X, y = load_wine(return_X_y=True)
    w = np.random.default_rng(0).integers(0, 3, len(y))
    weighted = FisherDiscriminant().fit(X, y, sample_weight=w)
    repeated = FisherDiscriminant().fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(weighted.components_, repeated.components_, rtol=1e-8)
    np.testing.assert_allclose(weighted.predict_proba(X), repeated.predict_proba(X), atol=1e-10)


def test_singular_within_class_scatter_warns_and_stays_finite():
    X, y = load_iris(return_X_y=True)
    X = np.column_stack([X, X[:, 0] + X[:, 1], np.full(len(y), 3.0)])  # collinear, constant
    with pytest.warns(CollinearityWarning, match="rank 4 of 6"):
        model = FisherDiscriminant().fit(X, y)
    assert np.all(np.isfinite(model.components_))
    assert model.score(X, y) == pytest.approx(0.98)
    wide = np.random.default_rng(1).normal(size=(8, 20))  # more features than rows
    with pytest.warns(CollinearityWarning):
        model = FisherDiscriminant().fit(wide, [0, 1] * 4)
    assert np.all(np.isfinite(model.predict_proba(wide)))


@pytest.mark.parametrize("bad, match", [
    (dict(priors=[0.5, 0.5]), "priors has shape"),
    (dict(priors=[0.5, 0.6, -0.1]), "non-negative"),
    (dict(priors=[0.2, 0.2, 0.2]), "sum to 1"),
])
def test_bad_priors(bad, match):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=match):
        FisherDiscriminant(**bad).fit(X, y)


def test_nan_and_one_class_are_errors():
    X, y = load_iris(return_X_y=True)
    X = X.copy()
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        FisherDiscriminant().fit(X, y)
    with pytest.raises(ValueError, match="one class"):
        FisherDiscriminant().fit(X[10:40], np.zeros(30))


def test_a_class_of_prior_zero_is_never_predicted():
    X, y = load_iris(return_X_y=True)
    model = FisherDiscriminant(priors=[0.5, 0.5, 0.0]).fit(X, y)
    assert not np.any(model.predict(X) == 2)
    np.testing.assert_allclose(model.predict_proba(X).sum(axis=1), 1.0)
    binary = FisherDiscriminant(priors=[0.0, 1.0]).fit(X[y > 0], y[y > 0])
    assert binary.threshold_ == -np.inf and np.all(binary.predict(X) == 2)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_row_order_and_relabelling_do_not_matter(seed):
    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(y))
    base = FisherDiscriminant().fit(X, y)
    shuffled = FisherDiscriminant().fit(X[perm], y[perm])
    np.testing.assert_allclose(shuffled.components_, base.components_, rtol=1e-8, atol=1e-10)
    names = np.array(["c", "a", "b"])[rng.permutation(3)]
    relabelled = FisherDiscriminant().fit(X, names[y])
    _same_up_to_sign(relabelled.components_, base.components_, 1e-8)
    assert np.array_equal(relabelled.predict(X), names[base.predict(X)])


@parametrize_with_checks([FisherDiscriminant()])
def test_sklearn_compatible(estimator, check):
    check(estimator)
