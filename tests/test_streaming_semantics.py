"""The streaming semantics of every ``partial_fit`` in problin, as docs/streaming.md states them.

* Sufficient-statistics models (the linear regressors, the Gaussian discriminants,
  the three naive Bayes): any chunking of the rows, fed to ``partial_fit`` in turn,
  equals one ``fit`` on all rows to 1e-10 relative, with or without sample weights;
  ``fit`` after ``partial_fit`` starts over.
* ``LMSRegressor``: each call is one LMS epoch over its batch, with the step measured
  on the first batch and the learning-rate clock ``t_`` counting calls, so a loop over
  chunks equals one explicit sequential pass with that schedule (not one ``fit``).
Hypothesis draws the chunkings.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from problin import (
    BayesianLinearRegression,
    BernoulliNB,
    GaussianDiscriminantAnalysis,
    GaussianNB,
    LinearDiscriminantAnalysis,
    LinearRegression,
    LMSRegressor,
    MultinomialNB,
    QuadraticDiscriminantAnalysis,
)

N = 90
EXACT = [LinearRegression(), LinearRegression(alpha=2.0, fit_intercept=False),
         BayesianLinearRegression(), BayesianLinearRegression(alpha=0.5, beta=3.0),
         LinearDiscriminantAnalysis(), QuadraticDiscriminantAnalysis(), GaussianNB(),
         GaussianDiscriminantAnalysis(covariance_type="diag"),
         GaussianDiscriminantAnalysis(covariance_type="spherical"),
         BernoulliNB(binarize=1.0), MultinomialNB(alpha=0.5)]
FITTED = ["coef_", "intercept_", "alpha_", "beta_", "posterior_cov_", "log_evidence_",
          "means_", "covariances_", "priors_", "class_count_", "var_", "epsilon_",
          "feature_count_", "feature_log_prob_", "class_log_prior_"]


def make_data(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 3)) * [1.0, 2.0, 0.5] + [5.0, -1.0, 0.0]
    y = X @ [0.5, -1.0, 2.0] + 1.0 + rng.normal(scale=0.2, size=N)
    labels = np.arange(N) % 3  # every class well represented overall
    X[labels == 1] += 1.5
    counts = rng.poisson(np.exp(0.3 * np.abs(X))).astype(np.float64)
    return X, y, labels, counts


def inputs(model, data):
    X, y, labels, counts = data
    if isinstance(model, (BernoulliNB, MultinomialNB)):
        return counts, labels
    return (X, labels) if hasattr(model, "classes_") or hasattr(model, "priors") else (X, y)


def chunkings():
    return st.lists(st.integers(1, N - 1), max_size=6, unique=True).map(
        lambda cuts: [0] + sorted(cuts) + [N])


def stream(model, X, t, cuts, w=None):
    classifier = hasattr(model, "priors")
    with warnings.catch_warnings():  # a small chunk may hold a degenerate class
        warnings.simplefilter("ignore")
        for i, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:])):
            kwargs = {} if w is None else {"sample_weight": w[lo:hi]}
            if classifier and i == 0:
                kwargs["classes"] = np.unique(t)
            model.partial_fit(X[lo:hi], t[lo:hi], **kwargs)
    return model


def assert_same_fit(a, b):
    for name in (n for n in FITTED if hasattr(a, n)):
        want, got = (np.asarray(getattr(m, name), dtype=np.float64) for m in (a, b))
        scale = max(float(np.max(np.abs(want), initial=0.0)), 1e-300)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10 * scale, err_msg=name)
    if hasattr(a, "classes_"):
        np.testing.assert_array_equal(b.classes_, a.classes_)


@pytest.mark.parametrize("model", EXACT, ids=repr)
@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31), cuts=chunkings(), weighted=st.booleans())
def test_a_loop_of_partial_fit_equals_one_fit(model, seed, cuts, weighted):
    X, t = inputs(model, make_data(seed))
    w = np.random.default_rng(seed + 1).uniform(0.2, 3.0, N) if weighted else None
    a = clone(model).fit(X, t, sample_weight=w)
    b = stream(clone(model), X, t, cuts, w)
    assert_same_fit(a, b)
    assert_same_fit(a, clone(model).partial_fit(X, t, sample_weight=w))  # one call, all rows


@pytest.mark.parametrize("model", EXACT, ids=repr)
def test_fit_after_partial_fit_starts_over(model):
    X, t = inputs(model, make_data(7))
    b = stream(clone(model), X, t, [0, 30, N])
    b.fit(X[:60], t[:60])
    assert_same_fit(clone(model).fit(X[:60], t[:60]), b)


def reference_lms(X, t, cuts, eta0, learning_rate, power_t, shuffle, seed):
    """LMS written out: call ``i`` standardises the columns by the means and standard
    deviations of all rows seen so far, its own batch included (the model's function
    carried over unchanged: raw weights kept, standardised ones re-expressed), the step
    is ``eta0 / (1 + D)`` (the mean ``|phi|^2`` of the standardised features); call ``i``
    (from 1) uses ``eta / i^power_t`` (invscaling) and visits its rows in the ``i``-th
    permutation of ``RandomState(seed)`` (shuffle) or in order. Returns raw ``(w, b)``."""
    rng = np.random.RandomState(seed)
    eta = eta0 / (X.shape[1] + 1.0)
    w, b = np.zeros(X.shape[1]), 0.0
    for i, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:]), start=1):
        seen = X[cuts[0]:hi]
        mean, std = seen.mean(axis=0), seen.std(axis=0)
        std = np.where(std > 0, std, 1.0)  # a column constant so far: scale 1
        v, bz = w * std, b + w @ mean
        step = eta / i ** power_t if learning_rate == "invscaling" else eta
        order = rng.permutation(hi - lo) if shuffle else np.arange(hi - lo)
        for n in lo + order:
            z = (X[n] - mean) / std
            err = step * (t[n] - v @ z - bz)
            v, bz = v + err * z, bz + err
        w = v / std
        b = bz - w @ mean
    return w, b


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), cuts=chunkings(), shuffle=st.booleans(),
       learning_rate=st.sampled_from(["invscaling", "constant"]),
       power_t=st.sampled_from([0.5, 1.0]))
def test_lms_partial_fit_is_one_epoch_per_call_on_a_per_call_schedule(seed, cuts, shuffle,
                                                                        learning_rate, power_t):
    X, y, _, _ = make_data(seed)
    params = dict(eta0=0.3, learning_rate=learning_rate, power_t=power_t, shuffle=shuffle,
                  random_state=seed)
    model = LMSRegressor(**params)
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        model.partial_fit(X[lo:hi], y[lo:hi])
    assert model.t_ == len(cuts) - 1 and model.n_iter_ == 1
    w, b = reference_lms(X, y, cuts, 0.3, learning_rate, power_t, shuffle, seed)
    np.testing.assert_allclose(model.coef_, w, rtol=1e-10, atol=1e-10 * np.max(np.abs(w)))
    np.testing.assert_allclose(model.intercept_, b, rtol=1e-10, atol=1e-10 * np.max(np.abs(w)))
    # One call on all rows is one epoch of fit, with the same permutation.
    one = LMSRegressor(**params).partial_fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = LMSRegressor(max_iter=1, **params).fit(X, y)
    np.testing.assert_array_equal(one.coef_, full.coef_)
    assert one.intercept_ == full.intercept_


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_lms_stream_of_single_rows_in_large_units_settles(fit_intercept):
    """Online LMS one row at a time, columns at 50 +- 100: the first batch's columns are
    all constant, and the standardisation fixed there (scale 1, raw units) made the
    weights grow to ~1e122. The scales now follow the rows seen; the stream lands where
    it does in unit-scale columns, near the least-squares fit."""
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(3000, 3))
    y = Z @ [1.0, 2.0, 3.0] + 0.5 + 0.1 * rng.normal(size=3000)
    models = []
    for X in (Z, Z * 100.0 + (50.0 if fit_intercept else 0.0)):  # (no shift without b)
        model = LMSRegressor(learning_rate="constant", eta0=0.05, random_state=0,
                             fit_intercept=fit_intercept)
        for i in range(X.shape[0]):
            model.partial_fit(X[i:i + 1], y[i:i + 1])
        models.append(model)
    unit, large = models
    np.testing.assert_allclose(large.coef_ * 100.0, unit.coef_, rtol=0.05)
    if fit_intercept:
        np.testing.assert_allclose(unit.coef_, [1.0, 2.0, 3.0], rtol=0.1)


def test_lms_fit_after_partial_fit_starts_over():
    X, y, _, _ = make_data(3)
    model = LMSRegressor(random_state=0).partial_fit(X[:40], y[:40]).partial_fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
        fresh = LMSRegressor(random_state=0).fit(X, y)
    np.testing.assert_array_equal(model.coef_, fresh.coef_)
    assert model.t_ == fresh.t_ == fresh.n_iter_
