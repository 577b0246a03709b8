"""Parity of LogisticRegression / ProbitRegression with statsmodels and scikit-learn."""
import numpy as np
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose
from sklearn.linear_model import LogisticRegression as SkLogisticRegression

from problin import LogisticRegression, ProbitRegression

REFERENCE = {LogisticRegression: sm.Logit, ProbitRegression: sm.Probit}


def _binary(y):
    y = np.asarray(y)
    return (y == np.unique(y)[1]).astype(float)


@pytest.mark.parametrize("model", [LogisticRegression, ProbitRegression])
def test_ml_coefficients_and_standard_errors_match_statsmodels(model, dataset):
    X, y = dataset
    ours = model().fit(X, y)
    ref = REFERENCE[model](_binary(y), sm.add_constant(np.asarray(X, dtype=float))).fit(
        method="newton", tol=1e-14, maxiter=100, disp=0)
    theta = np.concatenate([ours.intercept_, ours.coef_.ravel()])
    assert ours.converged_
    assert_allclose(theta, ref.params, rtol=1e-6, atol=1e-10)
    table = ours.summary()
    assert_allclose(table["std_err"], ref.bse, rtol=1e-6)
    assert_allclose(table["z"], ref.tvalues, rtol=1e-6)
    assert_allclose(table["p_value"], ref.pvalues, rtol=1e-5, atol=1e-300)
    ci = np.asarray(ref.conf_int(0.05))
    assert_allclose(table[["ci_low", "ci_high"]].to_numpy(), ci, rtol=1e-6)
    assert_allclose(ours.covariance_, ref.cov_params(), rtol=1e-6, atol=1e-12)
    assert_allclose(table.attrs["log_likelihood"], ref.llf, rtol=1e-10)


def test_summary_uses_dataframe_feature_names():
    from tests.glm.conftest import breast_cancer_subset
    X, y = breast_cancer_subset()
    table = LogisticRegression().fit(X, y).summary(level=0.9)
    assert list(table.index) == ["intercept", *X.columns]
    assert list(table.columns) == ["coef", "std_err", "z", "p_value", "ci_low", "ci_high"]
    assert table.index.name == "parameter"
    width = table["ci_high"] - table["ci_low"]
    assert_allclose(width, 2 * 1.6448536269514722 * table["std_err"], rtol=1e-12)


def test_summary_without_intercept_and_plain_arrays():
    from tests.glm.conftest import synthetic_logit
    X, y = synthetic_logit(n=500, d=3)
    table = LogisticRegression(fit_intercept=False).fit(X, y).summary()
    assert list(table.index) == ["x0", "x1", "x2"]
    ref = sm.Logit(y, X).fit(disp=0, tol=1e-14, method="newton")
    assert_allclose(table["coef"], ref.params, rtol=1e-6)
    assert_allclose(table["std_err"], ref.bse, rtol=1e-6)


