"""The precision ``P`` of a Gaussian prior ``N(m, P^-1)`` on the parameters, kept structured.

Its negative log-density (up to a constant) is the penalty
``1/2 (theta - m)^T P (theta - m)`` (Bishop 2006, §4.5.1: the MAP of logistic
regression under a Gaussian prior), the objectives' ``GaussianPenalty``
(:mod:`.penalty`).
"""
from collections.abc import Iterable
from typing import Protocol, cast

import numpy as np
import numpy.typing as npt
from scipy import linalg

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



class ParameterBasis(Protocol):
    """What :meth:`GaussianPrior.standardised` reads of a ``ColumnBasis``."""

    center: np.ndarray | None

    def multipliers(self) -> np.ndarray: ...

    def to_raw(self, theta_z: np.ndarray) -> np.ndarray: ...


class GaussianPrior:
    """A Gaussian prior ``N(m_0, S_0^-1)`` on the *raw* parameters ``theta = [b, w]``
    (the intercept first where there is one, then the slopes in the columns' order):
    the texts' model (Bishop 2006, eq. 4.140), validated once.

    ``precision`` is ``S_0``: a symmetric positive definite ``p x p`` matrix, or the
    positive diagonal of one (``definite=False``: positive *semi*definite, zero
    entries unpenalised, as a GLM's intercept). The solvers work in the design's
    equilibrated, centred basis, ``theta = T theta_z`` (:mod:`.basis`); there the
    prior is ``N(T^-1 m_0, (T^T S_0 T)^-1)`` (:meth:`standardised`), the same
    density up to the constant Jacobian, so MAP, posterior and evidence are those of
    the raw prior.
    """

    def __init__(self, mean: npt.ArrayLike | None, precision: npt.ArrayLike, n_params: int,
                 *, definite: bool = True, parameters: str = "parameters") -> None:
        self.precision = _check_precision(precision, n_params, definite, parameters)
        self.mean = _check_mean(mean, n_params, parameters)
        self.definite = definite

    @property
    def n_params(self) -> int:
        return self.mean.size

    def scaled(self, alpha: float) -> "GaussianPrior":
        """The prior ``N(m_0, (alpha S_0)^-1)`` (``alpha > 0``: still valid)."""
        out = object.__new__(GaussianPrior)
        out.precision, out.mean, out.definite = float(alpha) * self.precision, self.mean, \
            self.definite
        return out

    def dense(self) -> np.ndarray:
        """``S_0`` as a ``p x p`` matrix."""
        P = self.precision
        return np.diag(P) if P.ndim == 1 else P

    def standardised(self, basis: ParameterBasis | None) -> tuple[PriorPrecision, np.ndarray]:
        """``(T^T S_0 T, T^-1 m_0)``: precision and mean in the basis's coordinates
        (``T`` the map of ``basis.to_raw``; the identity without a basis). A diagonal
        ``S_0`` stays diagonal where ``T`` is (an uncentred basis)."""
        P, m = self.precision, self.mean
        if basis is None:
            return PriorPrecision(P), m.copy()
        scales = basis.multipliers()  # raw = scales * theta_z, before the centring
        mean_z = m / scales
        if basis.center is not None:  # b = b_z - c^T w: b_z = b + c^T w
            mean_z[0] = m[0] + float(basis.center @ m[1:])
        if P.ndim == 1 and basis.center is None:
            return PriorPrecision(P * scales ** 2), mean_z
        T = basis.to_raw(np.eye(m.size)).T  # column j: the raw parameters of e_j
        Pz = T.T @ self.dense() @ T
        return PriorPrecision(0.5 * (Pz + Pz.T)), mean_z


def _check_mean(mean: npt.ArrayLike | None, p: int, parameters: str) -> np.ndarray:
    if mean is None:
        return np.zeros(p)
    try:
        m = np.array(mean, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("prior_mean must be numeric") from None
    if m.shape != (p,):
        raise ValueError(f"prior_mean has shape {m.shape}; expected ({p},): one value per "
                         f"parameter, {parameters}")
    bad = np.flatnonzero(~np.isfinite(m))
    if bad.size:
        raise ValueError(f"prior_mean contains NaN or infinity (at index {bad[:5].tolist()})")
    return m


def _check_precision(precision: npt.ArrayLike, p: int, definite: bool,
                     parameters: str) -> np.ndarray:
    """``S_0`` validated: shape, finite, symmetric, positive (semi)definite."""
    try:
        P = np.array(precision, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("prior_precision must be numeric") from None
    if P.shape not in ((p,), (p, p)):
        raise ValueError(f"prior_precision has shape {P.shape}; expected ({p}, {p}) or a "
                         f"diagonal of shape ({p},): {parameters}")
    if not np.all(np.isfinite(P)):
        bad = np.argwhere(~np.isfinite(P))[0].tolist()
        raise ValueError(f"prior_precision contains NaN or infinity (at index {bad})")
    kind = "positive definite (a proper prior)" if definite else "positive semidefinite"
    if P.ndim == 1:
        low = float(P.min()) if P.size else 0.0
        if low < 0 or (definite and low == 0):
            raise ValueError(f"prior_precision must be {kind}: its diagonal holds "
                             f"{low:.3g} at index {int(np.argmin(P))}")
        return P
    scale = max(float(np.max(np.abs(P))) if P.size else 0.0, np.finfo(np.float64).tiny)
    asym = float(np.max(np.abs(P - P.T))) if P.size else 0.0
    if asym > 1e-10 * scale:
        raise ValueError(f"prior_precision must be symmetric (largest |P - P^T| is "
                         f"{asym:.3g}, its largest entry {scale:.3g})")
    P = 0.5 * (P + P.T)
    if definite:
        try:
            linalg.cholesky(P, lower=True, check_finite=False)
        except linalg.LinAlgError:
            lam = float(linalg.eigvalsh(P, check_finite=False)[0])
            raise ValueError(f"prior_precision must be {kind}: its Cholesky factorisation "
                             f"fails (smallest eigenvalue {lam:.3g})") from None
        return P
    # Semidefinite: Cholesky of a singular matrix fails by rounding; the eigenvalues
    # tell a zero direction (an unpenalised one) from a negative one.
    lam = linalg.eigvalsh(P, check_finite=False)
    if lam.size and lam[0] < -p * np.finfo(np.float64).eps * max(lam[-1], 0.0) * 16:
        raise ValueError(f"prior_precision must be {kind}: its smallest eigenvalue is "
                         f"{lam[0]:.3g} (largest {lam[-1]:.3g})")
    return P
