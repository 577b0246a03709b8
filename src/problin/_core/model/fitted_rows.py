"""Rows at a fitted linear predictor, and sums over them that a data source reduces.

A parameter outside the linear predictor (the negative binomial's ``alpha``) is fitted
from sums over rows of per-row terms in ``y``, the means and the weights, and from
``[1, X]^T`` times a per-row vector (its cross derivative with the coefficients). Such a
sum is a :data:`RowSum`: a function of :class:`FittedRows` returning a tuple of numbers
and vectors that add across row blocks. The rows' data source applies it (a
:data:`SumRows`): once to all rows in memory, dense or sparse; to each chunk of a Dask
array, the partial results added by a tree reduction. The same function runs in both,
so neither the caller nor the function asks where the rows are.
"""
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeAlias

import numpy as np

from ..types import FloatArray
from .links import Link

__all__ = ["FittedRows", "RowProducts", "RowSum", "SumRows", "in_hand"]


class RowProducts(Protocol):
    """The design's ``[1, X]^T v`` (in the fit's coordinates)."""

    def rmatvec(self, v: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class FittedRows:
    """A block of rows at fitted means: targets ``y``, means ``mu`` and their slope
    ``d mu / d eta``, the likelihood's weights (None: all 1) and the block's design
    (None where no sum needs ``[1, X]^T``)."""

    y: FloatArray
    mu: FloatArray
    slope: FloatArray
    weights: FloatArray | None = None
    design: RowProducts | None = None
    # the two factors of ``weights`` (None: all 1), for sums that weigh them apart (the
    # dispersion's likelihood: a variance weight scales a row's shape, a frequency
    # weight repeats the row)
    frequency: FloatArray | None = None
    variance: FloatArray | None = None

    @classmethod
    def at(cls, design: RowProducts | None, link: Link, y: FloatArray,
           weights: FloatArray | None, eta: FloatArray,
           frequency: FloatArray | None = None,
           variance: FloatArray | None = None) -> "FittedRows":
        """The rows at the linear predictor ``eta`` (the offset included)."""
        mu, slope, _ = link.inverse_derivatives(eta)
        return cls(y, mu, slope, weights, design, frequency, variance)

    def rmatvec(self, v: FloatArray) -> FloatArray:
        """``[1, X]^T v`` over these rows."""
        if self.design is None:
            raise ValueError("these rows carry no design: [1, X]^T v is not available")
        return np.asarray(self.design.rmatvec(v), dtype=np.float64)


#: A sum over rows: its parts (floats or vectors) add across row blocks.
RowSum: TypeAlias = Callable[[FittedRows], tuple[float | FloatArray, ...]]
#: A data source's reduction of a :data:`RowSum` over all its rows.
SumRows: TypeAlias = Callable[[RowSum], tuple[float | FloatArray, ...]]


def in_hand(y: FloatArray, mu: FloatArray, weights: FloatArray | None = None) -> SumRows:
    """The reduction over rows whose means are at hand (no design, no slope)."""
    rows = FittedRows(np.asarray(y, dtype=np.float64), np.asarray(mu, dtype=np.float64),
                      np.full(np.shape(y), np.nan), weights)
    return lambda op: op(rows)
