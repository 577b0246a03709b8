"""Bad input is a clear error; ill-posed input is a warning and a usable model."""
import warnings

import numpy as np
import pytest

from problin import (
    BayesianLinearRegression,
    CollinearityWarning,
    LinearRegression,
    LMSRegressor,
)

MODELS = [LinearRegression(), LinearRegression(alpha=1.0, q=1.0), LinearRegression(alpha=1.0, q=0.7),
          LMSRegressor(max_iter=5), BayesianLinearRegression()]


def data(n=30, d=3):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    return X, X @ np.arange(1.0, d + 1) + 0.1 * rng.normal(size=n)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_input_is_rejected(model, bad):
    X, t = data()
    Xb, tb = X.copy(), t.copy()
    Xb[3, 1], tb[5] = bad, bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        model.fit(Xb, t)
    with pytest.raises(ValueError, match="NaN|infinity"):
        model.fit(X, tb)


@pytest.mark.parametrize("model", MODELS)
def test_one_dimensional_X_is_rejected(model):
    X, t = data()
    with pytest.raises(ValueError, match="2D array"):
        model.fit(X[:, 0], t)


@pytest.mark.parametrize("params, match", [({"q": 0.0}, "q"), ({"q": -1.0}, "q"),
                                           ({"alpha": -1.0}, "alpha")])
def test_bad_regulariser_is_rejected(params, match):
    X, t = data()
    with pytest.raises(ValueError, match=match):
        LinearRegression(**params).fit(X, t)


@pytest.mark.parametrize("params", [{"alpha": -1.0}, {"beta": 0.0}])
def test_bad_precisions_are_rejected(params):
    X, t = data()
    with pytest.raises(ValueError, match="alpha|beta"):
        BayesianLinearRegression(**params).fit(X, t)


def test_mismatched_lengths_and_features():
    X, t = data()
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        LinearRegression().fit(X, t[:-1])
    model = LinearRegression().fit(X, t)
    with pytest.raises(ValueError, match="features"):
        model.partial_fit(X[:, :2], t)
    with pytest.raises(ValueError, match="outputs"):
        model.partial_fit(X, np.column_stack([t, t]))


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_fewer_rows_than_features_works(fit_intercept):
    rng = np.random.default_rng(2)
    X, t = rng.normal(size=(6, 20)), rng.normal(size=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CollinearityWarning)
        ls = LinearRegression(fit_intercept=fit_intercept).fit(X, t)
    np.testing.assert_allclose(ls.predict(X), t, atol=1e-8)
    bayes = BayesianLinearRegression(fit_intercept=fit_intercept).fit(X, t)
    mean, std = bayes.predict(rng.normal(size=(4, 20)), return_std=True)
    assert np.all(np.isfinite(mean)) and np.all(std > 0) and np.isfinite(bayes.log_evidence_)
    fixed = BayesianLinearRegression(alpha=1.0, beta=1.0, fit_intercept=False).fit(X, t)
    np.testing.assert_allclose(fixed.coef_, X.T @ np.linalg.solve(X @ X.T + np.eye(6), t),
                               rtol=1e-10)  # posterior mean = kernel form when N < D


def test_constant_columns_and_constant_target():
    X, t = data()
    X[:, 0] = 7.0
    with pytest.warns(CollinearityWarning, match="rank 2 < 3"):
        LinearRegression().fit(X, t)
    bayes = BayesianLinearRegression().fit(X, t)
    assert bayes.coef_[0] == 0.0 and np.isfinite(bayes.log_evidence_)
    flat = BayesianLinearRegression().fit(X, np.full(len(X), 2.0))
    np.testing.assert_allclose(flat.predict(X), 2.0)
    assert np.isfinite(flat.alpha_) and np.isfinite(flat.beta_)
    perfect = LinearRegression().fit(X[:, 1:], X[:, 1:] @ [1.0, 2.0])
    assert np.isfinite(perfect.noise_precision_)


@pytest.mark.parametrize("cov_type", ["nonrobust", "HC3"])
def test_a_constant_columns_row_of_the_summary_says_why_it_has_no_test(cov_type):
    """Its coefficient is held at 0 with no variance: t and p were a bare NaN; the table
    now notes it, as the GLM tables do, and the other rows have no note."""
    X, t = data()
    X[:, 1] = 7.0
    with pytest.warns(CollinearityWarning):
        table = LinearRegression(cov_type=cov_type).fit(X, t).summary()
    assert table["note"].tolist() == ["", "", "not identified (constant column, held at 0)", ""]
    assert table.loc["x1", "coef"] == 0.0
    assert table.loc["x1", ["std_err", "t", "p_value", "ci_low", "ci_high"]].isna().all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "note" not in LinearRegression().fit(*data()).summary()


