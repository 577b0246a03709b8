"""Mergeable R factors: least squares as accurate as QR, in one pass over row blocks.

The normal equations square the condition number of the design: a Gram
matrix ``S = Z^T Z`` accurate to rounding carries errors of ``eps |Z|^2``,
which a solve amplifies by ``kappa(Z)^2``. A triangular factor ``R`` with
``R^T R = S`` *computed from the rows by Householder QR* is instead exact for
data perturbed by ``eps |Z|`` column by column, and solving from it loses only
``kappa(Z)`` (the accuracy of ``numpy.linalg.lstsq``). Its last columns (those
of the targets) are ``Q^T t``: the residual sum of squares is read from them
as a sum of squares, with no cancellation.

``R`` factors merge exactly like the moments they replace: the factor of two
sets of rows is the ``R`` of the stacked factors, ``[R_a; R_b]``, plus one row
``sqrt(n_a n_b / n) (mean_b - mean_a)`` for the change of centre (the
Chan-Golub-LeVeque term ``c delta delta^T`` of the scatter, written as a row).
LAPACK's triangular-pentagonal QR (``dtpqrt``) re-factors such a stack at the
cost of the new rows alone, so a running factor absorbs each row block as it
comes (:class:`QRRunning`) and any two factors merge (:func:`stack_qr`) --
within a pass, across ``partial_fit`` calls and in Dask's reduction tree (the
tree of TSQR, Demmel, Grigori, Hoemmen & Langou 2012).

Householder QR of a block costs about 2.5 times the block's ``syrk``, so a
pass first forms the (centred) Gram matrix as before and converts it to ``R``
by Cholesky (:func:`gram_factor`) whenever that loses no digits that matter:
the equilibrated features are well conditioned and every target keeps a
residual well above the rounding of its sum of squares. Only otherwise are
the rows read again and factored by Householder (``least_squares.moments``).
A factor merged from well-conditioned row ranges is accurate: each range's
rounding is small next to its own smallest singular value, and that of all
rows is at least as large.
"""
import numpy as np
from scipy import linalg
from scipy.linalg import lapack

from .class_stats import merge_means

__all__ = ["QRRunning", "stack_qr", "gram_factor", "centre_rows", "triangular_rcond"]

# Where the Cholesky factor of the Gram is used instead of Householder QR:
# kappa_1 of the features' equilibrated Gram (correlation) matrix at most
# _GRAM_CONDITION (so its rounding, ~eps kappa, stays near 1e-12 of the
# solution), and every target's residual sum of squares at least
# _GRAM_RESIDUAL of its total plus that of the fit (so the difference keeps
# ~12 digits).
_GRAM_CONDITION = 1e4
_GRAM_RESIDUAL = 1e-4
_EPS = np.finfo(np.float64).eps


def _block_size(n: int) -> int:
    """Panel width for ``dtpqrt``: narrow panels are faster on tall, thin blocks (measured:
    8 columns ~2.2 x syrk for 52 columns, 16 for 200 columns)."""
    return max(1, min(n, 8 if n <= 64 else 16))


def stack_qr(R: np.ndarray, B: np.ndarray) -> np.ndarray:
    """The triangular factor of ``[R; B]``: ``R`` upper triangular (n x n), ``B`` (m x n).

    Both are overwritten when they are Fortran-ordered float64 arrays (no copy).
    """
    n = R.shape[0]
    if n == 0:
        return R
    a, _, _, info = lapack.dtpqrt(0, _block_size(n), R, B, overwrite_a=1, overwrite_b=1)
    if info != 0:  # pragma: no cover - only for invalid arguments
        raise RuntimeError(f"LAPACK dtpqrt failed (info={info})")
    return np.triu(a)


def centre_rows(Xb: np.ndarray, Tb: np.ndarray, wb: np.ndarray | None,
                B: np.ndarray) -> tuple[float, np.ndarray | None, np.ndarray | None]:
    """Write ``sqrt(w) ([X_b, T_b] - mean)`` into ``B`` (m rows); returns ``(weight, shift, u)``.

    The weighted mean is ``shift + u``: ``shift`` its rounded value, ``u`` the
    residual mean of the rows centred on it, which are then centred again, so
    that the rows sit on their mean to rounding however far from zero the data
    lie (the first-order error ``n u u^T`` cannot be subtracted from an R factor).
    """
    d = Xb.shape[1]
    B[:, :d] = Xb
    B[:, d:] = Tb
    weights = np.ones(B.shape[0]) if wb is None else wb
    total = float(weights.sum())
    if not total > 0:
        return 0.0, None, None
    shift = (weights @ B) / total
    B -= shift
    u = (weights @ B) / total
    B -= u
    if wb is not None:
        B *= np.sqrt(wb)[:, None]
    return total, shift, u


