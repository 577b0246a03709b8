"""The maximum-likelihood dispersion of a GLM at its fitted means.

With the means fixed, the log-likelihood ``l(scale) = sum_i f_i l_i(y_i, mu_i, v_i, scale)``
(``f`` frequency, ``v`` variance weights) is maximised over the dispersion alone. For the
Gaussian and the inverse Gaussian ``l_i`` is linear in ``d_i / scale`` and ``log scale``,
so the maximum is the mean unit deviance ``D / n`` (the distributions' ``ml_scale``).
Elsewhere the score in ``t = log scale`` has no closed root: the Gamma's is
``-sum f k (log k - psi(k) - d / 2)`` with the shape ``k = v / scale``, whose root is the
equation ``sum f v (log(v nu) - psi(v nu)) = D / 2`` in ``nu = 1 / scale`` (MASS's
``gamma.shape``, McCullagh & Nelder 1989, §8.3.6); the Tweedie's runs through the
derivative of Dunn & Smyth's series in the dispersion (its moments, one pass:
:mod:`~problin._core.model.tweedie_series`). Both are sums over rows of
per-row terms in ``y``, ``mu`` and the weights (:func:`scale_derivative_sums`, a
:data:`~problin._core.model.fitted_rows.RowSum`), so a data source evaluates them by its
own passes over row blocks, in memory or on Dask, and
:func:`ml_scale_search` finds the root by safeguarded Newton steps in ``t``: each step
one pass for the score and its derivative, quadratic convergence from the saddlepoint
start ``D / n`` (the maximum's small-dispersion limit; Nelder & Pregibon 1987).
"""
from collections.abc import Callable
from typing import Protocol

import numpy as np
from scipy import special

from ..types import FloatArray
from .fitted_rows import FittedRows

__all__ = ["ScaleDerivatives", "gamma_scale_derivatives", "ml_scale_search",
           "scale_derivative_sums"]

# log k - psi(k) and k psi'(k) - 1 from their asymptotic series above this shape: the
# direct differences lose log(k) / (1 / 2k) of their digits (2e-11 relative at k = 1e4),
# the series' first omitted term is below 1e-17 of the sum here.
_SERIES_FROM = 30.0
# The search's end: after a Newton step below this (in log scale) the error is of the
# order of its square, ~1e-12 (one pass fewer than stepping on to rounding).
_NEWTON_DONE = 1e-6
_MAX_STEPS = 200


class ScaleDerivatives(Protocol):
    """A distribution's per-row derivatives of the log-likelihood in ``log scale``."""

    def scale_score(self, y: FloatArray, mu: FloatArray, var_weights: FloatArray | float,
                    scale: float) -> tuple[FloatArray, FloatArray]: ...


def scale_derivative_sums(rows: FittedRows, distribution: ScaleDerivatives, log_scale: float
                          ) -> tuple[float, float]:
    """``(sum f s_i, sum f s_i')`` over ``rows``: the log-likelihood's first and second
    derivatives in ``t = log scale`` at ``log_scale``, a sum that adds across row blocks."""
    var = 1.0 if rows.variance is None else rows.variance
    s, ds = distribution.scale_score(rows.y, rows.mu, var, float(np.exp(log_scale)))
    f = rows.frequency
    if f is None:
        return float(np.sum(s)), float(np.sum(ds))
    return float(f @ s), float(f @ ds)


def ml_scale_search(derivatives: Callable[[float], tuple[float, float]], start: float) -> float:
    """The root in ``t = log scale`` of the score ``derivatives(t) = (S(t), S'(t))``, a
    maximum of the log-likelihood (``S`` falls through 0), from ``exp(t) = start``.

    Newton steps in ``t``, each held inside the bracket of the points already seen
    (``S > 0`` below the root, ``< 0`` above) and replaced by bisection where it leaves
    it or where ``S' >= 0``; before a bracket exists the step is at most 2 (a factor
    e² in the scale). A ValueError where the score keeps its sign to ``scale = e^±700``:
    the likelihood grows without bound (all-zero Tweedie targets, no maximum)."""
    t, lo, hi = float(np.log(start)), -np.inf, np.inf
    last = None  # (the last point whose score was finite)
    for _ in range(_MAX_STEPS):
        s, ds = derivatives(t)
        if not np.isfinite(s):  # (beyond the floating-point range of a term: step back)
            if last is None:
                raise ValueError("the log-likelihood's derivative in the dispersion is not "
                                 f"finite at the start, scale {np.exp(t):g}")
            t = 0.5 * (t + last)
            continue
        if s == 0.0:
            return float(np.exp(t))
        if s > 0:
            lo = t
        else:
            hi = t
        newton = ds < 0 and np.isfinite(ds)
        step = -s / ds if newton else (2.0 if s > 0 else -2.0)
        if not np.isfinite(lo) or not np.isfinite(hi):
            step = float(np.clip(step, -2.0, 2.0))
        new = t + step
        if np.isfinite(lo) and np.isfinite(hi) and not lo < new < hi:
            new, newton = 0.5 * (lo + hi), False
        if newton and abs(new - t) <= _NEWTON_DONE * max(1.0, abs(t)):
            return float(np.exp(new))  # (Newton's error after this step: its square)
        if hi - lo <= 4.0 * np.finfo(float).eps * max(1.0, abs(t)) or abs(new) > 700.0:
            break
        last, t = t, new
    if np.isfinite(lo) and np.isfinite(hi):
        return float(np.exp(0.5 * (lo + hi)))
    raise ValueError("the maximum-likelihood dispersion does not exist: the log-likelihood "
                     f"grows without bound as the scale {'grows' if hi == np.inf else 'falls'}"
                     " (its derivative keeps its sign)")


def _log_minus_digamma(k: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``(log k - psi(k), k psi'(k) - 1)``, both positive, without cancellation at large
    ``k`` (the asymptotic series of psi and psi' from :data:`_SERIES_FROM`)."""
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(all="ignore"):
        direct = (np.log(k) - special.digamma(k), k * special.polygamma(1, k) - 1.0)
        r = 1.0 / np.maximum(k, _SERIES_FROM)
        r2 = r * r
        series = (r * (0.5 + r * (1.0 / 12.0 + r2 * (-1.0 / 120.0 + r2 * (
            1.0 / 252.0 + r2 * (-1.0 / 240.0 + r2 / 132.0))))),
                  r * (0.5 + r * (1.0 / 6.0 + r2 * (-1.0 / 30.0 + r2 * (
                      1.0 / 42.0 + r2 * (-1.0 / 30.0))))))
    big = k >= _SERIES_FROM
    return np.where(big, series[0], direct[0]), np.where(big, series[1], direct[1])


def gamma_scale_derivatives(d: FloatArray, var_weights: FloatArray | float, scale: float
                            ) -> tuple[FloatArray, FloatArray]:
    """The Gamma's per-row ``(s, s')`` in ``t = log scale`` from its unit deviances ``d``:
    with the shape ``k = v / scale``, ``l = k log(k y / mu) - k y / mu - log Gamma(k) -
    log y``, ``dl / dk = log k - psi(k) - d / 2``, ``dk / dt = -k``. Rows of variance
    weight 0 add nothing."""
    k = np.asarray(var_weights, dtype=np.float64) / scale  # (one value without weights:
    excess, curve = _log_minus_digamma(k)                     # psi once, not per row)
    s = k * (0.5 * np.asarray(d) - excess)
    ds = -s - k * curve
    zero = k == 0
    if zero.any():
        s, ds = np.where(zero, 0.0, s), np.where(zero, 0.0, ds)
    return s, np.broadcast_to(ds, s.shape)

