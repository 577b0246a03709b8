"""GLM regressors against statsmodels ``GLM`` and scikit-learn, on statsmodels' datasets.

Each case fits problin and statsmodels on the same data (statsmodels' IRLS started at
its own Newton optimum: IRLS alone stalls ~1e-7 from the optimum for non-canonical
links, where Fisher scoring converges linearly): coefficients 1e-8, standard errors,
deviance, Pearson chi², scale, log-likelihood, AIC and BIC 1e-6 relative
(statsmodels 0.15's ``bic`` is ``bic_llf``, ``-2 llf + k log n``).
"""
import warnings

import numpy as np
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose
from sklearn.linear_model import GammaRegressor, PoissonRegressor, TweedieRegressor

from problin import (
    GLM,
    BinomialRegression,
    GammaRegression,
    InverseGaussianRegression,
    LinearRegression,
    NegativeBinomialRegression,
    PoissonRegression,
    TweedieRegression,
)

F, L = sm.families, sm.families.links
SM_LINKS = {"log": L.Log, "identity": L.Identity, "sqrt": L.Sqrt, "inverse": L.InversePower,
            "inverse_squared": L.InverseSquared, "logit": L.Logit, "probit": L.Probit,
            "cloglog": L.CLogLog, "loglog": L.LogLog}


def _cpunish():
    d = sm.datasets.cpunish.load_pandas()
    return d.exog[["INCOME", "PERPOVERTY", "SOUTH"]], d.endog.to_numpy()


def _scotland():
    d = sm.datasets.scotland.load_pandas()
    return d.exog[["COUTAX", "UNEMPF", "MOR", "ACT"]], d.endog.to_numpy()


def _star98():
    d = sm.datasets.star98.load_pandas()
    X = d.exog[["LOWINC", "PERASIAN", "PERBLACK", "PERHISP", "PCTCHRT", "PCTYRRND"]]
    k = d.endog["NABOVE"].to_numpy()
    return X, k, k + d.endog["NBELOW"].to_numpy()


def _randhie(n=400):
    d = sm.datasets.randhie.load_pandas()
    return d.exog[["lncoins", "idp", "physlm", "disea"]].iloc[:n], d.endog.to_numpy()[:n]


def _spector():
    d = sm.datasets.spector.load_pandas()
    return d.exog, d.endog.to_numpy()


def _compare(ours, ref, coef_rtol=1e-8):
    theta = np.concatenate([[ours.intercept_], ours.coef_])
    size = np.abs(np.asarray(ref.params)).max()
    assert ours.converged_
    assert_allclose(theta, ref.params, rtol=coef_rtol, atol=coef_rtol * size)
    table = ours.summary()
    assert_allclose(table["std_err"], ref.bse, rtol=1e-6)
    for ours_name, ref_name in [("deviance_", "deviance"), ("pearson_chi2_", "pearson_chi2"),
                                ("scale_", "scale"), ("log_likelihood_", "llf"),
                                ("aic_", "aic"), ("bic_", "bic"),
                                ("null_deviance_", "null_deviance"),
                                ("null_log_likelihood_", "llnull"),
                                ("df_resid_", "df_resid"), ("df_model_", "df_model")]:
        assert_allclose(getattr(ours, ours_name), getattr(ref, ref_name), rtol=1e-6,
                        err_msg=ours_name)
    return table


def _sm_fit(y, X, family, **kw):
    fit_kw = {k: kw.pop(k) for k in ("scale", "cov_type", "cov_kwds", "use_t") if k in kw}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = sm.GLM(y, sm.add_constant(np.asarray(X, dtype=float)), family=family, **kw)
        exact = model.fit(method="newton", tol=1e-15, maxiter=200, scale=fit_kw.get("scale"))
        return model.fit(start_params=exact.params, tol=1e-15, maxiter=200, **fit_kw)


CASES = [  # (estimator, data, statsmodels family)
    ("poisson-log", PoissonRegression(), _cpunish, F.Poisson(L.Log())),
    ("poisson-identity", PoissonRegression("identity"), _cpunish, F.Poisson(L.Identity())),
    ("poisson-sqrt", PoissonRegression("sqrt"), _cpunish, F.Poisson(L.Sqrt())),
    ("gamma-inverse", GLM("gamma"), _scotland, F.Gamma(L.InversePower())),
    ("gamma-log", GammaRegression(), _scotland, F.Gamma(L.Log())),
    ("gamma-identity", GammaRegression("identity"), _scotland, F.Gamma(L.Identity())),
    ("inverse-gaussian-log", InverseGaussianRegression(), _scotland,
     F.InverseGaussian(L.Log())),
    ("inverse-gaussian-inverse-squared", GLM("inverse_gaussian"), _scotland,
     F.InverseGaussian(L.InverseSquared())),
    ("tweedie-log", TweedieRegression(1.5), _scotland, F.Tweedie(var_power=1.5, link=L.Log())),
    ("gaussian-identity", GLM("gaussian"), _scotland, F.Gaussian()),
    ("negative-binomial-fixed-alpha", GLM("negative_binomial"), _randhie,
     F.NegativeBinomial(alpha=1.0)),
]


