"""partial_fit over chunks equals fit for data far from zero, sorted along the rows.

Data at 1e8 that drift by about their own spread along the rows: every chunk
of a stream has other class means than the next, so merging them is first
order in differences of means of order 1 at 1e8. Fit and 30 partial_fit calls
give the same parameters and probabilities to 1e-10.
"""
import numpy as np
import pytest
from numpy.testing import assert_allclose

from problin import (
    GaussianNB,
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
)


def _data(seed=0, n=3000, d=4, k=3):
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(-1.0, 1.0, n))
    y = rng.integers(0, k, n)
    centres = 0.5 * rng.normal(size=(k, d))  # classes overlap: probabilities away from 0/1
    X = 1e8 + 0.5 * t[:, None] * rng.normal(size=d) + centres[y] + 0.4 * rng.normal(size=(n, d))
    return X, y


def _params(model):
    names = ["priors_", "class_count_", "means_", "covariances_", "coef_", "intercept_",
             "var_", "epsilon_"]
    return {name: np.asarray(getattr(model, name)) for name in names if hasattr(model, name)}


@pytest.mark.parametrize("make", [LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis,
                                  GaussianNB])
@pytest.mark.parametrize("weighted", [False, True])
def test_partial_fit_over_30_sorted_chunks_at_1e8_equals_fit(make, weighted):
    X, y = _data()
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y)) if weighted else None
    full = make().fit(X, y, sample_weight=w)
    stream = make()
    for idx in np.array_split(np.arange(len(y)), 30):
        stream.partial_fit(X[idx], y[idx], classes=[0, 1, 2],
                           sample_weight=None if w is None else w[idx])
    got, want = _params(stream), _params(full)
    assert got.keys() == want.keys()
    for name in want:
        if name == "means_":  # to 1e-10 of the spread, not of 1e8
            assert np.max(np.abs(got[name] - want[name])) <= 1e-10, name
        else:
            assert_allclose(got[name], want[name], rtol=1e-10, atol=1e-10 * np.abs(want[name]).max(), err_msg=name)
    P = full.predict_proba(X)
    assert 0.05 < np.median(P.max(axis=1)) < 0.95  # probabilities that carry information
    assert_allclose(stream.predict_proba(X), P, rtol=1e-10, atol=1e-12)
