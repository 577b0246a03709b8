"""OrdinalRegression(nominal=[columns]): the partial proportional-odds model.

References: the 50-digit mpmath Newton fit of the model with slopes per cut for some
columns (``_ordinal_mp.ordinal_fit(nominal=...)``) to 1e-8, and R ``ordinal::clm``
(2022.11-16, ``clm(y ~ x0, nominal = ~ x1, link = "probit")`` and its ``predict``, gradTol
1e-13) on the same 60 rows, printed at 15 digits. clm's threshold effects ``"a|b.x"`` are
minus problin's ``"x:a|b"`` (``P(y <= k) = F(theta_k - x^T beta_k)``)."""
import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy import stats

import problin
from problin import OrdinalRegression
from problin.inference.hypothesis import lr_test
from problin.exceptions import ProblinWarning
from problin.glm._ordinal_tests import brant_test, proportional_odds_lr_test
from tests.glm._ordinal_mp import dataset, ordinal_fit

# clm(y ~ x0, nominal = ~ x1, link = "probit"): coef(m2), sqrt(diag(vcov(m2))), logLik(m2)
CLM_PROBIT = {
    "cuts": [-0.9984436878240560, -0.0875220665817997, 0.5136814369546864],
    "cuts_se": [0.262463257087463, 0.220147895879804, 0.225796867017099],
    "x1": [-0.3247209286952614, -0.1467907262802064, -0.4679215326004119],  # -(a|b.x1)
    "x1_se": [0.205711790755912, 0.186975112873065, 0.203963673911849],
    "x0": 0.5869546498051718, "x0_se": 0.171600261396817, "loglik": -74.2735415184758}
# clm(y ~ x1, nominal = ~ x0) (logit), predict(type = "prob") at these rows; the third row's
# cumulative probabilities cross (clm returns the negative difference of class 1)
CLM_ROWS = np.array([[-1.0, 0.3], [0.5, -0.5], [2.0, 1.5]])
CLM_PROB = np.array([
    [0.290332824663484, 0.4626038818651912, 0.165189385396735, 0.0818739080745897],
    [0.137754165742357, 0.1061892019007577, 0.326679855647988, 0.4293767767088972],
    [0.189992225728836, -0.0761807520824693, 0.258093034309492, 0.6280954920441413]])


@pytest.fixture(scope="module")
def logit_fit():
    X, y = dataset(0)
    return X, y, OrdinalRegression(nominal=["x0"]).fit(X, y)


def test_nominal_equals_mpmath(logit_fit):
    """Slopes per cut, shared slopes, cut-points, the whole covariance and the
    log-likelihood against the 50-digit fit (x0 nominal, x1 shared) to 1e-8."""
    X, y, model = logit_fit
    beta, theta, cov, loglik = ordinal_fit(X, y, 4, "logit", nominal=[True, False])
    beta = np.array([float(b) for b in beta])  # [x1, x0 at cuts 0, 1, 2]
    assert model.parameter_names() == ["x0:0|1", "x0:1|2", "x0:2|3", "x1", "0|1", "1|2",
                                       "2|3"]
    assert model.coef_.shape == (3, 2)
    assert_allclose(model.coef_[:, 0], beta[1:], rtol=1e-8)
    assert_allclose(model.coef_[:, 1], beta[0], rtol=1e-8)
    assert_allclose(model.cutpoints_, [float(t) for t in theta], rtol=1e-8)
    order = [1, 2, 3, 0, 4, 5, 6]  # problin's parameters in the reference's order
    want = np.array([[float(cov[i, j]) for j in order] for i in order])
    assert_allclose(model.covariance_, want, rtol=1e-8, atol=1e-12)
    assert model.log_likelihood_ == pytest.approx(float(loglik), rel=1e-12)
    assert model.aic_ == pytest.approx(-2 * float(loglik) + 14, rel=1e-12)
    # the LR test of proportional odds for x0 is the nominal fit against the parallel one
    parallel = OrdinalRegression().fit(X, y)
    statistic, df, _ = lr_test(parallel, model)
    assert df == 2.0 and statistic == pytest.approx(
        proportional_odds_lr_test(parallel, X, y, variables=["x0"]).test.statistic, rel=1e-9)
    summary = model.summary()
    assert_allclose(summary["std_err"], np.sqrt(np.diag(want)), rtol=1e-8)


def test_nominal_equals_clm_probit():
    """clm's probit fit with x1 nominal (printed at 15 digits; its gradient 4e-15)."""
    X, y = dataset(0)
    frame = pd.DataFrame(X, columns=["x0", "x1"])
    model = OrdinalRegression(link="probit", nominal=[1]).fit(frame, y)
    table = model.summary()
    ref = CLM_PROBIT
    assert_allclose(model.coef_[:, 1], ref["x1"], rtol=1e-8)
    assert_allclose(table.loc[["x1:0|1", "x1:1|2", "x1:2|3"], "std_err"], ref["x1_se"],
                    rtol=1e-7)
    assert table.loc["x0", "coef"] == pytest.approx(ref["x0"], rel=1e-8)
    assert table.loc["x0", "std_err"] == pytest.approx(ref["x0_se"], rel=1e-7)
    assert_allclose(model.cutpoints_, ref["cuts"], rtol=1e-8)
    assert_allclose(table.loc[["0|1", "1|2", "2|3"], "std_err"], ref["cuts_se"], rtol=1e-7)
    assert model.log_likelihood_ == pytest.approx(ref["loglik"], rel=1e-12)
    assert "x1:1|2" in str(model.summary_text())


