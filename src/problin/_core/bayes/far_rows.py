"""Posterior predictive probabilities of Bayesian logistic regression at rows far
outside the data: never NaN, exact in the limit.

Rows whose activation moments overflow (``x^T S x`` at a row holding 1e200) or
whose sampled activations are ``inf - inf`` are recomputed on scaled rows
``u = x / s`` as in :mod:`problin._core.extreme`.
"""
from typing import Any

import numpy as np
from scipy import special

from ..extreme import ROWS, dense_rows, row_scale
from ..numerics import log_sigmoid, log_softmax
from ..types import Matrix
from .logistic import activation_moments, moderated_log_proba
from .sampled import _activations, _draw_log_proba, sampled_log_proba

__all__ = ["moderated_predict", "sampled_predict", "fix_sampled_rows"]


def _scaled_design(X: Matrix, rows: np.ndarray, intercept: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(Phi_u, s)``: the design rows ``[1, x]`` of ``rows`` divided by their scale."""
    F = dense_rows(X, rows)
    Phi = np.column_stack([np.ones(F.shape[0]), F]) if intercept else F
    s = row_scale(Phi)
    return Phi / s[:, None], s


def _probit_ratio(num: np.ndarray, var_u: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``kappa(s^2 var_u) s num = num / sqrt(s^-2 + pi var_u / 8)``: MacKay's moderated
    activation from scaled moments (``+-inf`` where the variance vanishes)."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore", under="ignore"):
        inv = 1.0 / (s * s)
        r = num / np.sqrt(inv.reshape(inv.shape + (1,) * (num.ndim - 1)) +
                          (np.pi / 8.0) * var_u)
    return np.where(num == 0, 0.0, r)


def _moderated_rows(U: np.ndarray, s: np.ndarray, mean: np.ndarray, cov: np.ndarray,
                    n_blocks: int) -> np.ndarray:
    """:func:`~problin._core.bayes.logistic.moderated_log_proba` of scaled design rows ``U``:
    the same formulas with ``mu = s mu_u`` and ``var = s^2 var_u`` kept apart."""
    p = mean.size // n_blocks
    mu = U @ mean.reshape(n_blocks, p).T
    V = np.stack([np.stack([np.einsum("ij,jk,ik->i", U, cov[k * p:(k + 1) * p,
                                                              j * p:(j + 1) * p], U)
                            for j in range(n_blocks)], axis=1) for k in range(n_blocks)],
                 axis=1)
    if n_blocks == 1:
        z = _probit_ratio(mu[:, 0], np.maximum(V[:, 0, 0], 0.0), s)
        return np.column_stack([log_sigmoid(-z), log_sigmoid(z)])
    d = np.einsum("nkk->nk", V)
    pair = np.maximum(d[:, :, None] + d[:, None, :] - V - np.swapaxes(V, 1, 2), 0.0)
    logits = -_probit_ratio(mu[:, :, None] - mu[:, None, :], pair, s)
    return log_softmax(-special.logsumexp(logits, axis=2), axis=1)


def moderated_predict(X: Matrix, intercept: bool, mean: np.ndarray, cov: np.ndarray, n_blocks: int,
                      block: Any = None) -> np.ndarray:
    """Moderated log predictive probabilities (``bayes.moderated_log_proba`` of
    ``bayes.activation_moments``) that are never NaN and stay exact far from
    the data: rows whose moments overflow (``x^T S x`` of a row at 1e200), or
    whose pairwise variances would, get the scaled formulas, whose limit is
    ``sigma(mu_u / sqrt(pi var_u / 8))``, not the ``0.5`` of ``kappa = 0``.
    ``block`` centres the row blocks (parameters at the centre ``c`` of the
    data); the scaled rows use ``x`` for ``x - c``, exact to ``|c| / |x|``,
    which is below rounding for every row that overflows."""
    with np.errstate(over="ignore", invalid="ignore"):
        mu, var = activation_moments(X, intercept, mean, cov, n_blocks, full=n_blocks > 1,
                                     block=block)
        out = moderated_log_proba(mu, var)
        n = X.shape[0]
        risky = ~np.isfinite(out).all(axis=1) | ~np.isfinite(mu).all(axis=1) | \
            ~np.isfinite(var.reshape(n, -1)).all(axis=1) | \
            (np.abs(var.reshape(n, -1)).max(axis=1, initial=0.0) > 1e300)
    for i in range(0, int(risky.sum()), ROWS):
        rows = np.flatnonzero(risky)[i:i + ROWS]
        U, s = _scaled_design(X, rows, intercept)
        out[rows] = _moderated_rows(U, s, mean, cov, n_blocks)
    return out


def sampled_predict(X: Matrix, intercept: bool, draws: np.ndarray, n_blocks: int,
                    block: Any = None) -> np.ndarray:
    """``bayes.sampled_log_proba`` that is never NaN: rows whose activations overflow
    (``inf - inf`` at rows holding 1e308) are recomputed by :func:`fix_sampled_rows`."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = sampled_log_proba(X, intercept, draws, n_blocks, block=block)
    return fix_sampled_rows(out, X, intercept, draws, n_blocks)


def fix_sampled_rows(out: np.ndarray, X: Matrix, intercept: bool, draws: np.ndarray,
                     n_blocks: int) -> np.ndarray:
    """``out`` (``bayes.sampled_log_proba``) with its NaN rows (activations
    ``inf - inf`` at rows holding 1e308) recomputed from scaled rows: the
    activations ``s (phi_u^T w)`` are then finite or ``+-inf``, averaged over
    the draws in log space."""
    bad = np.flatnonzero(np.isnan(out).any(axis=1))
    if bad.size == 0:
        return out
    for i in range(0, bad.size, ROWS):
        rows = bad[i:i + ROWS]
        U, s = _scaled_design(X, rows, intercept)
        with np.errstate(over="ignore"):
            A = s[:, None, None] * _activations(U, draws, n_blocks)
        out[rows] = special.logsumexp(_draw_log_proba(A), axis=1) - np.log(draws.shape[0])
    return out