@pytest.mark.parametrize("name, est, data, family", CASES, ids=[c[0] for c in CASES])
def test_matches_statsmodels_glm(name, est, data, family):
    X, y = data()
    ours = est.fit(X, y)
    ref = _sm_fit(y, X, family, use_t=not ours.summary().attrs["statistic"] == "z")
    table = _compare(ours, ref)
    assert_allclose(table["p_value"], ref.pvalues, rtol=1e-6)
    assert_allclose(ours.predict(X), ref.fittedvalues, rtol=1e-8)


@pytest.mark.parametrize("link", ["logit", "probit", "cloglog", "loglog"])
def test_binomial_with_trials_matches_statsmodels(link):
    X, k, n = _star98()
    ours = BinomialRegression(link).fit(X, k, trials=n)
    ref = _sm_fit(np.column_stack([k, n - k]), X, F.Binomial(SM_LINKS[link]()))
    _compare(ours, ref)
    assert ours.n_obs_ == 303 and ours.df_resid_ == 296  # rows, not trials


def test_family_objects():
    from problin._core.model.distributions import Tweedie
    from problin._core.model.exponential_family import make_family
    X, y = _scotland()
    by_name = TweedieRegression(1.2).fit(X, y)
    for family in (Tweedie(power=1.2), make_family(Tweedie(power=1.2), "log")):
        assert_allclose(GLM(family).fit(X, y).coef_, by_name.coef_, rtol=1e-12)
    with pytest.raises(ValueError, match="contradicts"):
        GLM(make_family("gamma", "log"), "inverse").fit(X, y)


def test_bernoulli_cloglog_matches_statsmodels():
    X, y = _spector()
    ours = GLM("bernoulli", "cloglog").fit(X, y)
    _compare(ours, _sm_fit(y, X, F.Binomial(L.CLogLog())))


def test_offset_exposure_and_weights_match_statsmodels():
    X, y = _cpunish()
    rng = np.random.default_rng(0)
    exposure = rng.uniform(0.5, 2.0, y.size)
    offset = rng.normal(scale=0.1, size=y.size)
    freq = rng.integers(1, 4, y.size).astype(float)
    ours = PoissonRegression().fit(X, y, exposure=exposure, offset=offset, sample_weight=freq)
    ref = _sm_fit(y, X, F.Poisson(), exposure=exposure, offset=offset, freq_weights=freq)
    _compare(ours, ref)
    assert ours.n_obs_ == freq.sum()
    # a frequency weight is a repeated row
    rows = np.repeat(np.arange(y.size), freq.astype(int))
    rep = PoissonRegression().fit(X.iloc[rows], y[rows], exposure=exposure[rows],
                                  offset=offset[rows])
    assert_allclose(rep.coef_, ours.coef_, rtol=1e-9)
    assert_allclose(rep.covariance_, ours.covariance_, rtol=1e-7)
    new = X.iloc[:3]
    assert_allclose(ours.predict(new, exposure=exposure[:3], offset=offset[:3]),
                    ref.predict(sm.add_constant(np.asarray(new), has_constant="add"),
                                exposure=exposure[:3], offset=offset[:3]), rtol=1e-8)


def test_variance_weights_match_statsmodels():
    X, y = _scotland()
    vw = np.random.default_rng(1).uniform(0.5, 3.0, y.size)
    ours = GammaRegression().fit(X, y, var_weights=vw)
    _compare(ours, _sm_fit(y, X, F.Gamma(L.Log()), var_weights=vw, use_t=True))
    assert ours.n_obs_ == y.size


def test_gaussian_identity_equals_linear_regression():
    X, y = _scotland()
    ours = GLM("gaussian").fit(X, y)
    ols = LinearRegression().fit(X, y)
    assert_allclose(ours.coef_, ols.coef_, rtol=1e-9)
    assert_allclose(ours.covariance_, ols.covariance_, rtol=1e-8)
    for name in ("log_likelihood_", "aic_", "bic_", "df_resid_", "df_model_"):
        assert_allclose(getattr(ours, name), getattr(ols, name), rtol=1e-10, err_msg=name)
    a, b = ours.summary(), ols.summary()
    assert_allclose(a["t"], b["t"], rtol=1e-8)
    assert_allclose(a["p_value"], b["p_value"], rtol=1e-7)


