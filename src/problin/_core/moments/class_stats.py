"""Mergeable per-class sufficient statistics: weighted counts, means, scatters.

Every generative classifier needs, per class ``k``, the weighted count
``n_k = sum_{t_n = k} w_n``, the mean ``mu_k`` and the centred scatter
``sum_{t_n = k} w_n (x_n - mu_k)(x_n - mu_k)^T`` (or just its diagonal).
They are computed block by block over the rows: each block is centred near
its own class means (no raw second moments, so no catastrophic cancellation
when the data sit far from the origin) and the blocks are merged with the exact
pairwise update of Chan, Golub and LeVeque (:func:`merge_means`)::

    n = n_a + n_b,   delta = mu_b - mu_a,   mu = mu_a + (n_b / n) delta,
    M = M_a + M_b + (n_a n_b / n) delta delta^T.

Means are held as ``origin + offset`` (a float near the data plus a small
part accurate to the data's spread), so that ``delta`` keeps every digit of
the spread even when the data sit at 1e8. A one-pass fit, a chunked
``partial_fit`` and (later) a Dask tree reduction thus all give the same
statistics to rounding (~1e-12 relative), however the data drift along the rows.

>>> import numpy as np
>>> X = np.array([[0.0, 1.0], [2.0, 1.0], [4.0, 3.0], [6.0, 5.0]])
>>> s = class_stats(X, np.array([0, 0, 1, 1]), 2)
>>> s.means
array([[1., 1.],
       [5., 4.]])
>>> s.covariances()[1]
array([[1., 1.],
       [1., 1.]])
>>> half = class_stats(X[:2], np.array([0, 0]), 2) + class_stats(X[2:], np.array([1, 1]), 2)
>>> bool(np.allclose(half.scatter, s.scatter))
True
"""
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..blocks import block_rows, iter_blocks, n_workers, reduce_row_ranges
from ..types import Matrix

__all__ = ["ClassStats", "empty_stats", "spread_classes", "class_stats", "merge_means", "pooled_scatter",
           "between_scatter"]

KINDS = ("full", "tied", "diag")
# Blocks of ~4 MiB: few enough Python steps per pass, long enough for syrk to
# run near peak, still a sliver of any X worth blocking.
_STATS_BLOCK_BYTES = 4 << 20


def merge_means(n_a: Any, origin_a: np.ndarray, offset_a: np.ndarray, n_b: Any,
                origin_b: np.ndarray,
                offset_b: np.ndarray) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, Any]:
    """Chan, Golub & LeVeque's update of the weights and means of two samples.

    Each mean is held as ``origin + offset``: ``origin`` a float near the data
    (where a block was centred), ``offset`` small and accurate to the data's
    spread. The update is first order in the difference of the means, formed
    here as ``delta = (origin_b - origin_a) + (offset_b - offset_a)``: one
    rounding of the origins' difference (none when they are within a factor
    of two of each other), so ``delta`` is accurate to the spread of the
    data, not to their distance from zero. The merged scatter is
    ``S_a + S_b + c delta delta^T``; the caller adds it (per class, pooled or
    just its diagonal).

    Parameters
    ----------
    n_a, n_b : float or ndarray of shape (...)
        Weights of the two samples (one per class, say).
    origin_a, offset_a, origin_b, offset_b : ndarray of shape (..., D)
        Their means, as ``origin + offset``.

    Returns
    -------
    n : ndarray of shape (...)
        ``n_a + n_b``.
    origin, offset : ndarray of shape (..., D)
        The merged mean: about ``origin_a`` where ``n_a > 0``, else ``b``'s.
    delta : ndarray of shape (..., D)
        ``mean_b - mean_a``.
    c : ndarray of shape (...)
        ``n_a n_b / n`` (zero where either sample has no weight).

    Examples
    --------
    >>> import numpy as np
    >>> n, origin, offset, delta, c = merge_means(1.0, np.array([1e8]), np.array([0.25]),
    ...                                           3.0, np.array([1e8 + 1]), np.array([0.25]))
    >>> float(n), float(offset[0]), float(delta[0]), float(c)
    (4.0, 1.0, 1.0, 0.75)
    """
    n_a, n_b = np.asarray(n_a, dtype=np.float64), np.asarray(n_b, dtype=np.float64)
    n = n_a + n_b
    safe = np.where(n > 0, n, 1.0)
    delta = (origin_b - origin_a) + (offset_b - offset_a)
    keep = (n_a > 0)[..., None]
    origin = np.where(keep, origin_a, origin_b)
    offset = np.where(keep, offset_a + delta * (n_b / safe)[..., None], offset_b)
    return n, origin, offset, delta, n_a * n_b / safe


