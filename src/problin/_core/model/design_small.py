"""The design of a small dense data set: every product one numpy call on the whole matrix.

A fit of 1,000 x 10 makes ~15 passes over X of ~10 us of arithmetic each; the
blocked design spends several times that per pass on what makes it scale
(row blocks, thread ranges, block standardisation, parameter maps). Below
``SMALL_ELEMENTS`` the kernel-coordinate matrix ``Z1 = [1, Z]`` (standardised,
parameters' multipliers folded in) is formed once, and each product is one
BLAS call on it: the same quantities as :class:`~problin._core.model.design.Design`
computes, to rounding, so fits do not depend on which design ran them.

The softmax Hessian uses the Kronecker structure of its blocks,
``H_kj = sum_n w_n^{kj} x_n x_n^T`` with ``w^{kk} = p_k (1 - p_k)`` (exact
complements) and ``w^{kj} = -p_k p_j``: one GEMM of the ``M(M+1)/2`` weight
columns against the ``p(p+1)/2`` distinct products ``x_a x_b`` (formed once),
half the multiply-adds of ``syrk`` on ``[p_1 x, ..., p_M x]``.
"""
import threading
from functools import lru_cache

import numpy as np

from ..linalg import symmetrize
from .basis import ColumnBasis
from .design import Advanced, Design, Gram, RowBlock, RowDerivatives, Summed
from .family_softmax import SoftmaxState

__all__ = ["SMALL_ELEMENTS", "SmallDenseDesign", "is_small_dense"]

# Z1 up to 1 MB: whole-matrix BLAS calls stay in cache, and a copy of X costs
# nothing that matters; above it the blocked, threaded design is faster.
SMALL_ELEMENTS = 1 << 17
# The products x_a x_b of the softmax Hessian are kept while they fit in 8 MB.
_PAIR_ELEMENTS = 1 << 20
# Hessian gathers of up to 2 MB (Mp <= 512) are kept between fits, 8 shapes at most.
_KEPT_SOURCES = 1 << 18
# The Hessian's pair products and weight rows are kept between fits, per thread,
# up to 4 MB each: fresh ones cost a page fault per 4 KB (4.4 MB at 5,000 rows,
# 10 x 10: ~0.6 ms of a 12 ms fit, measured).
_KEPT_BYTES = 4 << 20
_KEPT = threading.local()


def is_small_dense(X: object, intercept: bool) -> bool:
    """Whether ``X`` is a dense array small enough for :class:`SmallDenseDesign`."""
    return (type(X) is np.ndarray and X.ndim == 2
            and X.shape[0] * (X.shape[1] + int(intercept)) <= SMALL_ELEMENTS)


