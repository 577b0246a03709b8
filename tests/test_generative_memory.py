"""Generative fits allocate what their model holds, not K x D x D for every kind (issue 31, item 12).

"The memory of the fitted parameters" is everything ``fit`` leaves on the
estimator -- its parameters, the factors it predicts with and the sufficient
statistics ``partial_fit`` continues from -- measured as the size of the
pickled estimator (numpy arrays pickle as their raw bytes). The peak that
tracemalloc sees during ``fit`` (numpy reports its allocations to it), above
the input already in memory, stays within twice that plus one block of rows
(``BLOCK``: the statistics copy 4 MiB of X at a time to group its rows by class).
"""
import pickle
import tracemalloc
import warnings

import numpy as np
import pytest

from problin import GaussianNB, LinearDiscriminantAnalysis
from problin._core.moments.class_stats import empty_stats


BLOCK = 4 << 20


def _peak_and_state(model, X, y):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        model.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return peak, len(pickle.dumps(model))


def test_gaussian_nb_wide_fit_peak_within_twice_its_parameters():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 20_000))
    y = np.arange(100) % 2
    peak, state = _peak_and_state(GaussianNB(), X, y)
    # Before: 9.6 GB (three 20,000^2 scatters) for a model of ~3 MB.
    assert peak <= 2 * state + BLOCK, f"peak {peak / 1e6:.1f} MB, fitted model {state / 1e6:.1f} MB"


def test_lda_many_classes_fit_peak_within_twice_its_parameters():
    rng = np.random.default_rng(1)
    n_classes, d = 300, 1_000
    y = np.arange(1_500) % n_classes  # 5 rows a class: 1,200 within-class dof > 1,000 features
    X = rng.standard_normal((y.size, d)) + 3.0 * rng.standard_normal((n_classes, d))[y]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # well-posed: no singular covariance
        peak, state = _peak_and_state(LinearDiscriminantAnalysis(), X, y)
    # Before: 2.4 GB (300 per-class 1,000^2 scatters) for a model of ~50 MB.
    assert peak <= 2 * state + BLOCK, f"peak {peak / 1e6:.1f} MB, fitted model {state / 1e6:.1f} MB"


@pytest.mark.parametrize("kind, shape", [("diag", None), ("tied", (50, 50)),
                                         ("full", (3, 50, 50))])
def test_empty_stats_allocates_only_its_own_kind(kind, shape):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        stats = empty_stats(3, 50, kind)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert (None if stats.scatter is None else stats.scatter.shape) == shape
    own = 4 * 3 * 50 * 8 + (0 if shape is None else 8 * int(np.prod(shape)))
    assert peak <= own + 4096
