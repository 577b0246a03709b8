"""LinearRegression: parity with numpy/scikit-learn, q-norm solvers, partial_fit."""
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.linear_model import Lasso, Ridge
from sklearn.linear_model import LinearRegression as SkLinearRegression

from problin import CollinearityWarning, LinearRegression
from problin._core.solvers.penalized import lq_objective


def data(n=200, d=5, k=None, seed=0, offset=3.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) + offset
    W = rng.normal(size=(d,) if k is None else (d, k))
    T = X @ W + 1.5 + 0.3 * rng.normal(size=(n,) if k is None else (n, k))
    return X, T


@pytest.mark.parametrize("k", [None, 3])
def test_no_intercept_equals_numpy_lstsq(k):
    X, T = data(k=k)
    model = LinearRegression(fit_intercept=False).fit(X, T)
    W = np.linalg.lstsq(X, T, rcond=None)[0]
    np.testing.assert_allclose(model.coef_, W.T, rtol=0, atol=1e-8)
    assert model.coef_.shape == W.T.shape
    resid = T - X @ W
    np.testing.assert_allclose(model.noise_precision_, resid.size / np.sum(resid ** 2), rtol=1e-8)


@pytest.mark.parametrize("k", [None, 2])
def test_intercept_equals_sklearn(k):
    X, T = data(k=k, offset=100.0)  # large means: centring must not cancel digits
    model, ref = LinearRegression().fit(X, T), SkLinearRegression().fit(X, T)
    np.testing.assert_allclose(model.coef_, ref.coef_, atol=1e-8)
    np.testing.assert_allclose(model.intercept_, ref.intercept_, atol=1e-8 * 100 * 5)
    np.testing.assert_allclose(model.predict(X), ref.predict(X), atol=1e-8)


def test_rank_deficient_gives_the_minimum_norm_solution_with_a_warning():
    X, t = data(d=4)
    X = np.column_stack([X, 2.0 * X[:, 0] - X[:, 1], np.full(len(X), 3.0)])
    with pytest.warns(CollinearityWarning, match="minimum-norm"):
        model = LinearRegression(fit_intercept=False).fit(X, t)
    np.testing.assert_allclose(model.coef_, np.linalg.lstsq(X, t, rcond=None)[0], atol=1e-8)
    with pytest.warns(CollinearityWarning):
        model = LinearRegression().fit(X, t)
    np.testing.assert_allclose(model.coef_, SkLinearRegression().fit(X, t).coef_, atol=1e-8)
    assert model.rank_ == 4


def test_fewer_rows_than_features_is_minimum_norm():
    rng = np.random.default_rng(1)
    X, t = rng.normal(size=(5, 12)), rng.normal(size=5)
    with pytest.warns(CollinearityWarning):
        model = LinearRegression(fit_intercept=False).fit(X, t)
    np.testing.assert_allclose(model.coef_, np.linalg.pinv(X) @ t, atol=1e-8)
    np.testing.assert_allclose(model.predict(X), t, atol=1e-8)  # interpolates
    assert np.isfinite(model.noise_precision_)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("k", [None, 2])
def test_ridge_equals_sklearn(fit_intercept, k):
    X, T = data(k=k)
    w = np.random.default_rng(3).uniform(0, 3, size=len(X))
    model = LinearRegression(alpha=7.0, fit_intercept=fit_intercept).fit(X, T, sample_weight=w)
    ref = Ridge(alpha=7.0, fit_intercept=fit_intercept, solver="cholesky").fit(X, T,
                                                                             sample_weight=w)
    np.testing.assert_allclose(model.coef_, ref.coef_, atol=1e-8)
    np.testing.assert_allclose(model.intercept_, ref.intercept_, atol=1e-8)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("alpha", [5.0, 100.0, 1000.0])
def test_lasso_equals_sklearn_with_a_equal_alpha_over_2n(alpha, fit_intercept):
    X, t = data(n=150, d=8, seed=2, offset=0.5)
    model = LinearRegression(alpha=alpha, q=1.0, fit_intercept=fit_intercept).fit(X, t)
    ref = Lasso(alpha=alpha / (2 * len(X)), fit_intercept=fit_intercept, tol=1e-14,
                max_iter=1_000_000).fit(X, t)
    np.testing.assert_allclose(model.coef_, ref.coef_, atol=1e-6)
    np.testing.assert_allclose(model.intercept_, ref.intercept_, atol=1e-6)
    assert np.any(model.coef_ == 0.0) or alpha == 5.0  # exact zeros, not 1e-17


