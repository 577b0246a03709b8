"""The averaged-SGD loop of :mod:`.stochastic` as scalar code, compiled where numba is.

:func:`~.stochastic.sgd_rows` in numpy spends ~80 us a row on a dozen small array
calls, half of them the family's vectorised derivatives on one row. Here the same step
is written over scalars: the families' score weights of one row (:func:`logit_score`,
:func:`probit_score`, :func:`softmax_scores`: the ``g`` of ``families.BernoulliLogit``,
``BernoulliProbit`` and ``CategoricalSoftmax``, each in its log-space-safe form) and
the loop :func:`sgd_loop`, which takes the same operations in the same order as the
numpy loop, so that the two agree to rounding (tested to 1e-12). With numba
(``pip install 'problin[fast]'``) :func:`compiled` compiles the loop once (cached on
disk, as :mod:`problin._core.sequential`'s loops) and a row costs well under a
microsecond; without it :func:`compiled` is None and the numpy loop runs.

The kernels live in this file, beside the loop, because numba's disk cache is keyed by
the stamp of the file of the function it compiles: a kernel edited in another file
would leave a stale compiled loop behind. :data:`ROW_KERNELS` names the families that
have one (by ``family.name``); any other family takes the numpy loop, which asks the
family itself. The plain functions are the specification and run as they are in tests.
"""
import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..types import FloatArray

__all__ = ["ROW_KERNELS", "compiled", "logit_score", "probit_score", "sgd_loop",
           "softmax_scores"]

LOGIT, PROBIT, SOFTMAX = 0, 1, 2
#: The scalar kernel of each family that has one, by ``family.name``.
ROW_KERNELS = {"logit": LOGIT, "probit": PROBIT, "softmax": SOFTMAX}

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)
# Left of -5 the probit's lambda = phi / Phi is the Laplace continued fraction of the
# Mills ratio (both densities underflow near -38); 32 terms are within an ulp of it
# for t >= 5 (checked against mpmath), as scipy's erfcx in the numpy family is.
_PROBIT_TAIL = -5.0
_CF_TERMS = 32


def logit_score(y: float, eta: float, weight: float) -> float:
    """``weight d(-log p(y | eta)) / d eta = -weight (y - sigma(eta))`` for ``y in {0, 1}``:
    ``-s sigma(-s eta)`` with ``s = 2 y - 1``, from ``exp(-|z|)`` (no overflow, no
    cancellation; ``families.BernoulliLogit``'s operations)."""
    s = 2.0 * y - 1.0
    z = s * eta
    e = math.exp(-abs(z))
    inv = 1.0 / (e + 1.0)
    q = math.exp(-max(z, 0.0)) * inv  # sigma(-z)
    return q * -s * weight


def probit_score(y: float, eta: float, weight: float) -> float:
    """``-weight s lambda(s eta)``, ``lambda = phi / Phi`` the inverse Mills ratio:
    ``phi / Phi`` with ``Phi = erfc(-z / sqrt 2) / 2`` from ``z = -5`` on; left of it
    ``lambda(z) = t + 1/(t + 2/(t + 3/(t + ...)))``, ``t = -z`` (no underflow: ``~ -z``)."""
    s = 2.0 * y - 1.0
    z = s * eta
    if z < _PROBIT_TAIL:
        t = -z
        mills = t
        for k in range(_CF_TERMS, 0, -1):
            mills = t + k / mills
    else:
        cdf = 0.5 * math.erfc(-z * _INV_SQRT_2)
        mills = math.exp(-(0.5 * (z * z))) * _INV_SQRT_2PI / cdf
    return -s * mills * weight


