"""Per-sample loops of the sequential learners (perceptron, LMS), compiled where numba is.

The perceptron and LMS update their weights after every row, so an epoch is a loop of
``n`` dependent steps: in Python each costs microseconds of interpreter overhead, 20 to
100 times the arithmetic. With numba (``pip install 'problin[fast]'``) the loops below
are compiled once (cached on disk) and an epoch runs at the speed of compiled code;
without it the callers keep their numpy formulations (block-wise where exact).

The functions are plain Python over arrays and scalars, so that one source is both the
specification and, compiled, the kernel. :func:`compiled` returns the compiled versions
(``None`` without numba); importing numba costs ~0.3 s, so nothing is compiled or
imported until a learner first asks.
"""
import functools
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["compiled", "perceptron_binary", "perceptron_multiclass", "lms_rows"]


def perceptron_binary(Phi: np.ndarray, t: np.ndarray, w: np.ndarray,
                      eta: float) -> tuple[int, float]:
    """Rows in order: where ``t_n w^T phi_n <= 0``, ``w += eta t_n phi_n`` (in place).
    Returns the mistakes and their criterion ``sum -t_n w^T phi_n``."""
    n, p = Phi.shape
    mistakes, loss = 0, 0.0
    for i in range(n):
        margin = 0.0
        for j in range(p):
            margin += Phi[i, j] * w[j]
        margin *= t[i]
        if margin <= 0.0:
            loss -= margin
            step = eta * t[i]
            for j in range(p):
                w[j] += step * Phi[i, j]
            mistakes += 1
    return mistakes, loss


def perceptron_multiclass(Phi: np.ndarray, t: np.ndarray, W: np.ndarray,
                          eta: float) -> tuple[int, float]:
    """Rows in order: where a rival ``j != t_n`` scores at least the own class,
    ``w_{t_n} += eta phi_n`` and ``w_j -= eta phi_n`` for the first highest rival
    (in place). Returns the mistakes and their criterion ``sum (w_j - w_{t_n})^T phi_n``."""
    n, p = Phi.shape
    K = W.shape[0]
    scores = np.empty(K)
    mistakes, loss = 0, 0.0
    for i in range(n):
        for k in range(K):
            s = 0.0
            for j in range(p):
                s += Phi[i, j] * W[k, j]
            scores[k] = s
        own_class = t[i]
        own = scores[own_class]
        rival, best = -1, -np.inf
        for k in range(K):
            if k != own_class and scores[k] > best:
                rival, best = k, scores[k]
        if rival >= 0 and best >= own:
            loss += best - own
            for j in range(p):
                W[own_class, j] += eta * Phi[i, j]
                W[rival, j] -= eta * Phi[i, j]
            mistakes += 1
    return mistakes, loss


def lms_rows(X: np.ndarray, t: np.ndarray, v: np.ndarray, b: float, eta: float,
             off: float) -> float:
    """``err = eta (t_n - v^T x_n - b)``, ``v += err x_n``, ``b += err off`` over the rows
    (``v`` in place); returns the new ``b``."""
    n, d = X.shape
    for i in range(n):
        dot = 0.0
        for j in range(d):
            dot += v[j] * X[i, j]
        err = eta * (t[i] - dot - b)
        for j in range(d):
            v[j] += err * X[i, j]
        b += err * off
    return b


@functools.cache
def compiled() -> dict[str, Callable[..., Any]] | None:
    """The loops compiled by numba (``nogil``, cached on disk), or None without numba."""
    try:
        import numba
    except ImportError:
        return None
    jit = numba.njit(cache=True, nogil=True)
    return {f.__name__: jit(f) for f in (perceptron_binary, perceptron_multiclass, lms_rows)}
