"""Firth's bias-reduced likelihood (``penalty="firth"``, the Jeffreys prior ``1/2 log |I|``):
coefficients and standard errors against an independent 50-digit mpmath maximisation of
the penalised likelihood (``_firth_mp``) and against R's logistf; finite estimates with a
vanishing penalised gradient on separated data; one clear error for what it does not take.
"""
import warnings

import numpy as np
import pytest

from problin import LogisticRegression, ProbitRegression

from tests.glm._firth_mp import firth_fit, numeric_gradient


def _small(seed: int = 3, n: int = 30):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X @ [1.5, -1.0, 0.5] + rng.logistic(size=n) > 0).astype(float)
    return X, y


def _params(model):
    return np.r_[model.intercept_, model.coef_.ravel()]


@pytest.mark.parametrize("estimator, link", [(LogisticRegression, "logit"),
                                             (ProbitRegression, "probit")])
def test_firth_equals_mpmath(estimator, link):
    X, y = _small()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = estimator(penalty="firth").fit(X, y)
    beta, cov = firth_fit(X, y, link)
    np.testing.assert_allclose(_params(model), [float(b) for b in beta], rtol=0, atol=1e-7)
    # logistf's standard errors: the inverse Fisher information at the Firth estimate.
    se = np.sqrt([float(cov[j, j]) for j in range(4)])
    np.testing.assert_allclose(model.summary()["std_err"].to_numpy(), se, rtol=1e-7)
    # The penalised log-likelihood is stationary at the answer (its own derivative).
    assert np.abs(numeric_gradient(X, y, _params(model), link)).max() < 1e-8
    assert model.converged_


def _modified_score(X, y, params):
    """Heinze & Schemper's (2002) modified score ``sum (y - p + h (1/2 - p)) x``."""
    Z = np.column_stack([np.ones(len(y)), X])
    p = 1.0 / (1.0 + np.exp(-Z @ params))
    w = p * (1 - p)
    h = w * np.einsum("ij,ij->i", Z @ np.linalg.inv(Z.T @ (w[:, None] * Z)), Z)
    return Z.T @ (y - p + h * (0.5 - p))


def test_firth_separated_is_finite():
    """Complete separation, and quasi-separation by an all-events level of a factor:
    finite estimates, the penalised gradient below 1e-8, and no SeparationWarning."""
    X, y = _small(5, 40)
    complete = (X[:, :1], (X[:, 0] > 0).astype(float))
    level = (X[:, 1] > 0.8).astype(float)  # every row of this level is an event
    quasi = (np.column_stack([level, X[:, 2]]), np.where(level == 1, 1.0, y))
    for Xs, ys in (complete, quasi):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            model = LogisticRegression(penalty="firth").fit(Xs, ys)
        params = _params(model)
        assert np.all(np.isfinite(params)) and np.abs(params).max() < 20
        assert np.abs(_modified_score(Xs, ys, params)).max() < 1e-8
        assert np.all(np.isfinite(model.summary()["std_err"]))
        assert not hasattr(model, "separated_")


def test_firth_weights_are_frequencies():
    """A weight-2 row is a duplicated row, in the penalty's leverages as in the data term."""
    X, y = _small(7, 20)
    w = np.arange(20) % 3 + 1.0
    weighted = LogisticRegression(penalty="firth").fit(X, y, sample_weight=w)
    rows = np.repeat(np.arange(20), w.astype(int))
    repeated = LogisticRegression(penalty="firth").fit(X[rows], y[rows])
    np.testing.assert_allclose(_params(weighted), _params(repeated), atol=1e-9)


def test_firth_refuses_what_it_does_not_take():
    X, y = _small()
    with pytest.raises(ValueError, match="takes no L2 alpha"):
        LogisticRegression(penalty="firth", alpha=1.0).fit(X, y)
    with pytest.raises(ValueError, match="fitted by Newton"):
        LogisticRegression(penalty="firth", solver="lbfgs").fit(X, y)
    with pytest.raises(ValueError, match="binary models"):
        LogisticRegression(penalty="firth").fit(X, np.arange(30) % 3)
    with pytest.raises(ValueError, match="penalty"):
        LogisticRegression(penalty="l1").fit(X, y)
