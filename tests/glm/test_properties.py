"""Invariances (hypothesis): duplicated rows vs weight 2, row order, label coding."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from problin import LogisticRegression, ProbitRegression

MODELS = st.sampled_from([LogisticRegression, ProbitRegression])
SOLVERS = st.sampled_from(["newton", "gradient", "coordinate"])


def _data(seed, n=60, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    p = 1.0 / (1.0 + np.exp(-(X @ rng.normal(size=d) * 0.7)))
    y = (rng.random(n) < p).astype(int)
    y[:2] = [0, 1]  # both classes present
    return X, y


def _theta(model):
    return np.concatenate([model.intercept_, model.coef_.ravel()])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), model=MODELS, solver=SOLVERS,
       alpha=st.sampled_from([0.5, 3.0]), data=st.data())
def test_duplicating_a_row_equals_weight_two(seed, model, solver, alpha, data):
    X, y = _data(seed)
    i = data.draw(st.integers(0, len(y) - 1))
    duplicated = model(alpha=alpha, solver=solver).fit(np.vstack([X, X[i]]), np.append(y, y[i]))
    w = np.ones(len(y))
    w[i] = 2.0
    weighted = model(alpha=alpha, solver=solver).fit(X, y, sample_weight=w)
    assert_allclose(_theta(duplicated), _theta(weighted), rtol=1e-6, atol=1e-8)
    if solver == "newton":
        assert_allclose(duplicated.covariance_, weighted.covariance_, rtol=1e-6, atol=1e-10)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), model=MODELS, alpha=st.sampled_from([0.0, 1.0]),
       perm_seed=st.integers(0, 2**31))
def test_row_order_does_not_matter(seed, model, alpha, perm_seed):
    X, y = _data(seed, n=120)
    perm = np.random.default_rng(perm_seed).permutation(len(y))
    a = model(alpha=alpha).fit(X, y)
    b = model(alpha=alpha).fit(X[perm], y[perm])
    if not (a.converged_ and hasattr(a, "separated_") is False):
        return  # a separated draw has no unique optimum to compare
    # Both fits stop within ~1e-8 standard errors of the optimum; only the
    # order of summation differs, so they agree to far better than 1e-6 SE.
    se = np.sqrt(np.diag(a.covariance_))
    assert np.all(np.abs(_theta(a) - _theta(b)) <= 1e-6 * se)
    assert_allclose(a.covariance_, b.covariance_, rtol=1e-6, atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31), model=MODELS)
def test_swapping_labels_negates_the_coefficients(seed, model):
    X, y = _data(seed, n=150)
    a = model(alpha=1.0).fit(X, np.where(y == 1, "yes", "no"))
    b = model(alpha=1.0).fit(X, np.where(y == 1, "b-yes", "a-no"))  # same class order
    c = model(alpha=1.0).fit(X, np.where(y == 1, "b", "a").astype(object))
    flipped = model(alpha=1.0).fit(X, 1 - y)
    assert_allclose(_theta(a), _theta(b), rtol=1e-10)
    assert_allclose(_theta(a), _theta(c), rtol=1e-10)
    assert_allclose(_theta(flipped), -_theta(a), rtol=1e-6, atol=1e-9)
    assert_allclose(flipped.predict_proba(X)[:, ::-1], a.predict_proba(X), rtol=1e-6,
                    atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31), scale=st.floats(0.01, 100.0), shift=st.floats(-50, 50))
def test_affine_feature_change_leaves_ml_predictions_unchanged(seed, scale, shift):
    X, y = _data(seed, n=150)
    a = LogisticRegression().fit(X, y)
    b = LogisticRegression().fit(X * scale + shift, y)
    if hasattr(a, "separated_"):
        return
    assert_allclose(b.predict_proba(X * scale + shift), a.predict_proba(X), rtol=1e-6, atol=1e-10)
    assert_allclose(b.coef_ * scale, a.coef_, rtol=1e-6, atol=1e-9)
