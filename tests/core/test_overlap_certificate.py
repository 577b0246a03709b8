"""The Newton-step certificate of overlap (no separating hyperplane) against the exact LP."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit

from problin import LogisticRegression
from problin._core.model.design import Design
from problin._core.model.separation import newton_certifies_overlap, separated_rows


def _certificate_at(X: np.ndarray, y: np.ndarray, theta: np.ndarray) -> bool:
    """The certificate at ``theta`` computed from scratch (logit: h = p (1 - p))."""
    Z = np.column_stack([np.ones(len(y)), X])
    eta = Z @ theta
    p, q = expit(eta), expit(-eta)  # both tails exact: no 1 - p
    g, h = np.where(y == 1, -q, p), p * q
    H = Z.T @ (Z * h[:, None])
    step = Z @ -np.linalg.solve(H, Z.T @ g)
    return newton_certifies_overlap(g, h, step)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(8, 60), d=st.integers(1, 3),
       strength=st.floats(0.0, 30.0))
def test_certificate_is_never_wrong(seed: int, n: int, d: int, strength: float) -> None:
    """Sound: wherever the certificate holds, the exact LP finds no separation (from weak
    to complete separation as the signal grows), at the fit or at any other point."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (strength * X[:, 0] + rng.standard_normal(n) > 0).astype(float)
    if y.min() == y.max():
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LogisticRegression(max_iter=60).fit(X, y)
    theta = np.concatenate([model.intercept_, model.coef_.ravel()])
    separated = separated_rows(Design(X, True), y).any()
    for point in (theta, 0.5 * theta, np.zeros(d + 1)):
        if _certificate_at(X, y, point):
            assert not separated


def test_certificate_holds_at_the_optimum_of_overlapping_data_with_far_rows() -> None:
    """Rows fitted with probability 1 - 1e-9 (which send the fit to the LP check) are
    certified by one Newton step when the classes overlap."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((400, 4))
    X[:5, 0] = 12.0  # far out on the side of class 1
    y = (3 * X[:, 0] + rng.standard_normal(400) > 0).astype(float)
    model = LogisticRegression(tol=1e-12).fit(X, y)
    theta = np.concatenate([model.intercept_, model.coef_.ravel()])
    assert expit(np.column_stack([np.ones(400), X]) @ theta).max() > 1 - 1e-7
    assert not separated_rows(Design(X, True), y).any()
    assert _certificate_at(X, y, theta)


def test_separated_data_fail_the_certificate_and_still_warn() -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 3))
    y = (X[:, 0] > 0).astype(float)
    with pytest.warns(Warning, match="separated"):
        model = LogisticRegression().fit(X, y)
    theta = np.concatenate([model.intercept_, model.coef_.ravel()])
    assert not _certificate_at(X, y, theta)


def test_rows_rounded_to_certainty_cannot_be_certified() -> None:
    g = np.array([0.3, -0.2, 0.0])
    assert not newton_certifies_overlap(g, np.full(3, 0.1), np.zeros(3))
    assert newton_certifies_overlap(g[:2], np.full(2, 0.1), np.zeros(2))
    assert newton_certifies_overlap(g, np.full(3, 0.1), np.zeros(3),
                                    used=np.array([True, True, False]))


@pytest.mark.parametrize("model", ["logit", "probit"])
def test_fits_of_overlapping_data_skip_the_linear_program(model: str) -> None:
    """The LP (the size of X) is not run where one Newton step proves overlap."""
    from unittest import mock

    import problin.glm._diagnostics as diagnostics
    from problin import ProbitRegression

    rng = np.random.default_rng(3)
    X = rng.standard_normal((400, 4))
    X[:5, 0] = 12.0
    y = (3 * X[:, 0] + rng.standard_normal(400) > 0).astype(float)
    estimator = LogisticRegression() if model == "logit" else ProbitRegression()
    with mock.patch.object(diagnostics, "separated_rows",
                           side_effect=AssertionError("the LP ran")):
        estimator.fit(X, y)
    assert not hasattr(estimator, "separated_")
