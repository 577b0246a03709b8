"""Per-column standardisation for algorithms that are not invariant to units.

The perceptron and LMS update their weights by ``w <- w + eta r_n phi_n``: the
step along column ``j`` is proportional to ``x_nj``, so the path they take,
where they stop and what they return depend on the units and offsets of the
columns (a column in nanometres next to one in metres gets no updates to
speak of; a column at 1e8 +- 1 is a second intercept). Run on the
standardised columns

    z_j = (x_j - m_j) / s_j,      m_j the mean, s_j the standard deviation,

(or ``z_j = x_j / s_j`` with ``s_j`` the root mean square, for a model without
intercept, whose boundary must pass through the raw origin), the algorithm sees
the same numbers whatever the units, and its weights map back exactly:
``w = v / s``, ``b = b_z - w^T m``. Scaling column ``j`` by ``c`` then divides
``w_j`` by ``c``; shifting it moves only ``b``.

``m`` and ``s`` come from one pass of :func:`~problin._core.moments.class_stats.class_stats`
(one class): the mean is held as ``origin + offset`` and rows are centred in
two steps, ``(x - origin) - offset``, so that data at 1e8 +- 1 keep every digit
of their spread. Statistics merged chunk by chunk (Dask) equal those of one
pass to rounding, so the standardised rows do too.
"""
from dataclasses import dataclass

import numpy as np

from ..types import Matrix
from .class_stats import ClassStats, class_stats

__all__ = ["ColumnScaling", "column_scaling", "column_stats"]


@dataclass(frozen=True)
class ColumnScaling:
    """The map ``z = ((x - origin) - offset) / scale`` of every column, and back.

    Attributes
    ----------
    origin, offset : ndarray of shape (D,)
        The centre ``m = origin + offset`` (zeros when not centred).
    scale : ndarray of shape (D,)
        Positive scales ``s`` (1 for a column that is constant, or zero).
    """

    origin: np.ndarray
    offset: np.ndarray
    scale: np.ndarray

    def transform(self, X: np.ndarray) -> np.ndarray:
        """The standardised rows ``z`` of a block ``X`` (a new float64 array)."""
        Z = np.subtract(X, self.origin, dtype=np.float64)
        Z -= self.offset
        Z /= self.scale
        return Z

    def coef(self, V: np.ndarray) -> np.ndarray:
        """Raw weights ``w = v / s`` of standardised ones ``v`` (shape (..., D))."""
        return np.asarray(V, dtype=np.float64) / self.scale

    def intercept(self, b: np.ndarray, W: np.ndarray) -> np.ndarray:
        """Raw intercepts ``b_z - w^T m`` for raw weights ``W`` (shape (..., D))."""
        return b - W @ self.origin - W @ self.offset


def column_stats(X: Matrix) -> ClassStats:
    """One-class :class:`~problin._core.moments.class_stats.ClassStats` (``kind="diag"``) of the rows of ``X``:
    the count, each column's mean as ``origin + offset`` and centred sum of squares."""
    return class_stats(X, np.zeros(X.shape[0], dtype=np.intp), 1, kind="diag")


def column_scaling(stats: ClassStats, centre: bool = True) -> ColumnScaling:
    """The :class:`ColumnScaling` of one-class statistics.

    ``centre``: subtract each column's mean and divide by its standard
    deviation; otherwise divide by its root mean square ``sqrt(mean x^2)``
    (no shift: for a model whose boundary passes through the origin). A column
    of zero scale (constant when centred, all zero otherwise) gets scale 1:
    centred, it is then exactly zero.
    """
    n = float(stats.counts[0])
    var = stats.sq[0] / n if n > 0 else np.zeros(stats.n_features)
    origin, offset = stats.origin[0].copy(), stats.offset[0].copy()
    if centre:
        spread = np.sqrt(var)
    else:
        spread = np.sqrt(var + (origin + offset) ** 2)
        origin, offset = np.zeros_like(origin), np.zeros_like(offset)
    scale = np.where((spread > 0) & np.isfinite(spread), spread, 1.0)
    return ColumnScaling(origin, offset, scale)