class SmallDenseDesign(Design):
    """:class:`~problin._core.model.design.Design` of a small dense ``X``, whole-matrix products."""

    def __init__(self, X: np.ndarray, intercept: bool = True, rows: int | None = None,
                 basis: ColumnBasis | None = None) -> None:
        super().__init__(X, intercept, rows, basis)
        # ([1, Z] m)^T, written once into its own array (no stacked copy), transposed:
        # the products read it along its rows, and a row-major [1, Z] m and its
        # transposed copy cost ~10x more at 5,000 x 10 (measured). Z1 is its view.
        block = self._block(X)
        first = int(self.intercept)
        Z1t = np.empty((self.n_params, self.n_samples))
        if first:
            Z1t[0] = 1.0 if self._m is None else self._m[0]
        if self._m is None:
            Z1t[first:] = block.T
        else:
            np.multiply(block.T, self._m[first:, None], out=Z1t[first:])
        self._Z1t = Z1t  # the Gram's weighted operand
        self._Z1 = Z1t.T
        self._sources: tuple[int, np.ndarray] | None = None
        self._weighted: np.ndarray | None = None
        # The softmax Hessian's buffers where too big to keep in the thread (else
        # there, claimed by this token: see _kept_buffer).
        self._pairs: np.ndarray | None = None
        self._weights: np.ndarray | None = None
        self._token = object()

    # The kernel coordinates are Z1's: parameters and results need no map.
    def matvec(self, theta: np.ndarray) -> np.ndarray:
        return np.asarray(theta, dtype=np.float64) @ self._Z1t  # (~1.5x Z @ theta's speed)

    def rmatvec(self, v: np.ndarray) -> np.ndarray:
        return self._Z1t @ np.asarray(v, dtype=np.float64)

    def hessian_product(self, h: np.ndarray, v: np.ndarray, single: bool = False
                        ) -> np.ndarray:
        return self.rmatvec(h * self.matvec(v))  # (whole-matrix products: no blocks)

    def matmat(self, Theta: np.ndarray) -> np.ndarray:
        # n x M stored class by class, (Theta Z^T)^T: the product with few output rows
        # runs ~3x faster, and the softmax family's work on it ~2x (family_softmax).
        return (np.asarray(Theta, dtype=np.float64) @ self._Z1t).T

    def rmatmat(self, G: np.ndarray | RowBlock, n_columns: int | None = None) -> np.ndarray:
        G = G(0, self.n_samples) if callable(G) else np.asarray(G, dtype=np.float64)
        return (self._Z1t @ G).T  # (Z^T G: its long operand read along rows, ~30 % faster)

    def dense_rows(self, rows: np.ndarray) -> np.ndarray:
        return self._Z1[rows]

    def _gram(self, h: np.ndarray, single: bool) -> np.ndarray:
        Z, Zt = self._Z1, self._Z1t
        if single and self._single_ok:
            Z, Zt = Z.astype(np.float32), Zt.astype(np.float32)
            return symmetrize(np.asarray((Zt * h.astype(np.float32)) @ Z, dtype=np.float64))
        if self._weighted is None:  # the weighted operand's buffer, reused by each Hessian
            self._weighted = np.empty_like(Zt)
        return symmetrize(np.multiply(Zt, h, out=self._weighted) @ Z)

    def gram(self, h: np.ndarray | None) -> np.ndarray:
        if h is None:  # (no weighted copy)
            return symmetrize(self._Z1t @ self._Z1)
        return self._gram(h, False)

    def grad_and_gram(self, g: np.ndarray, h: np.ndarray,
                      single: bool = False) -> tuple[np.ndarray, np.ndarray]:
        return self._Z1t @ g, self._gram(h, single)

    def _fused_pass(self, eta: np.ndarray | None, step: np.ndarray,
                    derivatives: RowDerivatives, gram: Gram,
                    out: tuple[np.ndarray, np.ndarray] | None, keep: bool) -> Advanced | Summed:
        """As :meth:`Design.advance <problin._core.model.design.Design.advance>`, in one call each."""
        eta_new = self.matvec(step)
        if eta is not None:
            eta_new += eta
        loss, g, h = derivatives(0, self.n_samples, eta_new)
        if out is not None:
            out[0][:], out[1][:] = g, h
            g, h = out
        H = None if gram is None else self._gram(h, gram == "single")
        grad = self._Z1t @ g
        if not keep:
            return None, loss, None, None, grad, H
        return eta_new, loss, g, h, grad, H

    def softmax_hessp(self, P: np.ndarray, sample_weight: np.ndarray | None,
                      Theta: np.ndarray, single: bool = False) -> np.ndarray:
        # (Always in double precision: a small design's product is not worth a float32 copy.)
        U = self.matmat(Theta)
        U *= P
        U -= P * (U @ np.ones(U.shape[1]))[:, None]
        if sample_weight is not None:
            U *= sample_weight[:, None]
        return (self._Z1t @ U).T

    def softmax_gram(self, curvature: SoftmaxState, sample_weight: np.ndarray | None = None,
                     single: bool = False) -> np.ndarray:
        """The block Hessian of :meth:`SoftmaxProducts.softmax_gram` (same
        weights, diagonal blocks from the exact complements), by the pair GEMM
        of the module docstring where the pairs fit in memory. Always in double
        precision. The weights are formed by broadcasting one class against the
        rest (no gathered copies: those cost as much as the GEMM, measured).
        """
        P = curvature.P
        n, M, p = self.n_samples, P.shape[1], self.n_params
        if n * p * (p + 1) // 2 > _PAIR_ELEMENTS:
            return super().softmax_gram(curvature, sample_weight, single)
        Pt = np.ascontiguousarray(P.T)
        k_first = np.concatenate(([0], np.cumsum(np.arange(M, 0, -1))))  # row of (k, k)
        Wt = self._weights
        if Wt is None or Wt.shape != (k_first[-1], n):  # (rewritten whole: any owner's)
            Wt, kept = _kept_buffer("weights", (int(k_first[-1]), n), self._token)[::2]
            self._weights = None if kept else Wt
        for k in range(M):  # rows (k, k..M-1): p_k (1 - p_k), then -p_k p_j
            diagonal = Wt[k_first[k]]
            np.subtract(1.0, Pt[k], out=diagonal)
            diagonal *= Pt[k]
            np.multiply(Pt[k + 1:], -Pt[k], out=Wt[k_first[k] + 1:k_first[k + 1]])
        rows, cols, q = curvature.fix  # where p > 1/2, 1 - p from the other classes
        Wt[k_first[cols], rows] = P[rows, cols] * q
        if sample_weight is not None:
            Wt *= sample_weight
        # (M(M+1)/2) x (p(p+1)/2), as the transpose of the pairs' product with the
        # weights: the GEMM with more output rows than columns runs ~12 % faster.
        blocks = (self._pair_products() @ Wt.T).T
        return blocks.ravel()[self._block_sources(M)]

    def _block_sources(self, M: int) -> np.ndarray:
        """The gather of the (Mp x Mp) Hessian from the blocks (see :func:`_gather_sources`)."""
        if self._sources is None or self._sources[0] != M:
            self._sources = (M, _gather_sources(M, self.n_params))
        return self._sources[1]

    def _pair_products(self) -> np.ndarray:
        """``x_a x_b`` for ``a <= b`` (p(p+1)/2 x n, rows in ``triu_indices`` order),
        formed once per design (again where another design claimed the kept buffer)."""
        if self._pairs is not None:
            return self._pairs
        p, Zt = self.n_params, self._Z1t
        pairs, filled, kept = _kept_buffer("pairs", (p * (p + 1) // 2, self.n_samples),
                                           self._token)
        if not filled:
            first = 0
            for a in range(p):  # rows (a, a..p-1), by broadcasting: no gathered copies
                np.multiply(Zt[a:], Zt[a], out=pairs[first:first + p - a])
                first += p - a
        if not kept:
            self._pairs = pairs
        return pairs


def _kept_buffer(kind: str, shape: tuple[int, int], owner: object
                 ) -> tuple[np.ndarray, bool, bool]:
    """``(buffer, filled, kept)``: a float64 array of ``shape`` for ``kind``, kept
    in this thread for the next claim if at most ``_KEPT_BYTES``; ``filled``:
    ``owner`` claimed it last, so it still holds what ``owner`` wrote there (any
    other design's claim in between, e.g. a nested fit's, hands it on)."""
    buffers = getattr(_KEPT, "buffers", None)
    if buffers is None:
        buffers = _KEPT.buffers = {}
    entry = buffers.get(kind)
    if entry is not None and entry[0].shape == shape:
        buffers[kind] = (entry[0], owner)
        return entry[0], entry[1] is owner, True
    buffer = np.empty(shape)
    kept = buffer.nbytes <= _KEPT_BYTES
    if kept:
        buffers[kind] = (buffer, owner)
    return buffer, False, kept


def _gather_sources(M: int, p: int) -> np.ndarray:
    """For each entry of the (Mp x Mp) Hessian, its (class pair, column pair)
    product's position in the flattened ``blocks`` (each product fills four
    symmetric entries): the Hessian is one gather. Small ones (~0.1 ms to form
    at 10 classes x 11 parameters) are kept for the next fits of that shape."""
    if (M * p) ** 2 <= _KEPT_SOURCES:
        return _kept_block_sources(M, p)
    return _form_block_sources(M, p)


def _form_block_sources(M: int, p: int) -> np.ndarray:
    k, j = np.triu_indices(M)
    a, b = np.triu_indices(p)
    rows = [(k[:, None] * p + a), (k[:, None] * p + b), (j[:, None] * p + a),
            (j[:, None] * p + b)]
    cols = [(j[:, None] * p + b), (j[:, None] * p + a), (k[:, None] * p + b),
            (k[:, None] * p + a)]
    sources = np.empty((M * p, M * p), dtype=np.intp)
    for r, c in zip(rows, cols):
        sources[r, c] = np.arange(r.size).reshape(r.shape)
    sources.flags.writeable = False  # (shared by the fits of one shape)
    return sources


_kept_block_sources = lru_cache(maxsize=8)(_form_block_sources)
