"""What Firth's penalty reads of the rows, as sums over row chunks: the protocol of the
rows that can be summed chunk by chunk, and the one step that is not a sum.

Both kinds of rows (a GLM's, :class:`~.penalty_firth.MemoryFisherRows`; a softmax's,
:class:`~.penalty_firth_softmax.SoftmaxFisherRows`) give the penalty's gradient and
curvature as ``adjustment_sums``: the gradient, the held-leverage curvature and, for the
exact Hessian, a factor ``M`` whose ``tau M M^T`` is not a sum over rows (it pairs every
two rows). A Dask fit (``problin._dask.fisher_rows``) sums each chunk's share and
combines once on the client (:func:`combined_adjustment`), as the rows in memory do.
"""
from typing import Any, Callable, Protocol

import numpy as np

from ..blocks import iter_blocks, one_blas_thread, reduce_row_ranges
from ..linalg import symmetrize
from ..types import Matrix
from .design import Design

__all__ = ["ChunkFisherRows", "combined_adjustment"]


class ChunkFisherRows(Protocol):
    """Rows whose penalty terms are sums over them, so that chunks' shares add up."""

    n_params: int

    def information(self, theta: np.ndarray) -> np.ndarray:
        """The Fisher information of the rows at ``theta`` (a sum over rows)."""
        ...

    def adjustment_sums(self, theta: np.ndarray, r_inv: np.ndarray, tau: float,
                        curvature: bool, exact: bool = False) -> tuple[np.ndarray, ...]:
        """The gradient; with ``curvature`` the held-leverage curvature; with ``exact``
        the factor ``M`` of the exact Hessian's ``tau M M^T`` (each a sum over rows)."""
        ...


def combined_adjustment(sums: tuple[np.ndarray, ...], tau: float
                        ) -> tuple[np.ndarray, np.ndarray | None]:
    """The penalty's gradient and curvature from ``adjustment_sums`` (summed over any row
    chunks): the curvature ``+ tau M M^T`` where exact (formed after the sum)."""
    if len(sums) == 1:
        return np.asarray(sums[0]), None
    G = np.array(sums[1], dtype=np.float64)
    if len(sums) == 3:
        G += tau * (sums[2] @ sums[2].T)
    return np.asarray(sums[0]), symmetrize(G)


def sum_over_blocks(design: Design, rows: Any,
                    func: Callable[[int, int, Matrix], tuple[Any, ...]]) -> Any:
    """``func(start, stop, block)`` summed over the design's row blocks (``rows``: the
    fit's row subset or None), element by element of the tuples it returns: the one pass
    the binary and the softmax Fisher rows share."""
    block, _ = design.kernel()

    def over(lo: int, hi: int) -> tuple[Any, ...]:
        total: tuple[Any, ...] | None = None
        for start, stop, Xb in iter_blocks(design.X, rows=rows, start=lo, stop=hi):
            part = func(start, stop, block(Xb))
            total = part if total is None else tuple(a + b for a, b in zip(total, part))
        assert total is not None
        return total

    # (one BLAS thread also where the rows are one range: threaded BLAS on a few
    # thousand rows waits on its barriers, ~100 ms a pass on a busy machine)
    with one_blas_thread():
        return reduce_row_ranges(over, design.n_samples, rows)
