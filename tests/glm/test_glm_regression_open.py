"""GLM regressors as an open design: a family is one file (its conventions declared, not
tested for by name), lr_test reads a typed protocol, formulas read per-row columns at
prediction, NB2's alpha converges where the likelihood is flat at its rounding."""
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose
from sklearn.exceptions import NotFittedError
from tests.glm.test_glm_regression import _cpunish, _scotland, _sm_fit

from problin import (
    GLM,
    BinomialRegression,
    ConvergenceWarning,
    Formula,
    LinearRegression,
    LogisticRegression,
    NegativeBinomialRegression,
    PerfectFitWarning,
    PoissonRegression,
    SeparationWarning,
    TweedieRegression,
    lr_test,
)
from problin._core.model import negative_binomial as nb
from problin._core.model.distributions import Binomial, Distribution, Gaussian
from problin._core.model.fitted_rows import in_hand
from problin.inference.hypothesis import LikelihoodModel

F, L = sm.families, sm.families.links


class _Normal(Gaussian):
    """The Gaussian under another name: its conventions must come with the class."""

    name = "normal"


class _Grouped(Distribution):
    """Successes out of trials, not a subclass of Binomial: trials are its to declare."""

    name = "grouped"
    default_link = canonical_link = "logit"
    links = ("logit",)
    fixed_dispersion = True
    mean_high = 1.0
    y_rule = Binomial.y_rule
    invalid_y = Binomial.invalid_y
    variance = Binomial.variance
    variance_derivative = Binomial.variance_derivative
    unit_deviance = Binomial.unit_deviance
    log_likelihood = Binomial.log_likelihood
    start_mean = Binomial.start_mean
    from_trials = Binomial.from_trials
    has_trials = True


def test_a_renamed_gaussian_reports_the_concentrated_log_likelihood():
    X, y = _scotland()
    ours = GLM(_Normal()).fit(X, y)
    ref = _sm_fit(y, X, F.Gaussian())
    assert_allclose(ours.log_likelihood_, ref.llf, rtol=1e-10)
    assert_allclose(ours.log_likelihood_, LinearRegression().fit(X, y).log_likelihood_,
                    rtol=1e-10)


def test_trials_belong_to_the_distribution_that_declares_them():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 2))
    trials = rng.integers(1, 9, 40).astype(float)
    successes = rng.binomial(trials.astype(int), 1 / (1 + np.exp(-0.3 - X[:, 0])))
    ours = GLM(_Grouped()).fit(X, successes, trials=trials)
    ref = sm.GLM(np.c_[successes, trials - successes], sm.add_constant(X),
                 family=F.Binomial()).fit(tol=1e-14)
    assert_allclose(np.r_[ours.intercept_, ours.coef_], ref.params, rtol=1e-8)
    assert_allclose(ours.deviance_, ref.deviance, rtol=1e-8)
    with pytest.raises(ValueError, match="trials are the binomial's: the poisson family"):
        PoissonRegression().fit(X, successes, trials=trials)


def test_lr_test_reads_the_reference_distribution_off_the_model():
    X, y = _cpunish()
    logit = LogisticRegression().fit(X, y > np.median(y))
    assert isinstance(logit, LikelihoodModel) and logit.lr_reference() == "chi2"
    assert LinearRegression().fit(X, y).lr_reference() == "chi2"
    full = PoissonRegression(scale="X2").fit(X, y)  # quasi-Poisson: F on the deviances
    restricted = PoissonRegression(scale="X2").fit(X[["INCOME"]], y)
    assert full.lr_reference() == "F" and PoissonRegression().fit(X, y).lr_reference() == "chi2"
    got = lr_test(restricted, full)
    ref_f = _sm_fit(y, X, F.Poisson(), scale="X2")
    ref_r = _sm_fit(y, X[["INCOME"]], F.Poisson(), scale="X2")
    df = ref_r.df_resid - ref_f.df_resid
    expected = (ref_r.deviance - ref_f.deviance) / (df * ref_f.scale)
    assert got.distribution == "F" and (got.df, got.df_denom) == (df, ref_f.df_resid)
    assert_allclose(got.statistic, expected, rtol=1e-8)


def test_formula_predictions_read_offset_and_exposure_columns():
    X, y = _cpunish()
    df = X.assign(executions=y, years=np.linspace(1.0, 3.0, y.size),
                  shift=np.linspace(-0.2, 0.2, y.size))
    model = Formula("executions ~ INCOME + SOUTH", PoissonRegression()).fit(
        df, exposure="years", offset="shift")
    direct = PoissonRegression().fit(X[["INCOME", "SOUTH"]], y, exposure=df["years"].to_numpy(),
                                     offset=df["shift"].to_numpy())
    arrays = {"exposure": df["years"].to_numpy(), "offset": df["shift"].to_numpy()}
    assert_allclose(model.predict(df, exposure="years", offset="shift"),
                    direct.predict(X[["INCOME", "SOUTH"]], **arrays), rtol=1e-12)
    pd.testing.assert_frame_equal(
        model.predict_interval(df, level=0.9, exposure="years"),
        direct.predict_interval(X[["INCOME", "SOUTH"]], level=0.9, exposure=arrays["exposure"]),
        rtol=1e-12)
    effects = model.marginal_effects(df, at="mean", offset="shift")
    assert_allclose(effects["dy/dx"], direct.marginal_effects(
        X[["INCOME", "SOUTH"]], at="mean", offset=arrays["offset"])["dy/dx"], rtol=1e-12)
    with pytest.raises(ValueError, match="yeras"):
        model.predict(df, exposure="yeras")
    with pytest.raises(TypeError, match="column name is read by Formula"):
        direct.predict(X[["INCOME", "SOUTH"]], offset="shift")
    with pytest.raises(TypeError, match="column name is read by Formula"):
        direct.predict(X[["INCOME", "SOUTH"]], exposure="years")