def test_crossing_rows_warned_and_clipped(logit_fit):
    """Rows inside the model's region equal clm's predictions; at a row whose cumulative
    probabilities cross, problin warns, names the row and gives the crossed class 0 (the
    running maximum: the next class takes clm's two differences together)."""
    _, _, model = logit_fit
    with pytest.warns(ProblinWarning, match=r"cross at 1 row\(s\) \(\[2\]\)"):
        P = model.predict_proba(CLM_ROWS)
    assert_allclose(P[:2], CLM_PROB[:2], rtol=1e-7)
    assert_allclose(P[2], [CLM_PROB[2, 0], 0.0, CLM_PROB[2, 1] + CLM_PROB[2, 2],
                           CLM_PROB[2, 3]], rtol=1e-7, atol=1e-15)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_allclose(model.predict_proba(CLM_ROWS[:2]).sum(axis=1), 1.0, rtol=1e-14)
        assert list(model.predict(CLM_ROWS[:2], kind="median")) == [1, 2]


def test_interval_and_effects(logit_fit):
    """predict_interval's errors are the delta method's through per-cut slopes (here
    against the probabilities formed from scipy's logistic CDF and differentiated
    numerically); average predictions are the mean probabilities and effects per
    category sum to zero."""
    X, y, model = logit_fit
    rows = X[:3]
    index = model._result.slope_index
    psi = model._result.params

    def proba(v):
        B, cuts = v[index], v[-3:]
        cum = stats.logistic.cdf(cuts[None, :] - rows @ B.T)
        return np.diff(np.column_stack((np.zeros(3), cum, np.ones(3))), axis=1).ravel()

    h = 1e-6
    J = np.column_stack([(proba(psi + h * e) - proba(psi - h * e)) / (2 * h)
                         for e in np.eye(psi.size)])
    table = model.predict_interval(rows)
    assert_allclose(table["mean"], proba(psi), rtol=1e-12)
    assert_allclose(table["std_err"], np.sqrt(np.diag(J @ model.covariance_ @ J.T)),
                    rtol=1e-6)
    average = model.predictions(X)["estimate"].to_numpy()
    with pytest.warns(ProblinWarning, match="cross at 8 row"):  # (clipped as predict_proba)
        assert_allclose(average, model.predict_proba(X).mean(axis=0), rtol=1e-12)
    slopes = model.slopes(X)["estimate"].unstack("class")
    assert_allclose(slopes.sum(axis=1), 0.0, atol=1e-12)
    step = np.array([0.0, 1e-6])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ProblinWarning)
        numeric = (model.predict_proba(X + step) - model.predict_proba(X - step)).mean(0) / 2e-6
    assert_allclose(slopes.xs("x1", level="term").to_numpy().ravel(), numeric, rtol=1e-6)


def test_model_file_round_trip(logit_fit, tmp_path):
    X, _, model = logit_fit
    problin.save(model, tmp_path / "nominal.plm")
    loaded = problin.load(tmp_path / "nominal.plm")
    assert loaded.parameter_names() == model.parameter_names()
    assert_allclose(loaded.predict_proba(X[:5]), model.predict_proba(X[:5]), rtol=0)


def test_methods_delegate_and_refusals(logit_fit):
    X, y, model = logit_fit
    parallel = OrdinalRegression().fit(X, y)
    assert_allclose(parallel.brant_test(X, y).table, brant_test(parallel, X, y).table,
                    rtol=0)
    assert tuple(parallel.proportional_odds_lr_test(X, y, variables=["x1"])) == \
        tuple(proportional_odds_lr_test(parallel, X, y, variables=["x1"]))
    with pytest.raises(ValueError, match="nominal= columns"):
        model.proportional_odds_lr_test(X, y)
    with pytest.raises(ValueError, match="latent score per cut"):
        model.predict_latent(X)
    with pytest.raises(ValueError, match="'x7' is not a column"):
        OrdinalRegression(nominal=["x7"]).fit(X, y)
    with pytest.raises(ValueError, match="use alpha=0"):
        OrdinalRegression(nominal=[0], alpha=1.0).fit(X, y)


@pytest.mark.parametrize("cov_type", ["HC0", "HC1", "cluster"])
def test_robust_covariances(logit_fit, cov_type):
    """Sandwiches ``c V (S^T S) V`` with ``V`` the model-based covariance (checked against
    50 digits above) and ``S`` the rows' scores in the reported parameters, here central
    differences of each row's log-likelihood written out with scipy's logistic CDF;
    ``c`` = 1, n / (n - k), or G / (G - 1) (n - 1) / (n - k) with the scores summed
    by cluster (statsmodels' factors)."""
    X, y, model = logit_fit
    groups = np.arange(len(y)) % 7
    robust = OrdinalRegression(nominal=["x0"], cov_type=cov_type).fit(
        X, y, groups=groups if cov_type == "cluster" else None)
    psi, index = model._result.params, model._result.slope_index

    def loglik_rows(v):
        B, cuts = v[index], v[-3:]
        cum = stats.logistic.cdf(cuts[None, :] - X @ B.T)
        full = np.column_stack((np.zeros(len(y)), cum, np.ones(len(y))))
        return np.log(full[np.arange(len(y)), y + 1] - full[np.arange(len(y)), y])

    h = 1e-6
    S = np.column_stack([(loglik_rows(psi + h * e) - loglik_rows(psi - h * e)) / (2 * h)
                         for e in np.eye(psi.size)])
    n, k = S.shape
    if cov_type == "cluster":
        S = np.vstack([S[groups == g].sum(axis=0) for g in range(7)])
        factor = 7 / 6 * (n - 1) / (n - k)
    else:
        factor = 1.0 if cov_type == "HC0" else n / (n - k)
    V = model.covariance_
    assert_allclose(robust.covariance_, factor * V @ S.T @ S @ V, rtol=1e-6)
    assert_allclose(robust.coef_, model.coef_, rtol=1e-12)
