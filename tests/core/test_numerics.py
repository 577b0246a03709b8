"""Stable link functions in problin._core.numerics against high-precision references.

References come from mpmath at 60 significant digits, evaluated at the exact
value of the (float32 or float64) input, then rounded to the output dtype.
Comparisons are relative (``rtol``) with an absolute floor of the dtype's
smallest *normal* number: results in the subnormal range have only a handful
of significant bits and may legitimately be flushed to zero (scipy's float32
``expit(-100)`` returns 0 rather than the subnormal 3.7e-44; float64
``inverse_mills(38)`` ~ 1e-314 keeps ~10 digits).

Tolerances: float64 ``1e-12`` relative, float32 ``1e-5`` relative. The single
documented exception is ``inverse_mills`` in the far left tail (``a <= -1e3``):
see ``test_inverse_mills_far_left_tail_*`` below (a reported src bug).
"""
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from problin._core import numerics as nm


@pytest.fixture(autouse=True, scope="module")
def _mpmath_digits():
    """60 digits for this module's references, restored after it (a module-level
    ``mp.dps = ...`` would hold for every module collected after it)."""
    with mpmath.mp.workdps(60):
        yield


GRID = [-1e4, -1e3, -100.0, -40.0, -38.0, -10.0, -1.0, 0.0, 1.0, 10.0, 38.0, 40.0,
        100.0, 1e3, 1e4]
DTYPES = [np.float64, np.float32]
RTOL = {np.float64: 1e-12, np.float32: 1e-5}


# ---------------------------------------------------------------- references

def _ref_log_sigmoid(a):
    return -mpmath.log1p(mpmath.exp(-a))


def _ref_log1m_sigmoid(a):
    return -mpmath.log1p(mpmath.exp(a))


def _ref_log_probit_cdf(a):
    # log Phi(a) = log1p(-Phi(-a)): no loss of the tiny tail for large a.
    if a > 0:
        return mpmath.log1p(-mpmath.ncdf(-a))
    return mpmath.log(mpmath.ncdf(a))


def _ref_inverse_mills(a):
    if a > 0:
        return mpmath.npdf(a) / (1 - mpmath.ncdf(-a))
    return mpmath.npdf(a) / mpmath.ncdf(a)


def _ref_sigmoid(a):
    return 1 / (1 + mpmath.exp(-a))


def _ref_probit_cdf(a):
    return mpmath.ncdf(a)


def _ref_log_normal_pdf(a):
    return -a * a / 2 - mpmath.log(mpmath.sqrt(2 * mpmath.pi))


REFERENCES = {
    "sigmoid": (nm.sigmoid, _ref_sigmoid),
    "log_sigmoid": (nm.log_sigmoid, _ref_log_sigmoid),
    "log1m_sigmoid": (nm.log1m_sigmoid, _ref_log1m_sigmoid),
    "probit_cdf": (nm.probit_cdf, _ref_probit_cdf),
    "log_probit_cdf": (nm.log_probit_cdf, _ref_log_probit_cdf),
    "log_normal_pdf": (nm.log_normal_pdf, _ref_log_normal_pdf),
    "inverse_mills": (nm.inverse_mills, _ref_inverse_mills),
}

_CACHE = {}


def reference(name, dtype, values):
    """mpmath reference at the exact dtype-rounded inputs, as a float64 array."""
    out = []
    for a in values:
        x = float(dtype(a))
        key = (name, x)
        if key not in _CACHE:
            _CACHE[key] = float(REFERENCES[name][1](mpmath.mpf(x)))
        out.append(_CACHE[key])
    return np.array(out)


def assert_close_to_reference(actual, ref, dtype, rtol=None):
    rtol = RTOL[dtype] if rtol is None else rtol
    ref_d = ref.astype(dtype)  # correctly rounded (up to one rounding) target
    atol = float(np.finfo(dtype).tiny)
    err = np.abs(actual.astype(np.float64) - ref_d.astype(np.float64))
    bound = rtol * np.abs(ref_d.astype(np.float64)) + atol
    bad = err > bound
    assert not bad.any(), (
        f"mismatch at {np.asarray(GRID)[bad] if actual.size == len(GRID) else bad}: "
        f"got {actual[bad]}, want {ref_d[bad]}")


# ---------------------------------------------------------------- all functions at extremes

