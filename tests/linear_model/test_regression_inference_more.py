"""The sandwich kernel, invariances of the least-squares inference, the Bayesian
linear regression's posterior table, and scikit-learn's checks with a robust ``cov_type``."""
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_diabetes
from sklearn.utils.estimator_checks import parametrize_with_checks

from problin import BayesianLinearRegression, LinearRegression
from problin._core.model.sandwich import (
    group_codes,
    inference_df,
    leverage_scale,
    meat,
    sandwich,
    small_sample_factor,
)


def test_meat_is_the_same_for_any_block_size():
    rng = np.random.default_rng(0)
    S = rng.normal(size=(1000, 4))
    codes, G = group_codes(rng.integers(0, 37, 1000), 1000)
    for rows in [1, 7, 1000, 5000]:
        np.testing.assert_allclose(meat(lambda lo, hi: S[lo:hi], 1000, rows=rows), S.T @ S,
                                   rtol=1e-12)
        sums = np.zeros((G, 4))
        np.add.at(sums, codes, S)
        np.testing.assert_allclose(meat(lambda lo, hi: S[lo:hi], 1000, codes, G, rows=rows),
                                   sums.T @ sums, rtol=1e-12)


def test_small_sample_factors_are_statsmodels_defaults():
    assert small_sample_factor("HC0", 100, 5) == 1.0
    assert small_sample_factor("HC1", 100, 5) == pytest.approx(100 / 95)
    assert small_sample_factor("HC3", 100, 5) == 1.0
    assert small_sample_factor("cluster", 100, 5, 10) == pytest.approx(10 / 9 * 99 / 95)
    assert inference_df("cluster", 95, 10) == 9 and inference_df("HC1", 95) == 95
    np.testing.assert_allclose(leverage_scale("HC2", np.array([0.75])), [2.0])
    np.testing.assert_allclose(leverage_scale("HC3", np.array([0.75])), [4.0])
    np.testing.assert_allclose(sandwich(np.eye(2), 2 * np.eye(2), 3.0), 6 * np.eye(2))
    with pytest.raises(ValueError, match="cov_type"):
        small_sample_factor("HC7", 10, 2)
    with pytest.raises(ValueError, match="one label per row"):
        group_codes(np.zeros(3), 4)


@settings(max_examples=25, deadline=None)
@given(scale=st.floats(1e-3, 1e3), shift=st.floats(-1e3, 1e3),
       cov_type=st.sampled_from(["nonrobust", "HC0", "HC1", "HC2", "HC3", "cluster"]))
def test_t_values_do_not_depend_on_units_or_offsets(scale, shift, cov_type):
    """Rescaling and shifting a feature rescales its coefficient and standard error
    alike: t, p-values and the model statistics stay the same."""
    X, y = load_diabetes(return_X_y=True)
    groups = np.arange(y.size) % 15
    a = LinearRegression(cov_type=cov_type).fit(X, y, groups=groups)
    X2 = X.copy()
    X2[:, 2] = X2[:, 2] * scale + shift
    b = LinearRegression(cov_type=cov_type).fit(X2, y, groups=groups)
    ta, tb = a.summary(), b.summary()
    np.testing.assert_allclose(tb["t"].iloc[1:], ta["t"].iloc[1:], rtol=1e-7)
    np.testing.assert_allclose(tb["std_err"].iloc[3], ta["std_err"].iloc[3] / scale, rtol=1e-7)
    for attr in ["r2_", "log_likelihood_", "f_statistic_"]:
        # A robust F is a Wald statistic on the same covariance as the t's, and as
        # accurate (the shifted column's stored values and their centring carry
        # rounding of ~eps shift / spread, 4e-10 of the spread at shift 691 and scale
        # 1/256: the cluster F moved 1.5e-9); the classical F comes from r2_.
        robust = attr == "f_statistic_" and cov_type != "nonrobust"
        np.testing.assert_allclose(getattr(b, attr), getattr(a, attr),
                                   rtol=1e-7 if robust else 1e-9)


def test_bayesian_summary_is_the_gaussian_posterior():
    X, y = load_diabetes(return_X_y=True)
    model = BayesianLinearRegression().fit(X, y)
    table = model.summary(level=0.9)
    assert list(table.columns) == ["mean", "sd", "z", "p_opposite", "ci_low", "ci_high"]
    assert list(table.index) == ["intercept"] + [f"x{j}" for j in range(10)]
    sd = np.sqrt(np.diag(model.posterior_cov_))
    np.testing.assert_allclose(table["mean"], model.posterior_mean_)
    np.testing.assert_allclose(table["sd"], sd)
    np.testing.assert_allclose(table["ci_high"] - table["mean"], 1.6448536269514722 * sd)
    # with a vague prior the posterior approaches the least-squares sampling distribution
    vague = BayesianLinearRegression(alpha=1e-12).fit(X, y)
    ols = sm.OLS(y, sm.add_constant(X)).fit()
    np.testing.assert_allclose(vague.summary()["mean"], ols.params, rtol=1e-5)
    resid = y - vague.predict(X)
    expected = 0.5 * y.size * np.log(vague.beta_ / (2 * np.pi)) - 0.5 * vague.beta_ * resid @ resid
    np.testing.assert_allclose(vague.log_likelihood_, expected, rtol=1e-10)
    assert vague.n_obs_ == y.size


