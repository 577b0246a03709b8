"""Gaussian class scores at rows far from every class, formed without overflow.

``a_k(x) = c_k - |(x - mu_k)^T P_k|^2 / 2`` overflows once ``x`` is beyond
~1e154 (or less, for a small variance): the quadratic forms become ``inf``
(``inf - inf = NaN`` in ``x - mu_k`` or in the product), every ``a_k`` is
``-inf`` and the softmax is NaN. Such rows are recomputed on ``u = x / s``
(``s`` a power of two, :func:`~problin._core.extreme.row_scale`): ``q_k =
|(u - mu_k / s)^T P_k|^2`` is finite and ``a_k = c_k - s^2 q_k / 2``, or, for
the posterior, ``c_k - s^2 (q_k - q_ref) / 2`` with ``ref`` the nearest class
in the scaled metric: finite or ``-inf``, so the posterior is the one the
model implies (one-hot at 1e200 for the class whose covariance is widest
along ``x``).

With a shared covariance ("tied", "spherical") the ``s^2`` terms are equal
for all classes and cancel in the posterior: there it is the softmax of the
linear scores ``x^T Sigma^-1 mu_k + c_k'`` instead (differences of quadratic
forms of size ``s^2`` would lose the ``s``-sized differences to rounding).
"""
from typing import Any

import numpy as np

from .._core.blocks import iter_blocks
from .._core.extreme import fix_linear_rows, overflowed_rows, row_scale
from .._core.types import Matrix

# ``model`` below: a ``_gaussian.GaussianModel`` (typed ``Any``: _gaussian imports
# this module, and the import contracts allow no cycle, not even for types).

__all__ = ["fix_far_rows", "linear_posterior_scores"]

_LOG_2PI = np.log(2.0 * np.pi)
_ROWS = 2048
_EPS = np.finfo(np.float64).eps
# Linear scores whose rounding exceeds this are formed again, centred nearer the row.
_DIGITS = 1e-9


def _constants(model: Any) -> np.ndarray:
    """``c_k = log pi_k - log|Sigma_k| / 2 - D/2 log 2 pi`` (``-inf``: a class of prior 0)."""
    D = model.means.shape[1]
    return model.log_priors + model.half_logdet_precision() - 0.5 * D * _LOG_2PI


def _scaled_scores(Xc: np.ndarray, model: Any, relative: bool) -> np.ndarray:
    """Scores of the centred rows ``Xc`` (dense, few) from per-row scaled quadratic forms."""
    s = row_scale(Xc)
    U = Xc / s[:, None]
    M = (model.means - model.shift)
    K = M.shape[0]
    q = np.empty((Xc.shape[0], K))
    for k in range(K):
        R = U - M[k] / s[:, None]  # M[k] / s may underflow to 0: then it is negligible
        if model.kind == "full":
            Y = R @ model.prec_chol[k]
        elif model.kind == "tied":
            Y = R @ model.prec_chol
        else:
            Y = R * model.prec_chol[k]
        q[:, k] = np.einsum("ij,ij->i", Y, Y)
    c = _constants(model)
    live = np.isfinite(c)
    if relative:
        q = q - np.min(np.where(live, q, np.inf), axis=1)[:, None]
    with np.errstate(over="ignore", invalid="ignore"):
        out = c - 0.5 * (s[:, None] * (s[:, None] * q))
    out[:, ~live] = -np.inf
    return out


def fix_far_rows(out: np.ndarray, X: Matrix, model: Any, relative: bool) -> np.ndarray:
    """``out`` (the plain ``a_k``, shape (n, K)) with the rows where a quadratic form
    overflowed recomputed by :func:`_scaled_scores`; modified in place."""
    bad = overflowed_rows(out, np.isfinite(model.log_priors))
    for i in range(0, bad.size, _ROWS):
        rows = bad[i:i + _ROWS]
        Xc = np.subtract(np.asarray(X[rows]), model.shift, dtype=np.float64)
        out[rows] = _scaled_scores(Xc, model, relative)
    return out


def _linear_form(model: Any, shift: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(W, c)`` with ``a_k(x) = (x - shift)^T w_k + c_k`` up to a per-row term."""
    M = model.means - shift
    if model.kind == "tied":
        MP = M @ model.prec_chol
        W = MP @ model.prec_chol.T
    else:  # spherical: one standard deviation for every class and feature
        MP = M * model.prec_chol
        W = MP * model.prec_chol
    return W, _constants(model) - 0.5 * np.sum(MP * MP, axis=1)


def linear_posterior_scores(X: Matrix, model: Any) -> np.ndarray:
    """``a_k(x)`` up to a per-row term for a shared covariance: ``x_c^T w_k + c_k'``
    with ``w_k = Sigma^-1 (mu_k - shift)`` (``x_c`` centred rows), by row blocks;
    overflowing rows are recomputed scaled (:func:`~problin._core.extreme.fix_linear_rows`).

    Rows whose scores are so large that their rounding reaches ``_DIGITS`` of a unit
    (classes whose means lie many standard deviations apart: one at 1e10 and two at
    1e-3 with spread 1e-3 give scores of 1e25, where the two near ones differ by ~10)
    are formed again centred at their most probable class's mean, where the classes
    that matter for them have scores of ordinary size.
    """
    W, c = _linear_form(model, model.shift)
    out = np.empty((X.shape[0], W.shape[0]))
    size = np.sqrt(np.einsum("kj,kj->k", W, W)).max(initial=0.0)
    for lo, hi, Xb in iter_blocks(X):
        Xc = np.subtract(Xb, model.shift, dtype=np.float64)
        out[lo:hi] = Xc @ W.T
        out[lo:hi] += c
        fix_linear_rows(out[lo:hi], Xc, W, c, relative=True)
        with np.errstate(over="ignore", invalid="ignore"):
            rounding = _EPS * (np.sqrt(np.einsum("ij,ij->i", Xc, Xc)) * size
                               + np.abs(c[np.isfinite(c)]).max(initial=0.0))
        coarse = np.flatnonzero(~(rounding <= _DIGITS))
        if coarse.size:
            out[lo + coarse] = _recentred(np.asarray(Xb[coarse], dtype=np.float64),
                                          out[lo + coarse], model)
    return out


def _recentred(Xr: np.ndarray, scores: np.ndarray, model: Any) -> np.ndarray:
    """The rows' scores formed centred at each row's most probable class's mean."""
    top = np.argmax(scores, axis=1)
    for k in np.unique(top):
        rows = top == k
        W, c = _linear_form(model, model.means[k])
        Xc = Xr[rows] - model.means[k]
        part = Xc @ W.T + c
        fix_linear_rows(part, Xc, W, c, relative=True)
        scores[rows] = part
    return scores
