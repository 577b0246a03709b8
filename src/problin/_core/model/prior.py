"""The precision ``P`` of a Gaussian prior ``N(m, P^-1)`` on the parameters, kept structured.

Its negative log-density (up to a constant) is the penalty
``1/2 (theta - m)^T P (theta - m)`` (Bishop 2006, §4.5.1: the MAP of logistic
regression under a Gaussian prior), the objectives' ``GaussianPenalty``
(:mod:`.penalty`).
"""
from collections.abc import Iterable
from typing import cast

import numpy as np
import numpy.typing as npt

__all__ = ["PriorPrecision"]


class PriorPrecision:
    """Precision matrix of a Gaussian prior, kept structured: diagonal plus rank one terms.

    ``P = diag(d) + sum_i c_i v_i v_i^T``. A dense p x p matrix would not fit
    in memory for wide data (p = 50,001 is 20 GB); products cost O(p) here.
    A 2-D array is also accepted and used as given.
    """

    def __init__(self, diag: npt.ArrayLike,
                 rank_one: Iterable[tuple[npt.ArrayLike, float]] = ()) -> None:
        diag = np.asarray(diag, dtype=np.float64)
        self.dense_matrix: np.ndarray | None = diag if diag.ndim == 2 else None
        self.diag: np.ndarray | None = None if diag.ndim == 2 else diag
        self.rank_one = [(np.asarray(v, dtype=np.float64), float(c)) for v, c in rank_one]

    def matvec(self, r: np.ndarray) -> np.ndarray:
        """``P r``."""
        if self.dense_matrix is not None:
            out = self.dense_matrix @ r
        else:
            out = cast(np.ndarray, self.diag) * r  # (one of the two is set)
        for v, c in self.rank_one:
            out = out + c * v * float(v @ r)
        return out

    def quad(self, r: np.ndarray) -> float:
        """``r^T P r``."""
        return float(r @ self.matvec(r))

    def add_to(self, H: np.ndarray) -> np.ndarray:
        """``H + P`` as a new dense matrix."""
        H = H + self.dense_matrix if self.dense_matrix is not None else H.copy()
        if self.diag is not None:
            H[np.diag_indices_from(H)] += self.diag
        for v, c in self.rank_one:
            H += c * np.outer(v, v)
        return H

