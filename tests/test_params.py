"""Parameter validation remembered per distinct set of values (problin._params)."""
import numpy as np
import pytest

from problin import GaussianNB, LogisticRegression
from problin._params import _PASSED, validate_params


def _data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    return X, (X[:, 0] + rng.standard_normal(60) > 0).astype(int)


def test_invalid_values_raise_on_every_fit_after_valid_ones():
    X, y = _data()
    model = LogisticRegression().fit(X, y)  # these values pass and are remembered
    model.set_params(tol=-1.0)
    for _ in range(2):  # never remembered: raises each time
        with pytest.raises(ValueError, match="tol"):
            model.fit(X, y)
    model.set_params(tol=1e-8).fit(X, y)


def test_values_equal_but_of_another_type_are_checked():
    # 1 == 1.0, but a float is not a valid max_iter while 1 is.
    validate_params(LogisticRegression(max_iter=1))
    with pytest.raises(ValueError, match="max_iter"):
        validate_params(LogisticRegression(max_iter=1.0))


def test_unhashable_values_are_checked_every_time():
    est = GaussianNB(priors=[0.5, 0.5])
    before = len(_PASSED)
    validate_params(est)
    assert len(_PASSED) == before
    est.priors = "not a list"
    with pytest.raises(ValueError, match="priors"):
        validate_params(est)
