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
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.linalg import lapack

from .._core.blocks import iter_blocks, small_blas
from .._core.moments.class_stats import ClassStats
from .._core.types import Matrix
from ..exceptions import SingularCovarianceWarning, warn_at_caller
from ._far_rows import fix_far_rows, linear_posterior_scores
from ._far_posterior import far_rows, refine_far_posterior

__all__ = ["GaussianModel", "gaussian_model", "feature_variances", "joint_log_likelihood",
           "draw"]

_LOG_2PI = np.log(2.0 * np.pi)

# The one rule for a singular covariance (see ``_regularise``). A feature is
# numerically constant when its standard deviation is below _CONSTANT times
# the magnitude of its mean: its spread is then rounding, or exactly zero (the
# class statistics keep a constant column's spread at 0 exactly, and noise of a
# few ulps at that; measured). A spread of more ulps is data: 1e-7 around 1e6 is
# 860 of them, three digits that predictions must not lose to a shift. The
# rest of a covariance is numerically singular when its correlation matrix has
# a squared Cholesky pivot below _SINGULAR. Either way the jitter is _JITTER
# times a variance of the feature itself (never of another feature, so that the
# rule transforms with the units of each column): large enough that
# rounding-level (1e-16 relative) changes of the scatter move log-densities by
# ~1e-10 relative, so weighted and duplicated rows, row order or chunking give
# the same model; small enough to leave every direction the data do determine
# as it is.
_CONSTANT = 64 * np.finfo(np.float64).eps
_SINGULAR = 1e-10
_JITTER = 1e-6


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

    def half_logdet_precision(self) -> np.ndarray:
        """``-log|Sigma_k| / 2 = sum_j log P_k,jj`` for every class, shape (K,)."""
        K = self.means.shape[0]
        if self.kind in ("diag", "spherical"):
            return np.sum(np.log(self.prec_chol), axis=1)
        diag = np.diagonal(self.prec_chol, axis1=-2, axis2=-1)
        return np.broadcast_to(np.sum(np.log(diag), axis=-1), (K,))


def _warn_singular(what: str, n_constant: int, correlated: bool) -> None:
    causes = []
    if n_constant:
        causes.append(f"{n_constant} feature(s) are constant, given variance {_JITTER:g} "
                      "times their variance over all the data")
    if correlated:
        causes.append(f"the features are collinear (or fewer samples than features), "
                      f"{_JITTER:g} times each variance added to the diagonal")
    warn_at_caller(f"{what} is singular: {'; '.join(causes)}. Set reg_covar > 0 to regularise "
                   "it explicitly.", SingularCovarianceWarning)


