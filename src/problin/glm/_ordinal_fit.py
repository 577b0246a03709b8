"""The fit record of :class:`~problin.glm.ordinal.OrdinalRegression` and its maps.

The engine solves in ``phi = [b_z, w_z, gamma]`` (the design's basis, then the log gaps of
the cut-points, :mod:`problin._core.model.family_ordinal`); the model is reported in
``psi = [beta, theta]``, the raw slopes and the cut-points (R ``polr``'s and statsmodels
``OrderedModel``'s parameters, cut-points mapped from their first-threshold-and-log-
increments form). ``psi`` is a smooth one-to-one function of ``phi``, so the maximum
likelihood estimate maps exactly and the covariance by the delta method,
``V_psi = J_psi H^-1 J_psi^T`` with ``H`` the exact observed information in ``phi`` (the
inverse of the observed information in ``psi`` itself at the optimum, where the gradient
vanishes). Robust covariances are sandwiches in ``phi`` mapped the same way.
"""
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._core.linalg import solve_psd
from .._core.model.basis import ColumnBasis
from .._core.model.family_ordinal import CumulativeLink
from .._core.model.objective_ordinal import OrdinalObjective
from .._core.model.sandwich import meat, sandwich, small_sample_factor
from .._core.types import FloatArray

__all__ = ["OrdinalFit", "raw_jacobian", "slope_index", "solver_start"]


def _raw_map(basis: ColumnBasis | None, p: int) -> FloatArray:
    """``T`` with ``[b, w]_raw = T [b_z, w_z]`` (the identity without a basis)."""
    eye = np.eye(p)
    return eye if basis is None else np.asarray(basis._apply(eye), dtype=np.float64)


def raw_jacobian(family: CumulativeLink, basis: ColumnBasis | None, theta: FloatArray,
                 p: int) -> tuple[FloatArray, FloatArray]:
    """``(psi, J_psi)``: the reported parameters ``[beta, theta]`` at the solver's
    ``theta`` and their Jacobian in it."""
    T = _raw_map(basis, p)
    raw = T @ theta[:p]
    a = family.cuts(theta[p:])
    psi = np.concatenate((raw[1:], a - raw[0]))
    K1 = family.n_classes - 1
    J = np.zeros((p - 1 + K1, p + family.n_gaps))
    J[:p - 1, :p] = T[1:]
    J[p - 1:, :p] = -T[0][None, :]
    J[p - 1:, p:] = family.gaps_jacobian(theta[p:])
    return psi, J


def solver_start(family: CumulativeLink, basis: ColumnBasis | None, start: FloatArray,
                 p: int) -> FloatArray:
    """The solver's parameters of a user start ``[beta, theta]`` (theta increasing)."""
    D = p - 1
    beta, theta = start[:D], start[D:]
    raw = np.concatenate(([-theta[0]], beta))
    z = np.linalg.solve(_raw_map(basis, p), raw)
    return np.concatenate((z, np.log(np.diff(theta))))


def slope_index(nominal: NDArray[np.bool_] | None, n_features: int, n_cuts: int
                ) -> NDArray[np.intp]:
    """``(K-1, D)``: where cut ``k``'s slope of column ``d`` sits among the reported slopes
    (column by column, a nominal column's K - 1 slopes together)."""
    if nominal is None:
        return np.tile(np.arange(n_features), (n_cuts, 1))
    width = np.where(nominal, n_cuts, 1)
    first = np.concatenate(([0], np.cumsum(width)[:-1]))
    steps = np.where(nominal[None, :], np.arange(n_cuts)[:, None], 0)
    return np.asarray(first[None, :] + steps, dtype=np.intp)


