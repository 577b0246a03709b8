"""fit never makes an N x D temporary: peak extra memory stays near the size of X."""
import tracemalloc
import warnings

import numpy as np
import pytest

from problin import LogisticRegression, ProbitRegression


@pytest.mark.parametrize("model", [LogisticRegression(), ProbitRegression(),
                                   LogisticRegression(alpha=1.0, solver="gradient")])
def test_fit_peak_memory_is_bounded_by_the_data_size(model):
    rng = np.random.default_rng(0)
    n, d = 200_000, 50
    X = rng.standard_normal((n, d))
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-X[:, :5].sum(axis=1) * 0.3))).astype(np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.set_params(max_iter=50 if model.solver == "gradient" else None)
        tracemalloc.start()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        model.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
    # The issue allows 1.3 x; we hold the line at 0.5 x to catch regressions early.
    assert peak <= 0.5 * X.nbytes, f"peak extra memory {peak / 1e6:.1f} MB for X of {X.nbytes / 1e6:.1f} MB"
    print(f"{type(model).__name__}: peak extra {peak / X.nbytes:.3f} x size of X")
