"""Gaussian class conditionals: parameters from sufficient statistics, densities, draws.

Pure functions over a small :class:`GaussianModel`; the estimators in
``gaussian.py`` and ``naive_bayes.py`` only validate and store. Each class
covariance is factored once, ``Sigma_k = U_k^T U_k`` (Cholesky), and kept as
the precision factor ``P_k = U_k^{-1}`` (upper triangular, ``P_k P_k^T =
Sigma_k^{-1}``), so a block of rows costs one GEMM per class::

    log N(x | mu_k, Sigma_k) = -D/2 log 2 pi + sum_j log P_k,jj - |(x - mu_k)^T P_k|^2 / 2.

Rows are centred on the overall mean first (a block-sized copy), so data far
from the origin lose no precision in the quadratic forms.
"""
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.linalg import lapack

from .._core.blocks import iter_blocks
from .._core.linalg import cholesky
from ..exceptions import SingularCovarianceWarning

__all__ = ["GaussianModel", "gaussian_model", "joint_log_likelihood", "draw"]

_LOG_2PI = np.log(2.0 * np.pi)
_RCOND = 1e3 * np.finfo(np.float64).eps  # smallest pivot ratio of a usable factor


@dataclass
class GaussianModel:
    """Fitted parameters of ``p(x, C_k) = pi_k N(x | mu_k, Sigma_k)``.

    ``kind`` is "full" (``chol``: (K, D, D) upper factors of ``Sigma_k``),
    "tied" (one (D, D) factor), or "diag"/"spherical" (``chol``: (K, D) standard
    deviations). ``prec_chol`` is ``chol``'s inverse (its reciprocal for the
    diagonal kinds); ``shift`` the point the rows are centred on.
    """

    kind: str
    log_priors: np.ndarray
    means: np.ndarray
    chol: np.ndarray
    prec_chol: np.ndarray
    shift: np.ndarray

    def half_logdet_precision(self):
        """``-log|Sigma_k| / 2 = sum_j log P_k,jj`` for every class, shape (K,)."""
        K = self.means.shape[0]
        if self.kind in ("diag", "spherical"):
            return np.sum(np.log(self.prec_chol), axis=1)
        diag = np.diagonal(self.prec_chol, axis1=-2, axis2=-1)
        return np.broadcast_to(np.sum(np.log(diag), axis=-1), (K,))


def _warn_singular(what, jitter):
    warnings.warn(f"{what} is singular (collinear or constant features, or fewer samples "
                  f"than features); added {jitter:.3g} to its diagonal. Set reg_covar > 0 to "
                  "regularise it explicitly.", SingularCovarianceWarning, stacklevel=6)


def _factor(S, what):
    """Upper Cholesky factor of ``S`` with jitter if singular; warns naming ``what``."""
    chol = cholesky(S)
    U = chol.factor[0]
    d = np.diag(U)
    if chol.jitter > 0 or d.min(initial=np.inf) ** 2 <= _RCOND * d.max(initial=0.0) ** 2:
        if chol.jitter == 0:  # tiny pivots: factor again with explicit jitter
            jitter = _RCOND * max(float(np.mean(np.diag(S))), np.finfo(float).tiny)
            U = cholesky(S + jitter * np.eye(S.shape[0])).factor[0]
        else:
            jitter = chol.jitter
        _warn_singular(what, jitter)
        return U, jitter
    return U, 0.0


def _triangular_inverse(U):
    """``P = U^{-1}`` of an upper Cholesky factor (LAPACK trtri): the precision
    factor, ``P P^T = Sigma^{-1}``, used by every later density evaluation."""
    P, info = lapack.dtrtri(U, lower=0)
    if info != 0:  # pragma: no cover - the factor has a positive diagonal
        raise np.linalg.LinAlgError("inverting the Cholesky factor failed")
    return P


def _positive(v, what):
    """Variances ``v`` (made strictly positive with jitter and a warning if needed)."""
    if np.all(v > 0):
        return v, 0.0
    jitter = max(1e-12 * float(np.mean(v)), 1e-12)
    _warn_singular(what, jitter)
    return v + jitter, jitter


