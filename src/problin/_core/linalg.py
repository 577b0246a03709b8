"""Dense linear algebra on D x D matrices: Gram kernels and Cholesky solves.

Rules (docs/design.md, numerical rules): never ``inv``; factor once with Cholesky, add
jitter to the diagonal only when the matrix is numerically singular, and
say so; log-determinants come from the Cholesky diagonal.
"""
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache, wraps
from typing import Any, TypeVar, cast

import numpy as np
import scipy.sparse as sp
from scipy import linalg
from scipy.linalg import lapack

from .blocks import small_blas
from .types import Matrix

__all__ = [
    "column_sums", "resolved_directions", "new_gram", "add_weighted_gram", "add_intercept_gram",
    "symmetrize", "Cholesky", "cholesky",
    "identified_columns", "IDENTIFIED_RTOL", "solve_psd", "equilibrated_cholesky", "inverse_from_equilibrated",
]

_F = TypeVar("_F", bound=Callable[..., Any])
# Cholesky factors below this order are inverted by trtri and one product (see
# Cholesky.inverse); from it on by potri, whose lauum saves half the product.
_TINY_INVERSE = 64
# The pivot of the unit-diagonal (equilibrated) factor below which a parameter counts
# as not identified (equilibrated_cholesky, identified_columns).
IDENTIFIED_RTOL = 1e-9


def _small_blas(func: _F) -> _F:
    """Run ``func(A, ...)`` (A: a p x p matrix) with single-threaded BLAS for small p."""
    @wraps(func)
    def wrapper(A: np.ndarray, *args: Any, **kwargs: Any) -> Any:
        shape = A.shape if isinstance(A, np.ndarray) else np.shape(A)
        with small_blas(shape[0] if len(shape) == 2 else 0):
            return func(A, *args, **kwargs)
    return cast(_F, wrapper)


def column_sums(A: np.ndarray) -> np.ndarray:
    """Column sums of a dense row block, by one gemv: numpy's reduction over the rows
    of a C-ordered block with few columns is ~6x slower (20 vs 3 us at 1,310 x 9),
    which made the intercept's sums a third of a softmax gradient pass."""
    return np.ones(A.shape[0], dtype=A.dtype) @ A


def resolved_directions(s: np.ndarray, Vt: np.ndarray, spreads: np.ndarray | None,
                        n_features: int, slack: float = 10.0) -> np.ndarray:
    """Which singular directions of a data factor (values ``s`` descending, right vectors
    the rows of ``Vt``) the data resolve: ``s_i`` above ``slack sqrt(D) eps s_0`` times
    the data's rounding along ``v_i``, ``|spreads * v_i|`` (``spreads``: each column's
    raw-to-centred size; None: 1). A column far from zero is rounded more only along
    its own direction, not along those of the other columns."""
    if not (s.size and s[0] > 0):
        return np.zeros(s.size, dtype=bool)
    rounding = 1.0 if spreads is None else np.sqrt(np.sum((Vt * spreads) ** 2, axis=1))
    eps = np.finfo(np.float64).eps
    return np.asarray(s > slack * np.sqrt(max(n_features, 1)) * eps * s[0] * rounding)


def new_gram(d: int) -> np.ndarray:
    """A zeroed D x D accumulator for :func:`add_weighted_gram`."""
    return np.zeros((d, d), order="F")


def add_weighted_gram(G: np.ndarray, Xb: Matrix, r: np.ndarray,
                      buffer: np.ndarray | None = None) -> np.ndarray:
    """``G += Xb^T diag(r) Xb`` for one block; returns ``G`` (full and symmetric).

    Non-negative weights form ``B = sqrt(r) * Xb`` and use ``B^T B``, which
    numpy hands to BLAS ``syrk`` (half the flops of a general product,
    symmetric by construction, GIL released so blocks can run in parallel
    threads); signed weights fall back to ``Xb^T (r * Xb)``. ``buffer`` (at
    least ``Xb.shape``) is reused for the weighted copy so a pass allocates
    it once.
    """
    if sp.issparse(Xb):
        G += (Xb.T @ Xb.multiply(r[:, None])).toarray()
        return G
    n = Xb.shape[0]
    B = np.empty(Xb.shape) if buffer is None else buffer[:n]
    if np.all(r >= 0):
        # B may be float32 (a single-precision Hessian): products per block
        # in float32, accumulated over blocks in float64.
        np.multiply(Xb, np.sqrt(r)[:, None], out=B, casting="unsafe")
        G += B.T @ B
    else:
        np.multiply(Xb, r[:, None], out=B, casting="unsafe")
        G += Xb.astype(B.dtype, copy=False).T @ B
    return G


