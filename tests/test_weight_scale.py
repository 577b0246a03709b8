"""A common factor of the sample weights does not change an unpenalised fit (issue 31,
item 10).

The maximum-likelihood (and least-squares, and class-moment) estimates are invariant
to multiplying every weight by one constant ``c``; the solvers' stopping rules were
absolute (a Newton decrement of ~1e-10 "converged" at the start), so weights all 1e-10
moved the probabilities by ~0.08 with no warning. Penalised and Bayesian models
(``alpha > 0``, priors, naive Bayes smoothing) legitimately change: the weights then
count against a prior of fixed strength, and are not tested here.
"""
import warnings

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.base import clone

import problin as pl

# Unpenalised estimators taking sample_weight, with the labels they are fitted on.
CLASSIFIERS = [pl.LogisticRegression(), pl.ProbitRegression(), pl.GaussianDiscriminantAnalysis(),
               pl.LinearDiscriminantAnalysis(), pl.QuadraticDiscriminantAnalysis(),
               pl.GaussianNB(), pl.FisherDiscriminant(), pl.LeastSquaresClassifier(),
               pl.BayesDecision(pl.LogisticRegression())]
BINARY_ONLY = (pl.ProbitRegression,)
# First-order solvers stop within their tolerance of the optimum (measured: ~1e-8 in
# probabilities from Newton's answer here), at an iteration that rounding can move by
# one: their fits with w and c w agree to their own accuracy, not to rounding.
FIRST_ORDER = [pl.LogisticRegression(solver=solver)
               for solver in ("lbfgs", "gradient")]


def _data(seed, n=60):
    """Two noisy features, binary and three-class labels (overlapping classes: the MLE
    exists), a response, and positive weights of different sizes."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2)) * [1.0, 3.0] + [0.5, -1.0]
    score = X @ [1.0, -0.3] + rng.logistic(size=n)
    binary = (score > 0).astype(int)
    three = np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))
    response = X @ [2.0, 0.5] + rng.normal(size=n)
    w = rng.uniform(0.2, 3.0, size=n)
    return X, binary, three, response, w


def _outputs(model, X):
    parts = [np.asarray(model.predict_proba(X) if hasattr(model, "predict_proba")
                        else model.predict(X))]
    parts += [np.atleast_1d(getattr(model, name)) for name in ("coef_", "intercept_")
              if hasattr(model, name)]
    return parts


def _assert_same(model, other, X, what, atol=1e-10):
    for got, want in zip(_outputs(other, X), _outputs(model, X), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=atol, err_msg=what)


@settings(max_examples=3, deadline=None)
@given(seed=st.integers(0, 2**16), log_c=st.floats(-10.0, 10.0))
@example(seed=0, log_c=-10.0)
@example(seed=1, log_c=10.0)
def test_a_common_weight_factor_leaves_unpenalised_fits_unchanged(seed, log_c):
    X, binary, three, response, w = _data(seed)
    c = 10.0**log_c
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (what the fit with w warns, the one with c w does)
        for estimator in CLASSIFIERS + FIRST_ORDER:
            y = binary if isinstance(estimator, BINARY_ONLY) else three
            model = clone(estimator).fit(X, y, sample_weight=w)
            scaled = clone(estimator).fit(X, y, sample_weight=c * w)
            _assert_same(model, scaled, X, f"{estimator!r}, weights x {c:g}",
                         1e-6 if estimator in FIRST_ORDER else 1e-10)
        model = pl.LinearRegression().fit(X, response, sample_weight=w)
        scaled = pl.LinearRegression().fit(X, response, sample_weight=c * w)
        _assert_same(model, scaled, X, f"LinearRegression, weights x {c:g}")
