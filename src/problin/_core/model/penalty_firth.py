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

What the penalty reads of the rows is row-block sums at ``theta``
(:class:`FisherRows`): the information ``I`` (a Gram pass), then with its factor
``I = R^T R`` the leverages ``h_i = w_i |R^-T x_i|^2`` (block by block, no n x p
temporary), the sum ``sum_i c_i x_i`` of the per-row adjustments and a Gram of them.
Both are sums over rows, so the same penalty runs on any rows that can form them;
:class:`MemoryFisherRows` forms them in memory (dense or sparse, by blocks).

The Hessian is approximated (``exact_hessian`` False): the data term's Fisher
information plus the penalty's curvature with the leverages held fixed, the information
of logistf's augmented data (Heinze & Schemper 2002), whose inverse is the covariance
logistf reports. The engine's stopping test then reads the Newton decrement,
``lambda^2 / 2 <= tol^2``, of the penalised gradient.
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


def _slope_derivative(family: ExponentialFamily, eta: np.ndarray) -> np.ndarray:
    """``d^2 log w / d eta^2`` by central differences (relative step 1e-4: ~1e-8 of a
    term that only shapes the covariance and the step, never the estimate)."""
    step = 1e-4 * (1.0 + np.abs(eta))
    return (information_slope(family, eta + step)
            - information_slope(family, eta - step)) / (2.0 * step)


class FisherRows(Protocol):
    """The row sums Firth's penalty needs at ``theta``, in the solving basis."""

    n_params: int

    def weights(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(w, d log w / d eta, d^2 log w / d eta^2)`` of every row at ``theta``
        (``w`` with the sample weights)."""
        ...

    def gram(self, w: np.ndarray) -> np.ndarray:
        """``[1, X]^T diag(w) [1, X]`` (the information, for the Fisher weights)."""
        ...

    def rmatvec(self, v: np.ndarray) -> np.ndarray:
        """``[1, X]^T v``."""
        ...

    def leverages(self, w: np.ndarray, r_inv: np.ndarray) -> np.ndarray:
        """``h_i = w_i |x_i^T r_inv|^2`` (``r_inv = R^-1``, ``I = R^T R``), by row blocks."""
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

    def weights(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        eta = self.design.matvec(theta)
        if self.offset is not None:
            eta = eta + self.offset
        _, _, w = self.family.derivatives(self.y, eta, self.sample_weight, "expected")
        return w, information_slope(self.family, eta), _slope_derivative(self.family, eta)

    def gram(self, w: np.ndarray) -> np.ndarray:
        return self.design.gram(w)

    def rmatvec(self, v: np.ndarray) -> np.ndarray:
        return self.design.rmatvec(v)

    def leverages(self, w: np.ndarray, r_inv: np.ndarray) -> np.ndarray:
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
        return w * q

    def subsample(self, rows: np.ndarray, sample_weight: np.ndarray) -> "MemoryFisherRows":
        return MemoryFisherRows(self.design.subsample(rows), self.family, self.y[rows],
                                sample_weight, None if self.offset is None
                                else self.offset[rows])


class JeffreysPenalty(PenaltyBase):
    """``r(theta) = -tau log |I(theta)|`` on :class:`FisherRows` (``tau = 1/2``: Firth).

    The value needs the information's factor at ``theta``; the gradient and the
    Hessian's term the leverages, one more pass. Both are kept for the last ``theta``
    asked (a line search asks the value, then the derivatives at the accepted point).
    The Hessian added is ``r``'s with the leverages held fixed, ``-tau sum_i h_i
    (d^2 log w_i / d eta_i^2) x_i x_i^T`` (for the logit ``sum_i h_i w_i x_i x_i^T``):
    with the data term's Fisher information it is the information of logistf's
    augmented data (rows weighted ``1 + h_i``), whose inverse logistf reports."""

    exact_hessian = False

    def __init__(self, rows: FisherRows, tau: float = 0.5) -> None:
        self.rows, self.tau = rows, float(tau)
        self._at: bytes | None = None
        self._state: tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._h: np.ndarray | None = None
        self._grad: np.ndarray | None = None

    def _evaluate(self, theta: np.ndarray
                  ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        key = np.asarray(theta, dtype=np.float64).tobytes()
        if key != self._at or self._state is None:
            w, slope, curve = self.rows.weights(theta)
            chol = cholesky(self.rows.gram(w))
            logdet = chol.logdet() if chol.jitter == 0.0 else -np.inf
            self._at, self._h, self._grad = key, None, None
            self._state = (-self.tau * logdet, w, slope, curve, chol.factor[0])
        return self._state

    def _leverages(self, theta: np.ndarray) -> np.ndarray:
        _, w, _, _, R = self._evaluate(theta)
        if self._h is None:
            with small_blas(R.shape[0]):
                r_inv, info = lapack.dtrtri(R, lower=0)
            if info != 0:  # pragma: no cover - a factor is non-singular
                raise np.linalg.LinAlgError("inverting the information's factor failed")
            self._h = self.rows.leverages(w, np.triu(r_inv))
        return self._h

    def value(self, theta: np.ndarray) -> float:
        return self._evaluate(theta)[0]

    def gradient(self, theta: np.ndarray) -> np.ndarray:
        h = self._leverages(theta)
        if self._grad is None:
            self._grad = self.rows.rmatvec(-self.tau * h * self._evaluate(theta)[2])
        return self._grad

    def hessp(self, theta: np.ndarray, v: np.ndarray) -> np.ndarray:
        return self.add_hessian(theta, np.zeros((v.size, v.size))) @ v

    def add_hessian(self, theta: np.ndarray, H: np.ndarray) -> np.ndarray:
        h = self._leverages(theta)
        return H + self.rows.gram(-self.tau * h * self._evaluate(theta)[3])

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
