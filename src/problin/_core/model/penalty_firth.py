"""Firth's penalty: the Jeffreys prior ``|I(theta)|^(1/2)`` on a GLM's coefficients.

    r(theta) = -tau log |I(theta)|,  I(theta) = [1, X]^T diag(w(eta)) [1, X],

with ``tau = 1/2`` (Firth 1993), ``w_i = s_i mu_i'^2 / V(mu_i)`` the expected (Fisher)
weights and ``eta = [1, X] theta + o``. Its gradient is

    grad r = -tau sum_i h_i (d log w_i / d eta_i) x_i,   h_i = w_i x_i^T I^-1 x_i,

the leverages of the weighted design (the hat matrix's diagonal, the quantity HC2 and
HC3 use). The penalised score ``X^T (y - mu) mu' / V + tau sum_i h_i (w_i' / w_i) x_i``
is the adjusted score of Kosmidis & Firth (2009) for a fixed dispersion; for the logit,
``w' / w = 1 - 2 mu`` and it is Heinze & Schemper's (2002) ``sum (y - mu + h (1/2 - mu))
x``, for the Poisson-log ``w' / w = 1``.

What the penalty reads of the rows is two row-block sums at ``theta``
(:class:`FisherRows`): the information ``I`` (a Gram pass), then with its factor
``I = R^T R`` the leverages ``h_i = w_i |R^-T x_i|^2`` and the sum
``sum_i c_i x_i`` of the per-row adjustments, block by block (no n x p temporary).
Both are sums over rows, so the same penalty runs on any rows that can form them;
:class:`MemoryFisherRows` forms them in memory (dense or sparse, by blocks).

The Hessian is approximated by the data term's Fisher information alone (``add_hessian``
adds nothing, ``exact_hessian`` False): logistf's iteration (Heinze & Schemper 2002),
whose inverse is also the covariance logistf reports. The engine's stopping test then
reads the Newton decrement, ``lambda^2 / 2 <= tol^2``, of the penalised gradient.
"""
from typing import Protocol

import numpy as np
from scipy.linalg import lapack

from ..blocks import reduce_row_ranges, small_blas
from ..linalg import cholesky
from .design import Design
from .exponential_family import ExponentialFamily
from .penalty import Penalty, PenaltyBase

__all__ = ["FisherRows", "MemoryFisherRows", "JeffreysPenalty", "Jeffreys", "JEFFREYS",
           "information_slope"]

# Rows x parameters of one leverage block (~1 MB of float64).
_BLOCK_ELEMENTS = 1 << 17


def information_slope(family: ExponentialFamily, eta: np.ndarray) -> np.ndarray:
    """``d log w / d eta`` of the Fisher weight ``w = mu'^2 / V(mu)``:
    ``2 mu'' / mu' - mu' V'(mu) / V(mu)`` (``1 - 2 mu`` for the logit, 1 for the
    Poisson-log, ``-2 eta - phi/Phi + phi/(1 - Phi)`` for the probit). Rows whose weight
    underflows (``mu'`` or ``V`` zero) get 0: their leverage is 0 as well."""
    link, dist = family.link_function, family.distribution
    with np.errstate(all="ignore"):
        mu, d1, d2 = link.inverse_derivatives(eta)
        slope = 2.0 * d2 / d1 - d1 * dist.variance_derivative(mu) / dist.variance(mu)
    return np.where(np.isfinite(slope), slope, 0.0)