def softmax_scores(t: int, eta: FloatArray, weight: float, contrast: bool,
                   g: FloatArray) -> None:
    """``g = weight (p - e_t)`` over the free classes (into ``g``); ``contrast``: class 0 is
    the reference with logit 0, ``eta`` holds classes 1..K-1. By log-sum-exp (the logits
    shifted by their maximum); the observed class's ``p - 1`` is minus the sum of the
    other classes' probabilities where ``p > 1/2`` (exact near certainty)."""
    M = eta.shape[0]
    top = 0.0 if contrast else -math.inf
    for k in range(M):
        top = max(top, eta[k])
    total = 0.0
    for k in range(M):
        g[k] = math.exp(eta[k] - top)
        total += g[k]
    reference = math.exp(-top) if contrast else 0.0
    total += reference
    inv = 1.0 / total
    for k in range(M):
        g[k] *= inv
    observed = t - 1 if contrast else t
    if observed >= 0:
        p = g[observed]
        if p > 0.5:
            rest = 0.0
            for k in range(M):
                if k != observed:
                    rest += g[k]
            g[observed] = -(rest + reference * inv)
        else:
            g[observed] = p - 1.0
    for k in range(M):
        g[k] *= weight


def _row_scores(kind: int, t: int, eta: FloatArray, weight: float, contrast: bool,
                g: FloatArray) -> None:
    if kind == LOGIT:
        g[0] = logit_score(float(t), eta[0], weight)
    elif kind == PROBIT:
        g[0] = probit_score(float(t), eta[0], weight)
    else:
        softmax_scores(t, eta, weight, contrast, g)


def sgd_loop(X: FloatArray, t: np.ndarray, w: FloatArray, theta: FloatArray,
             average: FloatArray, mean: FloatArray, m2: FloatArray, rows: int,
             weight: float, info: float, intercept: bool, kind: int, contrast: bool,
             eta0: float, power: float, warmup: int, floor: float
             ) -> tuple[int, float, float]:
    """One step per row of ``X`` (n x D, C order), as ``stochastic.sgd_rows``: the
    arrays are updated in place (``theta``, ``average``: M x p), the clock, summed
    weight and running information returned. The operations and their order are the
    numpy loop's (read that module for the mathematics)."""
    n, D = X.shape
    M = theta.shape[0]
    first = 1 if intercept else 0
    inv = np.empty(D)
    z = np.empty(D)
    eta = np.empty(M)
    g = np.empty(M)
    for i in range(n):
        wi = w[i]
        if wi <= 0.0:
            continue
        rows += 1
        weight += wi
        share = wi / weight
        for j in range(D):  # Welford
            delta = X[i, j] - mean[j]
            mean[j] += share * delta
            m2[j] += wi * delta * (X[i, j] - mean[j])
        clock = rows - warmup
        if clock <= 0:
            continue
        for j in range(D):
            spread = m2[j] / weight if intercept else m2[j] / weight + mean[j] * mean[j]
            inv[j] = 1.0 / math.sqrt(spread) if spread > 0.0 else 0.0
            z[j] = ((X[i, j] - mean[j]) if intercept else X[i, j]) * inv[j]
        for k in range(M):
            s = 0.0
            for j in range(D):
                s += theta[k, first + j] * X[i, j]
            eta[k] = s + theta[k, 0] if intercept else s
        _row_scores(kind, t[i], eta, wi * rows / weight, contrast, g)
        gamma = eta0 / ((D + 1.0) * clock ** power) / max(info, floor)
        squares = 0.0
        for k in range(M):
            squares += g[k] * g[k]
        info += (squares / M - info) / (clock + 1)
        for k in range(M):
            step = gamma * g[k]
            shift = 0.0
            for j in range(D):
                du = step * (z[j] * inv[j])
                theta[k, first + j] -= du
                shift += du * mean[j]
            if intercept:
                theta[k, 0] -= step - shift
            for j in range(theta.shape[1]):
                average[k, j] += (theta[k, j] - average[k, j]) / clock
    return rows, weight, info


@functools.cache
def compiled() -> Callable[..., Any] | None:
    """:func:`sgd_loop` compiled by numba (``nogil``, cached on disk), or None without
    numba. The kernels are compiled into it (``register_jitable``: in Python they stay
    the plain functions above)."""
    try:
        import numba
        from numba.extending import register_jitable
    except ImportError:
        return None
    for kernel in (logit_score, probit_score, softmax_scores, _row_scores):
        register_jitable(kernel)
    loop: Callable[..., Any] = numba.njit(cache=True, nogil=True)(sgd_loop)
    return loop