@pytest.mark.parametrize("alpha", [0.01, 1.0, 30.0])
def test_penalised_logistic_matches_sklearn(alpha, dataset):
    X, y = dataset
    X = np.asarray(X, dtype=float)
    ours = LogisticRegression(alpha=alpha).fit(X, y)
    ref = SkLogisticRegression(C=1.0 / alpha, solver="newton-cholesky", tol=1e-12,
                               max_iter=1000).fit(X, y)
    assert_allclose(ours.coef_, ref.coef_, rtol=1e-6, atol=1e-9)
    assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-6, atol=1e-9)
    assert_allclose(ours.predict_proba(X), ref.predict_proba(X), rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("model", [LogisticRegression, ProbitRegression])
@pytest.mark.parametrize("alpha", [0.0, 2.0])
def test_three_solvers_reach_the_same_optimum(model, alpha, dataset):
    X, y = dataset
    fits = {s: model(alpha=alpha, solver=s).fit(X, y) for s in ("newton", "gradient", "coordinate")}
    base = np.concatenate([fits["newton"].intercept_, fits["newton"].coef_.ravel()])
    for solver, fit in fits.items():
        assert fit.converged_, solver
        theta = np.concatenate([fit.intercept_, fit.coef_.ravel()])
        assert_allclose(theta, base, rtol=1e-5, atol=1e-8, err_msg=solver)


def test_probit_expected_information_reaches_the_same_optimum(dataset):
    X, y = dataset
    observed = ProbitRegression().fit(X, y)
    expected = ProbitRegression(information="expected").fit(X, y)
    assert_allclose(expected.coef_, observed.coef_, rtol=1e-7)
    # covariance_ is the inverse observed information in both cases
    assert_allclose(expected.covariance_, observed.covariance_, rtol=1e-6)


def test_history_is_monotone_and_ends_at_the_objective():
    from tests.glm.conftest import synthetic_logit
    X, y = synthetic_logit()
    for solver in ("newton", "gradient", "coordinate"):
        fit = LogisticRegression(alpha=0.5, solver=solver).fit(X, y)
        assert np.all(np.diff(fit.history_) <= 1e-9 * abs(fit.history_[0])), solver
        assert fit.n_iter_ >= 1


def test_predictions_consistent_with_probabilities():
    from tests.glm.conftest import breast_cancer_subset
    X, y = breast_cancer_subset()
    for model in (LogisticRegression(), ProbitRegression()):
        model.fit(X, y)
        proba = model.predict_proba(X)
        assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
        assert_allclose(np.exp(model.predict_log_proba(X)), proba, rtol=1e-12)
        assert np.array_equal(model.predict(X), model.classes_[proba.argmax(axis=1)])
        assert model.score(X, y) == pytest.approx(np.mean(model.predict(X) == y))


def test_predict_log_proba_is_exact_far_in_the_tails():
    X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
    y = np.array([0, 0, 1, 0, 1, 1])
    for model in (LogisticRegression(), ProbitRegression()):
        model.fit(X, y)
        far = np.array([[-1e4], [1e4]])
        log_p = model.predict_log_proba(far)
        assert np.all(np.isfinite(log_p))
        # the improbable class keeps a finite, very negative log-probability
        assert log_p[0, 1] < -100 and log_p[1, 0] < -100
        assert log_p[0, 0] == 0.0 or log_p[0, 0] > -1e-300


def test_float32_input_gives_the_float64_fit():
    from tests.glm.conftest import synthetic_logit
    X, y = synthetic_logit()
    X32 = X.astype(np.float32)
    a = LogisticRegression().fit(X32, y)
    b = LogisticRegression().fit(X32.astype(np.float64), y)
    assert_allclose(a.coef_, b.coef_, rtol=1e-10)


def test_sparse_input_gives_the_dense_fit():
    import scipy.sparse as sp
    from tests.glm.conftest import synthetic_logit
    X, y = synthetic_logit()
    X[np.abs(X) < 0.5] = 0.0
    for model in (LogisticRegression(alpha=0.1), ProbitRegression()):
        dense = model.fit(X, y).coef_.copy()
        sparse = model.fit(sp.csr_matrix(X), y).coef_
        # both end with a full Newton step from within 1e-4 standard errors:
        # only the order of summation differs
        assert_allclose(sparse, dense, rtol=1e-8)
        assert_allclose(model.predict_proba(sp.csr_matrix(X[:5])), model.predict_proba(X[:5]),
                        rtol=1e-12)


def test_sample_weight_matches_statsmodels_glm_freq_weights():
    from tests.glm.conftest import synthetic_logit
    X, y = synthetic_logit(n=800, d=3, seed=5)
    w = np.random.default_rng(0).integers(1, 4, size=len(y)).astype(float)
    ours = LogisticRegression().fit(X, y, sample_weight=w)
    ref = sm.GLM(y, sm.add_constant(X), family=sm.families.Binomial(),
                 freq_weights=w).fit(tol=1e-14)
    assert_allclose(np.concatenate([ours.intercept_, ours.coef_.ravel()]), ref.params, rtol=1e-7)
    assert_allclose(ours.summary()["std_err"], ref.bse, rtol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("model", [LogisticRegression, ProbitRegression])
def test_large_data_fast_path_matches_statsmodels(model):
    """n large enough for the sketched / float32 fast path: still statsmodels' answer."""
    from problin._core.solvers.newton import sketch_rows
    rng = np.random.default_rng(11)
    n, d = 170_000, 50
    assert sketch_rows(n, d + 1) is not None  # this size takes the fast path
    X = rng.standard_normal((n, d))
    eta = 0.3 + X @ rng.normal(0.0, 0.2, d)
    y = (rng.random(n) < (1 / (1 + np.exp(-eta)) if model is LogisticRegression
                          else __import__("scipy").stats.norm.cdf(eta))).astype(float)
    ours = model().fit(X, y)
    ref = REFERENCE[model](y, sm.add_constant(X)).fit(method="newton", tol=1e-14, disp=0)
    table = ours.summary()
    assert_allclose(table["coef"], ref.params, rtol=1e-6, atol=1e-9)
    assert_allclose(table["std_err"], ref.bse, rtol=1e-6)