@lru_cache(maxsize=16)
def _strict_lower(n: int) -> np.ndarray:
    """The mask of the entries below the diagonal of an n x n matrix (cached: building it
    costs more than the copy for the small matrices of a small fit)."""
    mask = np.tri(n, n, -1, dtype=bool)
    mask.flags.writeable = False
    return mask


def add_intercept_gram(G: np.ndarray, Xb: Matrix, hb: np.ndarray, intercept: bool, dtype: Any,
                       buffer: np.ndarray | None) -> np.ndarray | None:
    """``G += [1, X_b]^T diag(h_b) [1, X_b]``; returns the weighted-copy buffer for reuse.

    Non-negative weights (every convex family): ``B = sqrt(h_b) [1, X_b]`` and
    ``B^T B``, one ``syrk`` including the intercept's row, in ``dtype``.
    """
    if sp.issparse(Xb) or not np.all(hb >= 0):
        _add_bordered_gram(G, Xb, hb, intercept)
        return buffer
    off = int(intercept)
    if buffer is None or buffer.shape[0] < Xb.shape[0]:
        buffer = np.empty((Xb.shape[0], Xb.shape[1] + off), dtype=dtype)
    B, root = buffer[:Xb.shape[0]], np.sqrt(hb)
    if off:
        B[:, 0] = root
    np.multiply(Xb, root[:, None], out=B[:, off:], casting="unsafe")
    G += B.T @ B
    return buffer


def _add_bordered_gram(G: np.ndarray, Xb: Matrix, hb: np.ndarray, intercept: bool) -> None:
    """``G += [1, X_b]^T diag(h_b) [1, X_b]`` for sparse blocks or signed weights."""
    off = int(intercept)
    add_weighted_gram(G[off:, off:], Xb, hb)
    if intercept:
        Xth = np.asarray(hb @ Xb, dtype=np.float64).ravel()
        G[0, 0] += hb.sum()
        G[0, 1:] += Xth
        G[1:, 0] += Xth


def symmetrize(G: np.ndarray) -> np.ndarray:
    """Copy the upper triangle onto the lower one (in place) and return ``G``.
    (A masked copy: 2-4x faster than fancy indexing, from 11 x 11 to 500 x 500, and
    its mask an eighth of the size of the index arrays.)"""
    np.copyto(G, G.T, where=_strict_lower(G.shape[0]))
    return G


@dataclass
class Cholesky:
    """Cholesky factor of a symmetric positive (semi)definite matrix.

    ``jitter`` is what was added to the diagonal to make the factorisation
    succeed (0.0 when the matrix was positive definite as given).
    """

    factor: tuple
    jitter: float

    def solve(self, b: np.ndarray) -> np.ndarray:
        with small_blas(self.factor[0].shape[0]):
            return _cho_solve(self.factor[0], b)

    def logdet(self) -> float:
        c = self.factor[0]
        return 2.0 * float(np.sum(np.log(np.diag(c))))

    def inverse(self) -> np.ndarray:
        """The inverse matrix from the factor: ``A^-1 = U^-1 U^-T`` (``A = U^T U``).

        LAPACK's ``potri`` computes the same (``trtri``, then ``lauum`` for
        ``U^-1 U^-T``), but OpenBLAS's ``lauum`` wakes its threads even for
        an 11 x 11 factor: 7 us alone, up to ~3 ms inside a fit on a machine
        whose other core is busy (measured). Small factors take ``trtri`` and
        one product instead; large ones ``potri`` on a single thread.
        """
        c = self.factor[0]
        if c.shape[0] < _TINY_INVERSE:
            c_inv, info = lapack.dtrtri(c, lower=0)
            if info != 0:  # pragma: no cover - the factor is non-singular by construction
                raise np.linalg.LinAlgError("inverting the Cholesky factor failed")
            # numpy forms A A^T by syrk and copies the triangle: exactly symmetric
            # (tests/core/test_linalg.py checks it), no symmetrize needed.
            return c_inv @ c_inv.T
        with small_blas(c.shape[0]):
            inv, info = lapack.dpotri(c, lower=0)
        if info != 0:  # pragma: no cover - the factor is non-singular by construction
            raise np.linalg.LinAlgError("inverting the Cholesky factor failed")
        return symmetrize(np.asarray(inv))


