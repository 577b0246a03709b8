"""Firth's penalty on Dask input: :class:`~problin._core.model.penalty_firth.FisherRows`
summed over row chunks.

What the Jeffreys penalty reads of the rows at ``theta`` is two sums over rows: the
information ``I = [1, X]^T diag(w) [1, X]`` and, given the factor ``R^-1`` of ``I``
(p x p, sent to every chunk), the leverages' adjustment (the gradient ``-tau sum_i h_i
s_i x_i``, the held-leverage curvature and, for the exact Hessian, the factor ``M`` of
``tau M M^T``). Each chunk runs the in-memory :class:`MemoryFisherRows` on its own rows
(one task per chunk, block by block, BLAS on the task's thread: ``chunks._chunk_call``),
and only the p-sized sums travel, merged in Dask's tree; the non-additive ``M M^T`` is
formed on the client (:func:`combined_adjustment`). The penalty itself is evaluated on
the client, as in memory, so a Dask fit takes the in-memory fit's steps to rounding. A
softmax's chunks are :class:`SoftmaxFisherRows` (the K - 1 contrasts' information and
leverage matrices ``Q_i``), summed and combined the same way.
"""
import functools
from typing import Protocol

import numpy as np

from .._core.model.design import Design
from .._core.model.exponential_family import ExponentialFamily
from .._core.model.family_softmax import CategoricalSoftmax
from .._core.model.penalty_firth import Jeffreys, JeffreysPenalty, MemoryFisherRows
from .._core.model.penalty_firth_rows import ChunkFisherRows, combined_adjustment
from .._core.model.penalty_firth_softmax import SoftmaxFisherRows
from .design import DaskDesign, Sums

__all__ = ["DaskFisherRows", "binary_fisher_rows", "softmax_fisher_rows", "dask_jeffreys",
           "dask_softmax_jeffreys"]


class ChunkRows(Protocol):
    """A chunk's ``(design, targets, weights)`` as its Fisher rows (picklable)."""

    def __call__(self, design: Design, t: np.ndarray, w: np.ndarray | None, /
                 ) -> "MemoryFisherRows | SoftmaxFisherRows": ...


def binary_fisher_rows(design: Design, t: np.ndarray, w: np.ndarray | None, *,
                       family: ExponentialFamily) -> MemoryFisherRows:
    """A binary classifier's chunk (labels 0/1 as the targets, no offset on Dask)."""
    return MemoryFisherRows(design, family, np.asarray(t, dtype=np.float64), w, None)


def softmax_fisher_rows(design: Design, t: np.ndarray, w: np.ndarray | None, *,
                        family: CategoricalSoftmax) -> SoftmaxFisherRows:
    """A softmax's chunk (class indices as the targets; the penalty reads none)."""
    return SoftmaxFisherRows(design, family, t, w)


def _information_op(rows: ChunkFisherRows, *, theta: np.ndarray) -> Sums:
    return Sums(rows.information(theta))


def _adjustment_op(rows: ChunkFisherRows, *, theta: np.ndarray, r_inv: np.ndarray,
                   tau: float, curvature: bool, exact: bool) -> Sums:
    return Sums(*rows.adjustment_sums(theta, r_inv, tau, curvature, exact))


class DaskFisherRows:
    """:class:`~problin._core.model.penalty_firth.FisherRows` of a
    :class:`~problin._dask.design.DaskDesign`: each method one distributed pass."""

    def __init__(self, design: DaskDesign, chunk_rows: ChunkRows) -> None:
        self.design, self._chunk_rows = design, chunk_rows
        self.n_params = design.n_params

    def information(self, theta: np.ndarray) -> np.ndarray:
        (G,) = self.design.reduce(functools.partial(_information_op, theta=theta),
                                  self._chunk_rows)
        return np.asarray(G)

    def adjustment(self, theta: np.ndarray, r_inv: np.ndarray, tau: float,
                   curvature: bool, exact: bool = False
                   ) -> tuple[np.ndarray, np.ndarray | None]:
        sums = self.design.reduce(functools.partial(
            _adjustment_op, theta=theta, r_inv=r_inv, tau=tau, curvature=curvature,
            exact=exact), self._chunk_rows)
        return combined_adjustment(tuple(sums), tau)

    def subsample(self, rows: np.ndarray, sample_weight: np.ndarray
                  ) -> "MemoryFisherRows | SoftmaxFisherRows":
        """The sketch's rows, gathered into memory (a few thousand), reweighted."""
        design, t, _ = self.design.gather(rows)
        return self._chunk_rows(design, t, sample_weight)


def dask_jeffreys(recipe: Jeffreys, design: DaskDesign, family: ExponentialFamily,
                  chunk_rows: ChunkRows) -> JeffreysPenalty:
    """Firth's penalty ``recipe`` bound to the rows in ``design``'s chunks."""
    return recipe.on(DaskFisherRows(design, chunk_rows), family)


def dask_softmax_jeffreys(recipe: Jeffreys, design: DaskDesign, family: CategoricalSoftmax
                          ) -> JeffreysPenalty:
    """Firth's penalty ``recipe`` bound to a softmax's rows in ``design``'s chunks."""
    return recipe.on_classes(DaskFisherRows(
        design, functools.partial(softmax_fisher_rows, family=family)), family)
