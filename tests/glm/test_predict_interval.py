"""predict_interval against statsmodels GLM(Binomial).get_prediction().summary_frame()."""
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose

from problin import LogisticRegression, ProbitRegression
from tests.glm._datasets15 import BINARY, SOFTMAX, design

LINKS = {LogisticRegression: sm.families.links.Logit, ProbitRegression: sm.families.links.Probit}
COLUMNS = ["mean", "mean_se", "mean_ci_lower", "mean_ci_upper"]


def _glm(model, X, y, **kw):
    # Newton: the observed information, as problin's covariance_ (statsmodels' IRLS
    # default uses the expected information, which differs for the probit)
    fit_kw = {k: kw.pop(k) for k in ("cov_type", "cov_kwds") if k in kw}
    return sm.GLM(y, design(X), family=sm.families.Binomial(LINKS[model]()), **kw).fit(
        method="newton", tol=1e-14, maxiter=100, **fit_kw)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("model", [LogisticRegression, ProbitRegression])
@pytest.mark.parametrize("level", [0.95, 0.8])
def test_matches_statsmodels_summary_frame(model, name, level):
    X, y = BINARY[name]()
    ours = model().fit(X, y).predict_interval(X, level=level)
    ref = _glm(model, X, y).get_prediction(design(X)).summary_frame(alpha=1 - level)
    assert list(ours.columns) == ["mean", "std_err", "ci_low", "ci_high"]
    # (probit bounds of 1e-41 move by 1e-6 relative per 1e-7 of eta: atol for them)
    assert_allclose(ours.to_numpy(), ref[COLUMNS].to_numpy(), rtol=1e-6, atol=1e-30)
    assert (ours.index == X.index).all()


@pytest.mark.parametrize("model", [LogisticRegression, ProbitRegression])
def test_robust_covariance_and_new_rows(model):
    X, y = BINARY["fair"]()
    ours = model(cov_type="HC0").fit(X, y)
    new = X.iloc[::97]
    got = ours.predict_interval(new)
    ref = _glm(model, X, y, cov_type="HC0").get_prediction(design(new)).summary_frame()
    assert_allclose(got.to_numpy(), ref[COLUMNS].to_numpy(), rtol=1e-6)
    assert_allclose(got["mean"], ours.predict_proba(new)[:, 1], rtol=1e-12)


@pytest.mark.parametrize("model", [LogisticRegression, ProbitRegression])
def test_with_offset(model):
    X, y = BINARY["spector"]()
    offset = np.linspace(-0.5, 0.7, len(y))
    ours = model().fit(X, y, offset=offset)
    got = ours.predict_interval(X, offset=offset)
    ref = _glm(model, X, y, offset=offset).get_prediction(design(X), offset=offset)
    assert_allclose(got.to_numpy(), ref.summary_frame()[COLUMNS].to_numpy(), rtol=1e-6)


def test_far_from_the_origin_and_sparse_input():
    import scipy.sparse as sp
    X, y = BINARY["spector"]()
    shifted = X + np.array([1e6, 0.0, 0.0])
    a = LogisticRegression().fit(X, y).predict_interval(X)
    b = LogisticRegression().fit(shifted, y).predict_interval(shifted)
    assert_allclose(b.to_numpy(), a.to_numpy(), rtol=1e-6)
    c = LogisticRegression().fit(sp.csr_matrix(X.to_numpy()), y)
    got = c.predict_interval(sp.csr_matrix(X.to_numpy()))
    assert_allclose(got.to_numpy(), a.to_numpy(), rtol=1e-6)
    assert isinstance(got, pd.DataFrame)


def test_bad_level_fails_clearly():
    X, y = SOFTMAX["wine"]()  # (softmax intervals: tests/inference/test_effects.py)
    with pytest.raises(ValueError, match="level"):
        LogisticRegression().fit(X, y).predict_interval(X, level=0.0)
    X, y = BINARY["spector"]()
    with pytest.raises(ValueError, match="level"):
        LogisticRegression().fit(X, y).predict_interval(X, level=1.5)


def test_dask_rows_are_refused():
    da = pytest.importorskip("dask.array")
    X, y = BINARY["spector"]()
    model = LogisticRegression().fit(X.to_numpy(), y)
    with pytest.raises(TypeError, match="in-memory"):
        model.predict_interval(da.from_array(X.to_numpy(), chunks=8))
