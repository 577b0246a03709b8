"""The objective contract's row questions on rows in memory: counted by one call on them
all, nothing to watch, separation found from the rows themselves (not by certificates)."""
import numpy as np
import pytest

from problin._core.model.design import Design
from problin._core.model.families import BernoulliLogit
from problin._core.model.objective import GLMObjective


def test_row_questions_in_memory():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 2))
    y = (X[:, 0] > 0).astype(np.float64)
    obj = GLMObjective(Design(X, True), BernoulliLogit(), y)
    eta = obj.linear_predictor(np.array([0.0, 3.0, 0.0]))
    above = lambda o, e: int(np.count_nonzero(e > 1.0))  # noqa: E731
    assert obj.count_rows(above, eta) == int(np.count_nonzero(3.0 * X[:, 0] > 1.0))
    assert obj.watch_rows(above) is None
    with pytest.raises(NotImplementedError, match="rows themselves"):
        obj.separation(None)