def test_nb_alpha_converges_where_the_likelihood_is_flat_at_its_rounding():
    # 120 rows: from twice the answer, each Newton step near it changes the
    # log-likelihood by less than its rounding; the score still decides
    rng = np.random.default_rng(2)
    X = rng.normal(size=(120, 2))
    mu = np.exp(0.5 + 0.4 * X[:, 0])
    y = rng.negative_binomial(1 / 0.15, 1 / (1 + 0.15 * mu)).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = sm.NegativeBinomial(y, sm.add_constant(X), loglike_method="nb2").fit(
            method="newton", maxiter=100, tol=1e-14, disp=0)
    means = np.exp(sm.add_constant(X) @ ref.params[:-1])
    found = nb.update_alpha(in_hand(y, means), 2.0 * ref.params[-1])
    assert found.converged and found.n_iter < 10
    assert_allclose(found.alpha, ref.params[-1], rtol=1e-8)



def _isolated_zeros():
    """Counts whose indicator column z is nonzero only where y = 0: its coefficient
    runs off to -inf, and the others converge to the fit without those rows."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=30)
    z = (np.arange(30) < 8).astype(float)
    y = rng.poisson(np.exp(0.5 + 0.3 * x)).astype(float)
    y[z == 1] = 0.0
    return np.c_[x, z], y, z == 1


def test_all_zero_counts_warn_and_give_a_finite_result():
    X = np.linspace(0.0, 2.0, 12)[:, None]
    y = np.zeros(12)
    with pytest.warns(PerfectFitWarning, match="12 of 12 rows"):
        model = PoissonRegression().fit(X, y)
    assert issubclass(PerfectFitWarning, SeparationWarning)
    assert model.separated_.all() and model.intercept_ < -15
    for name in ("coef_", "covariance_", "deviance_", "null_deviance_", "pearson_chi2_",
                 "log_likelihood_", "aic_", "bic_", "scale_"):
        assert np.all(np.isfinite(getattr(model, name))), name
    assert model.score(X, y) == 0.0  # (D2 of an all-equal y: scikit-learn's convention)
    assert "fitted at the boundary of the mean's range" in str(model.summary_text())
    with pytest.warns(PerfectFitWarning):  # (the penalty does not hold the intercept)
        TweedieRegression(alpha=1.0).fit(X, y)
    with pytest.warns(PerfectFitWarning), pytest.warns(ConvergenceWarning,
                                                       match="alpha tends to infinity"):
        nb2 = NegativeBinomialRegression().fit(X, y)
    assert nb2.alpha_ == 1e8 and np.all(np.isfinite(nb2.covariance_))


def test_counts_isolated_by_a_column_match_the_fit_without_them():
    X, y, isolated = _isolated_zeros()
    with pytest.warns(PerfectFitWarning, match="8 of 30 rows"):
        model = PoissonRegression().fit(X, y)
    np.testing.assert_array_equal(model.separated_, isolated)
    ref = _sm_fit(y[~isolated], X[~isolated, :1], F.Poisson())
    assert_allclose([model.intercept_, model.coef_[0]], ref.params, rtol=1e-6)
    assert model.coef_[1] < -15
    with warnings.catch_warnings():  # a refit inside the range: no warning, no rows
        warnings.simplefilter("error")
        model.fit(X[:, :1], y)
    assert not hasattr(model, "separated_")


def test_binomial_proportions_at_zero_and_one_in_groups_of_their_own():
    g = np.repeat([0.0, 1.0, 2.0], 6)
    X = np.c_[g == 1, g == 2].astype(float)
    trials = np.full(18, 4.0)
    successes = np.r_[np.zeros(6), [1, 2, 3, 2, 1, 2], np.full(6, 4.0)]
    with pytest.warns(PerfectFitWarning, match="12 of 18 rows"):
        model = BinomialRegression().fit(X, successes, trials=trials)
    np.testing.assert_array_equal(model.separated_, g != 1)
    assert_allclose(model.predict(X[6:12]), 11 / 24, rtol=1e-8)


def test_small_means_of_a_steep_fit_are_not_a_boundary():
    rng = np.random.default_rng(0)
    x = np.linspace(-10.0, 2.0, 40)
    y = rng.poisson(np.exp(1.5 * x)).astype(float)  # means down to 3e-7
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = PoissonRegression().fit(x[:, None], y)
    assert not hasattr(model, "separated_")
    assert_allclose([model.intercept_, model.coef_[0]],
                    _sm_fit(y, x[:, None], F.Poisson()).params, rtol=1e-8)


def test_get_family_is_the_fitted_family_and_scores_with_it():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 2))
    mu = np.exp(0.8 + 0.5 * X[:, 0])
    y = rng.negative_binomial(2.0, 2.0 / (2.0 + mu)).astype(float)
    model = NegativeBinomialRegression().fit(X, y)
    family = model.get_family()
    assert family.distribution.alpha == model.alpha_ and family.link_function.name == "log"
    ref = F.NegativeBinomial(alpha=model.alpha_)
    expected = 1.0 - ref.deviance(y, model.predict(X)) / ref.deviance(y, np.full(80, y.mean()))
    assert_allclose(model.score(X, y), expected, rtol=1e-10)
    assert _Grouped.has_trials and not Gaussian.has_trials
    with pytest.raises(NotFittedError):
        NegativeBinomialRegression().get_family()
