"""Mergeable per-class sufficient statistics: weighted counts, means, scatters.

Every generative classifier needs, per class ``k``, the weighted count
``n_k = sum_{t_n = k} w_n``, the mean ``mu_k`` and the centred scatter
``sum_{t_n = k} w_n (x_n - mu_k)(x_n - mu_k)^T`` (or just its diagonal).
They are computed block by block over the rows: each block is centred on its
own class means (no raw second moments, so no catastrophic cancellation when
the data sit far from the origin) and the blocks are merged with the exact
pairwise update of Chan, Golub and LeVeque::

    n = n_a + n_b,   delta = mu_b - mu_a,   mu = mu_a + (n_b / n) delta,
    M = M_a + M_b + (n_a n_b / n) delta delta^T.

So a one-pass fit, a chunked ``partial_fit`` and (later) a Dask tree
reduction all give the same statistics to rounding (~1e-12 relative).

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

import numpy as np
import scipy.sparse as sp

from .blocks import block_rows, iter_blocks, reduce_row_ranges

__all__ = ["ClassStats", "empty_stats", "class_stats", "pooled_scatter", "between_scatter"]

KINDS = ("full", "tied", "diag")
# Blocks of ~4 MiB: few enough Python steps per pass, long enough for syrk to
# run near peak, still a sliver of any X worth blocking.
_STATS_BLOCK_BYTES = 4 << 20


@dataclass
class ClassStats:
    """Weighted sufficient statistics of ``K`` classes over ``D`` features.

    Attributes
    ----------
    counts : ndarray of shape (K,)
        Weighted counts ``n_k`` (sums of sample weights; plain counts without).
    means : ndarray of shape (K, D)
        Class means ``mu_k`` (zero for a class with no weight yet).
    sq : ndarray of shape (K, D)
        Centred sums of squares ``sum w_n (x_nj - mu_kj)^2`` (the scatter's diagonal).
    scatter : ndarray or None
        Centred scatter: ``(K, D, D)`` per class for ``kind="full"``, the pooled
        within-class scatter ``S_W = sum_k S_k`` of shape ``(D, D)`` for
        ``"tied"``, ``None`` for ``"diag"``.
    kind : {"full", "tied", "diag"}
    """

    counts: np.ndarray
    means: np.ndarray
    sq: np.ndarray
    scatter: np.ndarray | None
    kind: str

    @property
    def n_classes(self):
        return self.counts.shape[0]

    @property
    def n_features(self):
        return self.means.shape[1]

    def var(self):
        """Per-class maximum-likelihood variances ``sq / n_k``, shape (K, D) (0 if empty)."""
        return self.sq / np.where(self.counts > 0, self.counts, 1.0)[:, None]

    def covariances(self):
        """Maximum-likelihood covariances: ``S_k / n_k`` (K, D, D) for "full";
        the tied ``S_W / n = sum_k (n_k / n) S_k`` (D, D) for "tied"; the
        per-class variances (K, D) for "diag"."""
        if self.kind == "full":
            return self.scatter / np.where(self.counts > 0, self.counts, 1.0)[:, None, None]
        if self.kind == "tied":
            return self.scatter / max(float(self.counts.sum()), np.finfo(float).tiny)
        return self.var()

    def total_var(self):
        """Variance of every feature over all classes (law of total variance), shape (D,)."""
        n = float(self.counts.sum())
        if n <= 0:
            return np.zeros(self.n_features)
        mu = self.counts @ self.means / n
        dev = self.means - mu
        return (self.sq.sum(axis=0) + self.counts @ (dev * dev)) / n

    def merge(self, other):
        """The statistics of the union of both samples (exact pairwise update); new object."""
        if self.kind != other.kind or self.means.shape != other.means.shape:
            raise ValueError(f"cannot merge {self.kind} statistics of shape {self.means.shape} "
                             f"with {other.kind} statistics of shape {other.means.shape}")
        na, nb = self.counts, other.counts
        n = na + nb
        safe = np.where(n > 0, n, 1.0)
        delta = other.means - self.means
        means = self.means + (nb / safe)[:, None] * delta
        c = na * nb / safe  # zero whenever either side is empty
        sq = self.sq + other.sq + c[:, None] * delta * delta
        scatter = None
        if self.kind == "full":
            scatter = self.scatter + other.scatter + np.einsum("k,ki,kj->kij", c, delta, delta)
        elif self.kind == "tied":
            scatter = self.scatter + other.scatter + (delta.T * c) @ delta
        return ClassStats(n, means, sq, scatter, self.kind)

    __add__ = merge


def empty_stats(n_classes, n_features, kind="full"):
    """Statistics of no data: the identity of :meth:`ClassStats.merge`."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    k, d = int(n_classes), int(n_features)
    scatter = {"full": np.zeros((k, d, d)), "tied": np.zeros((d, d)), "diag": None}[kind]
    return ClassStats(np.zeros(k), np.zeros((k, d)), np.zeros((k, d)), scatter, kind)


def _block_stats(Xb, codes, w, n_classes, kind):
    """Statistics of one block: rows grouped by class (one gather), each class
    centred on its own mean in place, then ``R_k^T R_k`` by BLAS syrk (whose
    diagonal is ``sq``) or, for "diag", just the column sums of ``R_k * R_k``."""
    if sp.issparse(Xb):
        Xb = Xb.toarray()
    stats = empty_stats(n_classes, Xb.shape[1], kind)
    if codes.size and codes[0] == codes[-1] and np.all(codes == codes[0]):
        # One class: centring writes a new array (Xb is a view of the caller's X).
        bounds, R = {int(codes[0]): slice(None)}, np.array(Xb, dtype=np.float64)
    else:
        order = np.argsort(codes, kind="stable")
        edges = np.concatenate([[0], np.cumsum(np.bincount(codes, minlength=n_classes))])
        bounds = {k: slice(edges[k], edges[k + 1]) for k in range(n_classes)
                  if edges[k + 1] > edges[k]}
        R = np.take(Xb, order, axis=0).astype(np.float64, copy=False)  # X is never written
        w = None if w is None else w[order]
    for k, rows in bounds.items():
        Rk = R[rows]
        wk = np.ones(Rk.shape[0]) if w is None else w[rows]
        n_k = float(Rk.shape[0]) if w is None else float(wk.sum())
        if n_k > 0:
            stats.counts[k] = n_k
            stats.means[k] = (wk @ Rk) / n_k  # GEMV: faster than sum(axis=0)
        Rk -= stats.means[k]
        if w is not None:
            Rk *= np.sqrt(wk)[:, None]
        if kind == "diag":
            stats.sq[k] = np.einsum("ij,ij->j", Rk, Rk)
            continue
        S = Rk.T @ Rk  # syrk
        stats.sq[k] = np.diagonal(S)
        if kind == "full":
            stats.scatter[k] = S
        else:
            stats.scatter += S
    return stats


def class_stats(X, codes, n_classes, sample_weight=None, kind="full", *, rows=None,
                workers=None):
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
    rows = int(rows) if rows else block_rows(X_shape[1], target_bytes=_STATS_BLOCK_BYTES)
    empty = empty_stats(n_classes, X_shape[1], kind)

    # NaN or infinity in X propagate silently into the statistics (callers may
    # check those instead of X: every value reaches a class sum). errstate is
    # per thread, so each range sets its own.
    def over_range(lo, hi):
        total = empty
        with np.errstate(invalid="ignore", over="ignore"):
            for _, _, Xb, cb, wb in iter_blocks(X, codes, sample_weight, rows=rows, start=lo,
                                                stop=hi):
                total = total + _block_stats(Xb, cb, wb, n_classes, kind)
        return total

    with np.errstate(invalid="ignore", over="ignore"):
        return reduce_row_ranges(over_range, X_shape[0], rows, workers)


def pooled_scatter(stats):
    """Within-class scatter ``S_W = sum_k sum_{n in C_k} (x_n - mu_k)(x_n - mu_k)^T``, (D, D)."""
    if stats.kind == "full":
        return stats.scatter.sum(axis=0)
    if stats.kind == "tied":
        return stats.scatter.copy()
    raise ValueError("diag statistics hold no off-diagonal scatter; use kind='tied' or 'full'")


def between_scatter(stats):
    """Between-class scatter ``S_B = sum_k n_k (mu_k - mu)(mu_k - mu)^T``, (D, D)."""
    n = float(stats.counts.sum())
    mu = stats.counts @ stats.means / n
    dev = stats.means - mu
    return (dev.T * stats.counts) @ dev
