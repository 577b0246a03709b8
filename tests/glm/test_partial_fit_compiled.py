"""``partial_fit``'s per-row loop compiled by numba (``_core.solvers.stochastic_rows``)
against the numpy loop that asks the family (``_core.solvers.stochastic.sgd_rows``).

The scalar kernels are checked against the families' own score weights and curvatures
over the whole real line (both tails, certainty, overflow-sized softmax logits), the
probit's against mpmath where both densities underflow, the floored ``L D L^T`` against
its product; the compiled loop against the numpy loop (forced by ``compiled() ->
None``, as without numba) on a few thousand rows of each family with far-out rows,
zero weights and any chunking, to 1e-12.
"""
import mpmath
import numpy as np
import pytest
from scipy.special import expit, softmax

import problin._core.solvers.stochastic as stochastic
from problin import LogisticRegression, ProbitRegression
from problin._core.model.families import BernoulliLogit, BernoulliProbit, CategoricalSoftmax
from problin._core.solvers import stochastic_rows

needs_numba = pytest.mark.skipif(stochastic_rows.compiled() is None,
                                 reason="numba is not installed")

RNG = np.random.default_rng(371)
N = 3000
Z = RNG.normal(size=(N, 3))
# Far-out rows with the improbable label late in the stream: linear predictors out to
# +-20 (the probit's continued-fraction tail, softmax near certainty).
FAR = np.arange(1500, N, 97)
Z[FAR] = 10.0 * np.sign(Z[FAR])
X = Z * [2.0, 0.5, 30.0] + [10.0, -3.0, 0.0]  # units and offsets differ
_LIN = 0.3 + Z @ [0.9, -0.7, 0.4]
Y_BIN = (RNG.random(N) < expit(_LIN)).astype(int)
Y_BIN[FAR] = _LIN[FAR] < 0
Y_3 = np.digitize(_LIN + RNG.logistic(size=N), [-0.5, 1.0])
Y_3[FAR] = np.where(_LIN[FAR] < 0, 2, 0)
WEIGHT = RNG.choice([0.0, 0.5, 1.0, 3.0], N)
WEIGHT[0] = 1.0  # (a first batch of weight 0 is refused)
CASES = {"logit": (LogisticRegression, Y_BIN), "probit": (ProbitRegression, Y_BIN),
         "softmax": (LogisticRegression, Y_3)}


def _family_scores(family, t, eta, weight):
    G, _ = family.score_weights(np.asarray(t), family.predictors(np.atleast_2d(eta)),
                                np.asarray(weight, dtype=float))
    return G


@pytest.mark.parametrize("name", ["logit", "probit"])
def test_the_binary_kernels_equal_the_families_score_weights(name):
    family, kernel = {"logit": (BernoulliLogit(), stochastic_rows.logit_score),
                      "probit": (BernoulliProbit(), stochastic_rows.probit_score)}[name]
    eta = np.r_[-np.geomspace(1e3, 1e-3, 60), 0.0, np.geomspace(1e-3, 1e3, 60),
                -5.0, np.nextafter(-5.0, 0.0), -37.5, -38.5, 40.0]
    for y in (0, 1):
        t = np.full(eta.size, y)
        weight = np.full(eta.size, 2.5)
        expected = _family_scores(family, t, eta[:, None], weight)[:, 0]
        got = [kernel(float(y), float(e), 2.5) for e in eta]
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=0)
        _, h = family.score_weights(t, family.predictors(eta[:, None]), weight)
        curvature = (stochastic_rows.probit_curvature if name == "probit" else
                     lambda y, e, w: stochastic_rows.logit_curvature(e, w))
        got = [curvature(float(y), float(e), 2.5) for e in eta]
        # (z + lambda cancels on -8 < z < -5 in both: an ulp of lambda becomes ~1e-13)
        np.testing.assert_allclose(got, h, rtol=1e-12, atol=1e-300)


def test_the_probit_kernel_keeps_its_tail_where_the_densities_underflow():
    mpmath.mp.dps = 40
    for z in (-6.0, -12.0, -39.0, -60.0, -1e4):
        exact = float(mpmath.npdf(z) / mpmath.ncdf(z))  # lambda(z) = phi / Phi
        assert stochastic_rows.probit_score(1.0, z, 1.0) == pytest.approx(-exact, rel=4e-16)
        assert stochastic_rows.probit_score(0.0, -z, 1.0) == pytest.approx(exact, rel=4e-16)