class FisherRows(Protocol):
    """The two row sums Firth's penalty needs at ``theta``, in the solving basis."""

    n_params: int

    def weights(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(w, d log w / d eta)`` of every row at ``theta`` (``w`` with the sample
        weights)."""
        ...

    def information(self, w: np.ndarray) -> np.ndarray:
        """``I = [1, X]^T diag(w) [1, X]``."""
        ...

    def adjustment(self, w: np.ndarray, slope: np.ndarray, r_inv: np.ndarray,
                   tau: float) -> np.ndarray:
        """``-tau sum_i h_i slope_i x_i`` with ``h_i = w_i |x_i^T r_inv|^2``
        (``r_inv = R^-1``, ``I = R^T R``): the penalty's gradient."""
        ...

    def subsample(self, rows: np.ndarray, sample_weight: np.ndarray) -> "FisherRows":
        """The same rows restricted to ``rows``, reweighted by ``sample_weight``."""
        ...


class MemoryFisherRows:
    """:class:`FisherRows` of rows in memory, read by row blocks through their design."""

    def __init__(self, design: Design, family: ExponentialFamily, y: np.ndarray,
                 sample_weight: np.ndarray | None, offset: np.ndarray | None) -> None:
        self.design, self.family, self.y = design, family, y
        self.sample_weight, self.offset = sample_weight, offset
        self.n_params = design.n_params

    def weights(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        eta = self.design.matvec(theta)
        if self.offset is not None:
            eta = eta + self.offset
        _, _, w = self.family.derivatives(self.y, eta, self.sample_weight, "expected")
        return w, information_slope(self.family, eta)

    def information(self, w: np.ndarray) -> np.ndarray:
        return self.design.gram(w)

    def adjustment(self, w: np.ndarray, slope: np.ndarray, r_inv: np.ndarray,
                   tau: float) -> np.ndarray:
        design = self.design
        n = design.n_samples
        step = max(256, _BLOCK_ELEMENTS // max(1, design.n_params))

        def rows(lo: int, hi: int) -> np.ndarray:
            out = np.empty(hi - lo)
            for start in range(lo, hi, step):
                stop = min(hi, start + step)
                Z = design.dense_rows(np.arange(start, stop)) @ r_inv  # x_i^T R^-1
                out[start - lo:stop - lo] = np.einsum("ij,ij->i", Z, Z)
            return out

        q = np.concatenate(reduce_row_ranges(lambda lo, hi: [rows(lo, hi)], n, step)) \
            if n > step else rows(0, n)
        return design.rmatvec(-tau * w * q * slope)

    def subsample(self, rows: np.ndarray, sample_weight: np.ndarray) -> "MemoryFisherRows":
        return MemoryFisherRows(self.design.subsample(rows), self.family, self.y[rows],
                                sample_weight, None if self.offset is None
                                else self.offset[rows])


class JeffreysPenalty(PenaltyBase):
    """``r(theta) = -tau log |I(theta)|`` on :class:`FisherRows` (``tau = 1/2``: Firth).

    The value needs the information's factor at ``theta``, the gradient one more pass;
    both are kept for the last ``theta`` asked (a line search asks the value, then the
    gradient at the accepted point)."""

    exact_hessian = False

    def __init__(self, rows: FisherRows, tau: float = 0.5) -> None:
        self.rows, self.tau = rows, float(tau)
        self._at: bytes | None = None
        self._state: tuple[float, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._grad: np.ndarray | None = None

    def _evaluate(self, theta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        key = np.asarray(theta, dtype=np.float64).tobytes()
        if key != self._at or self._state is None:
            w, slope = self.rows.weights(theta)
            chol = cholesky(self.rows.information(w))
            logdet = chol.logdet() if chol.jitter == 0.0 else -np.inf
            self._at, self._grad = key, None
            self._state = (-self.tau * logdet, w, slope, chol.factor[0])
        return self._state

    def value(self, theta: np.ndarray) -> float:
        return self._evaluate(theta)[0]

    def gradient(self, theta: np.ndarray) -> np.ndarray:
        _, w, slope, R = self._evaluate(theta)
        if self._grad is None:
            with small_blas(R.shape[0]):
                r_inv, info = lapack.dtrtri(R, lower=0)
            if info != 0:  # pragma: no cover - a factor is non-singular
                raise np.linalg.LinAlgError("inverting the information's factor failed")
            self._grad = self.rows.adjustment(w, slope, np.triu(r_inv), self.tau)
        return self._grad

    def hessp(self, theta: np.ndarray, v: np.ndarray) -> np.ndarray:
        return np.zeros_like(v, dtype=np.float64)  # (the Fisher-scoring approximation)

    def add_hessian(self, theta: np.ndarray, H: np.ndarray) -> np.ndarray:
        return H

    def add_hessp(self, theta: np.ndarray, v: np.ndarray, Hv: np.ndarray) -> np.ndarray:
        return Hv

    def subsample(self, rows: np.ndarray, sample_weight: np.ndarray) -> Penalty:
        return JeffreysPenalty(self.rows.subsample(rows, sample_weight), self.tau)


class Jeffreys:
    """The recipe of Firth's penalty: :meth:`bind` makes it for one objective's rows.

    A value object, so that an estimator's choice of penalty travels to where the rows
    are (the data source builds the objective) without the rows travelling back."""

    def __init__(self, tau: float = 0.5) -> None:
        self.tau = float(tau)

    def check(self, family: ExponentialFamily) -> None:
        """Refuse a family whose dispersion is estimated (the penalised estimate would
        depend on it; Kosmidis & Firth's adjusted score for those is not built here)."""
        if not family.distribution.fixed_dispersion:
            raise ValueError(f"penalty='firth' needs a family with a fixed dispersion "
                             f"(binomial, Poisson); {family!r} has none")

    def bind(self, design: Design, family: ExponentialFamily, y: np.ndarray,
             sample_weight: np.ndarray | None, offset: np.ndarray | None) -> JeffreysPenalty:
        self.check(family)
        return JeffreysPenalty(MemoryFisherRows(design, family, y, sample_weight, offset),
                               self.tau)


#: Firth's penalty, ``tau = 1/2``.
JEFFREYS = Jeffreys()