def test_observed_information_matches_statsmodels_newton():
    X, y = _scotland()
    ours = GammaRegression(information="observed").fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = sm.GLM(y, sm.add_constant(X.to_numpy()), family=F.Gamma(L.Log())).fit(
            method="newton", tol=1e-13, maxiter=100)
    assert_allclose(ours.summary()["std_err"], ref.bse, rtol=1e-6)


@pytest.mark.parametrize("ours, theirs", [
    (PoissonRegression, PoissonRegressor), (GammaRegression, GammaRegressor),
    (lambda **kw: TweedieRegression(1.5, **kw), lambda **kw: TweedieRegressor(power=1.5, **kw))])
def test_penalised_fit_matches_scikit_learn(ours, theirs):
    """scikit-learn minimises ``mean deviance / 2 + a/2 |w|^2``: ``alpha = a n`` here."""
    X, y = _randhie(300)
    y = y + 1.0  # positive for the Gamma
    a = 0.05
    ref = theirs(alpha=a, tol=1e-12, max_iter=10_000, solver="newton-cholesky").fit(X, y)
    got = ours(alpha=a * y.size).fit(X, y)
    assert_allclose(got.coef_, ref.coef_, rtol=1e-7)
    assert_allclose(got.intercept_, ref.intercept_, rtol=1e-7)
    assert np.isnan(got.aic_)
    assert_allclose(got.score(X, y), ref.score(X, y), rtol=1e-9)


def _robust_cases():
    X, y = _cpunish()
    X2, y2 = _scotland()
    X3, k, n = _star98()
    fw, vw = np.arange(y.size) % 3 + 1.0, np.linspace(0.5, 2.0, y.size)
    g = np.arange(y.size) % 5
    g3 = np.arange(k.size) % 7
    return [  # (ours, fit arguments, statsmodels endog, exog, family, GLM and fit keywords)
        (PoissonRegression(cov_type="HC0"), (X, y), {"sample_weight": fw, "var_weights": vw},
         y, X, F.Poisson(), {"freq_weights": fw, "var_weights": vw, "cov_type": "HC0"}),
        (PoissonRegression(cov_type="cluster"), (X, y), {"groups": g}, y, X, F.Poisson(),
         {"cov_type": "cluster", "cov_kwds": {"groups": g}}),
        # a non-canonical link: the bread is the inverse observed information
        (GammaRegression(cov_type="HC0"), (X2, y2), {}, y2, X2, F.Gamma(L.Log()),
         {"cov_type": "HC0"}),
        # trials scale a row's score (variance weights), they do not repeat it
        (BinomialRegression(cov_type="HC0"), (X3, k), {"trials": n},
         np.column_stack([k, n - k]), X3, F.Binomial(), {"cov_type": "HC0"}),
        (BinomialRegression("probit", cov_type="cluster"), (X3, k), {"trials": n, "groups": g3},
         np.column_stack([k, n - k]), X3, F.Binomial(L.Probit()),
         {"cov_type": "cluster", "cov_kwds": {"groups": g3}}),
    ]


@pytest.mark.parametrize("case", range(5))
def test_robust_covariances_match_statsmodels(case):
    ours, args, fit_kw, endog, exog, family, sm_kw = _robust_cases()[case]
    ours.fit(*args, **fit_kw)
    ref = _sm_fit(endog, exog, family, **sm_kw)
    assert_allclose(ours.covariance_, ref.cov_params(), rtol=1e-6, atol=1e-14)

def test_negative_binomial_alpha_by_ml_matches_statsmodels():
    X, y = _randhie()
    ours = NegativeBinomialRegression().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = sm.NegativeBinomial(y, sm.add_constant(X.to_numpy()), loglike_method="nb2").fit(
            method="newton", maxiter=100, tol=1e-14, disp=0)
    assert_allclose(ours.alpha_, ref.params[-1], rtol=1e-8)
    assert_allclose(ours.alpha_se_, ref.bse[-1], rtol=1e-6)
    assert_allclose(np.r_[ours.intercept_, ours.coef_], ref.params[:-1], rtol=1e-8)
    assert_allclose(ours.summary()["std_err"], ref.bse[:-1], rtol=1e-6)
    for ours_name, ref_name in [("log_likelihood_", "llf"), ("aic_", "aic"), ("bic_", "bic"),
                                ("df_resid_", "df_resid"), ("df_model_", "df_model")]:
        assert_allclose(getattr(ours, ours_name), getattr(ref, ref_name), rtol=1e-8)
