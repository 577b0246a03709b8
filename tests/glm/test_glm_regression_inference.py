"""GLM regressors: intervals, marginal effects, tests, formulas, model files, bad input."""
import re
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose
from scipy import stats
from tests.glm.test_glm_regression import _cpunish, _scotland, _sm_fit

from problin import (
    GLM,
    BinomialRegression,
    Formula,
    ConvergenceWarning,
    GammaRegression,
    NegativeBinomialRegression,
    PoissonRegression,
    TweedieRegression,
    load,
    lr_test,
    save,
)

F, L = sm.families, sm.families.links


@pytest.mark.parametrize("est, family, use_t", [
    (PoissonRegression(), F.Poisson(), False), (GammaRegression(), F.Gamma(L.Log()), True)])
def test_predict_interval_matches_statsmodels(est, family, use_t):
    X, y = (_cpunish() if use_t is False else _scotland())
    ours = est.fit(X, y)
    ref = _sm_fit(y, X, family, use_t=use_t)
    frame = ref.get_prediction(sm.add_constant(X.to_numpy())).summary_frame(alpha=0.1)
    got = ours.predict_interval(X, level=0.9)
    assert list(got.index) == list(X.index)
    assert_allclose(got["mean"], frame["mean"], rtol=1e-8)
    assert_allclose(got["std_err"], frame["mean_se"], rtol=1e-6)
    assert_allclose(got[["ci_low", "ci_high"]], frame[["mean_ci_lower", "mean_ci_upper"]],
                    rtol=1e-6)


@pytest.mark.parametrize("at", ["overall", "mean"])
def test_poisson_marginal_effects_match_statsmodels(at):
    X, y = _cpunish()
    ours = PoissonRegression().fit(X, y).marginal_effects(X, at=at)
    start = _sm_fit(y, X, F.Poisson()).params  # (Poisson's own Newton stalls on INCOME)
    ref = sm.Poisson(y, sm.add_constant(X.to_numpy())).fit(
        start_params=start, disp=0, method="newton", tol=1e-14).get_margeff(at=at)
    assert_allclose(ours["dy/dx"], ref.margeff, rtol=1e-7)
    assert_allclose(ours["std_err"], ref.margeff_se, rtol=1e-6)


def test_wald_and_lr_tests_use_t_and_f_where_the_dispersion_is_estimated():
    X, y = _scotland()
    full = GammaRegression().fit(X, y)
    restricted = GammaRegression().fit(X[["COUTAX", "UNEMPF"]], y)
    ref = _sm_fit(y, X, F.Gamma(L.Log()), use_t=True)
    got = full.wald_test("MOR = 0, ACT = 0")
    want = ref.wald_test("x3 = 0, x4 = 0", use_f=True, scalar=True)
    assert got.distribution == "F"
    assert_allclose([got.statistic, got.p_value], [want.statistic, want.pvalue], rtol=1e-6)
    lr = lr_test(restricted, full)
    F_want = (restricted.deviance_ - full.deviance_) / (2 * full.scale_)  # R's anova F
    assert lr.distribution == "F" and lr.df == 2 and lr.df_denom == full.df_resid_
    assert_allclose(lr.statistic, F_want, rtol=1e-12)
    assert_allclose(lr.p_value, stats.f.sf(F_want, 2, full.df_resid_), rtol=1e-10)
    # Poisson: the chi-squared likelihood-ratio test, z in the summary
    Xc, yc = _cpunish()
    small, big = PoissonRegression().fit(Xc[["INCOME"]], yc), PoissonRegression().fit(Xc, yc)
    chi = lr_test(small, big)
    assert chi.distribution == "chi2"
    assert_allclose(chi.statistic, small.deviance_ - big.deviance_, rtol=1e-9)
    assert "z" in big.summary().columns and big.summary().attrs["statistic"] == "z"


def test_summary_text_header_and_overdispersion_note():
    X, y = _cpunish()
    text = str(PoissonRegression().fit(X, y).summary_text())
    for label in ("Family:", "poisson", "Link:", "Deviance:", "Pearson chi2:", "Scale:",
                  "AIC:", "BIC:", "Df Residuals:"):
        assert label in text
    assert "Overdispersion: Pearson chi2 / df = 8.31" in text
    quasi = PoissonRegression(scale="X2").fit(X, y)
    assert_allclose(quasi.scale_, quasi.pearson_chi2_ / quasi.df_resid_, rtol=1e-12)
    assert "t statistics" in str(quasi.summary_text())


def test_negative_binomial_summary_text_states_alpha():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 2))
    mu = np.exp(0.5 + X @ [0.3, -0.2])
    y = rng.negative_binomial(2, 2 / (2 + mu)).astype(float)
    nb = NegativeBinomialRegression().fit(X, y)
    ref = sm.NegativeBinomial(y, sm.add_constant(X)).fit(method="newton", disp=0, maxiter=200)
    text = str(nb.summary_text())
    assert f"alpha = {ref.params[-1]:.5f} (std err {ref.bse[-1]:.5f})." in text
    fixed = str(NegativeBinomialRegression(nb_alpha=0.5).fit(X, y).summary_text())
    assert "alpha (fixed) = 0.50000." in fixed
    assert "alpha" not in str(PoissonRegression().fit(X, y).summary_text())