@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", [n for n in REFERENCES if n != "inverse_mills"])
def test_elementwise_matches_mpmath_on_grid(name, dtype):
    func = REFERENCES[name][0]
    a = np.array(GRID, dtype=dtype)
    out = func(a)
    assert out.dtype == dtype
    assert out.shape == a.shape
    assert np.all(np.isfinite(out))
    assert_close_to_reference(out, reference(name, dtype, GRID), dtype)




@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_inverse_mills_matches_mpmath(dtype):
    a = np.array(GRID, dtype=dtype)
    out = nm.inverse_mills(a)
    assert out.dtype == dtype
    assert np.all(np.isfinite(out))
    assert np.all(out >= 0)
    assert_close_to_reference(nm.inverse_mills(a), reference("inverse_mills", dtype, GRID), dtype)


@pytest.mark.parametrize("a", [-1e4, -1e3])
def test_inverse_mills_far_left_tail_float64_full_precision(a):
    out = nm.inverse_mills(np.array([a]))
    assert_close_to_reference(out, reference("inverse_mills", np.float64, [a]), np.float64)


@pytest.mark.parametrize("a", [-1e4, -3e3, -1e3, -300.0])
def test_inverse_mills_far_left_tail_float64_current_bound(a):
    """The asymptote lambda(a) ~ -a - 1/a in the far left tail (a looser, independent check)."""
    out = nm.inverse_mills(np.array([a]))
    ref = reference("inverse_mills", np.float64, [a])
    rtol = 2 * np.finfo(float).eps * (1 + a * a / 2)
    np.testing.assert_allclose(out, ref, rtol=rtol, atol=0)
    np.testing.assert_allclose(out, -a - 1 / a, rtol=3 / a**4 + rtol)