@dataclass
class ClassStats:
    """Weighted sufficient statistics of ``K`` classes over ``D`` features.

    Attributes
    ----------
    counts : ndarray of shape (K,)
        Weighted counts ``n_k`` (sums of sample weights; plain counts without).
    origin, offset : ndarray of shape (K, D)
        The class means as ``origin + offset`` (see :func:`merge_means`):
        ``origin`` a float near the class's data, ``offset`` small and accurate.
    means : ndarray of shape (K, D)
        Class means ``mu_k = origin + offset`` (zero for a class with no
        weight yet); a property.
    sq : ndarray of shape (K, D)
        Centred sums of squares ``sum w_n (x_nj - mu_kj)^2`` (the scatter's diagonal).
    scatter : ndarray or None
        Centred scatter: ``(K, D, D)`` per class for ``kind="full"``, the pooled
        within-class scatter ``S_W = sum_k S_k`` of shape ``(D, D)`` for
        ``"tied"``, ``None`` for ``"diag"``.
    kind : {"full", "tied", "diag"}
    """

    counts: np.ndarray
    origin: np.ndarray
    offset: np.ndarray
    sq: np.ndarray
    scatter: np.ndarray | None
    kind: str

    @property
    def means(self) -> np.ndarray:
        """Class means ``origin + offset``, shape (K, D)."""
        return self.origin + self.offset

    @property
    def n_classes(self) -> int:
        return self.counts.shape[0]

    @property
    def n_features(self) -> int:
        return self.origin.shape[1]

    def var(self) -> np.ndarray:
        """Per-class maximum-likelihood variances ``sq / n_k``, shape (K, D) (0 if empty)."""
        return self.sq / np.where(self.counts > 0, self.counts, 1.0)[:, None]

    def covariances(self) -> np.ndarray:
        """Maximum-likelihood covariances: ``S_k / n_k`` (K, D, D) for "full";
        the tied ``S_W / n = sum_k (n_k / n) S_k`` (D, D) for "tied"; the
        per-class variances (K, D) for "diag"."""
        scatter = self.scatter
        if self.kind == "full" and scatter is not None:
            return scatter / np.where(self.counts > 0, self.counts, 1.0)[:, None, None]
        if self.kind == "tied" and scatter is not None:
            return scatter / max(float(self.counts.sum()), np.finfo(float).tiny)
        return self.var()

    def centred_means(self) -> np.ndarray:
        """Class means minus the overall weighted mean, shape (K, D), formed from
        the offsets (accurate however far the data sit from zero)."""
        n = float(self.counts.sum())
        rel = (self.origin - self.origin[int(np.argmax(self.counts))]) + self.offset
        return rel - self.counts @ rel / n

    def total_var(self) -> np.ndarray:
        """Variance of every feature over all classes (law of total variance), shape (D,)."""
        n = float(self.counts.sum())
        if n <= 0:
            return np.zeros(self.n_features)
        dev = self.centred_means()
        return (self.sq.sum(axis=0) + self.counts @ (dev * dev)) / n

    def scatters(self) -> np.ndarray:
        """``scatter``, which "full" and "tied" statistics hold ("diag": an error)."""
        if self.scatter is None:
            raise ValueError("diag statistics hold no off-diagonal scatter; "
                             "use kind='tied' or 'full'")
        return self.scatter

    def merge(self, other: "ClassStats") -> "ClassStats":
        """The statistics of the union of both samples (exact pairwise update); new object."""
        if self.kind != other.kind or self.origin.shape != other.origin.shape:
            raise ValueError(f"cannot merge {self.kind} statistics of shape {self.origin.shape} "
                             f"with {other.kind} statistics of shape {other.origin.shape}")
        n, origin, offset, delta, c = merge_means(self.counts, self.origin, self.offset,
                                                  other.counts, other.origin, other.offset)
        cd = c[:, None] * delta
        sq = self.sq + other.sq + cd * delta
        scatter = None
        if self.kind == "full":
            scatter = self.scatters() + other.scatters() + cd[:, :, None] * delta[:, None, :]
        elif self.kind == "tied":
            scatter = self.scatters() + other.scatters() + cd.T @ delta
        return ClassStats(n, origin, offset, sq, scatter, self.kind)

    __add__ = merge

    def spread(self, index: np.ndarray, n_classes: int) -> "ClassStats":
        """These statistics as those of ``n_classes`` classes, class ``k`` at ``index[k]``,
        the others empty (a Dask chunk's classes among all the chunks')."""
        scatter = (spread_classes(self.scatters(), index, n_classes) if self.kind == "full"
                   else self.scatter)
        counts, origin, offset, sq = (spread_classes(a, index, n_classes)
                                      for a in (self.counts, self.origin, self.offset, self.sq))
        return ClassStats(counts, origin, offset, sq, scatter, self.kind)