class QRRunning:
    """Weight, mean (``origin + offset``) and the R factor of the centred rows, block by block.

    ``origin`` is a point near the data (where the first block was centred);
    ``R`` is upper triangular with ``R^T R`` the centred scatter.
    """

    def __init__(self, origin: np.ndarray, n_features: int) -> None:
        self.origin, self.n_features, self.weight = origin, n_features, 0.0
        self.offset = np.zeros(origin.size)
        self.R = np.zeros((origin.size, origin.size), order="F")

    def add(self, n: float, shift: np.ndarray, u: np.ndarray, B: np.ndarray) -> None:
        """Absorb a block of weight ``n`` whose rows, centred on ``shift + u``, fill all
        but the last row of ``B``; that row is overwritten (with the centre's change)."""
        self.weight, self.origin, self.offset, delta, c = merge_means(
            self.weight, self.origin, self.offset, n, shift, u)
        self.weight = float(self.weight)
        B[-1] = np.sqrt(c) * delta
        self.R = np.asfortranarray(stack_qr(self.R, B))


def gram_factor(S: np.ndarray, n_features: int, weight: float,
                mean: np.ndarray) -> np.ndarray | None:
    """``R`` (upper triangular) with ``R^T R = S`` by Cholesky, or ``None`` where that loses digits.

    ``S`` is the centred scatter of ``[x, t]``, ``weight`` and ``mean`` those of
    the rows. Features whose centred spread is below the rounding of their
    values (constant columns) get zero rows and columns. ``None`` when the
    equilibrated features are too ill-conditioned (``_GRAM_CONDITION``) or a
    residual too small (``_GRAM_RESIDUAL``): the caller then factors the rows
    themselves. A non-finite ``S`` gives a non-finite ``R``.
    """
    size, d = S.shape[0], n_features
    if not np.all(np.isfinite(S)):
        return np.full((size, size), np.nan)
    R = np.zeros((size, size), order="F")
    diag = np.diagonal(S)
    live = np.flatnonzero(diag[:d] > np.square(16.0 * _EPS) * (diag[:d]
                                                                + weight * mean[:d] ** 2))
    Rt = np.zeros((0, size - d))
    Ws = np.zeros((0, size - d))
    if live.size:
        s = 1.0 / np.sqrt(diag[live])
        A = S[np.ix_(live, live)] * np.outer(s, s)  # unit diagonal
        c, info = lapack.dpotrf(A, lower=0, clean=1)
        if info != 0:
            return None
        rcond, info = lapack.dpocon(c, float(np.max(np.sum(np.abs(A), axis=0))))
        if info != 0 or not rcond * _GRAM_CONDITION >= 1.0:
            return None
        # R_xx = c D^-1 and R_xx^T R_xt = C, i.e. c^T R_xt = D C.
        Rt = linalg.solve_triangular(c, S[live, d:] * s[:, None], trans="T", check_finite=False)
        Ws = linalg.solve_triangular(c, Rt, check_finite=False)  # equilibrated coefficients
        R[np.ix_(live, live)] = c / s
        R[live, d:] = Rt
    E = S[d:, d:] - Rt.T @ Rt  # residual scatter of the targets
    need = _GRAM_RESIDUAL * (np.diagonal(S)[d:] + np.sum(Ws * Ws, axis=0))
    if np.any(np.diagonal(E) < need):
        return None
    R[d:, d:] = _psd_factor(E)
    return R


def _psd_factor(E: np.ndarray) -> np.ndarray:
    """Upper triangular ``F`` with ``F^T F = E``, a small PSD matrix (collinear outputs
    make it singular, so not by Cholesky)."""
    vals, vecs = linalg.eigh(E, check_finite=False)
    F = np.sqrt(np.maximum(vals, 0.0))[:, None] * vecs.T
    return linalg.qr(F, mode="r", check_finite=False)[0]


def triangular_rcond(R: np.ndarray) -> float:
    """LAPACK's estimate of ``1 / kappa_1(R)`` for an upper triangular ``R`` (0 if singular)."""
    if R.shape[0] == 0:
        return 1.0
    if not np.all(np.diagonal(R) != 0):
        return 0.0
    rcond, _ = lapack.dtrcon(np.asfortranarray(R))
    return float(rcond)

