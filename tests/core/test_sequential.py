"""The per-row loops of the perceptron and LMS: compiled (numba) equals the plain Python
specification, and the learners give the same fits with and without numba."""
import numpy as np
import pytest

import problin._core.sequential as sequential
from problin import LMSRegressor, Perceptron
from problin.discriminant import perceptron as perceptron_module
from problin.linear_model import lms as lms_module

kernels = sequential.compiled()
needs_numba = pytest.mark.skipif(kernels is None, reason="numba is not installed")


def _data(seed, n=300, d=5, k=2):
    rng = np.random.default_rng(seed)
    Phi = np.column_stack([np.ones(n), rng.standard_normal((n, d))])
    score = Phi[:, 1] + 0.8 * rng.standard_normal(n)
    t = np.digitize(score, np.quantile(score, np.linspace(0, 1, k + 1)[1:-1]))
    return Phi, t


@needs_numba
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_compiled_binary_perceptron_equals_the_specification(seed):
    Phi, t = _data(seed)
    signs = 2.0 * t - 1.0
    w1, w2 = np.zeros(Phi.shape[1]), np.zeros(Phi.shape[1])
    assert kernels["perceptron_binary"](Phi, signs, w1, 0.7) == \
        pytest.approx(sequential.perceptron_binary(Phi, signs, w2, 0.7), rel=1e-12)
    np.testing.assert_allclose(w1, w2, rtol=1e-12, atol=1e-12)


@needs_numba
@pytest.mark.parametrize("seed", [0, 1])
def test_compiled_multiclass_perceptron_equals_the_specification(seed):
    Phi, t = _data(seed, k=4)
    W1, W2 = np.zeros((4, Phi.shape[1])), np.zeros((4, Phi.shape[1]))
    assert kernels["perceptron_multiclass"](Phi, t, W1, 1.0) == \
        pytest.approx(sequential.perceptron_multiclass(Phi, t, W2, 1.0), rel=1e-12)
    np.testing.assert_allclose(W1, W2, rtol=1e-12, atol=1e-12)


@needs_numba
def test_compiled_lms_equals_the_specification():
    rng = np.random.default_rng(3)
    X, y = rng.standard_normal((400, 6)), rng.standard_normal(400)
    v1, v2 = np.zeros(6), np.zeros(6)
    b1 = kernels["lms_rows"](X, y, v1, 0.1, 0.01, 1.0)
    b2 = sequential.lms_rows(X, y, v2, 0.1, 0.01, 1.0)
    assert b1 == pytest.approx(b2, rel=1e-12)
    np.testing.assert_allclose(v1, v2, rtol=1e-12)


@needs_numba
@pytest.mark.parametrize("k", [2, 3])
def test_perceptron_fits_agree_with_and_without_numba(monkeypatch, k):
    """The numpy fallback (block-wise re-scoring) and the compiled loop make the same
    mistakes in the same order, so the same weights (to rounding)."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((700, 4))
    y = np.digitize(X[:, 0] + 0.7 * rng.standard_normal(700), [-0.4, 0.4][:k - 1])
    fast = Perceptron(max_iter=30, random_state=0).fit(X, y)
    monkeypatch.setattr(perceptron_module, "compiled", lambda: None)
    slow = Perceptron(max_iter=30, random_state=0).fit(X, y)
    assert fast.n_iter_ == slow.n_iter_
    np.testing.assert_array_equal(fast.history_, slow.history_)
    np.testing.assert_allclose(fast.coef_, slow.coef_, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(fast.intercept_, slow.intercept_, rtol=1e-9, atol=1e-9)


@needs_numba
@pytest.mark.filterwarnings("ignore::problin.exceptions.ConvergenceWarning")
def test_lms_fits_agree_with_and_without_numba(monkeypatch):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((900, 3))
    y = X @ [1.0, -2.0, 0.5] + rng.standard_normal(900)
    fast = LMSRegressor(max_iter=5, random_state=0).fit(X, y)
    monkeypatch.setattr(lms_module, "compiled", lambda: None)
    slow = LMSRegressor(max_iter=5, random_state=0).fit(X, y)
    np.testing.assert_allclose(fast.coef_, slow.coef_, rtol=1e-10)
    np.testing.assert_allclose(fast.intercept_, slow.intercept_, rtol=1e-10)