def test_negative_binomial_n_iter_counts_the_whole_fit(monkeypatch):
    """With alpha estimated, n_iter_ (the summary's Iterations) is every Newton iteration
    of the coefficients: the Poisson start's, each solve of the alternation with alpha
    and the final one's (it was the final solve's alone: 1)."""
    from problin._core.solvers.newton import newton
    from problin.glm import _base, negative_binomial

    counted = []

    def counting(solver):
        def solve(*args, **kwargs):
            result = solver(*args, **kwargs)
            counted.append(result.n_iter)
            return result
        return solve

    monkeypatch.setattr(negative_binomial, "newton", counting(newton))
    monkeypatch.setitem(_base.SOLVERS, "newton", counting(_base.SOLVERS["newton"]))
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 2))
    y = rng.negative_binomial(2, 2 / (2 + np.exp(0.5 + X @ [0.3, -0.2]))).astype(float)
    model = NegativeBinomialRegression().fit(X, y)
    assert len(counted) >= 4  # the Poisson start, two alternations or more, the last solve
    assert model.n_iter_ == sum(counted) > counted[-1]
    text = str(model.summary_text())
    assert re.search(rf"Iterations: +{model.n_iter_} ", text), text


def test_formula_with_exposure_column():
    X, y = _cpunish()
    df = X.assign(executions=y, years=np.linspace(1.0, 3.0, y.size))
    model = Formula("executions ~ INCOME + PERPOVERTY + SOUTH", PoissonRegression()).fit(
        df, exposure="years")
    direct = PoissonRegression().fit(X, y, exposure=df["years"].to_numpy())
    assert_allclose(model.estimator_.coef_, direct.coef_, rtol=1e-12)
    assert list(model.summary().index) == ["intercept", "INCOME", "PERPOVERTY", "SOUTH"]
    assert_allclose(model.predict(df), direct.predict(X), rtol=1e-12)


@pytest.mark.parametrize("est", [PoissonRegression(), TweedieRegression(1.3),
                                 GLM("gamma", "log", cov_type="HC1")])
def test_model_files_round_trip(est, tmp_path):
    X, y = _scotland()
    est.fit(X, y)
    save(est, tmp_path / "m.problin")
    back = load(tmp_path / "m.problin")
    assert_allclose(back.predict(X), est.predict(X), rtol=0, atol=0)
    assert back.scale_ == est.scale_ and back.aic_ == est.aic_
    pd.testing.assert_frame_equal(back.summary(), est.summary())


# ------------------------------------------------------------------ bad input
def test_negative_counts_are_named():
    X, y = _cpunish()
    y = y.copy()
    y[[2, 5]] = -1.0
    with pytest.raises(ValueError, match=r"y >= 0.*y\[2\] = -1, y\[5\] = -1"):
        PoissonRegression().fit(X, y)


@pytest.mark.parametrize("family", ["gamma", "inverse_gaussian"])
def test_non_positive_sizes_are_named(family):
    X, y = _scotland()
    y = y.copy()
    y[3] = 0.0
    with pytest.raises(ValueError, match=r"y > 0.*y\[3\] = 0"):
        GLM(family, "log").fit(X, y)


def test_successes_above_trials_and_bad_trials():
    X, y = _cpunish()
    trials = y + 2.0
    bad = y.copy()
    bad[4] = trials[4] + 1
    with pytest.raises(ValueError, match="row 4: 6 of 5"):
        BinomialRegression().fit(X, bad, trials=trials)
    trials[1] = 0.0
    with pytest.raises(ValueError, match=r"trials must be positive: trials\[1\] = 0"):
        BinomialRegression().fit(X, y, trials=trials)
    with pytest.raises(ValueError, match="trials are the binomial's"):
        PoissonRegression().fit(X, y, trials=y + 1)
    with pytest.raises(ValueError, match=r"proportions .*trials=n\)\): y\[0\] = "):
        BinomialRegression().fit(X, y + 1.0)  # (counts without their trials)


def test_non_positive_exposure_and_exposure_without_log_link():
    X, y = _cpunish()
    exposure = np.ones(y.size)
    exposure[7] = -2.0
    with pytest.raises(ValueError, match=r"exposure must be positive: exposure\[7\] = -2"):
        PoissonRegression().fit(X, y, exposure=exposure)
    with pytest.raises(ValueError, match="needs the log link"):
        PoissonRegression("sqrt").fit(X, y, exposure=np.ones(y.size))
    with pytest.raises(ValueError, match="needs the log link"):  # (at prediction too)
        PoissonRegression("sqrt").fit(X, y).predict(X, exposure=np.ones(y.size))


def test_power_outside_one_two_and_undefined_link():
    X, y = _scotland()
    with pytest.raises(ValueError, match="power"):
        TweedieRegression(power=2.5).fit(X, y)
    with pytest.raises(ValueError, match="'logit' link is not defined for the gamma family"):
        GLM("gamma", "logit").fit(X, y)


def test_negative_binomial_without_overdispersion_warns_with_alpha():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 2))
    y = rng.binomial(6, 0.5, 200).astype(float)  # underdispersed counts
    with pytest.warns(ConvergenceWarning, match=r"alpha did not converge \(alpha = 0"):
        model = NegativeBinomialRegression().fit(X, y)
    assert np.isfinite(model.coef_).all()
