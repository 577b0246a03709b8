"""The Gaussian prior ``N(m, P^-1)`` on the parameters that every objective carries.

Its negative log-density (up to a constant) is the penalty
``1/2 (theta - m)^T P (theta - m)`` added to the data term; with ``P = 0``
the fit is maximum likelihood (Bishop 2006, §4.5.1: the MAP of logistic
regression under a Gaussian prior).
"""
from collections.abc import Iterable
from typing import Any, cast

import numpy as np
import numpy.typing as npt

__all__ = ["PriorPrecision", "GaussianPrior"]


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


class GaussianPrior:
    """The prior term ``1/2 (theta - m)^T P (theta - m)`` shared by every objective.

    A mixin: the objective sets ``design``, ``sample_weight`` and
    ``n_params`` before calling :meth:`_init_prior`.
    """

    design: Any
    sample_weight: np.ndarray | None
    n_params: int
    n_blocks: int = 1
    P: PriorPrecision | None
    m: np.ndarray

    def _init_prior(self, prior_precision: PriorPrecision | npt.ArrayLike | None,
                    prior_mean: npt.ArrayLike | None) -> None:
        p = self.n_params
        if prior_precision is not None and not isinstance(prior_precision, PriorPrecision):
            prior_precision = PriorPrecision(prior_precision)
        self.P = prior_precision
        self.m = np.zeros(p) if prior_mean is None else np.asarray(prior_mean, dtype=np.float64)

    @property
    def total_weight(self) -> float:
        """The sum of the sample weights (the number of rows without weights)."""
        if self.sample_weight is None:
            return float(self.design.n_samples)
        return float(np.sum(self.sample_weight))

    def penalty(self, theta: np.ndarray) -> float:
        """The prior term at ``theta`` (0 without a prior)."""
        if self.P is None:
            return 0.0
        return 0.5 * self.P.quad(theta - self.m)

    def _add_prior(self, theta: np.ndarray, f: float, grad: np.ndarray,
                   hess: np.ndarray | None = None
                   ) -> tuple[float, np.ndarray, np.ndarray | None]:
        """The data term's ``(f, gradient, Hessian)`` with the prior's added."""
        if self.P is None:
            return f, grad, hess
        Pr = self.P.matvec(theta - self.m)
        f = f + 0.5 * float((theta - self.m) @ Pr)
        grad = grad + Pr
        if hess is not None:
            hess = self.P.add_to(hess)
        return f, grad, hess
