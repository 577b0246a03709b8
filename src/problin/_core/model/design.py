"""The design matrix ``[1, X]`` as an operator, read only by row blocks.

The intercept is an implicit column of ones: prepending it to ``X`` would
copy the whole data set, so every product treats it separately. Parameters
are ordered ``[intercept, coef...]`` throughout problin.

With a :class:`~problin._core.model.basis.ColumnBasis` the operator is
``[1, (X - c) / s]``: every product, gradient and Hessian is then in the
standardised coordinates (the solvers never see raw units), computed either
on standardised copies of the blocks (centred bases) or on the raw blocks
with rescaled parameters and results (exact: a diagonal change of variables).
"""
from collections.abc import Callable
from contextlib import nullcontext
from typing import Literal, TypeAlias, cast, overload

import numpy as np
import scipy.sparse as sp

from ..blocks import _default_rows, block_rows, iter_blocks, one_blas_thread, reduce_row_ranges
from ..linalg import add_intercept_gram, column_sums, symmetrize
from ..types import Matrix
from .basis import ColumnBasis, moments_from_sums
from .design_softmax import SoftmaxProducts

__all__ = ["Design", "Gram", "RowBlock", "RowDerivatives"]

#: Which Hessian a pass forms with the gradient: none, float32 products, or float64.
Gram: TypeAlias = Literal["single", "double"] | None
#: Rows ``lo:hi`` of an n x k matrix formed on demand (never whole: see ``_backward``).
RowBlock: TypeAlias = Callable[[int, int], np.ndarray]
#: ``(lo, hi, eta_b) -> (loss, g_b, h_b)``: a row block's loss and per-row derivatives.
RowDerivatives: TypeAlias = Callable[[int, int, np.ndarray],
                                     tuple[float, np.ndarray, np.ndarray]]
#: What :meth:`Design.advance` returns: ``(eta_new, loss, g, h, grad, H)``.
Advanced: TypeAlias = tuple[np.ndarray, float, np.ndarray, np.ndarray, np.ndarray,
                            np.ndarray | None]
#: The same without the n-vectors (``keep=False``).
Summed: TypeAlias = tuple[None, float, None, None, np.ndarray, np.ndarray | None]

_FUSED_ROWS = 8192  # measured: 5 % faster fits than 2621 or 16384
_FUSED_BYTES = 4 << 20  # (8192 rows up to 64 columns; measured at 200,000 x 400: one
# fused step 0.28 s on ~1,300-row blocks against 0.42 s on 8192, loaded)
# _GRAM_ONE_THREAD: the Gram kernels run on sub-blocks of ~1 MB on one BLAS thread, also
# where the rows are too few for a second range thread (which runs its ranges so
# anyway): a threaded syrk that small waits on thread barriers, and on a busy
# two-core machine each wait can be a time slice (measured at 20,000 x 200: 28 ms a
# sub-block, a 3.1 s fit, against 0.46 s on one thread).
# Gram sub-blocks have at least this many rows: each adds a p x p product to the
# accumulated Hessian, which costs memory traffic of ~p^2 per sub-block whatever its
# rows, so wide rows' ~1 MB sub-blocks (128 rows at p = 1,000) spent half the time on it
# (measured, float32 20,000 x 1,000 on one thread: 1.86 s on 128-row sub-blocks,
# 0.56 s on 1,024).
_GRAM_MIN_ROWS = 1024
_G_CHUNK_ROWS = 16384  # rows of G formed at once by X^T G (~1 MB for 9 columns)


