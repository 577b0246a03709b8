"""The stochastic Newton loop of :mod:`.stochastic` as scalar code, compiled where numba is.

:func:`~.stochastic.sgd_rows` in numpy spends tens of microseconds a row on small array
calls, half of them the family's vectorised derivatives on one row. Here the same step
is written over scalars: the families' score weights and curvatures of one row
(:func:`logit_score`, :func:`probit_score`, :func:`probit_curvature`,
:func:`softmax_scores`: the ``g`` and ``h`` of ``families.BernoulliLogit``,
``BernoulliProbit`` and ``CategoricalSoftmax``, each in its log-space-safe form), the
floored ``L D L^T`` factorisation of a row's curvature block (:func:`floored_ldl`, which
the numpy loop calls too) and the loop :func:`sgd_loop`, which takes the numpy loop's
steps in the same order, so that the two agree to rounding (tested to 1e-12). With
numba (``pip install 'problin[fast]'``) :func:`compiled` compiles the loop once (cached
on disk, as :mod:`problin._core.sequential`'s loops); without it :func:`compiled` is
None and the numpy loop runs.

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

__all__ = ["ROW_KERNELS", "bias_correction", "compiled", "floored_ldl", "logit_score",
           "probit_curvature", "probit_score", "sgd_loop", "softmax_scores"]

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


def logit_curvature(eta: float, weight: float) -> float:
    """``weight sigma(eta) sigma(-eta) = weight e / (1 + e)^2``, ``e = exp(-|eta|)``."""
    e = math.exp(-abs(eta))
    inv = 1.0 / (e + 1.0)
    return e * inv * inv * weight


def _mills(z: float) -> float:
    """The inverse Mills ratio ``lambda(z) = phi(z) / Phi(z)``: ``phi / Phi`` with ``Phi =
    erfc(-z / sqrt 2) / 2`` from ``z = -5`` on; left of it ``lambda(z) = t + 1/(t + 2/(t +
    3/(t + ...)))``, ``t = -z`` (no underflow: ``~ -z``)."""
    if z < _PROBIT_TAIL:
        t = -z
        mills = t
        for k in range(_CF_TERMS, 0, -1):
            mills = t + k / mills
        return mills
    cdf = 0.5 * math.erfc(-z * _INV_SQRT_2)
    return math.exp(-(0.5 * (z * z))) * _INV_SQRT_2PI / cdf


def probit_score(y: float, eta: float, weight: float) -> float:
    """``-weight s lambda(s eta)``, ``lambda = phi / Phi`` the inverse Mills ratio."""
    s = 2.0 * y - 1.0
    return -s * _mills(s * eta) * weight


def probit_curvature(y: float, eta: float, weight: float) -> float:
    """``weight lambda(z) (z + lambda(z))``, ``z = s eta`` (the observed information, as
    ``numerics.probit_curvature``: left of ``z = -8`` the cancelling ``z + lambda`` is the
    continued fraction ``1/(t + 2/(t + 3/(t + ...)))``, ``t = -z``)."""
    s = 2.0 * y - 1.0
    z = s * eta
    mills = _mills(z)
    return max(mills * _probit_gap(z, mills), 0.0) * weight


def _probit_gap(z: float, mills: float) -> float:
    """``z + lambda(z)``; left of ``z = -8``, where the two cancel, the continued fraction
    ``1/(t + 2/(t + 3/(t + ...)))``, ``t = -z``."""
    if z > -8.0:
        return z + mills
    t = -z
    tail = t
    for k in range(_CF_TERMS, 1, -1):
        tail = t + k / tail
    return 1.0 / tail


def logit_third(eta: float, weight: float) -> float:
    """``weight d h / d eta = weight h (1 - 2 sigma(eta)) = weight h tanh(-eta / 2)``."""
    return logit_curvature(eta, weight) * math.tanh(-0.5 * eta)


def probit_third(y: float, eta: float, weight: float) -> float:
    """``weight d h / d eta = weight s lambda (1 - (lambda + z)(2 lambda + z))``, ``z = s
    eta``, ``h = lambda (lambda + z)`` (the gap ``lambda + z`` as in
    :func:`probit_curvature`)."""
    s = 2.0 * y - 1.0
    z = s * eta
    mills = _mills(z)
    gap = _probit_gap(z, mills)
    return s * mills * (1.0 - gap * (gap + mills)) * weight


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


def softmax_curvature(g: FloatArray, t: int, weight: float, contrast: bool,
                      C: FloatArray) -> None:
    """``C = weight (diag(p) - p p^T)`` over the free classes, ``p`` read back from the
    score ``g = weight (p - e_t)`` (as the numpy loop reads it from the family's)."""
    M = g.shape[0]
    observed = t - 1 if contrast else t
    for a in range(M):
        pa = g[a] / weight + (1.0 if a == observed else 0.0)
        for b in range(M):
            pb = g[b] / weight + (1.0 if b == observed else 0.0)
            C[a, b] = weight * ((pa if a == b else 0.0) - pa * pb)


def bias_correction(kind: int, t: int, eta: FloatArray, g: FloatArray, weight: float,
                    contrast: bool, Lam: FloatArray, unit: float, out: FloatArray) -> None:
    """``out_a = unit/2 sum_bc T_abc Lam_bc``: the expected second-order remainder of a
    row's score taken at the current estimate, ``T`` the derivative of its curvature
    block in the linear predictors and ``unit Lam`` the current estimate's covariance in
    them (``Lam = (I (x) v)^T S^-1 (I (x) v)``, ``unit`` the mean row weight: weights are
    relative). Binary: ``h' Lam / 2``; softmax, ``p`` read back from ``g``: ``p_a (Lam_aa
    - 2 (Lam p)_a + 2 p^T Lam p - sum_b p_b Lam_bb) / 2``."""
    if kind == LOGIT:
        out[0] = 0.5 * logit_third(eta[0], weight) * (Lam[0, 0] * unit)
        return
    if kind == PROBIT:
        out[0] = 0.5 * probit_third(float(t), eta[0], weight) * (Lam[0, 0] * unit)
        return
    M = g.shape[0]
    observed = t - 1 if contrast else t
    pLp = 0.0
    diag = 0.0
    for a in range(M):
        pa = g[a] / weight + (1.0 if a == observed else 0.0)
        Lp = 0.0
        for b in range(M):
            Lp += Lam[a, b] * (g[b] / weight + (1.0 if b == observed else 0.0))
        out[a] = Lp  # (Lam p)_a, for now
        pLp += pa * Lp
        diag += pa * Lam[a, a]
    for a in range(M):
        pa = g[a] / weight + (1.0 if a == observed else 0.0)
        out[a] = 0.5 * weight * pa * ((Lam[a, a] - 2.0 * out[a] + 2.0 * pLp - diag) * unit)


def floored_ldl(C: FloatArray, floor: float, L: FloatArray, d: FloatArray) -> None:
    """``C = L diag(d) L^T`` (``L`` unit lower triangular, into ``L`` and ``d``) with every
    pivot raised to at least ``floor``: the row's curvature as ``M`` rank-one terms, each
    truncated from below as Bercu et al. truncate ``p (1 - p)``."""
    M = C.shape[0]
    for j in range(M):
        s = C[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k] * d[k]
        d[j] = max(s, floor)
        L[j, j] = 1.0
        for i in range(j + 1, M):
            s = C[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k] * d[k]
            L[i, j] = s / d[j]
        for i in range(j):
            L[i, j] = 0.0


def _row_derivatives(kind: int, t: int, eta: FloatArray, weight: float, contrast: bool,
                     g: FloatArray, C: FloatArray) -> None:
    if kind == LOGIT:
        g[0] = logit_score(float(t), eta[0], weight)
        C[0, 0] = logit_curvature(eta[0], weight)
    elif kind == PROBIT:
        g[0] = probit_score(float(t), eta[0], weight)
        C[0, 0] = probit_curvature(float(t), eta[0], weight)
    else:
        softmax_scores(t, eta, weight, contrast, g)
        softmax_curvature(g, t, weight, contrast, C)


def sgd_loop(X: FloatArray, t: np.ndarray, w: FloatArray, theta: FloatArray,
             inverse: FloatArray, center: FloatArray, scale: FloatArray, rows: int,
             weight: float, intercept: bool, kind: int, contrast: bool, floor: float,
             floor_power: float) -> tuple[int, float]:
    """One stochastic Newton step per row of ``X`` (n x D, C order), after the warm-up, as
    ``stochastic.sgd_rows``: ``theta`` (M x p, standardised coordinates) and ``inverse``
    (``S^-1``, P x P, ``P = M p``) are updated in place, the clock and summed weight
    returned. The operations and their order are the numpy loop's (read that module for
    the mathematics)."""
    n, D = X.shape
    M, p = theta.shape
    P = M * p
    first = 1 if intercept else 0
    v = np.empty(p)
    eta = np.empty(M)
    g = np.empty(M)
    fix = np.empty(M)
    C = np.empty((M, M))
    L = np.empty((M, M))
    d = np.empty(M)
    Q = np.empty((P, M))
    Lam = np.empty((M, M))
    q = np.empty(P)
    r = np.empty(M)
    if intercept:
        v[0] = 1.0
    for i in range(n):
        wi = w[i]
        if wi <= 0.0:
            continue
        rows += 1
        weight += wi
        for j in range(D):
            v[first + j] = (X[i, j] - center[j]) / scale[j]
        for k in range(M):
            s = 0.0
            for j in range(p):
                s += theta[k, j] * v[j]
            eta[k] = s
        for a in range(P):  # Q = S^-1 (I (x) v), Lam = (I (x) v)^T Q
            for c in range(M):
                s = 0.0
                for j in range(p):
                    s += inverse[a, c * p + j] * v[j]
                Q[a, c] = s
        for b in range(M):
            for c in range(M):
                s = 0.0
                for j in range(p):
                    s += v[j] * Q[b * p + j, c]
                Lam[b, c] = s
        _row_derivatives(kind, t[i], eta, wi, contrast, g, C)
        bias_correction(kind, t[i], eta, g, wi, contrast, Lam, weight / rows, fix)
        floored_ldl(C, wi * floor / rows ** floor_power, L, d)
        for c in range(M):  # S <- S + d_c u u^T, u = L[:, c] (x) v, by Sherman-Morrison
            for a in range(P):
                s = 0.0
                for b in range(M):
                    s += Q[a, b] * L[b, c]
                q[a] = s
            quad = 0.0
            for a in range(M):
                s = 0.0
                for b in range(M):
                    s += Lam[a, b] * L[b, c]
                quad += L[a, c] * s
            factor = d[c] / (1.0 + d[c] * quad)
            for a in range(P):  # (factor (q_a q_b): symmetric bit for bit, row by row)
                qa = q[a]
                for b in range(P):
                    inverse[a, b] -= factor * (qa * q[b])
            for b in range(M):  # r = (I (x) v)^T q
                s = 0.0
                for j in range(p):
                    s += v[j] * q[b * p + j]
                r[b] = s
            for a in range(P):
                fa = factor * q[a]
                for b in range(M):
                    Q[a, b] -= fa * r[b]
            for a in range(M):
                fa = factor * r[a]
                for b in range(M):
                    Lam[a, b] -= fa * r[b]
        for a in range(P):  # theta <- theta - S^-1 ((g + fix) (x) v) = theta - Q (g + fix)
            s = 0.0
            for b in range(M):
                s += Q[a, b] * (g[b] + fix[b])
            theta[a // p, a % p] -= s
    return rows, weight


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
    for kernel in (logit_score, logit_curvature, logit_third, _mills, _probit_gap,
                   probit_score, probit_curvature, probit_third, softmax_scores, softmax_curvature,
                   bias_correction, floored_ldl, _row_derivatives):
        register_jitable(kernel)
    loop: Callable[..., Any] = numba.njit(cache=True, nogil=True)(sgd_loop)
    return loop