@dataclass(frozen=True)
class OrdinalFit:
    """One fit of a cumulative-link model: what the estimator's attributes, predictions
    and summaries are read from (``psi = [coef, cutpoints]`` order everywhere)."""

    family: CumulativeLink
    basis: ColumnBasis | None
    theta_standard: FloatArray  # the solver's [b_z, w_z, gamma]
    params: FloatArray  # [coef, cutpoints]
    jacobian: FloatArray  # d params / d theta_standard
    covariance: FloatArray | None
    covariance_standard: FloatArray | None  # the inverse observed information in theta
    cov_type: str
    log_likelihood: float
    null_log_likelihood: float
    n_obs: float
    n_iter: int
    converged: bool
    message: str
    alpha: float
    statistics: dict[str, float] = field(default_factory=dict)
    # the columns with a slope per cut (the partial proportional-odds model), or None
    nominal: NDArray[np.bool_] | None = None

    @property
    def n_slopes(self) -> int:
        return self.params.size - (self.family.n_classes - 1)

    @property
    def n_features(self) -> int:
        return self.n_slopes if self.nominal is None else int(self.nominal.size)

    @property
    def slope_index(self) -> NDArray[np.intp]:
        """``(K-1, D)``: where cut ``k``'s slope of column ``d`` sits in ``params``."""
        return slope_index(self.nominal, self.n_features, self.family.n_classes - 1)

    @property
    def cut_slopes(self) -> FloatArray:
        """``(K-1, D)``: each cut's slopes, ``P(y <= k) = F(theta_k - x^T beta_k)``."""
        return self.params[self.slope_index]

    @property
    def coef(self) -> FloatArray:
        """``beta`` (D,); with nominal columns the slopes per cut (K-1, D)."""
        return self.params[:self.n_slopes] if self.nominal is None else self.cut_slopes

    @property
    def cutpoints(self) -> FloatArray:
        return self.params[self.n_slopes:]

    def attributes(self) -> dict[str, Any]:
        """The fitted attributes (the one place they are set)."""
        return {"coef_": self.coef.copy(), "cutpoints_": self.cutpoints.copy(),
                "covariance_": None if self.covariance is None else self.covariance.copy(),
                "n_iter_": self.n_iter, "converged_": self.converged, **self.statistics}

    def with_covariance(self, standard: FloatArray, cov_type: str) -> "OrdinalFit":
        J = self.jacobian
        return replace(self, covariance_standard=standard, covariance=J @ standard @ J.T,
                       cov_type=cov_type)


def model_covariance(objective: Any, theta: FloatArray, hessian: FloatArray | None
                     ) -> tuple[FloatArray, bool]:
    """``(H^-1, singular)`` of the exact observed information at the solver's ``theta``:
    the engine's Hessian at the answer where Cholesky factors it (its steps' Hessian is
    the exact one there), else formed anew."""
    H = hessian
    if H is None or np.linalg.eigvalsh(H)[0] <= 0:
        H = objective.observed_hessian(theta, objective.linear_predictor(theta))
    cov, rank = solve_psd(H, np.eye(H.shape[0]))
    return 0.5 * (cov + cov.T), rank < H.shape[0]


def robust_standard(objective: OrdinalObjective, theta: FloatArray, bread: FloatArray,
                    cov_type: str, clusters: tuple[np.ndarray, int] | None) -> FloatArray:
    """The sandwich ``c B M B`` in the solver's parameters: the rows' scores
    ``[g_i x~_i, G_i]`` (frequency weights count a row w times, as the GLMs')."""
    eta = objective.linear_predictor(theta)
    g, G = objective.row_scores(theta, eta)
    design = objective.design

    def score_rows(lo: int, hi: int) -> FloatArray:
        R = design.dense_rows(np.arange(lo, hi))
        return np.hstack((g[lo:hi, None] * R, G[lo:hi]))

    return sandwich_standard(score_rows, design.n_samples, objective.sample_weight,
                             objective.total_weight, bread, cov_type, clusters)


def sandwich_standard(score_rows: Callable[[int, int], FloatArray], n: int,
                      sample_weight: FloatArray | None, total_weight: float,
                      bread: FloatArray, cov_type: str,
                      clusters: tuple[np.ndarray, int] | None) -> FloatArray:
    """``c B M B`` from the rows' weighted scores (``score_rows(lo, hi)``): a frequency
    weight ``w`` counts a row ``w`` times (its weighted score scaled by ``1/sqrt(w)``
    before the outer product), clusters sum their rows' scores first."""
    sw = sample_weight
    scale = np.ones(n)
    if clusters is None and sw is not None:
        scale = np.where(sw > 0, 1.0 / np.sqrt(np.where(sw > 0, sw, 1.0)), 0.0)

    def scaled(lo: int, hi: int) -> FloatArray:
        return score_rows(lo, hi) * scale[lo:hi, None]

    codes, n_groups = (None, None) if clusters is None else clusters
    M = meat(scaled, n, codes, n_groups)
    if codes is not None and sw is not None:
        n_groups = int(np.unique(codes[sw > 0]).size)
    factor = small_sample_factor(cov_type, total_weight, bread.shape[0], n_groups)
    return sandwich(bread, M, factor)
