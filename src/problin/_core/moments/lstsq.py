"""Least-squares and ridge solves from triangular factors, and from Gram matrices.

:func:`solve_factors` solves ``min |Phi W - T|^2 + alpha |W|^2`` from the R
factors of ``[Phi, T]`` (:class:`~problin._core.moments.least_squares.Factors`), as
accurately as QR of the rows would: a triangular solve in the equilibrated
basis (columns scaled to unit norm, where the condition number is smallest
and which the rounding of the data respects); the minimum-norm solution from
an SVD of the small ``R`` when the design is rank-deficient; ridge from the
filter factors ``s / (s^2 + alpha)`` of the SVD of ``R``. It reports the rank and
an estimate of the digits that the solution can be trusted to, from the
standard bound for least squares (relative error ``~ eps kappa (1 + kappa
tan theta)``, ``theta`` the angle between the targets and the fit; Higham
2002, ch. 20).

:func:`solve_normal_equations` is the Gram-matrix solve that the iterative
q-norm solvers use on ``R^T R``.
"""
from dataclasses import dataclass

import numpy as np
from scipy import linalg
from scipy.linalg import lapack

from ..linalg import resolved_directions, solve_psd
from .least_squares import Factors
from .tsqr import triangular_rcond

__all__ = ["LeastSquaresSolution", "solve_factors", "solve_normal_equations"]

_EPS = np.finfo(np.float64).eps
# A singular value below this many times eps sqrt(D) of the largest, times the data's
# own rounding along its direction (relative to the centred columns: Factors.spreads),
# is rank deficiency: no rounding of the data resolves it.
_RANK_SLACK = 10.0


@dataclass
class LeastSquaresSolution:
    """``coef`` (D x K); the numerical ``rank``; ``condition``, the (estimated) condition
    number of the equilibrated matrix solved; ``digits``, the significant digits the
    coefficients can be trusted to by the error bound of least squares."""

    coef: np.ndarray
    rank: int
    condition: float
    digits: float


def solve_factors(F: Factors, alpha: float = 0.0) -> LeastSquaresSolution:
    """Least squares (``alpha = 0``: minimum norm if rank-deficient) or ridge from factors.

    Parameters
    ----------
    F : Factors
        ``R`` factors of ``[Phi, T]`` (centred or raw).
    alpha : float
        Ridge penalty ``alpha |W|^2`` (``alpha/2`` in the 1/2-scaled objective).

    Returns
    -------
    LeastSquaresSolution
    """
    d, k = F.xt.shape
    live = np.flatnonzero(F.live)
    if alpha > 0.0:  # (dead columns get W = 0)
        return _ridge(F.xx[np.ix_(live, live)], F.xt[live], alpha, live, d)
    return _triangular_or_svd(F.xx[np.ix_(live, live)], F.xt[live], F.tt, live, d,
                              spreads=F.spreads[live])


def _ridge(R: np.ndarray, rhs: np.ndarray, alpha: float, live: np.ndarray,
           d: int) -> LeastSquaresSolution:
    """Ridge ``min |R W - rhs|^2 + alpha |W|^2`` (rows ``live`` of the D x K result) from the
    SVD ``R = U S V^T``: ``W = V diag(s / (s^2 + alpha)) U^T rhs``, each filter factor formed
    directly, so that W keeps its digits at any ``alpha``. (The QR of ``[R; sqrt(alpha) I]``
    forms W as a difference of terms of the targets' size: relative error ~eps sqrt(alpha)
    / |R|, 1e-7 at alpha = 1e20 |R|^2 and every digit lost, W = 0, beyond ~1e32 |R|^2.)
    ``condition``: that of the augmented matrix, ``sqrt((s_1^2 + alpha) / (s_n^2 + alpha))``."""
    W = np.zeros((d, rhs.shape[1]))
    if live.size == 0:
        return LeastSquaresSolution(W, 0, 1.0, 16.0)
    U, s, Vt = _svd(R)
    W[live] = Vt.T @ ((s / (s * s + alpha))[:, None] * (U.T @ rhs))
    condition = float(np.sqrt((s[0] * s[0] + alpha) / (s[-1] * s[-1] + alpha)))
    digits = float(-np.log10(max(2.0 * _EPS * condition, _EPS)))
    return LeastSquaresSolution(W, live.size, condition, digits)


