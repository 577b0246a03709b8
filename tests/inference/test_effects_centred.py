"""The factorised centred differences mu(eta + a) - mu(eta - a) of plain-column
comparisons equal 40-digit mpmath values, where the subtraction of two probabilities
loses digits (tiny a) and where cosh(eta) overflows (|eta| > 710)."""
import mpmath
import numpy as np
import pytest
from numpy.testing import assert_allclose

from problin.inference.effects_centred import centred_difference

ETA = np.array([-800.0, -35.0, -2.0, -0.3, 0.0, 0.7, 5.0, 40.0, 900.0])
HALF = np.array([-3.0, 1e-9, 0.4, 2.5, 29.0])
MEANS = {"logit": lambda x: 1 / (1 + mpmath.exp(-x)), "log": mpmath.exp,
         "identity": lambda x: x}


@pytest.mark.parametrize("link", ["logit", "log", "identity"])
def test_centred_difference_equals_mpmath(link: str) -> None:
    mean = MEANS[link]
    eta = ETA if link != "log" else ETA[1:-1]  # (e^900 overflows a double)
    r, r_eta, r_a = centred_difference(link)(eta, HALF)
    with mpmath.workdps(40):
        def diff(e: float, a: float, sign: int) -> tuple[float, float]:
            f = (lambda x: mean(x + a) - sign * mean(x - a))
            return float(f(mpmath.mpf(e))), float(mpmath.diff(f, mpmath.mpf(e)))
        ref = np.array([[diff(e, a, 1) for a in HALF] for e in eta])
        ref_a = np.array([[float(mpmath.diff(lambda t: mean(mpmath.mpf(e) + t) -
                                             mean(mpmath.mpf(e) - t), mpmath.mpf(a)))
                           for a in HALF] for e in eta])
    scale = np.maximum(np.abs(ref[..., 0]), 1e-300)
    assert_allclose(r / scale, ref[..., 0] / scale, atol=1e-14)
    assert_allclose(r_eta, ref[..., 1], rtol=1e-13, atol=1e-30)  # (0 at eta = 0)
    assert_allclose(r_a, ref_a, rtol=1e-13, atol=1e-300)