def spread_classes(a: np.ndarray, index: np.ndarray, n: int, axis: int = 0) -> np.ndarray:
    """``a`` with its entries along ``axis`` at positions ``index`` of ``n``, zeros
    elsewhere: the sums of classes that are absent (exactly zero, as no rows give)."""
    shape = list(a.shape)
    shape[axis] = n
    out = np.zeros(shape, dtype=a.dtype)
    out[(slice(None),) * axis + (index,)] = a
    return out


def empty_stats(n_classes: int, n_features: int, kind: str = "full") -> ClassStats:
    """Statistics of no data: the identity of :meth:`ClassStats.merge`."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    k, d = int(n_classes), int(n_features)
    # Only the scatter this kind keeps: (K, D, D) for "full" alone (a dict of all
    # three kinds asked for K D^2 + D^2 doubles even for naive Bayes).
    scatter = (np.zeros((k, d, d)) if kind == "full" else np.zeros((d, d)) if kind == "tied"
               else None)
    return ClassStats(np.zeros(k), np.zeros((k, d)), np.zeros((k, d)), np.zeros((k, d)),
                      scatter, kind)


# The rows of a class in a block are centred on the mean of their first few
# rows (a shift near the data, at no cost) and their residual mean ``u`` --
# the offset -- is read by the GEMV that would otherwise give the mean.
# Products about the shift exceed those about the mean by ``n u u^T``; while
# they exceed them by at most the factor R (``|u|`` <= 4 standard deviations)
# subtracting it loses at most 4 bits; otherwise the rows are centred again.
_SHIFT_ROWS = 32
_SHIFT_RATIO = 17.0


def _sorted_block(Xb: Matrix, codes: np.ndarray, w: np.ndarray | None, n_classes: int,
                  out: np.ndarray | None = None
                  ) -> tuple[np.ndarray, dict[int, slice], np.ndarray | None]:
    """``(R, bounds, w)``: a float64 copy of the block's rows grouped by class (one
    gather; X is never written), each class's rows ``R[bounds[k]]``. ``out``: a float64
    buffer of at least the block's rows to gather dense rows into (kept by the pass:
    a fresh 4 MiB copy per block is fresh memory where the allocator hands large blocks
    back to the system, as Dask's workers set it, MALLOC_TRIM_THRESHOLD_: ~1,000 page
    faults a block, the class statistics of a chunk ~2x slower)."""
    if sp.issparse(Xb):
        Xb = Xb.toarray()
    R = None if out is None else out[:Xb.shape[0]]
    if codes.size and codes[0] == codes[-1] and np.all(codes == codes[0]):
        if R is None:
            return np.array(Xb, dtype=np.float64), {int(codes[0]): slice(None)}, w
        np.copyto(R, Xb)
        return R, {int(codes[0]): slice(None)}, w
    order = np.argsort(codes, kind="stable")
    edges = np.concatenate([[0], np.cumsum(np.bincount(codes, minlength=n_classes))])
    bounds = {k: slice(edges[k], edges[k + 1]) for k in range(n_classes)
              if edges[k + 1] > edges[k]}
    if R is None or Xb.dtype != np.float64:
        R = np.take(Xb, order, axis=0).astype(np.float64, copy=False)
    elif out is not None and out.flags.f_contiguous and not out.flags.c_contiguous:
        # Column-major rows (a DataFrame's values) into a column-major buffer, column by
        # column: contiguous gathers, where np.take along rows of the whole block would
        # first copy it to rows (transposed, out of cache: 0.36 s at 1,000,000 x 30
        # against 0.20 s for C rows; through a C buffer 0.45 s).
        for j in range(Xb.shape[1]):
            np.take(Xb[:, j], order, out=R[:, j], mode="clip")
    else:  # (mode="clip": "raise" gathers through a temporary of its own)
        np.take(Xb, order, axis=0, out=R, mode="clip")
    return R, bounds, None if w is None else w[order]


def _centre(Rk: np.ndarray, wk: np.ndarray | None) -> tuple[float, np.ndarray, np.ndarray,
                                                            np.ndarray, np.ndarray]:
    """Centre one class's rows in place (see ``_SHIFT_RATIO``), scaled by the root of
    their weights: ``(n_k, origin, offset, c, sq)`` with ``c`` the residual mean of
    the centred rows and ``sq`` the column sums of their squares."""
    unweighted = wk is None
    # Column sums by GEMV with a vector of ones (numpy's sum over axis 0 of a
    # narrow C-ordered block is ~10x slower).
    wk = np.ones(Rk.shape[0]) if wk is None else wk
    sw = np.sqrt(wk)
    n_k = float(wk.sum())
    origin = Rk[:_SHIFT_ROWS].sum(axis=0) / min(Rk.shape[0], _SHIFT_ROWS)
    Rk -= origin
    # (Rows of zero weight add nothing, or NaN from a non-finite value.)
    u = (wk @ Rk) / n_k if n_k > 0 else np.zeros_like(origin)
    if not unweighted:
        Rk *= sw[:, None]
    sq = np.einsum("ij,ij->j", Rk, Rk)
    c = u
    if n_k > 0 and not (n_k * u * u <= (1.0 - 1.0 / _SHIFT_RATIO) * sq).all():
        Rk -= u if unweighted else sw[:, None] * u  # a poor shift: centre on origin + u
        c = (sw @ Rk) / n_k
        u = u + c
        sq = np.einsum("ij,ij->j", Rk, Rk)
    if n_k <= 0:
        origin = np.zeros_like(origin)
    return n_k, origin, u, c, sq


def _absorb_block(total: ClassStats, Xb: Matrix, codes: np.ndarray,
                  w: np.ndarray | None, out: np.ndarray | None = None) -> None:
    """Merge the statistics of one block into ``total``, in place.

    Each class's rows are centred (:func:`_centre`); the block's classes are
    merged at once (:func:`merge_means` over the classes present); their
    second moments about the class means are ``R_k^T R_k - n_k c_k c_k^T`` by
    BLAS syrk -- one product per class for "full", one over the whole block for
    "tied" (the sum of the per-class ones), none for "diag". A block thus
    allocates its copy, a few (classes present) x D arrays and one ``D x D``
    product at most, never ``K x D x D``.
    """
    R, bounds, w = _sorted_block(Xb, codes, w, total.n_classes, out)
    idx = np.fromiter(bounds, dtype=np.intp, count=len(bounds))
    d = R.shape[1]
    n_b, origin_b, offset_b = np.zeros(idx.size), np.zeros((idx.size, d)), np.zeros((idx.size, d))
    resid, sq_b = np.zeros((idx.size, d)), np.zeros((idx.size, d))
    for i, rows in enumerate(bounds.values()):
        n_b[i], origin_b[i], offset_b[i], resid[i], sq = _centre(R[rows],
                                                                 None if w is None else w[rows])
        # >= 0: identical rows give 0, not rounding noise
        sq_b[i] = np.maximum(sq - n_b[i] * resid[i] * resid[i], 0.0)
    n, origin, offset, delta, c = merge_means(total.counts[idx], total.origin[idx],
                                              total.offset[idx], n_b, origin_b, offset_b)
    cd = c[:, None] * delta
    total.counts[idx], total.origin[idx], total.offset[idx] = n, origin, offset
    total.sq[idx] += sq_b + cd * delta
    if total.kind == "diag":
        return
    scatter = total.scatters()
    if total.kind == "tied":
        P = R.T @ R
        resid *= np.sqrt(n_b)[:, None]
        P -= resid.T @ resid
        P.flat[::d + 1] = sq_b.sum(axis=0)
        P += cd.T @ delta
        scatter += P
        return
    for i, (k, rows) in enumerate(bounds.items()):
        P = R[rows].T @ R[rows]
        P -= np.outer(n_b[i] * resid[i], resid[i])
        P.flat[::d + 1] = sq_b[i]
        P += np.outer(cd[i], delta[i])
        scatter[k] += P


# Parallel ranges pay (in memory) when the data outweigh the statistics that
# each thread holds of its own by this factor.
_DATA_PER_THREAD_STATE = 8


def _state_outweighs_data(shape: tuple[int, ...], n_classes: int, kind: str) -> bool:
    """Whether a pass over ``shape`` should run on one thread: each range holds
    statistics of its own (``K x D x D`` for "full"), so threads would multiply
    the memory of a pass over wide data or many classes for little time."""
    n, d = shape[0], shape[1]
    held = {"full": n_classes * d * d, "tied": d * d, "diag": 0}[kind] + 3 * n_classes * d
    return n * d < _DATA_PER_THREAD_STATE * n_workers() * held


def _block_rows(n_features: int, kind: str) -> int:
    """Rows per block: ~4 MiB, and at least 256 for the kinds whose syrk wants long
    blocks to amortise the ``D x D`` product; for "diag" (no such product) as few
    as 4 MiB holds: 256 rows of 20,000 features would copy 41 MB, far more than
    the model holds."""
    if kind == "diag":
        return int(min(65536, max(1, _STATS_BLOCK_BYTES // (8 * max(1, n_features)))))
    return block_rows(n_features, target_bytes=_STATS_BLOCK_BYTES)


def class_stats(X: Matrix, codes: np.ndarray, n_classes: int,
                sample_weight: np.ndarray | None = None, kind: str = "full", *,
                rows: int | None = None, workers: int | None = None) -> ClassStats:
    """Per-class weighted statistics of ``X`` in one blocked pass.

    Parameters
    ----------
    X : ndarray (or scipy.sparse, densified one block at a time) of shape (N, D)
    codes : int array of shape (N,)
        Class index ``0..n_classes-1`` of every row.
    n_classes : int
    sample_weight : array of shape (N,), optional
        Non-negative weights (validated by the caller); weight 2 equals a duplicated row.
    kind : {"full", "tied", "diag"}
        Which second moments to keep (see :class:`ClassStats`).
    rows, workers : int, optional
        Block size and number of threads (default: cache-sized blocks, all cores).

    Returns
    -------
    ClassStats
    """
    X_shape = X.shape
    codes = np.asarray(codes, dtype=np.intp)
    if codes.shape != (X_shape[0],):
        raise ValueError(f"codes has shape {codes.shape}, expected ({X_shape[0]},)")
    if codes.size and (codes.min() < 0 or codes.max() >= n_classes):
        raise ValueError(f"codes must lie in 0..{n_classes - 1}")
    rows = int(rows) if rows else _block_rows(X_shape[1], kind)
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if workers is None and _state_outweighs_data(X_shape, n_classes, kind):
        workers = 1

    # NaN or infinity in X propagate silently into the statistics (callers may
    # check those instead of X: every value reaches a class sum). errstate is
    # per thread, so each range sets its own. Each range merges its blocks into
    # statistics of its own, in place.
    # Column-major dense rows (an F-ordered array: a DataFrame's values) are gathered by
    # class column by column into a column-major buffer (see _sorted_block): the
    # statistics' products read either order.
    column_major = isinstance(X, np.ndarray) and X.flags.f_contiguous and X_shape[1] > 1

    def over_range(lo: int, hi: int) -> ClassStats:
        total = empty_stats(n_classes, X_shape[1], kind)
        # each block's sorted copy
        gathered = np.empty((min(rows, hi - lo), X_shape[1]), order="F" if column_major else "C")
        with np.errstate(invalid="ignore", over="ignore"):
            for start, stop, Xb, cb, wb in iter_blocks(X, codes, sample_weight, rows=rows,
                                                       start=lo, stop=hi):
                _absorb_block(total, Xb, cb, wb, gathered)
        return total

    with np.errstate(invalid="ignore", over="ignore"):
        return reduce_row_ranges(over_range, X_shape[0], rows, workers)


def pooled_scatter(stats: ClassStats) -> np.ndarray:
    """Within-class scatter ``S_W = sum_k sum_{n in C_k} (x_n - mu_k)(x_n - mu_k)^T``, (D, D)."""
    if stats.kind == "full":
        return stats.scatters().sum(axis=0)
    if stats.kind == "tied":
        return stats.scatters().copy()
    raise ValueError("diag statistics hold no off-diagonal scatter; use kind='tied' or 'full'")


def between_scatter(stats: ClassStats) -> np.ndarray:
    """Between-class scatter ``S_B = sum_k n_k (mu_k - mu)(mu_k - mu)^T``, (D, D)."""
    dev = stats.centred_means()
    return (dev.T * stats.counts) @ dev
