"""Least-squares inference: NIST StRD Longley, and parity with statsmodels OLS/WLS.

Coefficient tables, model statistics, robust and clustered covariances and
prediction intervals of ``LinearRegression(alpha=0)`` equal statsmodels'
``WLS(...).fit(cov_type=..., use_t=True)`` to 1e-6 relative on four data sets.
"""
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from sklearn.datasets import load_diabetes

from problin import LinearRegression
from problin.exceptions import CollinearityWarning

COV_TYPES = ["nonrobust", "HC0", "HC1", "HC2", "HC3", "cluster"]

# NIST StRD, Longley (1967), certified values (higher difficulty, 16 observations):
# https://www.itl.nist.gov/div898/strd/lls/data/Longley.shtml
LONGLEY_COEF = [-3482258.63459582, 15.0618722713733, -0.358191792925910e-01,
                -2.02022980381683, -1.03322686717359, -0.511041056535807e-01,
                1829.15146461355]
LONGLEY_SE = [890420.383607373, 84.9149257747669, 0.334910077722432e-01,
              0.488399681651699, 0.214274163161675, 0.226073200069370,
              455.478499142212]
LONGLEY_RESIDUAL_SD = 304.854073561965
LONGLEY_R2 = 0.995479004577296
LONGLEY_F = 330.285339234588
LONGLEY_RESIDUAL_SS = 836424.055505915


def _longley():
    d = sm.datasets.longley.load_pandas()
    groups = np.arange(d.endog.size) % 8  # 8 clusters of 2 (cluster not compared: G < p)
    return d.exog, d.endog.to_numpy(), groups


def _diabetes():
    X, y = load_diabetes(return_X_y=True)
    edges = np.quantile(X[:, 0], np.linspace(0, 1, 21)[1:-1])
    return X, y, np.digitize(X[:, 0], edges)  # 20 clusters by age


def _fair():
    data = sm.datasets.fair.load_pandas().data
    X = data.drop(columns=["affairs", "occupation"])
    return X, data["affairs"].to_numpy(), (data["occupation"] * 100 + data["educ"]).to_numpy()


def _scotland():
    data = sm.datasets.scotland.load_pandas().data
    X = data.drop(columns=["YES"])[["COUTAX", "UNEMPF", "MOR", "ACT"]]
    return X, data["YES"].to_numpy(), np.arange(32) % 12


DATASETS = {"longley": _longley, "diabetes": _diabetes, "fair": _fair, "scotland": _scotland}


