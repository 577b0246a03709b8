"""Numerically stable link functions and their logarithms.

Every function accepts float32 or float64 arrays (or scalars) and returns the
same floating dtype. Linear predictors of any finite size (``|a| = 1e4`` and
beyond) give finite, correct values: logarithms are computed directly, never
as ``log`` of a probability that may have under- or overflowed.
"""
import numpy as np
from numpy.typing import ArrayLike
from scipy import special

__all__ = [
    "sigmoid", "log_sigmoid", "log1m_sigmoid", "logsumexp", "softmax",
    "log_softmax", "probit_cdf", "log_probit_cdf", "log_normal_pdf",
    "inverse_mills", "probit_curvature",
]

_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)
_SQRT_2_OVER_PI = np.sqrt(2.0 / np.pi)
_CF_TERMS = 60  # continued-fraction depth: converged to 1 ulp for t >= 8


def _floating(a: ArrayLike) -> np.ndarray:
    """``a`` as an array of float32 or float64 (integers become float64)."""
    a = np.asarray(a)
    if a.dtype == np.float32 or a.dtype == np.float64:
        return a
    return a.astype(np.float64)


def sigmoid(a: ArrayLike) -> np.ndarray:
    """Logistic function ``1 / (1 + exp(-a))`` without overflow."""
    return special.expit(_floating(a))


def log_sigmoid(a: ArrayLike) -> np.ndarray:
    """``log sigmoid(a) = -log(1 + exp(-a))``, exact in both tails."""
    return special.log_expit(_floating(a))


def log1m_sigmoid(a: ArrayLike) -> np.ndarray:
    """``log(1 - sigmoid(a)) = log sigmoid(-a)``, without cancellation."""
    return special.log_expit(-_floating(a))


def logsumexp(a: np.ndarray, axis: int | tuple[int, ...] | None = None,
              keepdims: bool = False) -> np.ndarray:
    """``log(sum(exp(a)))`` along ``axis``, shifted by the maximum."""
    a = _floating(a)
    return special.logsumexp(a, axis=axis, keepdims=keepdims).astype(a.dtype, copy=False)


def softmax(a: ArrayLike, axis: int = -1) -> np.ndarray:
    """Normalised exponential ``exp(a_k) / sum_j exp(a_j)`` along ``axis``."""
    return special.softmax(_floating(a), axis=axis)


def log_softmax(a: ArrayLike, axis: int = -1) -> np.ndarray:
    """``a_k - logsumexp(a)`` along ``axis``: log-probabilities, never ``log(softmax)``.

    As ``(a_k - m) - log1p(s)``, ``m`` the largest entry and ``s`` the sum of the
    others' ``exp(a_j - m)``: the most probable class's ``log p = -log1p(s)`` keeps
    its relative accuracy however small ``s`` (``m - logsumexp(a)`` rounds it to 0
    below 1e-16). Where the largest entry is not finite, scipy's answer."""
    a = _floating(a)
    m = np.max(a, axis=axis, keepdims=True)
    finite = np.isfinite(m)
    shifted = a - np.where(finite, m, 0.0)
    e = np.exp(shifted)
    np.put_along_axis(e, np.argmax(a, axis=axis, keepdims=True), 0.0, axis=axis)
    out = shifted - np.log1p(np.sum(e, axis=axis, keepdims=True))
    if not finite.all():
        out = np.where(finite, out, special.log_softmax(a, axis=axis))
    return out


def probit_cdf(a: ArrayLike) -> np.ndarray:
    """Standard normal CDF ``Phi(a)``, the probit inverse link."""
    return special.ndtr(_floating(a))


def log_probit_cdf(a: ArrayLike) -> np.ndarray:
    """``log Phi(a)`` from ``scipy.special.log_ndtr`` (asymptotic in the far left tail)."""
    return special.log_ndtr(_floating(a))


def log_normal_pdf(a: np.ndarray) -> np.ndarray:
    """``log phi(a) = -a^2/2 - log sqrt(2 pi)``; ``-inf`` where ``a^2`` overflows (its
    limit: |a| beyond 1e154 is far in either tail)."""
    a = _floating(a)
    with np.errstate(over="ignore"):
        return (-0.5 * np.square(a) - _LOG_SQRT_2PI).astype(a.dtype, copy=False)


def inverse_mills(a: np.ndarray) -> np.ndarray:
    """Inverse Mills ratio ``lambda(a) = phi(a) / Phi(a) = sqrt(2/pi) / erfcx(-a/sqrt(2))``.

    The scaled complementary error function keeps full relative precision in
    the far left tail (where ``lambda(a) ~ -a`` and both densities underflow);
    right of zero ``erfcx(-x) = 2 exp(x^2) - erfcx(x)`` is exact to about
    ``eps a^2`` and overflows to infinity exactly where ``lambda`` underflows
    to 0, which is then the answer.
    """
    a = _floating(a)
    with np.errstate(over="ignore"):
        out = _SQRT_2_OVER_PI / special.erfcx(-np.asarray(a, dtype=np.float64) / np.sqrt(2.0))
    return out.astype(a.dtype, copy=False)


def probit_curvature(z: np.ndarray, mills: np.ndarray | None = None) -> np.ndarray:
    """``-d^2/dz^2 log Phi(z) = lambda(z) (z + lambda(z))``, accurate in both tails.

    For ``z << 0`` the factor ``z + lambda(z)`` cancels (``lambda ~ -z``); there
    it is the Laplace continued fraction ``1/(t + 2/(t + 3/(t + ...)))`` with
    ``t = -z``, evaluated bottom-up, which has full precision for ``t >= 8``.
    ``mills`` is ``inverse_mills(z)`` if already at hand.
    """
    z = _floating(z)
    z64 = np.atleast_1d(np.asarray(z, dtype=np.float64))
    lam = np.atleast_1d(inverse_mills(z64) if mills is None else np.asarray(mills, np.float64))
    gap = z64 + lam
    far = z64 <= -8.0
    if np.any(far):
        t = -z64[far]
        tail = t.copy()
        for k in range(_CF_TERMS, 1, -1):
            tail = t + k / tail
        gap[far] = 1.0 / tail
    out = np.maximum(lam * gap, 0.0)  # log-concavity: never negative
    return out.reshape(np.shape(z)).astype(z.dtype, copy=False)