class Design(SoftmaxProducts):
    """Linear operator ``theta -> [1, X] theta`` with blocked reductions.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d)
    intercept : bool
        Whether an implicit leading column of ones is part of the design.
    rows : int, optional
        Rows per block (default: sized to the cache by ``blocks``).
    basis : ColumnBasis, optional
        Standardised coordinates (see the module docstring); None: raw ``X``.
    """

    def __init__(self, X: Matrix, intercept: bool = True, rows: int | None = None,
                 basis: ColumnBasis | None = None) -> None:
        self.X = X
        self.intercept = bool(intercept)
        self.rows = rows
        self.n_samples, self.n_features = X.shape
        self.n_params = self.n_features + int(self.intercept)
        self.basis = basis
        centred = basis is not None and basis.center is not None
        if centred and sp.issparse(X):
            raise ValueError("a centred basis would densify sparse X")
        # Centred: blocks are standardised copies, parameters used as they are.
        # Uncentred: raw blocks, parameters and results scaled by ``_m``.
        self._standardise = basis.standardise if centred and basis is not None else None
        self._m = basis.multipliers() if basis is not None and not centred else None
        self._single_ok = basis is None or basis.single_safe
        self._X32: np.ndarray | None = None  # (see _single_copy)

    @classmethod
    def standardised(cls, X: Matrix, intercept: bool = True, rows: int | None = None,
                     sample_weight: np.ndarray | None = None,
                     centre: bool | str = "auto") -> "Design":
        """The design of ``X`` in the coordinates of :meth:`ColumnBasis.of`."""
        return cls(X, intercept, rows, ColumnBasis.of(X, intercept, sample_weight, centre))

    def subsample(self, rows: np.ndarray) -> "Design":
        """The design restricted to ``rows`` (a copy of those rows only), same basis."""
        X = self.X[rows]
        if not sp.issparse(X):
            X = np.ascontiguousarray(X)
        return Design(X, self.intercept, self.rows, self.basis)

    def _block(self, Xb: Matrix) -> Matrix:
        """A block as the kernels read it: float64 (dense), standardised if centred."""
        if self._standardise is not None:
            return self._standardise(Xb)
        if not sp.issparse(Xb) and Xb.dtype != np.float64:
            return Xb.astype(np.float64)
        return Xb

    def _in(self, theta: np.ndarray) -> np.ndarray:
        """Standardised parameters (p-vector, or class rows M x p) -> kernel ones."""
        theta = np.asarray(theta, dtype=np.float64)
        return theta if self._m is None else theta * self._m

    _out = _in  # the map is diagonal: gradients scale as parameters do

    def kernel(self) -> tuple[Callable[[Matrix], Matrix], Callable[..., np.ndarray]]:
        """``(block, params)``: how a kernel reading ``X`` by row blocks sees this
        design. ``block(X_b)`` is what it multiplies (standardised if centred)
        and ``params(theta)`` maps standardised parameters (or gradients, rows
        of class blocks) to the ones that go with it; ``params`` also maps a
        covariance when called with ``cov=True``."""
        def params(theta: np.ndarray, cov: bool = False) -> np.ndarray:
            theta = np.asarray(theta, dtype=np.float64)
            if self._m is None:
                return theta
            return theta * self._m[:, None] * self._m[None, :] if cov else theta * self._m

        return self._block, params

    def _out_gram(self, H: np.ndarray, n_blocks: int = 1) -> np.ndarray:
        if self._m is None:
            return H
        m = np.tile(self._m, n_blocks)
        H *= m[:, None]
        H *= m[None, :]
        return H

    def dense_rows(self, rows: np.ndarray) -> np.ndarray:
        """The rows ``[1, Z][rows]`` as a dense float64 array (for a few rows only)."""
        Xr = self.X[rows]
        Xr = Xr.toarray() if sp.issparse(Xr) else self._block(np.asarray(Xr))
        Xr = np.asarray(Xr, dtype=np.float64)
        if self.intercept:
            Xr = np.hstack([np.ones((Xr.shape[0], 1)), Xr])
        return Xr if self._m is None else Xr * self._m

    def _split(self, theta: np.ndarray) -> tuple[float | np.ndarray, np.ndarray]:
        if self.intercept:
            return theta[0], theta[1:]
        return 0.0, theta

    def _stream_rows(self) -> int:
        # Streaming products (X w, X^T v) do little work per byte: larger
        # blocks than the Gram kernel's keep the per-block overhead small.
        return 8 * (self.rows or _default_rows(self.X))

    def _thin_gemm_rows(self) -> int:
        # Products with a few columns (X W, G^T X for k ~ 10) run fastest on
        # blocks of ~512 KB (measured for d = 50: 1024 rows 2x faster than 20k).
        return self.rows or block_rows(self.n_features, 8, target_bytes=1 << 19)

    def _forward(self, W: np.ndarray) -> np.ndarray:
        """``X W`` (n x k, float64) by row blocks, in parallel threads."""
        if sp.issparse(self.X):
            # Sparse row slices are copies: scipy's whole-matrix product is
            # already a single streaming pass that allocates only the result.
            return np.asarray(self.X @ W, dtype=np.float64)
        out = np.empty((self.n_samples, W.shape[1]))

        rows = self._stream_rows() if W.shape[1] == 1 else self._thin_gemm_rows()

        def work(lo: int, hi: int) -> None:
            for start, stop, Xb in iter_blocks(self.X, rows=rows, start=lo, stop=hi):
                out[start:stop] = self._block(Xb) @ W  # one block, never all of X

        reduce_row_ranges(work, self.n_samples, rows)
        return out

    def _backward(self, G: np.ndarray | RowBlock, n_columns: int | None = None,
                  with_sums: bool = False) -> np.ndarray:
        """``X^T G`` (d x k) by row blocks, summed over parallel threads.

        ``G`` is an n x k array, or a function ``G(lo, hi)`` returning rows
        ``lo:hi`` of it (k = ``n_columns``), so that G is formed block by
        block, in cache, and never exists whole. ``with_sums`` prepends the
        column sums of G (the intercept's row).
        """
        if callable(G):
            make, k = G, cast(int, n_columns)  # (given with a function G)
        else:
            whole = G
            make, k = (lambda lo, hi: whole[lo:hi]), G.shape[1]
        off = int(with_sums)
        if sp.issparse(self.X):
            Gall = make(0, self.n_samples)
            XtG = np.asarray(self.X.T @ Gall, dtype=np.float64)
            return np.vstack([Gall.sum(axis=0), XtG]) if with_sums else XtG

        # One column: a gemv, streaming (large blocks). Several: a thin GEMM,
        # computed as G_b^T X_b (k x d) on half-cache blocks, measured 3.4x
        # faster than X_b^T G_b on 20k-row blocks for k = 9, d = 50.
        rows = self._stream_rows() if k == 1 else self._thin_gemm_rows()
        # G is formed (and its column sums taken) a chunk of blocks at a time: a
        # dozen numpy calls per block of ~1,300 rows made a softmax gradient pass
        # 1.5x slower (42 against 28 ms at 300,000 x 50, K = 10); a chunk stays in cache.
        chunk = rows * max(1, _G_CHUNK_ROWS // rows)

        def work(lo: int, hi: int) -> np.ndarray:
            acc = np.zeros((k, off + self.n_features))
            for first in range(lo, hi, chunk):
                Gc = make(first, min(hi, first + chunk))
                for start, stop, Xb in iter_blocks(self.X, rows=rows, start=first,
                                                   stop=first + Gc.shape[0]):
                    acc[:, off:] += Gc[start - first:stop - first].T @ self._block(Xb)
                if with_sums:
                    acc[:, 0] += column_sums(Gc)
            return acc

        return reduce_row_ranges(work, self.n_samples, rows).T

    def matvec(self, theta: np.ndarray) -> np.ndarray:
        """Linear predictor ``eta = b + Z w`` (an n-vector, float64)."""
        b, w = self._split(self._in(theta))
        eta = self._forward(w.reshape(-1, 1)).ravel()
        if b != 0.0:
            eta += b
        return eta

    def rmatvec(self, v: np.ndarray) -> np.ndarray:
        """``[1, X]^T v`` (a p-vector) for an n-vector ``v``."""
        v = np.asarray(v, dtype=np.float64)
        Xtv = self._backward(v.reshape(-1, 1)).ravel()
        if self.intercept:
            Xtv = np.concatenate(([v.sum()], Xtv))
        return self._out(Xtv)

    def hessian_product(self, h: np.ndarray, v: np.ndarray, single: bool = False
                        ) -> np.ndarray:
        """``[1,X]^T diag(h) [1,X] v`` reading each block of X once (dense): the block's
        ``X_b v`` is weighted and multiplied back while the block is in cache, so a
        truncated Newton's conjugate-gradient iteration costs one pass, not two.

        ``single``: from a float32 copy of the kernel's blocks, made on the first such
        call and kept (half of X's memory; the caller decides that it fits): the pass
        is memory-bound, and reading half the bytes made it ~1.8x faster at
        200,000 x 1,000 (for directions only, to ~1e-7)."""
        if sp.issparse(self.X):
            return self.rmatvec(h * self.matvec(v))
        b, w = self._split(self._in(v))
        X, block = self.X, self._block
        if single:
            X, block = self._single_copy(), _as_is
            w, h = w.astype(np.float32), h.astype(np.float32)
        rows = self.rows or _fused_block_rows(_default_rows(X), self.n_features)

        def accumulate(lo: int, hi: int) -> tuple[np.ndarray, float]:
            acc, total = np.zeros(self.n_features), 0.0
            for start, stop, Xb in iter_blocks(X, rows=rows, start=lo, stop=hi):
                Xb = block(Xb)
                u = Xb @ w
                if b != 0.0:
                    u += b
                u *= h[start:stop]
                acc += u @ Xb
                total += float(u.sum())
            return acc, total

        acc, total = reduce_row_ranges(accumulate, self.n_samples, rows)
        return self._out(np.concatenate(([total], acc)) if self.intercept else acc)

    def _single_copy(self) -> np.ndarray:
        """The kernel's blocks of X (standardised where centred) as one float32 array."""
        if self._X32 is None:
            X32 = np.empty(self.X.shape, dtype=np.float32)
            rows = 8 * _default_rows(self.X)

            def convert(lo: int, hi: int) -> int:  # (both threads fault its pages in)
                for start, stop, Xb in iter_blocks(self.X, rows=rows, start=lo, stop=hi):
                    X32[start:stop] = self._block(Xb)
                return 0

            reduce_row_ranges(convert, self.n_samples, rows)
            self._X32 = X32
        return self._X32

    def grad_and_gram(self, g: np.ndarray, h: np.ndarray,
                      single: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Fused pass: ``([1,X]^T g, [1,X]^T diag(h) [1,X])`` reading X once.

        With non-negative ``h`` (every convex family) each block becomes
        ``B = sqrt(h) [1, X_b]`` and ``B^T B`` (one ``syrk``) is its whole
        contribution, intercept row included. ``single=True`` forms the Gram
        products in float32 (the gradient stays float64): for Newton
        directions, not for covariances.
        """
        d, p = self.n_features, self.n_params
        rows = self.rows or _gram_rows(self.X)
        dtype = np.float32 if single and self._single_ok else np.float64

        def accumulate(lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
            grad, G, buffer = np.zeros(d), np.zeros((p, p)), None
            for start, stop, Xb, gb, hb in iter_blocks(self.X, g, h, rows=rows, start=lo,
                                                       stop=hi):
                Xb = self._block(Xb)
                buffer = add_intercept_gram(G, Xb, hb, self.intercept, dtype, buffer)
                grad += np.asarray(gb @ Xb, dtype=np.float64).ravel()
            return grad, G

        with one_blas_thread():  # (see _GRAM_ONE_THREAD)
            grad, H = reduce_row_ranges(accumulate, self.n_samples, rows)
        symmetrize(H)  # exact symmetry also for signed weights and sparse blocks
        if self.intercept:
            grad = np.concatenate(([g.sum()], grad))
        return self._out(grad), self._out_gram(H)

    @overload
    def advance(self, eta: np.ndarray | None, step: np.ndarray, derivatives: RowDerivatives,
                gram: Gram = None, out: tuple[np.ndarray, np.ndarray] | None = None,
                keep: Literal[True] = True) -> Advanced: ...

    @overload
    def advance(self, eta: np.ndarray | None, step: np.ndarray, derivatives: RowDerivatives,
                gram: Gram = None, out: tuple[np.ndarray, np.ndarray] | None = None, *,
                keep: Literal[False]) -> Summed: ...

    def advance(self, eta: np.ndarray | None, step: np.ndarray, derivatives: RowDerivatives,
                gram: Gram = None, out: tuple[np.ndarray, np.ndarray] | None = None,
                keep: bool = True) -> Advanced | Summed:
        """One pass for a Newton step: ``eta + [1,X] step``, the per-row
        derivatives there, ``[1,X]^T g`` and (``gram``: "single" or "double")
        ``[1,X]^T diag(h) [1,X]``, reading each block of X once, from cache.

        Separate passes would read X twice per step (``X d`` for the line
        search, then ``X^T g`` at the new point); in Newton's regime the full
        step is nearly always the accepted one, so its gradient comes with it.
        ``eta`` is the current linear predictor (None: zero, so that
        ``eta_new = [1,X] step``); ``derivatives(lo, hi, eta_b)`` returns
        ``(loss, g_b, h_b)`` for rows ``lo:hi``; ``out`` optional n-vectors
        ``(g, h)`` to write them into. Dense X only. ``keep=False``: the
        n-vectors are not needed (a Dask chunk's reduction): they live block
        by block in reused buffers and ``eta_new, g, h`` are returned as None.

        Returns ``(eta_new, loss, g, h, grad, H)`` (``H`` None without ``gram``).
        """
        return self._fused_pass(eta, step, derivatives, gram, out, keep)

    def _fused_pass(self, eta: np.ndarray | None, step: np.ndarray,
                    derivatives: RowDerivatives, gram: Gram,
                    out: tuple[np.ndarray, np.ndarray] | None, keep: bool) -> Advanced | Summed:
        """:meth:`advance`'s pass (a design with a faster one overrides this)."""
        if sp.issparse(self.X):
            raise TypeError("advance needs dense X (sparse blocks are copies)")
        n, d, p = self.n_samples, self.n_features, self.n_params
        b, w = self._split(self._in(step))
        dtype = np.float32 if gram == "single" and self._single_ok else np.float64
        # Blocks for the products and derivatives: large enough that the
        # derivatives' per-call overhead is small, small enough that their
        # temporaries stay in L2 (~16k rows: 2-4x faster per row than 32k);
        # the Gram runs on sub-blocks that stay in L2 while syrk reads them. At most
        # _FUSED_BYTES of X a block: the product X^T g reads the block X d just read
        # from cache, not from memory (wide rows: 8192 x 400 is 26 MB).
        sub = self.rows or (_gram_rows(self.X) if gram else _default_rows(self.X))
        rows = self.rows or _fused_block_rows(sub, d)
        kept: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # (eta_new, g, h)
        if keep:
            kept = (np.empty(n), *((np.empty(n), np.empty(n)) if out is None else out))

        def accumulate(lo: int, hi: int) -> tuple[float, np.ndarray, np.ndarray | None, float]:
            loss, grad, buffer, gsum = 0.0, np.zeros(d), None, 0.0
            G = np.zeros((p, p)) if gram else None
            scratch = np.empty(0 if keep else rows)
            for start, stop, Xb in iter_blocks(self.X, rows=rows, start=lo, stop=hi):
                Xb = self._block(Xb)
                if kept is not None:
                    eta_b, g_b, h_b = (kept[0][start:stop], kept[1][start:stop],
                                       kept[2][start:stop])
                else:
                    eta_b = scratch[:stop - start]
                np.matmul(Xb, w, out=eta_b)
                if b != 0.0:
                    eta_b += b
                if eta is not None:
                    eta_b += eta[start:stop]
                if kept is not None:
                    lb, g_b[:], h_b[:] = derivatives(start, stop, eta_b)
                else:  # the block's own arrays: nothing to keep, nothing to copy
                    lb, g_b, h_b = derivatives(start, stop, eta_b)
                loss += lb
                gsum += g_b.sum()
                grad += g_b @ Xb
                if G is not None:
                    for lo_s in range(0, stop - start, sub):
                        hi_s = min(stop - start, lo_s + sub)
                        buffer = add_intercept_gram(G, Xb[lo_s:hi_s], h_b[lo_s:hi_s],
                                                    self.intercept, dtype, buffer)
            return loss, grad, G, gsum

        with one_blas_thread() if gram else nullcontext():  # (see _GRAM_ONE_THREAD)
            loss, grad, H, gsum = reduce_row_ranges(accumulate, n, rows)
        if H is not None:
            H = self._out_gram(symmetrize(H))
        if self.intercept:
            grad = np.concatenate(([kept[1].sum() if kept is not None else gsum], grad))
        if kept is None:
            return None, loss, None, None, self._out(grad), H
        return kept[0], loss, kept[1], kept[2], self._out(grad), H

    def matmat(self, Theta: np.ndarray) -> np.ndarray:
        """Linear predictors ``[1, Z] Theta^T`` for parameter rows ``Theta`` (M x p): n x M."""
        Theta = self._in(Theta)
        b, W = (Theta[:, 0], Theta[:, 1:]) if self.intercept else (0.0, Theta)
        eta = self._forward(np.ascontiguousarray(W.T))
        eta += b
        return eta

    def rmatmat(self, G: np.ndarray | RowBlock, n_columns: int | None = None) -> np.ndarray:
        """``([1, X]^T G)^T`` for an n x M matrix ``G``: M x p (one row per class block).

        ``G`` may be a function of a row range (see :meth:`_backward`)."""
        if not callable(G):
            G = np.asarray(G, dtype=np.float64)
        return self._out(self._backward(G, n_columns, with_sums=self.intercept).T)

    def gram(self, h: np.ndarray | None) -> np.ndarray:
        """``[1,X]^T diag(h) [1,X]`` alone (``h`` None: unweighted)."""
        h = np.ones(self.n_samples) if h is None else h
        return self.grad_and_gram(np.zeros(self.n_samples), h)[1]

    def column(self, j: int) -> np.ndarray:
        """Column ``j`` of ``[1, Z]`` as a dense float64 n-vector."""
        if self.intercept:
            if j == 0:
                return np.ones(self.n_samples)
            j -= 1
        col = self.X[:, j]
        if sp.issparse(col):
            col = col.toarray()
        col = np.asarray(col, dtype=np.float64).ravel()
        if self.basis is None:
            return col
        center = self.basis.center
        if self._standardise is not None and center is not None:
            return (col - center[j]) / self.basis.scale[j]
        return col / self.basis.scale[j]

    def column_sums(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-column sums of the blocks the kernels read (standardised if centred)
        and of their squares: two blocked sums (a chunk's share on Dask)."""
        s1 = np.zeros(self.n_features)
        s2 = np.zeros(self.n_features)
        for _, _, Xb in iter_blocks(self.X, rows=self.rows):
            if sp.issparse(Xb):
                Xb = Xb.astype(np.float64)
                s1 += np.asarray(Xb.sum(axis=0)).ravel()
                s2 += np.asarray(Xb.multiply(Xb).sum(axis=0)).ravel()
            else:
                Xb = self._block(np.asarray(Xb))
                s1 += Xb.sum(axis=0)
                s2 += np.einsum("ij,ij->j", Xb, Xb)
        return s1, s2

    def column_moments(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-column mean and standard deviation of ``Z``, the columns in this
        design's coordinates (those its parameters multiply)."""
        return moments_from_sums(*self.column_sums(), self.n_samples, self.basis)


def _fused_block_rows(sub: int, n_features: int) -> int:
    """Rows of a fused pass's blocks: a multiple of ``sub`` rows (the Gram kernel's
    sub-blocks), at most ``_FUSED_ROWS`` and ``_FUSED_BYTES`` of X where that allows
    (see ``Design._fused_pass``)."""
    fused = min(_FUSED_ROWS, _FUSED_BYTES // (8 * max(n_features, 1)))
    return max(sub, (fused // sub) * sub)


def _gram_rows(X: Matrix) -> int:
    """Rows of the Gram kernel's sub-blocks: ~1 MB of X, at least ``_GRAM_MIN_ROWS``."""
    return max(_default_rows(X), _GRAM_MIN_ROWS)


def _as_is(Xb: np.ndarray) -> np.ndarray:
    return Xb
