"""Predictions at rows far outside the data: linear scores formed without overflow.

A row with huge entries (1e200, 1e308) makes the products a model forms at
prediction overflow: ``x^T w`` becomes ``inf``, a dot product with terms of
both signs ``inf - inf = NaN``, and the softmax of scores that are all
``-inf`` is NaN too. Such rows are recomputed on ``u = x / s``, ``s`` a power
of two with ``max_j |u_j|`` in ``[1, 2)`` (exact: only the exponents change),
so every product on ``u`` is finite. ``s`` then multiplies back only

* differences between classes (``relative``): ``s (u^T w_k - u^T w_ref) + b_k``
  with ``ref`` the class of the largest ``u^T w_k``, so that every score is
  finite or ``-inf`` and the softmax (the posterior) is exact: a row far from
  the data gets the probabilities the model implies, typically one-hot;
* or the scores themselves: ``s u^T w_k + b_k``, the true value rounded, which
  is ``+-inf`` only where it lies beyond the float range, never NaN.

Rows whose plain result is finite keep it (bit for bit): the check costs one
pass over the (n, K) scores. Pure numpy/scipy, no estimator imports; the posterior predictive
probabilities of Bayesian logistic regression get the same treatment in
:mod:`problin._core.bayes.far_rows`.
"""
import numpy as np
import scipy.sparse as sp

from .types import Matrix

__all__ = ["row_scale", "dense_rows", "scaled_rows", "fix_linear_rows", "linear_scores",
           "overflowed_rows", "row_quadratic_root", "ROWS"]

# Bad rows are recomputed this many at a time (dense copies of a few MB at most).
ROWS = 2048


def row_scale(A: np.ndarray) -> np.ndarray:
    """Per row of ``A``, the power of two ``s`` with ``max_j |a_j|`` in ``[s, 2s)``
    (1 for a row of zeros): ``A / s`` is bounded by 2 and exact (but for entries
    that underflow, negligible beside the largest one)."""
    m = np.max(np.abs(A), axis=1, initial=0.0)
    _, e = np.frexp(m)  # m = f 2^e with f in [0.5, 1)
    return np.where(m > 0, np.ldexp(1.0, e - 1), 1.0)


def dense_rows(X: Matrix, rows: np.ndarray) -> np.ndarray:
    """Rows ``rows`` of ``X`` (numpy or scipy.sparse) as a dense float64 array."""
    part = X[rows]
    part = part.toarray() if sp.issparse(part) else part
    return np.asarray(part, dtype=np.float64)


def scaled_rows(X: Matrix, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(U, s)``: rows ``rows`` of ``X`` divided by their :func:`row_scale` ``s``."""
    F = dense_rows(X, rows)
    s = row_scale(F)
    return F / s[:, None], s


def overflowed_rows(scores: np.ndarray, live: np.ndarray) -> np.ndarray:
    """Rows of ``scores`` with a non-finite entry in a ``live`` column (a class that can
    be predicted: its constant term is finite), i.e. where a product overflowed."""
    with np.errstate(invalid="ignore"):
        return np.flatnonzero(~np.isfinite(scores[:, live]).all(axis=1))


def scale_back(C: np.ndarray, s: np.ndarray, b: np.ndarray, relative: bool) -> np.ndarray:
    """Scores ``s C + b`` (``relative``: minus the per-row ``s C_ref``) from the
    products ``C`` of scaled rows; dead classes (``b = -inf``) stay at ``-inf``."""
    live = np.isfinite(b)
    with np.errstate(over="ignore", invalid="ignore"):
        if relative:
            ref = np.argmax(np.where(live, C, -np.inf), axis=1)
            C = C - C[np.arange(C.shape[0]), ref][:, None]
        out = s[:, None] * C + b
    out[:, ~live] = -np.inf
    return out


def fix_linear_rows(out: np.ndarray, X: Matrix, W: np.ndarray, b: np.ndarray,
                    relative: bool = True) -> np.ndarray:
    """``out`` (the plain ``X W^T + b``, shape (n, K)) with its overflowed rows
    recomputed on scaled rows (see the module docstring); modified in place."""
    b = np.broadcast_to(np.asarray(b, dtype=np.float64), (W.shape[0],))
    bad = overflowed_rows(out, np.isfinite(b))
    for i in range(0, bad.size, ROWS):
        rows = bad[i:i + ROWS]
        U, s = scaled_rows(X, rows)
        out[rows] = scale_back(U @ W.T, s, b, relative)
    return out


def linear_scores(X: Matrix, W: np.ndarray, b: np.ndarray, relative: bool = False) -> np.ndarray:
    """``X W^T + b`` (X numpy or scipy.sparse, W (K, D)) that never holds NaN: rows
    that overflow are recomputed scaled, their scores the true values rounded
    (``+-inf`` beyond the float range) or, ``relative``, shifted per row so that
    they are finite (the softmax and the argmax are those of the true scores)."""
    W = np.asarray(W, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):  # such rows are recomputed below
        out = np.asarray(X @ W.T, dtype=np.float64) + b
    return fix_linear_rows(out, X, W, b, relative)


def row_quadratic_root(Z: np.ndarray, S: np.ndarray) -> np.ndarray:
    """``sqrt(z_i^T S z_i)`` per row of ``Z`` (``S`` symmetric PSD): a standard error
    ``|x~|_Cov``, formed on ``z_i / s_i`` (:func:`row_scale`) and multiplied back, so
    that a row at 1e200 gives its finite value instead of ``sqrt(inf)`` (the square
    overflows long before the root)."""
    s = row_scale(Z)
    U = Z / s[:, None]
    quad = np.einsum("ij,ij->i", U @ S, U)
    return s * np.sqrt(np.maximum(quad, 0.0))