@_small_blas
def cholesky(A: np.ndarray, *, max_tries: int = 12) -> Cholesky:
    """Factor symmetric ``A``; on failure retry with growing diagonal jitter.

    The first jitter is ``1e-12`` times the mean diagonal (at least ``1e-12``)
    and grows by 10 per try. Raises ``np.linalg.LinAlgError`` if the matrix
    cannot be factored even then (it then holds non-finite values).
    """
    A = np.asarray(A, dtype=np.float64)
    if not np.all(np.isfinite(A)):
        raise np.linalg.LinAlgError("matrix to factor holds non-finite values")
    scale = max(float(np.mean(np.abs(np.diag(A)))) if A.size else 1.0, 1e-300)
    jitter = 0.0
    for _ in range(max_tries + 1):
        M = A if jitter == 0.0 else A + jitter * np.eye(A.shape[0])
        c, info = lapack.dpotrf(M, lower=0, clean=1, overwrite_a=0)
        if info == 0:
            return Cholesky((c, False), jitter)
        jitter = max(scale * 1e-12, 1e-12) if jitter == 0.0 else jitter * 10.0
    raise np.linalg.LinAlgError("matrix is not positive definite even with jitter")


def _cho_solve(c: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``A x = b`` from the upper Cholesky factor ``c`` of ``A`` (LAPACK ``potrs``, without
    scipy's argument checks: ~25 us a call, a tenth of a small fit's iteration)."""
    x, info = lapack.dpotrs(c, b, lower=0)
    if info != 0:  # pragma: no cover - only for malformed arguments
        raise ValueError(f"potrs failed (info={info})")
    return np.asarray(x)


# A prior precision that is at least this share of a parameter's diagonal identifies
# the parameter, however weakly (its residual pivot is at least that share: the
# Schur complement of H = D + P is at least P's), far above rounding (~1e-16).
_PRIOR_SHARE = 1e-12


def _pivot_thresholds(d: np.ndarray, rtol: float, prior_diag: np.ndarray | None
                      ) -> float | np.ndarray:
    """The pivot below which each parameter counts as unidentified: ``rtol`` (exact
    collinearity in the data), or less where a prior's precision ``prior_diag``
    (included in ``H``, whose diagonal is ``d``) identifies the parameter."""
    if prior_diag is None:
        return rtol
    share = np.divide(prior_diag, d, out=np.zeros_like(d), where=d > 0)
    return np.where(share > _PRIOR_SHARE, np.minimum(rtol, 0.5 * share), rtol)


def equilibrated_cholesky(H: np.ndarray, *, rtol: float = IDENTIFIED_RTOL,
                          prior_diag: np.ndarray | None = None
                          ) -> tuple[np.ndarray, Cholesky] | None:
    """``(s, factor of S)`` with ``S = diag(s) H diag(s)`` of unit diagonal, when every
    pivot of that factor exceeds ``rtol`` (``H`` identifies every parameter); else None.

    The pivots are the residuals of :func:`identified_columns` with every column
    kept, so one LAPACK call decides the common case; ``H^-1 = diag(s) S^-1 diag(s)``
    then comes from the same factor (:func:`inverse_from_equilibrated`).
    ``prior_diag``: the diagonal of a prior precision included in ``H`` (see
    :func:`identified_columns`).
    """
    d = H.diagonal()
    if not (d > 0).all():
        return None
    s = 1.0 / np.sqrt(d)
    S = H * np.multiply.outer(s, s)
    c, info = lapack.dpotrf(S, lower=0, clean=1, overwrite_a=0)
    pivots = c.diagonal()
    if info != 0 or not (pivots * pivots > _pivot_thresholds(d, rtol, prior_diag)).all():
        return None
    return s, Cholesky((c, False), 0.0)


def inverse_from_equilibrated(s: np.ndarray, factor: Cholesky) -> np.ndarray:
    """``H^-1`` from :func:`equilibrated_cholesky`'s ``(s, factor of S)``."""
    inv = factor.inverse()
    inv *= np.multiply.outer(s, s)  # (s_i s_j = s_j s_i: inv stays exactly symmetric)
    return inv


@_small_blas
def identified_columns(H: np.ndarray, *, rtol: float = IDENTIFIED_RTOL,
                       prior_diag: np.ndarray | None = None) -> np.ndarray:
    """Boolean mask of the parameters that ``H`` identifies.

    ``H`` is scaled to unit diagonal (a zero diagonal is unidentified
    outright); then the columns are taken in order and each one is kept if
    its residual after projection on the kept ones exceeds ``rtol``
    (an incremental Cholesky factorisation). So for ``x1 = 2 x0`` it is the
    later column, ``x1``, that is reported, as R's ``glm`` does.

    ``prior_diag``: the diagonal of a prior precision that ``H`` includes. A
    parameter with prior precision ``pi_j`` keeps a residual of at least
    ``pi_j / H_jj`` (the Schur complement of ``H = D + P`` is at least ``P``'s), so
    it is identified even where the prior is weak against the data (an L2 penalty
    in raw units on columns at 1e6: ``pi_j / H_jj ~ 1e-10``); its threshold is half
    that share while the share is above ``_PRIOR_SHARE``.
    """
    H = np.asarray(H, dtype=np.float64)
    p = H.shape[0]
    if equilibrated_cholesky(H, rtol=rtol, prior_diag=prior_diag) is not None:
        return np.ones(p, dtype=bool)
    d = np.diag(H)
    thresholds = np.broadcast_to(_pivot_thresholds(d, rtol, prior_diag), (p,))
    mask = np.zeros(p, dtype=bool)
    s = np.where(d > 0, 1.0 / np.sqrt(np.where(d > 0, d, 1.0)), 0.0)
    S = H * s[:, None] * s[None, :]
    L = np.zeros((p, p))  # rows of the Cholesky factor of the kept block
    kept: list[int] = []
    for j in range(p):
        if d[j] <= 0:
            continue
        k = len(kept)
        col = S[kept, j]
        ell = linalg.solve_triangular(L[:k, :k], col, lower=True, check_finite=False) if k else col
        resid = S[j, j] - float(ell @ ell)
        if resid > thresholds[j]:
            L[k, :k] = ell
            L[k, k] = np.sqrt(resid)
            kept.append(j)
    mask[kept] = True
    return mask


@_small_blas
def solve_psd(A: np.ndarray, b: np.ndarray, *, rcond: float = 1e-12) -> tuple[np.ndarray, int]:
    """Solve ``A x = b`` for symmetric positive semidefinite ``A``.

    Cholesky when ``A`` is positive definite; otherwise the minimum-norm
    least-squares solution from an eigendecomposition, ignoring eigenvalues
    below ``rcond`` times the largest. Unlike diagonal jitter, this leaves
    the components of ``x`` along the null space exactly zero instead of
    amplifying rounding errors there (which would make the answer depend on
    the order of summation). Returns ``(x, rank)``.
    """
    A = np.asarray(A, dtype=np.float64)
    c, info = lapack.dpotrf(A, lower=0, clean=1, overwrite_a=0)
    # A singular matrix may still "factor" when rounding leaves a tiny pivot:
    # treat pivots below rcond times the largest as zero too. (A list: numpy's
    # reductions cost more than the factorisation of a small matrix.)
    pivots = c.diagonal().tolist()
    if info == 0 and pivots and min(pivots) ** 2 > rcond * max(pivots) ** 2:
        return _cho_solve(c, b), A.shape[0]
    vals, vecs = linalg.eigh(A, check_finite=False)
    keep = vals > rcond * max(float(vals[-1]), 0.0)
    if not np.any(keep):
        return np.zeros_like(b), 0
    V = vecs[:, keep]
    inv_vals = 1.0 / vals[keep]
    if np.ndim(b) == 2:  # several right-hand sides (columns)
        inv_vals = inv_vals[:, None]
    return V @ ((V.T @ b) * inv_vals), int(keep.sum())