def _rel(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


def test_longley_reproduces_nist_certified_values():
    X, y, _ = _longley()
    model = LinearRegression().fit(X, y)
    table = model.summary()
    assert list(table.index) == ["intercept", "GNPDEFL", "GNP", "UNEMP", "ARMED", "POP", "YEAR"]
    # at least 9 significant digits (measured: ~1e-11 and better)
    np.testing.assert_allclose(table["coef"], LONGLEY_COEF, rtol=1e-9)
    np.testing.assert_allclose(table["std_err"], LONGLEY_SE, rtol=1e-9)
    np.testing.assert_allclose(np.sqrt(model.scale_), LONGLEY_RESIDUAL_SD, rtol=1e-9)
    np.testing.assert_allclose(model.deviance_, LONGLEY_RESIDUAL_SS, rtol=1e-9)
    np.testing.assert_allclose(model.r2_, LONGLEY_R2, rtol=1e-9)
    np.testing.assert_allclose(model.f_statistic_, LONGLEY_F, rtol=1e-9)
    assert model.df_model_ == 6 and model.df_resid_ == 9 and model.n_obs_ == 16


# Longley has fewer clusters than parameters: its cluster covariance is singular, a case
# with no standard errors to compare (not generated).
_CASES = [(name, cov_type) for name in DATASETS for cov_type in COV_TYPES
          if not (cov_type == "cluster" and name == "longley")]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name, cov_type", _CASES)
def test_matches_statsmodels(name, cov_type, weighted):
    X, y, groups = DATASETS[name]()
    w = np.random.default_rng(7).uniform(0.5, 2.0, y.size) if weighted else None
    kw = {"groups": groups} if cov_type == "cluster" else {}
    ref = sm.WLS(y, sm.add_constant(np.asarray(X, dtype=float)),
                 weights=1.0 if w is None else w).fit(cov_type=cov_type, cov_kwds=kw, use_t=True)
    model = LinearRegression(cov_type=cov_type).fit(X, y, sample_weight=w, groups=groups)
    table = model.summary(level=0.9)
    assert list(table.columns) == ["coef", "std_err", "t", "p_value", "ci_low", "ci_high"]
    ci = ref.conf_int(alpha=0.1)
    # Longley's design has condition number 5e9: statsmodels' pinv keeps ~8 digits
    tol = 1e-6
    for ours, theirs in [(table["coef"], ref.params), (table["std_err"], ref.bse),
                         (table["t"], ref.tvalues), (table["p_value"], ref.pvalues),
                         (table["ci_low"], ci[:, 0]), (table["ci_high"], ci[:, 1])]:
        assert _rel(ours, theirs) < tol
    se = np.sqrt(np.diag(ref.cov_params()))  # relative to the standard errors' product
    assert np.max(np.abs(model.covariance_ - ref.cov_params()) / np.outer(se, se)) < tol
    stats = {"log_likelihood_": ref.llf, "aic_": ref.aic, "bic_": ref.bic,
             "deviance_": ref.ssr, "df_model_": ref.df_model, "df_resid_": ref.df_resid,
             "n_obs_": ref.nobs, "r2_": ref.rsquared, "adj_r2_": ref.rsquared_adj,
             "f_statistic_": ref.fvalue, "f_pvalue_": ref.f_pvalue,
             "condition_number_": ref.condition_number}
    for attr, value in stats.items():
        assert _rel(getattr(model, attr), value) < tol, attr
    null = sm.WLS(y, np.ones((y.size, 1)), weights=1.0 if w is None else w).fit()
    assert _rel(model.null_log_likelihood_, null.llf) < tol
    rows = np.asarray(X, dtype=float)[::max(1, y.size // 7)]
    ours = model.predict_interval(X[::max(1, y.size // 7)], level=0.9)
    theirs = ref.get_prediction(sm.add_constant(rows, has_constant="add")).summary_frame(alpha=0.1)
    assert list(ours.columns) == ["mean", "std_err", "ci_low", "ci_high", "obs_ci_low",
                                  "obs_ci_high"]
    for col, ref_col in [("mean", "mean"), ("std_err", "mean_se"), ("ci_low", "mean_ci_lower"),
                         ("ci_high", "mean_ci_upper"), ("obs_ci_low", "obs_ci_lower"),
                         ("obs_ci_high", "obs_ci_upper")]:
        assert _rel(ours[col], theirs[ref_col]) < tol, col


def test_deviance_is_statsmodels_gaussian_glm_deviance():
    X, y, _ = _diabetes()
    w = np.random.default_rng(3).uniform(0.5, 2.0, y.size)
    glm = sm.GLM(y, sm.add_constant(X), var_weights=w).fit()
    model = LinearRegression().fit(X, y, sample_weight=w)
    assert _rel(model.deviance_, glm.deviance) < 1e-9
    assert _rel(model.log_likelihood_, glm.llf) < 1e-9


def test_without_intercept_matches_statsmodels():
    X, y, _ = _diabetes()
    ref = sm.OLS(y, X).fit()
    model = LinearRegression(fit_intercept=False).fit(X, y)
    assert list(model.summary().index) == [f"x{j}" for j in range(X.shape[1])]
    assert _rel(model.summary()["std_err"], ref.bse) < 1e-9
    for attr, value in {"r2_": ref.rsquared, "adj_r2_": ref.rsquared_adj,
                        "f_statistic_": ref.fvalue, "log_likelihood_": ref.llf,
                        "condition_number_": ref.condition_number}.items():
        assert _rel(getattr(model, attr), value) < 1e-9, attr


def _with_constant(kind):
    """Diabetes features plus the constant a user puts in X with fit_intercept=False:
    a column of sevens (explicit), or dummies of three groups that sum to one (implicit:
    statsmodels' k_constant finds it by the rank of [1, X])."""
    X, y, _ = _diabetes()
    if kind == "explicit":
        return np.column_stack([X[:, :4], np.full(y.size, 7.0), X[:, 4:]]), y
    groups = np.random.default_rng(5).integers(0, 3, y.size)
    return np.column_stack([X, np.eye(3)[groups]]), y


@pytest.mark.parametrize("kind", ["explicit", "implicit"])
@pytest.mark.parametrize("cov_type", ["nonrobust", "HC1"])
@pytest.mark.parametrize("weighted", [False, True])
def test_constant_in_x_without_intercept_is_the_models_constant(kind, cov_type, weighted):
    """R^2, adjusted R^2, the F test and its degrees of freedom are the centred ones when
    X holds the constant (statsmodels' k_constant). For an implicit constant statsmodels'
    robust F is NaN (its issue 2444); ours is the Wald test of every coefficient with X w
    constant, which is the F of the same model parametrised with an explicit constant."""
    Z, y = _with_constant(kind)
    w = np.random.default_rng(7).uniform(0.5, 2.0, y.size) if weighted else None
    ref = sm.WLS(y, Z, weights=1.0 if w is None else w).fit(cov_type=cov_type)
    assert ref.model.k_constant == 1
    model = LinearRegression(fit_intercept=False, cov_type=cov_type).fit(Z, y, sample_weight=w)
    F_ref = ref.fvalue
    if kind == "implicit" and cov_type != "nonrobust":
        assert np.isnan(F_ref)
        explicit = np.column_stack([np.ones(y.size), Z[:, :-1]])  # same span, constant first
        F_ref = sm.WLS(y, explicit, weights=1.0 if w is None else w).fit(
            cov_type=cov_type).fvalue
    stats = {"r2_": ref.rsquared, "adj_r2_": ref.rsquared_adj, "df_model_": ref.df_model,
             "df_resid_": ref.df_resid, "f_statistic_": F_ref,
             "log_likelihood_": ref.llf, "deviance_": ref.ssr}
    for attr, value in stats.items():
        assert _rel(getattr(model, attr), value) < 1e-9, attr
    null = sm.WLS(y, np.ones((y.size, 1)), weights=1.0 if w is None else w).fit()
    assert _rel(model.null_log_likelihood_, null.llf) < 1e-9


def test_a_zero_or_nearly_constant_column_is_no_constant():
    """statsmodels' rules: a column of zeros is not a constant, and a column that varies
    (by 1e-6 of its size) is not one either: R^2 stays uncentred, as statsmodels'."""
    X, y, _ = _diabetes()
    rng = np.random.default_rng(2)
    for extra in (np.zeros(y.size), 1000.0 + 1e-3 * rng.standard_normal(y.size)):
        Z = np.column_stack([X, extra])
        singular = not extra.any()
        with warnings.catch_warnings():  # (its warning for the zero column)
            warnings.simplefilter("ignore")
            ref = sm.OLS(y, Z).fit()
        assert ref.model.k_constant == 0
        with pytest.warns(CollinearityWarning) if singular else warnings.catch_warnings():
            model = LinearRegression(fit_intercept=False).fit(Z, y)
        for attr, value in {"r2_": ref.rsquared, "adj_r2_": ref.rsquared_adj,
                            "df_model_": ref.df_model}.items():
            assert _rel(getattr(model, attr), value) < 1e-9, attr


def test_partial_fit_gives_the_classical_inference_of_fit():
    X, y, _ = _fair()
    X = X.to_numpy()
    w = np.random.default_rng(0).uniform(0.5, 2.0, y.size)
    whole = LinearRegression().fit(X, y, sample_weight=w)
    parts = LinearRegression()
    for idx in np.array_split(np.arange(y.size), 5):
        parts.partial_fit(X[idx], y[idx], sample_weight=w[idx])
    np.testing.assert_allclose(parts.covariance_, whole.covariance_, rtol=1e-9)
    for attr in ["log_likelihood_", "aic_", "bic_", "n_obs_", "r2_", "f_statistic_"]:
        np.testing.assert_allclose(getattr(parts, attr), getattr(whole, attr), rtol=1e-9)


def test_bad_input_gives_one_clear_error_each():
    X, y, groups = _diabetes()
    with pytest.raises(ValueError, match="groups="):
        LinearRegression(cov_type="cluster").fit(X, y)
    with pytest.raises(ValueError, match="one label per row"):
        LinearRegression(cov_type="cluster").fit(X, y, groups=groups[:-1])
    with pytest.raises(ValueError, match="NaN"):
        LinearRegression(cov_type="cluster").fit(X, y, groups=np.where(groups > 3, groups, np.nan))
    with pytest.raises(ValueError, match="cov_type"):
        LinearRegression(cov_type="HC9").fit(X, y)
    with pytest.raises(ValueError, match="partial_fit"):
        LinearRegression(cov_type="HC1").partial_fit(X, y).summary()
    with pytest.raises(ValueError, match="partial_fit"):
        LinearRegression(cov_type="HC1").partial_fit(X, y).predict_interval(X)
    with pytest.raises(ValueError, match="alpha=1 > 0"):
        LinearRegression(alpha=1.0).fit(X, y).summary()
    with pytest.raises(ValueError, match="several outputs"):
        LinearRegression().fit(X, np.column_stack([y, y])).summary()
    with pytest.raises(ValueError, match="level"):
        LinearRegression().fit(X, y).summary(level=1.5)
    ridge = LinearRegression(alpha=1.0).fit(X, y)
    assert not hasattr(ridge, "covariance_") and not hasattr(ridge, "r2_")


def test_groups_ignored_unless_cluster():
    X, y, groups = _diabetes()
    a = LinearRegression(cov_type="HC1").fit(X, y, groups=groups)
    b = LinearRegression(cov_type="HC1").fit(X, y)
    np.testing.assert_array_equal(a.covariance_, b.covariance_)
    assert a.cov_type_ == "HC1"


def test_string_cluster_labels_equal_integer_codes():
    X, y, groups = _diabetes()
    a = LinearRegression(cov_type="cluster").fit(X, y, groups=groups)
    b = LinearRegression(cov_type="cluster").fit(X, y, groups=np.array([f"g{g}" for g in groups]))
    np.testing.assert_allclose(a.covariance_, b.covariance_, rtol=1e-12)


def test_summary_of_a_dataframe_uses_feature_names():
    X, y, _ = _fair()
    table = LinearRegression(cov_type="HC3").fit(X, y).summary()
    assert isinstance(table, pd.DataFrame)
    assert list(table.index) == ["intercept", *X.columns]
    assert table.index.name == "parameter"