@pytest.mark.parametrize("contrast", [True, False])
def test_the_softmax_kernel_equals_the_familys_score_weights(contrast):
    family = CategoricalSoftmax(4, contrast=contrast)
    M = family.n_free
    eta = np.vstack([RNG.normal(scale=3.0, size=(40, M)),
                     [[30.0] * M, [-30.0] * M, [800.0] + [0.0] * (M - 1),
                      [-800.0] * (M - 1) + [750.0], [1e-9] * M]])
    t = RNG.integers(0, 4, eta.shape[0])
    t[-5:] = [0, 1, 1, 3, 2]
    expected = _family_scores(family, t, eta, np.full(t.size, 0.7))
    got = np.empty_like(eta)
    for i in range(t.size):
        stochastic_rows.softmax_scores(int(t[i]), eta[i], 0.7, contrast, got[i])
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-300)
    # the curvature block weight (diag(p) - p p^T), p the free classes' probabilities
    C = np.empty((M, M))
    for i in range(5):
        stochastic_rows.softmax_curvature(got[i], int(t[i]), 0.7, contrast, C)
        eta_all = np.r_[0.0, eta[i]] if contrast else eta[i]
        p = softmax(eta_all)[1:] if contrast else softmax(eta_all)
        np.testing.assert_allclose(C, 0.7 * (np.diag(p) - np.outer(p, p)), rtol=1e-12,
                                   atol=1e-15)


def test_the_floored_ldl_factors_a_curvature_block_and_floors_its_pivots():
    p = np.array([0.2, 0.3, 0.1])
    C = np.diag(p) - np.outer(p, p)
    L, d = np.empty((3, 3)), np.empty(3)
    stochastic_rows.floored_ldl(C, 1e-9, L, d)
    np.testing.assert_allclose(L @ np.diag(d) @ L.T, C, rtol=1e-14, atol=1e-16)
    assert np.all(np.diag(L) == 1.0) and np.all(np.triu(L, 1) == 0.0)
    stochastic_rows.floored_ldl(np.zeros((3, 3)), 0.5, L, d)  # (a row fitted with certainty)
    np.testing.assert_array_equal(d, [0.5, 0.5, 0.5])
    np.testing.assert_array_equal(L, np.eye(3))


def _stream(est, y, cuts, **kwargs):
    model = est(**kwargs)
    bounds = [0, *cuts, N]
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        model.partial_fit(X[lo:hi], y[lo:hi], classes=np.unique(y), sample_weight=WEIGHT[lo:hi])
    return model


@needs_numba
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_compiled_loop_equals_the_numpy_loop(monkeypatch, name):
    est, y = CASES[name]
    fast = _stream(est, y, [1, 700, 701, 2345])
    whole = _stream(est, y, [])
    np.testing.assert_array_equal(fast.coef_, whole.coef_)  # (any chunking, bit for bit)
    monkeypatch.setattr(stochastic, "compiled", lambda: None)
    slow = _stream(est, y, [1700])
    for a, b in [(fast.coef_, slow.coef_), (fast.intercept_, slow.intercept_),
                 (fast._stream.theta, slow._stream.theta),
                 (fast._stream.inverse, slow._stream.inverse)]:
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14 * np.max(np.abs(b)))
    assert fast._stream.rows == slow._stream.rows == np.count_nonzero(WEIGHT)
    assert fast._stream.weight == pytest.approx(slow._stream.weight, rel=1e-15)
    assert fast.t_ == slow.t_


@needs_numba
def test_the_compiled_loop_without_an_intercept_equals_the_numpy_loop(monkeypatch):
    fast = _stream(ProbitRegression, Y_BIN, [900], fit_intercept=False)
    monkeypatch.setattr(stochastic, "compiled", lambda: None)
    slow = _stream(ProbitRegression, Y_BIN, [], fit_intercept=False)
    np.testing.assert_allclose(fast.coef_, slow.coef_, rtol=1e-12)
    assert fast.intercept_.tolist() == slow.intercept_.tolist() == [0.0]