def test_robust_covariances_without_degrees_of_freedom_fail_clearly():
    """HC1 and cluster divide by n - k, and a cluster covariance needs two clusters:
    a clear error, not infinite or NaN standard errors (with numpy's warnings)."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 2)), rng.normal(size=20)
    with pytest.raises(ValueError, match="HC1.*more observations than estimated"):
        LinearRegression(cov_type="HC1").fit(X[:3], y[:3])
    with pytest.raises(ValueError, match="at least two clusters"):
        LinearRegression(cov_type="cluster").fit(X, y, groups=np.ones(20))
    fitted = LinearRegression(cov_type="HC1").fit(X[:4], y[:4])  # one degree of freedom
    assert np.all(np.isfinite(fitted.summary()["std_err"]))


def test_far_rows_give_limits_without_numpy_warnings():
    """R^2 at rows far from the data is -inf (its limit: the squared residuals overflow)
    and a Gaussian basis of tiny width gives 0 far from its centres: both without numpy's
    overflow warnings."""
    from problin import GaussianBasis
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3))
    y = X @ [1.0, 2.0, 3.0] + rng.normal(size=40)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert LinearRegression().fit(X, y).score(X * 1e200, y) == -np.inf
        Phi = GaussianBasis(width=1e-300).fit(X).transform(X + 1.0)
    assert np.all(np.isfinite(Phi)) and np.all(Phi == 0.0)


def test_targets_too_small_to_square_are_refused():
    """Targets all below 1e-144 have squares that underflow: residual sums and standard
    errors would come out 0 (t = inf, p = 0). A clear error instead; 1e-100 is fine and
    scales exactly."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = X @ [1.0, 2.0, 3.0] + rng.normal(size=40)
    with pytest.raises(ValueError, match="y holds only values too small.*Rescale y"):
        LinearRegression().fit(X, y * 1e-200)
    with pytest.raises(ValueError, match="too small"):
        BayesianLinearRegression().fit(X, y * 1e-200)
    small, unit = LinearRegression().fit(X, y * 2.0 ** -333), LinearRegression().fit(X, y)
    np.testing.assert_allclose(small.summary()["t"], unit.summary()["t"], rtol=1e-12)
    assert LinearRegression().fit(X, np.zeros(40)).coef_.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("model", MODELS + [LinearRegression(cov_type="HC1")], ids=repr)
def test_columns_too_small_for_float64_are_a_clear_error(model):
    """A column at 1e-156 among unit ones: its variance (~1e310) overflowed, so the summary
    gave std_err inf and t = 0 (p = 1), and HC1 raised scipy's raw "array must not contain
    infs or NaNs"; at 1e-170 its scatter underflowed and the column was dropped silently
    (LMS too). Now the error the GLMs and generative models give; at 1e-140 the fit is
    the unit fit rescaled."""
    from sklearn.base import clone
    X, y = data(60)
    for scale in (1e-156, 1e-170, 1e-320):
        with pytest.raises(ValueError, match=r"column \[2\] of X holds only values too small"):
            clone(model).fit(X * [1.0, 1.0, scale], y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (LMS's few epochs)
        small = clone(model).fit(X * [1.0, 1.0, 1e-140], y)
        unit = clone(model).fit(X, y)
    if isinstance(model, LinearRegression) and model.alpha == 0:
        np.testing.assert_allclose(small.coef_ * [1.0, 1.0, 1e-140], unit.coef_, rtol=1e-10)
        np.testing.assert_allclose(small.summary()["t"], unit.summary()["t"], rtol=1e-8)
    assert np.all(np.isfinite(small.coef_))


def test_lms_stream_refusing_a_first_batch_keeps_no_state():
    X, y = data(60)
    model = LMSRegressor(random_state=0)
    with pytest.raises(ValueError, match="too small"):
        model.partial_fit(X * [1.0, 1.0, 1e-170], y)
    assert not hasattr(model, "t_") and not hasattr(model, "_W")
    model.partial_fit(X, y)
    reference = LMSRegressor(random_state=0).partial_fit(X, y)
    np.testing.assert_array_equal(model.coef_, reference.coef_)


def test_a_stream_of_batches_is_held_to_the_total_weight_bound():
    """Each batch's weights are checked, and so is the stream's total: batches each within
    the bound were accepted however much they summed to, where one fit on the same rows
    is refused."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 2)), rng.normal(size=40)
    model = LinearRegression()
    model.partial_fit(X[:10], y[:10], sample_weight=np.full(10, 9e17))
    with pytest.raises(ValueError, match="sample_weight is too large"):  # 9e18 + 9e18
        model.partial_fit(X[10:20], y[10:20], sample_weight=np.full(10, 9e17))
    assert model.moments_.weight == 9e18  # the refused batch left the model as it was