def test_bayesian_summary_with_several_outputs():
    X, y = load_diabetes(return_X_y=True)
    model = BayesianLinearRegression().fit(X, np.column_stack([y, -y]))
    table = model.summary()
    assert table.index.names == ["output", "parameter"] and len(table) == 22
    np.testing.assert_allclose(table.loc[0, "mean"], -table.loc[1, "mean"], rtol=1e-12)


@parametrize_with_checks([LinearRegression(cov_type="HC3")])
def test_sklearn_compatible_with_robust_covariance(estimator, check):
    check(estimator)


def test_dask_gives_the_classical_inference_and_refuses_robust():
    da = pytest.importorskip("dask.array")
    X, y = load_diabetes(return_X_y=True)
    w = np.random.default_rng(0).uniform(0.5, 2.0, y.size)
    ref = LinearRegression().fit(X, y, sample_weight=w)
    model = LinearRegression().fit(da.from_array(X, chunks=(100, 10)),
                                   da.from_array(y, chunks=100),
                                   sample_weight=da.from_array(w, chunks=100))
    np.testing.assert_allclose(model.covariance_, ref.covariance_, rtol=1e-9)
    for attr in ["log_likelihood_", "bic_", "n_obs_", "adj_r2_", "f_pvalue_"]:
        np.testing.assert_allclose(getattr(model, attr), getattr(ref, attr), rtol=1e-9)
    with pytest.raises(ValueError, match="Dask"):
        LinearRegression(cov_type="HC0").fit(da.from_array(X, chunks=(100, 10)), y)


@pytest.mark.filterwarnings("ignore::problin.exceptions.CollinearityWarning")
@pytest.mark.parametrize("cov_type", ["nonrobust", "HC1", "HC3"])
def test_rank_deficient_design_matches_statsmodels_pinv(cov_type):
    """A collinear column: statsmodels' pseudo-inverse covariance; a constant column
    (coefficient 0, not identified): zero variance in covariance_, and in the table no
    standard error, statistic or interval, but a note."""
    X, y = load_diabetes(return_X_y=True)
    X = np.column_stack([X, X[:, 0] + X[:, 1], np.full(y.size, 3.0)])
    model = LinearRegression(cov_type=cov_type).fit(X, y)
    table = model.summary()
    ref = sm.OLS(y, sm.add_constant(X[:, :-1])).fit(cov_type=cov_type, use_t=True)
    np.testing.assert_allclose(table["std_err"].iloc[:-1], ref.bse, rtol=1e-8)
    np.testing.assert_allclose(table["p_value"].iloc[:-1], ref.pvalues, rtol=1e-8)
    assert model.df_resid_ == ref.df_resid and model.covariance_[-1, -1] == 0.0
    assert table.iloc[-1][["std_err", "t", "p_value", "ci_low", "ci_high"]].isna().all()
    assert table["note"].iloc[-1].startswith("not identified")


@pytest.mark.parametrize("cov_type", ["nonrobust", "HC1", "HC2", "cluster"])
def test_rows_of_zero_weight_are_dropped(cov_type):
    """Zero weight is the same as leaving the row out, for the inference too."""
    X, y = load_diabetes(return_X_y=True)
    groups = np.arange(y.size) % 17
    w = np.random.default_rng(2).uniform(0.5, 2.0, y.size)
    w[::5] = 0.0
    w[groups == 3] = 0.0  # a whole cluster of zero weight
    keep = w > 0
    a = LinearRegression(cov_type=cov_type).fit(X, y, sample_weight=w, groups=groups)
    b = LinearRegression(cov_type=cov_type).fit(X[keep], y[keep], sample_weight=w[keep],
                                                groups=groups[keep])
    np.testing.assert_allclose(a.covariance_, b.covariance_, rtol=1e-9, atol=1e-12)
    for attr in ["n_obs_", "df_resid_", "log_likelihood_", "aic_", "f_statistic_"]:
        np.testing.assert_allclose(getattr(a, attr), getattr(b, attr), rtol=1e-9)