@pytest.mark.parametrize("q", [1.5, 3.0, 4.0])
def test_general_q_reaches_the_minimum_of_the_convex_objective(q):
    X, t = data(n=100, d=4, seed=4, offset=0.0)
    model = LinearRegression(alpha=50.0, q=q, fit_intercept=False).fit(X, t)
    G, c = X.T @ X, X.T @ t
    f = lambda w: lq_objective(G, c, w, 50.0, q)  # noqa: E731
    best = minimize(f, np.zeros(4), method="Nelder-Mead",
                    options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 40000}).x
    assert f(model.coef_) <= f(best) + 1e-9
    np.testing.assert_allclose(model.coef_, best, atol=1e-5)


def test_q_below_one_decreases_the_objective_from_the_ridge_start():
    X, t = data(n=100, d=6, seed=5, offset=0.0)
    ridge = LinearRegression(alpha=40.0, fit_intercept=False).fit(X, t)
    model = LinearRegression(alpha=40.0, q=0.5, fit_intercept=False).fit(X, t)
    G, c = X.T @ X, X.T @ t
    assert lq_objective(G, c, model.coef_, 40.0, 0.5) < lq_objective(G, c, ridge.coef_, 40.0, 0.5)
    grad = G @ model.coef_ - c  # stationary in the non-zero coordinates
    nz = np.abs(model.coef_) > 1e-6
    pen = 0.25 * 40.0 * np.sign(model.coef_[nz]) * np.abs(model.coef_[nz]) ** -0.5
    np.testing.assert_allclose(grad[nz] + pen, 0.0, atol=1e-6)


@pytest.mark.parametrize("params", [{}, {"alpha": 3.0}, {"alpha": 30.0, "q": 1.0},
                                    {"fit_intercept": False}])
def test_partial_fit_in_chunks_equals_fit(params):
    X, T = data(n=301, k=2, offset=50.0)
    whole = LinearRegression(**params).fit(X, T)
    chunked = LinearRegression(**params)
    for rows in np.array_split(np.arange(len(X)), 5):
        chunked.partial_fit(X[rows], T[rows])
    np.testing.assert_allclose(chunked.coef_, whole.coef_, rtol=0, atol=1e-10)
    np.testing.assert_allclose(chunked.intercept_, whole.intercept_, rtol=0, atol=1e-10)
    assert chunked.noise_precision_ == pytest.approx(whole.noise_precision_, rel=1e-10)


def test_float32_input_and_multithreaded_blocks_agree():
    X, t = data(n=60_000, d=3, seed=6)
    model = LinearRegression().fit(X, t)
    ref = SkLinearRegression().fit(X, t)
    np.testing.assert_allclose(model.coef_, ref.coef_, atol=1e-8)
    m32 = LinearRegression().fit(X.astype(np.float32), t)
    np.testing.assert_allclose(m32.coef_, ref.coef_, atol=1e-4)


def test_constant_column_gets_zero_weight():
    X, t = data(d=3)
    X[:, 1] = 4.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CollinearityWarning)
        for params in ({}, {"alpha": 10.0, "q": 1.0}, {"alpha": 1.0, "q": 1.5}):
            model = LinearRegression(**params).fit(X, t)
            assert model.coef_[1] == pytest.approx(0.0, abs=1e-12)
            assert np.all(np.isfinite(model.predict(X)))


@pytest.mark.parametrize("offset", [0.0, 1e4])  # in-place and shifted kernels
def test_fit_reads_X_in_place_with_little_extra_memory(offset):
    import tracemalloc

    from problin import BayesianLinearRegression
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200_000, 20)) + offset
    t = X[:, :3].sum(axis=1) + rng.standard_normal(200_000)
    for model in (LinearRegression(), LinearRegression(alpha=1.0), BayesianLinearRegression()):
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        model.fit(X, t)
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        assert peak <= 0.3 * X.nbytes, f"{model}: peak extra {peak / X.nbytes:.3f} x X"
    ref = SkLinearRegression().fit(X, t)
    np.testing.assert_allclose(LinearRegression().fit(X, t).coef_, ref.coef_, atol=1e-8)


def test_nan_or_inf_far_into_X_is_found_by_the_statistics_pass():
    X, t = data(n=100_000, d=4)
    X[87_654, 2] = np.inf
    with pytest.raises(ValueError, match="NaN or infinity"):
        LinearRegression().fit(X, t)
    X[87_654, 2] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        LinearRegression().fit(X, t)