def _constant_features(var: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """Mask of features whose variance is zero to rounding: ``sd <= _CONSTANT |mean|``."""
    return var <= (_CONSTANT * np.abs(mean)) ** 2


def _regularise(S: np.ndarray, const: np.ndarray,
                base: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """The rule for a singular covariance ``S`` (``const``: its numerically constant
    features, by :func:`_constant_features`).

    1. A numerically constant feature ``j`` is cut
       loose: its row and column are set to zero (they are, up to rounding) and
       its variance to ``_JITTER * base_j``, ``base_j`` its variance over all
       the data (see :func:`feature_variances`).
    2. The covariance is scaled to its correlation matrix ``R = S / (s s^T)``,
       ``s_j = sqrt(S_jj)``. If ``R`` cannot be factored, or a squared pivot of its
       Cholesky factor is below ``_SINGULAR``, ``R + _JITTER I`` is factored
       instead: ``_JITTER`` times each (non-constant) variance is added to the
       diagonal of ``S``.

    The rule looks at ``S`` only through scale-free quantities and gives each
    feature a variance in its own units, so scaling or shifting a feature
    transforms the result with it; it leaves a well-conditioned ``S``
    untouched. Returns ``(U, S_reg, n_constant, correlated)``: the
    regularised covariance, its upper Cholesky factor (``S_reg = U^T U``), and
    what was done.
    """
    S = np.array(S, dtype=np.float64)
    if np.any(const):
        S[const, :] = 0.0
        S[:, const] = 0.0
        S[const, const] = _JITTER * base[const]
    s = np.sqrt(np.diag(S))
    R = S / np.outer(s, s)
    U, info = lapack.dpotrf(R, lower=0, clean=1)
    correlated = info != 0 or np.min(np.diag(U)) ** 2 < _SINGULAR
    if correlated:
        extra = np.where(const, 0.0, _JITTER)
        R[np.diag_indices_from(R)] += extra
        S[np.diag_indices_from(S)] += extra * np.diag(S)
        U, info = lapack.dpotrf(R, lower=0, clean=1)
        if info != 0:  # pragma: no cover - R is positive semidefinite up to rounding
            raise np.linalg.LinAlgError("the regularised covariance cannot be factored")
    return U * s, S, int(np.sum(const)), bool(correlated)


def _factor(S: np.ndarray, const: np.ndarray, base: np.ndarray,
            what: str) -> tuple[np.ndarray, np.ndarray]:
    """``(U, S_reg)``: ``S`` regularised by :func:`_regularise` where singular (with a
    warning naming ``what``) and its upper Cholesky factor, ``S_reg = U^T U``."""
    with small_blas(S.shape[0]):
        U, S_reg, n_constant, correlated = _regularise(S, const, base)
    if n_constant or correlated:
        _warn_singular(what, n_constant, correlated)
    return U, S_reg


def _positive(v: np.ndarray, mean: np.ndarray, base: np.ndarray, what: str) -> np.ndarray:
    """Variances ``v``, with a constant feature's set by step 1 of :func:`_regularise`."""
    const = _constant_features(v, mean)
    if not np.any(const):
        return v
    _warn_singular(what, int(np.sum(const)), False)
    return np.where(const, _JITTER * base, v)


def _triangular_inverse(U: np.ndarray) -> np.ndarray:
    """``P = U^{-1}`` of an upper Cholesky factor (LAPACK trtri): the precision
    factor, ``P P^T = Sigma^{-1}``, used by every later density evaluation."""
    P, info = lapack.dtrtri(U, lower=0)
    if info != 0:  # pragma: no cover - the factor has a positive diagonal
        raise np.linalg.LinAlgError("inverting the Cholesky factor failed")
    return P


def feature_variances(stats: ClassStats) -> np.ndarray:
    """Each feature's variance over all the data: the unit in which it is
    regularised (``reg_covar``, ``var_smoothing`` and the jitter of the rule in
    :func:`_regularise`), so that scaling or shifting a feature transforms its
    regularisation with it, shape (D,).

    A feature constant over all the data has no units of its own; it gets the
    mean of the others' (or 1 if nothing varies), the same in every class (so
    it adds the same to every class's log-density).
    """
    total = stats.total_var()
    n = float(stats.counts.sum())
    mean = stats.counts @ stats.means / n if n > 0 else np.zeros(stats.n_features)
    flat = _constant_features(total, mean)
    if np.all(flat):
        return np.ones_like(total)
    return np.where(flat, float(np.mean(total[~flat])), total)


def gaussian_model(stats: ClassStats, kind: str, log_priors: np.ndarray, reg: np.ndarray,
                   labels: np.ndarray) -> tuple[GaussianModel, Any]:
    """ML parameters from :class:`~problin._core.moments.class_stats.ClassStats`, plus ``reg``.

    ``Sigma_k = S_k / n_k`` ("full"), ``Sigma = sum_k (n_k / n) S_k`` ("tied"),
    the diagonals of ``S_k / n_k`` ("diag"), or ``lambda I`` with ``lambda =
    tr(Sigma) / D`` of the tied estimate ("spherical"); ``reg`` (per-feature
    variances, shape (D,), in each feature's own units; their mean for
    "spherical") is added to every diagonal. A singular covariance is
    regularised by the one rule of :func:`_regularise` (with a
    :class:`~problin.SingularCovarianceWarning`). Classes with no samples
    (``log_priors = -inf``) get a unit covariance that is never used. Returns
    ``(model, covariances)`` where ``covariances`` includes ``reg`` and any
    regularisation.
    """
    K, D = stats.means.shape
    reg = np.broadcast_to(np.asarray(reg, dtype=np.float64), (D,))
    seen = stats.counts > 0
    shift = stats.counts @ stats.means / stats.counts.sum()
    # Each feature's variance over all the data: the unit of its jitter.
    base = feature_variances(stats)
    if kind == "full":
        covs = stats.covariances() + np.diag(reg)
        covs[~seen] = np.eye(D)
        chol = np.empty_like(covs)
        for k in range(K):
            chol[k], covs[k] = _factor(covs[k], _constant_features(np.diag(covs[k]),
                                                                   stats.means[k]),
                                       base, f"the covariance of class {labels[k]!r}")
        prec = np.stack([_triangular_inverse(U) for U in chol])
        return GaussianModel(kind, log_priors, stats.means, chol, prec, shift), covs
    if kind == "tied":
        # Constant in the pooled covariance: constant to rounding within every class,
        # each at its own magnitude (the largest class mean would count the spread
        # of a class near zero as rounding when another class sits at 1e10).
        const = np.all(_constant_features(stats.var()[seen] + reg, stats.means[seen]), axis=0)
        U, cov = _factor(stats.covariances() + np.diag(reg), const, base,
                         "the shared (tied) covariance")
        prec = _triangular_inverse(U)
        return GaussianModel(kind, log_priors, stats.means, U, prec, shift), cov
    if kind == "diag":
        var = stats.var() + reg
        var[~seen] = 1.0
        for k in range(K):
            var[k] = _positive(var[k], stats.means[k], base,
                               f"the (diagonal) covariance of class {labels[k]!r}")
        std = np.sqrt(var)
        return GaussianModel(kind, log_priors, stats.means, std, 1.0 / std, shift), var
    if kind == "spherical":
        lam = float(np.sum(stats.sq) / stats.counts.sum()) / D + float(np.mean(reg))
        size = np.max(np.abs(stats.means[seen]), axis=0, initial=0.0)
        lam = float(_positive(np.array([lam]), np.sqrt(np.mean(size ** 2, keepdims=True)),
                              np.array([np.mean(base)]),
                              "the spherical covariance lambda I")[0])
        std = np.full((K, D), np.sqrt(lam))
        return GaussianModel(kind, log_priors, stats.means, std, 1.0 / std, shift), lam
    raise ValueError(f"unknown covariance type {kind!r}")


def joint_log_likelihood(X: Matrix, model: GaussianModel, relative: bool = False) -> np.ndarray:
    """``a_k(x) = log pi_k + log N(x | mu_k, Sigma_k)`` for every row, shape (N, K).

    One pass over row blocks; temporaries are block-sized. Never NaN: rows far
    from every class, where the quadratic forms overflow, are recomputed by
    per-row scaling (:mod:`._far_rows`), their ``a_k`` then ``-inf`` where they lie
    below the float range. ``relative``: ``a_k`` minus a per-row term, finite
    for the most probable class, so that their softmax is the posterior the
    model implies even there (linear scores for a shared covariance).
    """
    with np.errstate(over="ignore", invalid="ignore"):  # overflow: the rows fixed below
        if relative and model.kind in ("tied", "spherical"):
            return linear_posterior_scores(X, model)
        plain = _plain_joint_log_likelihood(X, model)
        far = far_rows(plain, model) if relative else None
        out = fix_far_rows(plain, X, model, relative)
    if far is None or not far.size:
        return out
    # Far rows: the posterior's differences formed exactly (:mod:`._far_posterior`).
    return refine_far_posterior(out, X, model, far)


def _plain_joint_log_likelihood(X: Matrix, model: GaussianModel) -> np.ndarray:
    """:func:`joint_log_likelihood` by the quadratic forms as they are (may overflow)."""
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


def draw(model: GaussianModel, n_samples: int,
         rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
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