@pytest.mark.parametrize("cov_type", ["HC2", "HC3"])
def test_a_row_of_leverage_near_one_keeps_its_score(cov_type):
    """A row at x = 1e6 among normal ones has 1 - h ~ 1e-11: it was taken for a row of
    leverage 1 (score dropped), and the slope's HC3 standard error came out 1.7e-7
    instead of 0.37. Checked against the sandwich formula in 60-digit arithmetic, to
    the precision that 1 - h itself has (~1e-5)."""
    import mpmath as mp
    rng = np.random.default_rng(0)
    x = rng.normal(size=30)
    x[0] = 1e6
    y = 1 + 2 * x + rng.normal(size=30)
    se = LinearRegression(cov_type=cov_type).fit(x[:, None], y).summary()["std_err"]
    power = 1 if cov_type == "HC2" else 2
    with mp.workdps(60):
        X = mp.matrix([[1, mp.mpf(float(v))] for v in x])
        B = (X.T * X) ** -1
        e = mp.matrix([mp.mpf(float(v)) for v in y]) - X * (B * (X.T * mp.matrix(y.tolist())))
        meat = mp.zeros(2, 2)
        for i in range(30):
            h = (X[i, :] * B * X[i, :].T)[0]
            meat += e[i] ** 2 / (1 - h) ** power * (X[i, :].T * X[i, :])
        exact = [float(mp.sqrt((B * meat * B)[j, j])) for j in range(2)]
    np.testing.assert_allclose(se.to_numpy(), exact, rtol=1e-3)


def test_a_refused_fit_leaves_the_previous_fit_whole():
    """A refit refused by its groups (checked by the robust pass, after the fit) left
    the new data's coefficients with the nonrobust covariance, and one refused for NaN
    had reset the row count, so a later partial_fit merged into the old statistics with
    half the rows. Both now leave the previous fit as it was."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2))
    y = X @ [1.0, 2.0] + rng.normal(size=50)
    groups = np.repeat(np.arange(10), 5)
    model = LinearRegression(cov_type="cluster").fit(X, y, groups=groups)
    table = model.summary().copy()
    with pytest.raises(ValueError, match="two clusters"):
        model.fit(X[:25] * 3, y[:25], groups=np.zeros(25))
    pd.testing.assert_frame_equal(model.summary(), table)
    stream = LinearRegression().fit(X[:25], y[:25])
    bad = X[25:].copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        stream.fit(bad, y[25:])
    stream.partial_fit(X[25:], y[25:])
    full = LinearRegression().fit(X, y)
    assert stream.n_obs_ == full.n_obs_ == 50
    np.testing.assert_allclose(stream.summary()["std_err"], full.summary()["std_err"],
                               rtol=1e-10)


def test_condition_number_of_a_rank_deficient_design_is_infinite():
    """It was the ratio over the kept directions only (2.1 with a collinear column, 1.3
    with a constant one: no "large condition number" note); statsmodels gives its
    rounding, ~1e16. Full-rank designs still match statsmodels."""
    import warnings as w
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2))
    y = X @ [1.0, 2.0] + rng.normal(size=50)
    ref = sm.OLS(y, sm.add_constant(X)).fit()
    assert LinearRegression().fit(X, y).condition_number_ == pytest.approx(
        ref.condition_number, rel=1e-12)
    with w.catch_warnings():
        w.simplefilter("ignore")
        for extra in (X[:, :1] + X[:, 1:], np.full((50, 1), 3.0)):
            model = LinearRegression().fit(np.hstack([X, extra]), y)
            assert model.condition_number_ == np.inf
            assert "condition number is large" in model.summary_text()


@pytest.mark.parametrize("cov_type", ["HC1", "HC3", "cluster"])
def test_robust_f_test_skips_slopes_the_data_do_not_identify(cov_type):
    """With a constant column (its slope held at 0, variance 0) the robust F was NaN;
    it now equals the fit's without that column."""
    import warnings as w
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2))
    y = X @ [1.0, 2.0] + rng.normal(size=50)
    groups = np.repeat(np.arange(10), 5) if cov_type == "cluster" else None
    with w.catch_warnings():
        w.simplefilter("ignore")
        wide = LinearRegression(cov_type=cov_type).fit(np.c_[X, np.full(50, 3.0)], y,
                                                       groups=groups)
    narrow = LinearRegression(cov_type=cov_type).fit(X, y, groups=groups)
    assert wide.f_statistic_ == pytest.approx(narrow.f_statistic_, rel=1e-10)
    assert wide.f_pvalue_ == pytest.approx(narrow.f_pvalue_, rel=1e-8)


@pytest.mark.parametrize("cov_type", ["HC0", "HC3", "cluster"])
def test_robust_t_values_of_columns_far_from_zero(cov_type):
    """The robust pass formed residuals as t - (x^T w + b), which at columns of 1e12
    (spread 1) cancels their digits: t-values 6e-5 to 1e-4 off those of the same
    (rounded) data centred exactly. Formed centred on the moments' means, ~1e-6."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = X @ [1.0, 2.0] + rng.normal(size=200)
    w = rng.uniform(0.5, 2.0, 200)
    groups = np.repeat(np.arange(20), 10) if cov_type == "cluster" else None
    far = X + 1e12
    a = LinearRegression(cov_type=cov_type).fit(far, y, sample_weight=w, groups=groups)
    b = LinearRegression(cov_type=cov_type).fit(far - 1e12, y, sample_weight=w, groups=groups)
    np.testing.assert_allclose(a.summary()["t"].to_numpy()[1:],
                               b.summary()["t"].to_numpy()[1:], rtol=1e-5)