def gaussian_model(stats, kind, log_priors, reg_covar, labels):
    """ML parameters from :class:`~problin._core.stats.ClassStats`, plus ``reg_covar``.

    ``Sigma_k = S_k / n_k`` ("full"), ``Sigma = sum_k (n_k / n) S_k`` ("tied"),
    the diagonals of ``S_k / n_k`` ("diag"), or ``lambda I`` with ``lambda =
    tr(Sigma) / D`` of the tied estimate ("spherical"); ``reg_covar`` is added
    to every diagonal. Classes with no samples (``log_priors = -inf``) get a
    unit covariance that is never used. Returns ``(model, covariances)`` where
    ``covariances`` includes ``reg_covar`` and any jitter.
    """
    K, D = stats.means.shape
    seen = stats.counts > 0
    shift = stats.counts @ stats.means / stats.counts.sum()
    eye = np.eye(D)
    if kind == "full":
        covs = stats.covariances() + reg_covar * eye
        covs[~seen] = eye
        chol = np.empty_like(covs)
        for k in range(K):
            chol[k], jitter = _factor(covs[k], f"the covariance of class {labels[k]!r}")
            covs[k] += jitter * eye
        prec = np.stack([_triangular_inverse(U) for U in chol])
        return GaussianModel(kind, log_priors, stats.means, chol, prec, shift), covs
    if kind == "tied":
        cov = stats.covariances() + reg_covar * eye
        U, jitter = _factor(cov, "the shared (tied) covariance")
        cov += jitter * eye
        prec = _triangular_inverse(U)
        return GaussianModel(kind, log_priors, stats.means, U, prec, shift), cov
    if kind == "diag":
        var = stats.var() + reg_covar
        var[~seen] = 1.0
        for k in range(K):
            var[k], _ = _positive(var[k], f"the (diagonal) covariance of class {labels[k]!r}")
        std = np.sqrt(var)
        return GaussianModel(kind, log_priors, stats.means, std, 1.0 / std, shift), var
    if kind == "spherical":
        lam = float(np.sum(stats.sq) / stats.counts.sum()) / D + reg_covar
        lam = float(_positive(np.array([lam]), "the spherical covariance lambda I")[0][0])
        std = np.full((K, D), np.sqrt(lam))
        return GaussianModel(kind, log_priors, stats.means, std, 1.0 / std, shift), lam
    raise ValueError(f"unknown covariance type {kind!r}")


def joint_log_likelihood(X, model):
    """``a_k(x) = log pi_k + log N(x | mu_k, Sigma_k)`` for every row, shape (N, K).

    One pass over row blocks; temporaries are block-sized.
    """
    K, D = model.means.shape
    const = model.log_priors + model.half_logdet_precision() - 0.5 * D * _LOG_2PI
    M = model.means - model.shift  # centred means
    out = np.empty((X.shape[0], K))
    if model.kind == "tied":
        MP = M @ model.prec_chol  # (K, D): each centred mean times P
        lin = -0.5 * np.sum(MP * MP, axis=1)
    for lo, hi, Xb in iter_blocks(X):
        Xc = np.subtract(Xb, model.shift, dtype=np.float64)
        if model.kind == "tied":
            Y = Xc @ model.prec_chol
            out[lo:hi] = Y @ MP.T
            out[lo:hi] += lin
            out[lo:hi] -= 0.5 * np.einsum("ij,ij->i", Y, Y)[:, None]
        else:
            # Per class, not expanded into x^2 and x terms: a tiny variance (a
            # feature constant within a class) would cancel catastrophically.
            R, Y = np.empty_like(Xc), np.empty_like(Xc)
            for k in range(K):
                np.subtract(Xc, M[k], out=R)
                if model.kind == "full":
                    np.matmul(R, model.prec_chol[k], out=Y)
                else:
                    np.multiply(R, model.prec_chol[k], out=Y)
                out[lo:hi, k] = -0.5 * np.einsum("ij,ij->i", Y, Y)
    out += const
    return out


def draw(model, n_samples, rng):
    """``n_samples`` draws ``(X, codes)``: classes from ``pi``, then ``x ~ N(mu_k, Sigma_k)``.

    Rows come in random order (not grouped by class).
    """
    K, D = model.means.shape
    pi = np.exp(model.log_priors)
    counts = rng.multinomial(n_samples, pi / pi.sum())
    codes = np.repeat(np.arange(K), counts)
    Z = rng.standard_normal((n_samples, D))
    for k in np.flatnonzero(counts):
        rows = codes == k
        if model.kind in ("diag", "spherical"):
            Z[rows] *= model.chol[k]
        else:
            Z[rows] = Z[rows] @ (model.chol[k] if model.kind == "full" else model.chol)
        Z[rows] += model.means[k]
    order = rng.permutation(n_samples)
    return Z[order], codes[order]
