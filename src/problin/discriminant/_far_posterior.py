"""Posterior scores of class-specific Gaussians at rows far from the data, to full precision.

Far from the data the class scores ``a_k = c_k - (x - mu_k)^T P_k (x - mu_k) / 2`` are
huge (1e40 at ``|x| = 1e20``), and the posterior depends on their differences only. Where
two classes share a covariance (exactly: a feature's equal variances in naive Bayes, or
classes with the same scatter) those differences are linear in ``x``, while the scores
themselves are quadratic: differenced as they are, the linear part drowns in the
quadratics' rounding (a log-odds of 1e13 off by 3e-6 of itself at 1e12, by 26 % at 1e16,
and the posterior collapsing to the priors at 1e20). Relative to the row's most probable
class ``r`` the difference splits exactly as

    a_k - a_r = (c_k - c_r) - (x - mu_k)^T (P_k - P_r) (x - mu_k) / 2
                            - (mu_r - mu_k)^T P_r (2x - mu_k - mu_r) / 2,

a quadratic part that vanishes where the precisions agree and a linear part formed
directly. Each is computed on ``u = x / s`` (``s`` a power of two, as in
:mod:`._far_rows`), so that no intermediate overflows: ``s^2 q + s l``, infinite only
where the true difference is beyond the float range.
"""
from typing import Any

import numpy as np

from .._core.extreme import dense_rows, row_scale
from .._core.types import Matrix
from ._far_rows import _DIGITS, _EPS, _ROWS, _constants

__all__ = ["far_rows", "refine_far_posterior"]


def far_rows(plain: np.ndarray, model: Any) -> np.ndarray:
    """The rows whose plain scores ``a_k`` (before any fix) round by more than ``_DIGITS``
    nats (as :mod:`._far_rows`' linear scores), or overflowed, in the classes of non-zero
    prior."""
    live = np.isfinite(model.log_priors)
    with np.errstate(over="ignore", invalid="ignore"):
        size = np.max(np.abs(plain[:, live]), axis=1, initial=0.0)
        return np.flatnonzero(~(_EPS * size <= _DIGITS))  # (NaN and inf included)


def refine_far_posterior(scores: np.ndarray, X: Matrix, model: Any,
                         coarse: np.ndarray) -> np.ndarray:
    """``scores`` (relative ``a_k``, shape (n, K), class-specific covariances) with the
    rows ``coarse`` (:func:`far_rows`) replaced by the differences above; in place."""
    for lo in range(0, coarse.size, _ROWS):
        index = coarse[lo:lo + _ROWS]
        Xc = np.subtract(dense_rows(X, index), model.shift, dtype=np.float64)
        top = np.argmax(scores[index], axis=1)
        scores[index] = _differences(Xc, top, model)
    return scores


def _precision(model: Any, k: int) -> np.ndarray:
    """``P_k``: the (D,) precisions of a diagonal model, or the (D, D) matrix."""
    L = model.prec_chol[k]
    return L * L if model.kind == "diag" else L @ L.T


def _differences(Xc: np.ndarray, top: np.ndarray, model: Any) -> np.ndarray:
    """``a_k - a_r`` for the centred rows ``Xc``, ``r = top`` per row (module docstring).

    Per feature (diagonal model) or per class pair (full), the split form is used where the
    two precisions are within a factor 1.5 of each other, so that its two parts cannot
    cancel; elsewhere the quadratic forms are differenced as they are, which is accurate
    there (their difference is of their own size)."""
    M = model.means - model.shift
    K = M.shape[0]
    c = _constants(model)
    s = row_scale(Xc)
    U = Xc / s[:, None]
    out = np.empty((Xc.shape[0], K))
    for r in np.unique(top):
        rows = top == r
        Ur, sr = U[rows], s[rows][:, None]
        Pr, Rr = _precision(model, r), Ur - M[r] / sr
        for k in range(K):
            if k == r:
                out[rows, k] = 0.0
                continue
            Pk, Rk = _precision(model, k), Ur - M[k] / sr
            between = 2.0 * Ur - (M[k] + M[r]) / sr  # (2x - mu_k - mu_r) / s
            if model.kind == "diag":
                near = np.abs(Pk - Pr) <= 0.5 * np.minimum(Pk, Pr)
                quad = (Rk * Rk) @ np.where(near, Pk - Pr, Pk) \
                    - (Rr * Rr) @ np.where(near, 0.0, Pr)
                lin = between @ np.where(near, Pr * (M[r] - M[k]), 0.0)
            elif np.array_equal(Pk, Pr):  # full, one precision: the linear form alone
                quad = np.zeros(Ur.shape[0])
                lin = between @ (Pr @ (M[r] - M[k]))
            else:
                quad = np.einsum("ij,ij->i", Rk @ Pk, Rk) - np.einsum("ij,ij->i", Rr @ Pr, Rr)
                lin = np.zeros(Ur.shape[0])
            with np.errstate(over="ignore", invalid="ignore"):
                sq = sr[:, 0] * (sr[:, 0] * quad)  # (s * 0 = 0: no inf * 0)
                total = sq + sr[:, 0] * lin
                total = np.where(np.isnan(total), sq, total)  # both overflowed: s^2 wins
                out[rows, k] = (c[k] - c[r]) - 0.5 * total
    return out
