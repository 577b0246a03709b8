"""Offsets of the binary GLMs against statsmodels GLM(offset=...)."""
import numpy as np
import pytest
import scipy.sparse as sp
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from problin import LogisticRegression, ProbitRegression
from tests.glm._datasets15 import BINARY, SOFTMAX, design, weights

LINKS = {LogisticRegression: sm.families.links.Logit, ProbitRegression: sm.families.links.Probit}


def _offset(n):
    return 0.8 * np.sin(np.arange(n) * 0.7)


def _glm(model, X, y, offset, **kw):
    return sm.GLM(y, design(X), family=sm.families.Binomial(LINKS[model]()), offset=offset,
                  **kw).fit(method="newton", tol=1e-14, maxiter=100)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("model", [LogisticRegression, ProbitRegression])
def test_fit_matches_statsmodels_glm(model, name):
    X, y = BINARY[name]()
    o = _offset(len(y))
    ours = model().fit(X, y, offset=o)
    ref = _glm(model, X, y, o)
    theta = np.concatenate([ours.intercept_, ours.coef_.ravel()])
    assert_allclose(theta, ref.params, rtol=1e-6, atol=1e-10)
    assert_allclose(ours.covariance_, ref.cov_params(), rtol=1e-6, atol=1e-14)
    assert_allclose(ours.log_likelihood_, ref.llf, rtol=1e-8)
    assert_allclose(ours.null_log_likelihood_, ref.llnull, rtol=1e-8)
    assert_allclose(ours.deviance_, ref.deviance, rtol=1e-8)
    assert_allclose(ours.aic_, ref.aic, rtol=1e-8)
    assert_allclose(ours.pseudo_r2_, ref.pseudo_rsquared("mcf"), rtol=1e-6)
    new = X.iloc[::7]
    assert_allclose(ours.predict_proba(new, offset=o[::7])[:, 1],
                    ref.predict(design(new), offset=o[::7]), rtol=1e-6)
    assert_allclose(ours.decision_function(new, offset=o[::7]),
                    ref.predict(design(new), offset=o[::7], which="linear"), rtol=1e-6)


@pytest.mark.parametrize("model", [LogisticRegression, ProbitRegression])
def test_weights_and_robust_covariance_with_offset(model):
    X, y = BINARY["spector"]()
    o, w = _offset(len(y)), weights(len(y)) + 1.0  # (statsmodels Newton: no zero weights)
    ours = model(cov_type="HC0").fit(X, y, sample_weight=w, offset=o)
    ref = sm.GLM(y, design(X), family=sm.families.Binomial(LINKS[model]()), offset=o,
                 freq_weights=w).fit(method="newton", tol=1e-14, cov_type="HC0")
    assert_allclose(ours.covariance_, ref.cov_params(), rtol=1e-6, atol=1e-14)
    assert_allclose(ours.null_log_likelihood_, ref.llnull, rtol=1e-8)


@settings(max_examples=15, deadline=None)
@given(v=st.lists(st.floats(-2, 2), min_size=3, max_size=3), b=st.floats(-3, 3))
def test_an_offset_in_the_span_of_the_columns_moves_only_the_coefficients(v, b):
    X, y = BINARY["spector"]()
    base = LogisticRegression().fit(X, y)
    o = b + X.to_numpy() @ np.asarray(v)
    moved = LogisticRegression().fit(X, y, offset=o)
    assert_allclose(moved.coef_.ravel(), base.coef_.ravel() - v, rtol=1e-6, atol=1e-7)
    assert_allclose(moved.intercept_, base.intercept_ - b, rtol=1e-6, atol=1e-7)
    assert_allclose(moved.predict_proba(X, offset=o), base.predict_proba(X), atol=1e-9)
    assert_allclose(moved.log_likelihood_, base.log_likelihood_, rtol=1e-10)


@pytest.mark.parametrize("solver", ["lbfgs", "newton"])
def test_sparse_input_and_other_solvers(solver):
    X, y = BINARY["fair"]()
    o = _offset(len(y))
    dense = LogisticRegression().fit(X, y, offset=o)
    sparse = LogisticRegression(solver=solver, tol=1e-10).fit(sp.csr_matrix(X.to_numpy()), y,
                                                               offset=o)
    assert_allclose(sparse.coef_, dense.coef_, rtol=1e-5)
    assert_allclose(sparse.intercept_, dense.intercept_, rtol=1e-5)


def test_many_rows_use_the_sketch_with_the_offset():
    rng = np.random.default_rng(3)
    n = 120_000
    X = rng.normal(size=(n, 3))
    o = rng.normal(size=n)
    y = (rng.random(n) < 1 / (1 + np.exp(-(0.3 + X @ [1.0, -0.5, 0.2] + o)))).astype(float)
    ours = LogisticRegression().fit(X, y, offset=o)
    ref = sm.GLM(y, design(X), family=sm.families.Binomial(), offset=o).fit(tol=1e-14)
    theta = np.concatenate([ours.intercept_, ours.coef_.ravel()])
    assert_allclose(theta, ref.params, rtol=1e-6)


def test_bad_offsets_fail_clearly():
    X, y = BINARY["spector"]()
    with pytest.raises(ValueError, match="one value per row"):
        LogisticRegression().fit(X, y, offset=np.zeros(3))
    bad = np.zeros(len(y))
    bad[4] = np.nan
    with pytest.raises(ValueError, match="row 4"):
        LogisticRegression().fit(X, y, offset=bad)
    Xs, ys = SOFTMAX["wine"]()
    with pytest.raises(ValueError, match="binary"):
        LogisticRegression().fit(Xs, ys, offset=np.zeros(len(ys)))
    fitted = LogisticRegression().fit(X, y)
    with pytest.raises(ValueError, match="one value per row"):
        fitted.predict_proba(X, offset=np.zeros(2))


def test_dask_input_refuses_offsets():
    da = pytest.importorskip("dask.array")
    X, y = BINARY["spector"]()
    Xd = da.from_array(X.to_numpy(), chunks=16)
    yd = da.from_array(y, chunks=16)
    with pytest.raises(ValueError, match="Dask"):
        LogisticRegression().fit(Xd, yd, offset=np.zeros(len(y)))
    with pytest.raises(ValueError, match="Dask"):
        LogisticRegression(cov_type="HC0").fit(Xd, yd)