@pytest.mark.parametrize("name", list(REFERENCES))
def test_integer_and_scalar_inputs_become_float64(name):
    func = REFERENCES[name][0]
    out = func(np.array([0, 1, -3]))
    assert out.dtype == np.float64
    s = func(2)
    assert np.asarray(s).dtype == np.float64
    assert np.asarray(s).shape == ()
    np.testing.assert_allclose(float(s), reference(name, np.float64, [2.0])[0], rtol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_outputs_are_finite_and_ordered_at_extremes(dtype):
    a = np.array([-1e4, -1e3, 0.0, 1e3, 1e4], dtype=dtype)
    s = nm.sigmoid(a)
    np.testing.assert_array_equal(s, np.array([0, 0, 0.5, 1, 1], dtype=dtype))
    np.testing.assert_array_equal(nm.probit_cdf(a), np.array([0, 0, 0.5, 1, 1], dtype=dtype))
    ls = nm.log_sigmoid(a)
    np.testing.assert_allclose(ls, [-1e4, -1e3, -math.log(2), 0, 0], rtol=RTOL[dtype])
    l1m = nm.log1m_sigmoid(a)
    np.testing.assert_allclose(l1m, [0, 0, -math.log(2), -1e3, -1e4], rtol=RTOL[dtype])
    lp = nm.log_probit_cdf(a)
    assert np.all(np.diff(lp.astype(np.float64)) >= 0)
    assert lp[0] < -5e7 * (1 - 1e-6)


# ---------------------------------------------------------------- identities

@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_sigmoid_symmetry(dtype):
    a = np.linspace(-50, 50, 1001).astype(dtype)
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(nm.sigmoid(-a), 1 - nm.sigmoid(a), rtol=0, atol=2 * eps)
    np.testing.assert_allclose(nm.probit_cdf(-a), 1 - nm.probit_cdf(a), rtol=0, atol=2 * eps)
    np.testing.assert_array_equal(nm.log1m_sigmoid(a), nm.log_sigmoid(-a))


def test_log_functions_agree_with_log_of_probability_in_safe_range():
    # The naive log(probability) is itself accurate only where the probability
    # is <= 1/2 (no rounding of 1 - tiny): a <= 0 for these links.
    a = np.linspace(-30, 0, 301)
    np.testing.assert_allclose(nm.log_sigmoid(a), np.log(nm.sigmoid(a)), rtol=1e-13)
    np.testing.assert_allclose(nm.log1m_sigmoid(-a), np.log(nm.sigmoid(a)), rtol=1e-13)
    np.testing.assert_allclose(nm.log1m_sigmoid(a), np.log1p(-nm.sigmoid(a)), rtol=1e-13,
                               atol=1e-300)
    np.testing.assert_allclose(nm.log_probit_cdf(a), np.log(nm.probit_cdf(a)), rtol=1e-13)
    b = np.linspace(-30, 5, 351)
    np.testing.assert_allclose(
        nm.inverse_mills(b), np.exp(nm.log_normal_pdf(b)) / nm.probit_cdf(b), rtol=1e-12)


def test_inverse_mills_is_derivative_of_log_probit_cdf():
    a = np.linspace(-30, 8, 77)
    h = 1e-4
    # Five-point stencil: truncation O(h^4), rounding ~ eps |log Phi| / h.
    fd = (-nm.log_probit_cdf(a + 2 * h) + 8 * nm.log_probit_cdf(a + h)
          - 8 * nm.log_probit_cdf(a - h) + nm.log_probit_cdf(a - 2 * h)) / (12 * h)
    np.testing.assert_allclose(nm.inverse_mills(a), fd, rtol=1e-8, atol=1e-12)


# ---------------------------------------------------------------- logsumexp / softmax

@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_logsumexp_of_huge_equal_values(dtype):
    out = nm.logsumexp(np.array([1e4, 1e4], dtype=dtype))
    assert out.dtype == dtype
    np.testing.assert_allclose(out, 1e4 + math.log(2), rtol=RTOL[dtype] / 10)
    out = nm.logsumexp(np.array([-1e4, -1e4], dtype=dtype))
    np.testing.assert_allclose(out, -1e4 + math.log(2), rtol=RTOL[dtype] / 10)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_logsumexp_softmax_with_axis(dtype):
    rng = np.random.default_rng(0)
    a64 = rng.normal(scale=5.0, size=(4, 5, 3))
    a64[0, 0, 0] = 1e4
    a64[1, 2, 1] = -1e4
    a = a64.astype(dtype)
    ref = a.astype(np.float64)
    for axis in (0, 1, 2, -1):
        lse = nm.logsumexp(a, axis=axis)
        assert lse.dtype == dtype
        m = ref.max(axis=axis, keepdims=True)
        want = (m + np.log(np.exp(ref - m).sum(axis=axis, keepdims=True)))
        np.testing.assert_allclose(lse, np.squeeze(want, axis=axis), rtol=RTOL[dtype])
        lse_k = nm.logsumexp(a, axis=axis, keepdims=True)
        assert lse_k.shape == want.shape
        np.testing.assert_allclose(lse_k, want, rtol=RTOL[dtype])

        sm = nm.softmax(a, axis=axis)
        lsm = nm.log_softmax(a, axis=axis)
        assert sm.dtype == dtype and lsm.dtype == dtype
        assert np.all(np.isfinite(sm)) and np.all(np.isfinite(lsm))
        np.testing.assert_allclose(sm.sum(axis=axis), 1.0, rtol=0,
                                   atol=10 * np.finfo(dtype).eps)
        np.testing.assert_allclose(lsm, ref - want, rtol=RTOL[dtype],
                                   atol=RTOL[dtype] * np.abs(ref).max())
        np.testing.assert_allclose(sm, np.exp(ref - want), rtol=RTOL[dtype],
                                   atol=np.finfo(dtype).tiny)
    full = nm.logsumexp(a)
    assert full.dtype == dtype and full.shape == ()
    np.testing.assert_allclose(full, 1e4, rtol=RTOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_log_softmax_is_a_minus_logsumexp_at_extremes(dtype):
    a = np.array([[1e4, -1e4, 0.0], [0.0, 0.0, 0.0], [-1e3, -1e3, -1e3 - 40],
                  [40.0, -40.0, 38.0]], dtype=dtype)
    lsm = nm.log_softmax(a, axis=1)
    assert lsm.dtype == dtype and np.all(np.isfinite(lsm))
    # Reference in float64 from the same (exactly representable) inputs: the
    # float32 difference ``a - logsumexp(a)`` would itself round at |a| ~ 1e3.
    a64 = a.astype(np.float64)
    want = a64 - nm.logsumexp(a64, axis=1, keepdims=True)
    np.testing.assert_allclose(lsm, want, rtol=RTOL[dtype], atol=0)
    if dtype == np.float64:
        np.testing.assert_allclose(lsm, a - nm.logsumexp(a, axis=1, keepdims=True),
                                   rtol=0, atol=4 * np.finfo(float).eps * 1e4)
    sm = nm.softmax(a, axis=1)
    np.testing.assert_allclose(sm.sum(axis=1), 1.0, atol=4 * np.finfo(dtype).eps)
    np.testing.assert_allclose(sm[0], [1.0, 0.0, 0.0])
    np.testing.assert_allclose(sm[1], [1 / 3] * 3, rtol=RTOL[dtype])


# ---------------------------------------------------------------- property tests

finite_a = st.floats(min_value=-1e4, max_value=1e4, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(finite_a)
def test_log_odds_identity(a):
    x = np.float64(a)
    diff = float(nm.log_sigmoid(x) - nm.log1m_sigmoid(x))
    assert diff == pytest.approx(a, rel=1e-12, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(finite_a)
def test_log_sigmoid_and_probit_cdf_are_negative_and_finite(a):
    for f in (nm.log_sigmoid, nm.log1m_sigmoid, nm.log_probit_cdf, nm.log_normal_pdf):
        v = f(np.float64(a))
        assert np.isfinite(v) and v <= 0
    for dt in DTYPES:
        v = nm.inverse_mills(dt(a))
        assert np.isfinite(v) and v >= 0 and v.dtype == dt


@settings(max_examples=150, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 6)),
                  elements=st.floats(-1e3, 1e3)),
       st.floats(-1e3, 1e3))
def test_softmax_invariant_to_constant_shift(a, c):
    sm = nm.softmax(a, axis=1)
    np.testing.assert_allclose(nm.softmax(a + c, axis=1), sm, rtol=1e-9, atol=1e-300)
    np.testing.assert_allclose(sm.sum(axis=1), 1.0, atol=1e-14)
    lsm = nm.log_softmax(a, axis=1)
    scale = 1.0 + np.abs(a).max() + abs(c)
    np.testing.assert_allclose(nm.log_softmax(a + c, axis=1), lsm, rtol=0,
                               atol=8 * np.finfo(float).eps * scale)
    np.testing.assert_allclose(nm.logsumexp(a + c, axis=1), nm.logsumexp(a, axis=1) + c,
                               rtol=0, atol=8 * np.finfo(float).eps * scale)
    assert np.all(lsm <= 8 * np.finfo(float).eps * scale)


@settings(max_examples=150, deadline=None)
@given(hnp.arrays(np.float32, st.integers(1, 8), elements=st.floats(-1e4, 1e4, width=32)))
def test_float32_is_preserved_and_finite(a):
    for name, (func, _) in REFERENCES.items():
        out = func(a)
        assert out.dtype == np.float32, name
        assert np.all(np.isfinite(out)), name
    for func in (nm.softmax, nm.log_softmax):
        out = func(a)
        assert out.dtype == np.float32 and np.all(np.isfinite(out))
    assert nm.logsumexp(a).dtype == np.float32


@settings(max_examples=150, deadline=None)
@given(st.floats(-40, 40))
def test_float32_matches_float64(a):
    a32 = np.float32(a)
    for name, (func, _) in REFERENCES.items():
        v32 = float(func(a32))
        v64 = float(func(np.float64(a32)))
        atol = 4 * float(np.finfo(np.float32).smallest_subnormal)
        # Results below float32's normal range lose relative precision by design.
        if abs(v64) < float(np.finfo(np.float32).tiny):
            atol = float(np.finfo(np.float32).tiny)
        assert abs(v32 - v64) <= 1e-5 * abs(v64) + atol, name


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, (3, 4), elements=st.floats(-300, 300)))
def test_log_softmax_keeps_relative_accuracy_near_zero(a):
    # The most probable class's log p = -log1p(sum of the others' exp(a_j - m)): every
    # entry, that one included (which a - logsumexp(a) rounds to 0 below 1e-16), to a
    # few ulps of its own size against 400-digit arithmetic on the same inputs.
    lsm = nm.log_softmax(a, axis=1)
    with mpmath.workdps(400):
        for i in range(a.shape[0]):
            lse = mpmath.log(mpmath.fsum(mpmath.exp(mpmath.mpf(float(v))) for v in a[i]))
            for k in range(a.shape[1]):
                exact = mpmath.mpf(float(a[i, k])) - lse
                tol = 1e-13 * abs(exact) + 1e-300
                assert abs(lsm[i, k] - exact) <= tol, (a[i], k, lsm[i, k], float(exact))