def _triangular_or_svd(R: np.ndarray, rhs: np.ndarray, tt: np.ndarray, live: np.ndarray, d: int, *,
                       spreads: np.ndarray | None = None) -> LeastSquaresSolution:
    """Solve ``R W = rhs`` (rows ``live`` of the D x K result; the others are zero) in the
    basis of unit columns: by back substitution when ``R`` is well conditioned, else by
    the truncated SVD: the minimum-norm least-squares solution.

    A singular direction is dropped where the data's rounding along it hides it
    (:func:`~problin._core.linalg.resolved_directions`; column ``j``'s rounding is
    ``eps spreads_j`` of its norm)."""
    k = rhs.shape[1]
    W = np.zeros((d, k))
    if live.size == 0:
        return LeastSquaresSolution(W, 0, 1.0, 16.0)
    spreads = np.ones(live.size) if spreads is None else spreads
    norms = np.sqrt(np.sum(R * R, axis=0))
    Rs = R / norms
    rcond = triangular_rcond(Rs)
    tol = _RANK_SLACK * np.sqrt(max(d, 1)) * _EPS
    if rcond > 1e3 * tol * float(spreads.max()) * live.size:
        # kappa_1 far below the rank threshold of every direction
        Ws = linalg.solve_triangular(Rs, rhs, check_finite=False)
        rank, condition = live.size, 1.0 / max(rcond, _EPS * _EPS)
        residual = np.zeros((0, k))
    else:
        U, s, Vt = _svd(Rs)
        kept = resolved_directions(s, Vt, spreads, d, _RANK_SLACK)
        rank = int(np.sum(kept))
        s_kept = s[kept]
        condition = float(s_kept[0] / s_kept[-1]) if rank else 1.0
        Y = (U[:, kept].T @ rhs) / s_kept[:, None]  # V_r^T w_s = Y fits all it can
        if rank < live.size:
            # The rank is decided scale-free, but "minimum norm" is in the units of
            # the features: the w = D^-1 w_s of least |w| with V_r^T D w = Y is
            # w = M^T (M M^T)^-1 Y for M = V_r^T D; with M^T = Q T (thin QR),
            # w = Q T^-T Y. One SVD of R, then O(D r^2).
            Q, T = linalg.qr(Vt[kept].T * norms[:, None], mode="economic", check_finite=False)
            Ws = norms[:, None] * (Q @ linalg.solve_triangular(T, Y, trans="T",
                                                                check_finite=False))
        else:
            Ws = Vt.T @ Y
        residual = U[:, ~kept].T @ rhs  # the part of the targets no kept direction fits
    W[live] = Ws / norms[:, None]
    fit = np.sqrt(np.sum((Rs @ Ws) ** 2, axis=0))
    miss = np.sqrt(np.sum(tt * tt, axis=0) + np.sum(residual * residual, axis=0))
    tan = float(np.max(miss / np.maximum(fit, np.finfo(np.float64).tiny), initial=0.0))
    error = _EPS * condition * (2.0 + condition * min(tan, 1e300 / condition))
    digits = float(-np.log10(max(error, _EPS)))
    return LeastSquaresSolution(W, rank, condition, digits)


def _svd(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """SVD by divide and conquer, or by the QR iteration should that fail to converge."""
    try:
        return linalg.svd(A, check_finite=False)
    except linalg.LinAlgError:  # pragma: no cover - gesdd's rare failures
        return linalg.svd(A, check_finite=False, lapack_driver="gesvd")


def solve_normal_equations(G: np.ndarray, C: np.ndarray, alpha: float = 0.0, *,
                           rcond: float = 1e-12) -> tuple[np.ndarray, int]:
    """``W`` solving ``(G + alpha I) W = C`` for PSD ``G``; returns ``(W, rank)``.

    Cholesky of the matrix scaled to unit diagonal (so badly scaled columns do
    not look singular); when it is numerically singular (pivots below
    ``rcond`` times the largest) the minimum-norm solution, that is
    ``Phi^+ T`` -- pseudo-inverse semantics -- from an eigendecomposition.
    """
    A = np.array(G, dtype=np.float64)
    A[np.diag_indices_from(A)] += alpha
    diag = np.diag(A).copy()
    if A.size and np.all(diag > 0):
        scale = 1.0 / np.sqrt(diag)
        c, info = lapack.dpotrf(A * np.outer(scale, scale), lower=0, clean=1)
        pivots = np.square(np.diag(c))
        if info == 0 and pivots.min() > rcond * pivots.max():
            Cs = C * (scale[:, None] if C.ndim == 2 else scale)
            Ws = linalg.cho_solve((c, False), Cs, check_finite=False)
            return Ws * (scale[:, None] if C.ndim == 2 else scale), A.shape[0]
    return solve_psd(A, C, rcond=rcond)
