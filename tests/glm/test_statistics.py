"""Model statistics of the GLMs (log-likelihoods, AIC, BIC, LR test) against statsmodels."""
import numpy as np
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose

from problin import LogisticRegression, ProbitRegression
from tests.glm._datasets15 import BINARY, SOFTMAX, design, weights

REFERENCE = {LogisticRegression: (sm.Logit, sm.families.links.Logit),
             ProbitRegression: (sm.Probit, sm.families.links.Probit)}
PAIRS = [("log_likelihood_", "llf"), ("null_log_likelihood_", "llnull"), ("aic_", "aic"),
         ("bic_", "bic"), ("pseudo_r2_", "prsquared"), ("lr_statistic_", "llr"),
         ("lr_pvalue_", "llr_pvalue"), ("df_model_", "df_model"), ("df_resid_", "df_resid"),
         ("n_obs_", "nobs")]


def _check(ours, ref, rtol=1e-6):
    for mine, theirs in PAIRS:
        assert_allclose(getattr(ours, mine), getattr(ref, theirs), rtol=rtol,
                        err_msg=f"{mine} vs statsmodels {theirs}")


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("model", [LogisticRegression, ProbitRegression])
def test_binary_statistics_match_statsmodels(model, name):
    X, y = BINARY[name]()
    ours = model().fit(X, y)
    discrete, link = REFERENCE[model]
    ref = discrete(y, design(X)).fit(method="newton", tol=1e-14, maxiter=100, disp=0)
    _check(ours, ref)
    glm = sm.GLM(y, design(X), family=sm.families.Binomial(link())).fit(tol=1e-14)
    assert_allclose(ours.deviance_, glm.deviance, rtol=1e-6)
    assert_allclose(ours.aic_, glm.aic, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(SOFTMAX))
def test_softmax_statistics_match_mnlogit(name):
    X, y = SOFTMAX[name]()
    ours = LogisticRegression().fit(X, y)
    ref = sm.MNLogit(y, design(X)).fit(method="newton", tol=1e-14, maxiter=200, disp=0)
    _check(ours, ref)
    assert_allclose(ours.deviance_, -2 * ref.llf, rtol=1e-10)


@pytest.mark.parametrize("name", ["spector", "fair", "breast-cancer"])
@pytest.mark.parametrize("model", [LogisticRegression, ProbitRegression])
def test_frequency_weights_match_glm_and_duplicated_rows(model, name):
    X, y = BINARY[name]()
    w = weights(len(y))
    ours = model().fit(X, y, sample_weight=w)
    _, link = REFERENCE[model]
    glm = sm.GLM(y, design(X), family=sm.families.Binomial(link()), freq_weights=w).fit(
        tol=1e-14)
    assert_allclose(ours.log_likelihood_, glm.llf, rtol=1e-8)
    assert_allclose(ours.null_log_likelihood_, glm.llnull, rtol=1e-8)
    assert_allclose(ours.aic_, glm.aic, rtol=1e-8)
    assert_allclose(ours.bic_, glm.bic_llf, rtol=1e-8)
    assert_allclose(ours.deviance_, glm.deviance, rtol=1e-8)
    assert_allclose(ours.df_resid_, glm.df_resid, rtol=1e-12)
    assert_allclose(ours.n_obs_, w.sum(), rtol=1e-12)
    assert_allclose(ours.pseudo_r2_, glm.pseudo_rsquared("mcf"), rtol=1e-7)
    # ... and weight w is w duplicated rows (statsmodels Logit on the repeated data)
    rows = np.repeat(np.arange(len(y)), w.astype(int))
    discrete, _ = REFERENCE[model]
    ref = discrete(y[rows], design(X)[rows]).fit(method="newton", tol=1e-14, disp=0)
    _check(ours, ref)


def test_softmax_weights_are_duplicated_rows():
    X, y = SOFTMAX["wine"]()
    w = weights(len(y))
    ours = LogisticRegression().fit(X, y, sample_weight=w)
    rows = np.repeat(np.arange(len(y)), w.astype(int))
    ref = sm.MNLogit(y[rows], design(X)[rows]).fit(method="newton", tol=1e-14, disp=0)
    _check(ours, ref)


def test_without_intercept_follows_statsmodels():
    X, y = BINARY["spector"]()
    ours = LogisticRegression(fit_intercept=False).fit(X, y)
    ref = sm.Logit(y, np.asarray(X)).fit(method="newton", tol=1e-14, disp=0)
    _check(ours, ref)


def test_collinear_column_lowers_the_model_degrees_of_freedom():
    X, y = BINARY["spector"]()
    X = X.assign(twice=2 * X["GPA"])
    with pytest.warns(Warning):
        ours = LogisticRegression().fit(X, y)
    assert ours.df_model_ == 3 and ours.df_resid_ == len(y) - 4
    ref = sm.Logit(y, design(X.drop(columns="twice"))).fit(method="newton", tol=1e-14, disp=0)
    _check(ours, ref)


@pytest.mark.parametrize("model", [LogisticRegression, ProbitRegression])
def test_penalised_fits_report_the_map_likelihood_and_no_ml_tests(model):
    X, y = BINARY["breast-cancer"]()
    ours = model(alpha=3.0).fit(X, y)
    ml = model().fit(X, y)
    eta = ours.decision_function(X)
    loglik = -ours._family.loss(y, eta)
    assert_allclose(ours.log_likelihood_, loglik, rtol=1e-10)
    assert ours.log_likelihood_ < ml.log_likelihood_
    assert_allclose(ours.null_log_likelihood_, ml.null_log_likelihood_, rtol=1e-12)
    assert_allclose(ours.deviance_, -2 * loglik, rtol=1e-10)
    assert_allclose(ours.pseudo_r2_, 1 - loglik / ours.null_log_likelihood_, rtol=1e-10)
    for name in ("aic_", "bic_", "lr_statistic_", "lr_pvalue_"):
        assert np.isnan(getattr(ours, name))


@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_dask_fits_report_the_same_statistics(alpha):
    da = pytest.importorskip("dask.array")
    for X, y in (BINARY["fair"](), SOFTMAX["wine"]()):
        Xn = X.to_numpy()
        a = LogisticRegression(alpha=alpha).fit(Xn, y)
        b = LogisticRegression(alpha=alpha).fit(da.from_array(Xn, chunks=500),
                                                da.from_array(y, chunks=500))
        for name, _ in PAIRS + [("deviance_", None)]:
            assert_allclose(getattr(b, name), getattr(a, name), rtol=1e-9, err_msg=name)


def test_statistics_and_robust_covariance_survive_a_model_file(tmp_path):
    from problin.io import load, save
    X, y = BINARY["spector"]()
    g = np.arange(len(y)) % 4
    model = LogisticRegression(cov_type="cluster").fit(X, y, groups=g)
    save(model, tmp_path / "m.zip")
    back = load(tmp_path / "m.zip")
    for name, _ in PAIRS:
        assert getattr(back, name) == getattr(model, name)
    assert_allclose(back.covariance_, model.covariance_, rtol=0)
    assert back.summary().attrs["cov_type"] == "cluster"
    assert_allclose(back.predict_interval(X).to_numpy(), model.predict_interval(X).to_numpy(),
                    rtol=0)
