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
pass over the (n, K) scores. Pure numpy/scipy, no estimator imports.
"""
import numpy as np
import scipy.sparse as sp

__all__ = ["row_scale", "dense_rows", "scaled_rows", "fix_linear_rows", "linear_scores",
           "overflowed_rows", "moderated_predict", "sampled_predict", "fix_sampled_rows"]

# Bad rows are recomputed this many at a time (dense copies of a few MB at most).
_ROWS = 2048


def row_scale(A):
    """Per row of ``A``, the power of two ``s`` with ``max_j |a_j|`` in ``[s, 2s)``
    (1 for a row of zeros): ``A / s`` is bounded by 2 and exact (but for entries
    that underflow, negligible beside the largest one)."""
    m = np.max(np.abs(A), axis=1, initial=0.0)
    _, e = np.frexp(m)  # m = f 2^e with f in [0.5, 1)
    return np.where(m > 0, np.ldexp(1.0, e - 1), 1.0)


def dense_rows(X, rows):
    """Rows ``rows`` of ``X`` (numpy or scipy.sparse) as a dense float64 array."""
    part = X[rows]
    part = part.toarray() if sp.issparse(part) else part
    return np.asarray(part, dtype=np.float64)


def scaled_rows(X, rows):
    """``(U, s)``: rows ``rows`` of ``X`` divided by their :func:`row_scale` ``s``."""
    F = dense_rows(X, rows)
    s = row_scale(F)
    return F / s[:, None], s


def overflowed_rows(scores, live):
    """Rows of ``scores`` with a non-finite entry in a ``live`` column (a class that can
    be predicted: its constant term is finite), i.e. where a product overflowed."""
    with np.errstate(invalid="ignore"):
        return np.flatnonzero(~np.isfinite(scores[:, live]).all(axis=1))


def scale_back(C, s, b, relative):
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


def fix_linear_rows(out, X, W, b, relative=True):
    """``out`` (the plain ``X W^T + b``, shape (n, K)) with its overflowed rows
    recomputed on scaled rows (see the module docstring); modified in place."""
    b = np.broadcast_to(np.asarray(b, dtype=np.float64), (W.shape[0],))
    bad = overflowed_rows(out, np.isfinite(b))
    for i in range(0, bad.size, _ROWS):
        rows = bad[i:i + _ROWS]
        U, s = scaled_rows(X, rows)
        out[rows] = scale_back(U @ W.T, s, b, relative)
    return out


def linear_scores(X, W, b, relative=False):
    """``X W^T + b`` (X numpy or scipy.sparse, W (K, D)) that never holds NaN: rows
    that overflow are recomputed scaled, their scores the true values rounded
    (``+-inf`` beyond the float range) or, ``relative``, shifted per row so that
    they are finite (the softmax and the argmax are those of the true scores)."""
    W = np.asarray(W, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):  # such rows are recomputed below
        out = np.asarray(X @ W.T, dtype=np.float64) + b
    return fix_linear_rows(out, X, W, b, relative)


# ------------------------------------------------ Bayesian logistic predictions
def _scaled_design(X, rows, intercept):
    """``(Phi_u, s)``: the design rows ``[1, x]`` of ``rows`` divided by their scale."""
    F = dense_rows(X, rows)
    Phi = np.column_stack([np.ones(F.shape[0]), F]) if intercept else F
    s = row_scale(Phi)
    return Phi / s[:, None], s


def _probit_ratio(num, var_u, s):
    """``kappa(s^2 var_u) s num = num / sqrt(s^-2 + pi var_u / 8)``: MacKay's moderated
    activation from scaled moments (``+-inf`` where the variance vanishes)."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore", under="ignore"):
        inv = 1.0 / (s * s)
        r = num / np.sqrt(inv.reshape(inv.shape + (1,) * (num.ndim - 1)) +
                          (np.pi / 8.0) * var_u)
    return np.where(num == 0, 0.0, r)


def _moderated_rows(U, s, mean, cov, n_blocks):
    """:func:`~problin._core.bayes.moderated_log_proba` of scaled design rows ``U``:
    the same formulas with ``mu = s mu_u`` and ``var = s^2 var_u`` kept apart."""
    from .numerics import log_sigmoid, log_softmax
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
    from scipy import special
    return log_softmax(-special.logsumexp(logits, axis=2), axis=1)


def moderated_predict(X, intercept, mean, cov, n_blocks, block=None):
    """Moderated log predictive probabilities (``bayes.moderated_log_proba`` of
    ``bayes.activation_moments``) that are never NaN and stay exact far from
    the data: rows whose moments overflow (``x^T S x`` of a row at 1e200), or
    whose pairwise variances would, get the scaled formulas, whose limit is
    ``sigma(mu_u / sqrt(pi var_u / 8))``, not the ``0.5`` of ``kappa = 0``.
    ``block`` centres the row blocks (parameters at the centre ``c`` of the
    data); the scaled rows use ``x`` for ``x - c``, exact to ``|c| / |x|``,
    which is below rounding for every row that overflows."""
    from .bayes import activation_moments, moderated_log_proba
    with np.errstate(over="ignore", invalid="ignore"):
        mu, var = activation_moments(X, intercept, mean, cov, n_blocks, full=n_blocks > 1,
                                     block=block)
        out = moderated_log_proba(mu, var)
        n = X.shape[0]
        risky = ~np.isfinite(out).all(axis=1) | ~np.isfinite(mu).all(axis=1) | \
            ~np.isfinite(var.reshape(n, -1)).all(axis=1) | \
            (np.abs(var.reshape(n, -1)).max(axis=1, initial=0.0) > 1e300)
    for i in range(0, int(risky.sum()), _ROWS):
        rows = np.flatnonzero(risky)[i:i + _ROWS]
        U, s = _scaled_design(X, rows, intercept)
        out[rows] = _moderated_rows(U, s, mean, cov, n_blocks)
    return out


def sampled_predict(X, intercept, draws, n_blocks, block=None):
    """``bayes.sampled_log_proba`` that is never NaN: rows whose activations overflow
    (``inf - inf`` at rows holding 1e308) are recomputed by :func:`fix_sampled_rows`."""
    from .bayes import sampled_log_proba
    with np.errstate(over="ignore", invalid="ignore"):
        out = sampled_log_proba(X, intercept, draws, n_blocks, block=block)
    return fix_sampled_rows(out, X, intercept, draws, n_blocks)


def fix_sampled_rows(out, X, intercept, draws, n_blocks):
    """``out`` (``bayes.sampled_log_proba``) with its NaN rows (activations
    ``inf - inf`` at rows holding 1e308) recomputed from scaled rows: the
    activations ``s (phi_u^T w)`` are then finite or ``+-inf``, averaged over
    the draws in log space."""
    from scipy import special

    from .bayes import _activations, _draw_log_proba
    bad = np.flatnonzero(np.isnan(out).any(axis=1))
    if bad.size == 0:
        return out
    for i in range(0, bad.size, _ROWS):
        rows = bad[i:i + _ROWS]
        U, s = _scaled_design(X, rows, intercept)
        with np.errstate(over="ignore"):
            A = s[:, None, None] * _activations(U, draws, n_blocks)
        out[rows] = special.logsumexp(_draw_log_proba(A), axis=1) - np.log(draws.shape[0])
    return out
