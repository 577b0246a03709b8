"""Least squares on Dask as accurate as QR and independent of the chunking (issue 13).

Every chunk is reduced to the R factor of its centred rows and the factors merge by
re-factoring the stacked factors, on a two-process ``dask.distributed`` LocalCluster:
the fits equal the numpy fit to 1e-10 relative whatever the chunk sizes, the
evidence iterations of ``BayesianLinearRegression`` included.
"""
import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
pytest.importorskip("dask.distributed")

from problin import (
    BayesianLinearRegression,
    LeastSquaresClassifier,
    LinearRegression,
    ProblinWarning,
)

X_POLY = np.column_stack([np.arange(21.0) ** p for p in range(1, 6)])  # x, ..., x^5


def random_chunks(n, seed, most=10):
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.choice(np.arange(1, n), size=rng.integers(1, most), replace=False))
    return tuple(int(c) for c in np.diff(np.concatenate([[0], cuts, [n]])))


def dask_rows(a, chunks):
    return da.from_array(a, chunks=(chunks,) + a.shape[1:])


def digits(got, exact):
    rel = np.abs(np.asarray(got) - exact) / np.abs(exact)
    return float(-np.log10(max(float(np.max(rel)), 1e-17)))


@pytest.mark.parametrize("coefs", [np.ones(6), 0.1 ** np.arange(6)], ids=["ones", "tenths"])
def test_polynomial_on_dask_has_nine_digits(client, coefs):
    """Chunks of one or two rows are rank-deficient on their own; merged, nothing is
    lost and nothing is warned about."""
    y = coefs[0] + X_POLY @ coefs[1:]
    for chunks in [(21,), (7, 7, 7), (2,) * 10 + (1,)] + [random_chunks(21, s) for s in range(4)]:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ProblinWarning)
            model = LinearRegression().fit(dask_rows(X_POLY, chunks), dask_rows(y, chunks))
        assert digits(np.r_[model.intercept_, model.coef_], coefs) >= 9.0, chunks


@pytest.fixture(scope="module")
def ill_conditioned():
    """Degree-5 polynomial on 400 points of [0, 20] (condition ~1e4 once centred and
    equilibrated, ~1e7 in the raw units the prior sees) plus noise: the normal equations
    gave answers that moved by 5e-8 with the chunking."""
    rng = np.random.default_rng(5)
    x = np.linspace(0.0, 20.0, 400)
    X = np.column_stack([x ** p for p in range(1, 6)])
    t = X @ (0.1 ** np.arange(1, 6)) + 1.0 + 0.1 * rng.normal(size=400)
    return X, t


@pytest.mark.parametrize("model", [BayesianLinearRegression(), LinearRegression(),
                                   LinearRegression(alpha=1e-3),
                                   BayesianLinearRegression(alpha=0.5, beta=80.0)], ids=repr)
def test_dask_equals_numpy_whatever_the_chunks(client, ill_conditioned, model):
    from sklearn.base import clone
    X, t = ill_conditioned
    want = clone(model).fit(X, t)
    for seed in range(5):
        chunks = random_chunks(len(t), seed)
        got = clone(model).fit(dask_rows(X, chunks), dask_rows(t, chunks))
        for name in ("coef_", "intercept_", "alpha_", "beta_", "gamma_", "log_evidence_",
                     "noise_precision_", "posterior_cov_"):
            if hasattr(want, name):
                np.testing.assert_allclose(getattr(got, name), getattr(want, name),
                                           rtol=1e-10, err_msg=f"{name} {chunks}")
        np.testing.assert_allclose(got.predict(X), want.predict(X), rtol=1e-10)
        if hasattr(want, "alpha_"):
            std = want.predict(X, return_std=True)[1]
            np.testing.assert_allclose(got.predict(X, return_std=True)[1], std, rtol=1e-10)


def test_least_squares_classifier_on_dask_equals_numpy(client, ill_conditioned):
    X, t = ill_conditioned
    labels = np.digitize(t - X[:, 0] * 0.1, np.quantile(t - X[:, 0] * 0.1, [0.3, 0.7]))
    want = LeastSquaresClassifier().fit(X, labels)
    for seed in range(3):
        chunks = random_chunks(len(t), seed)
        got = LeastSquaresClassifier().fit(dask_rows(X, chunks), dask_rows(labels, chunks))
        np.testing.assert_allclose(got.coef_, want.coef_, rtol=1e-10)
        np.testing.assert_allclose(got.intercept_, want.intercept_, rtol=1e-10, atol=1e-12)
