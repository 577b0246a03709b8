"""The partial proportional-odds model: ``OrdinalRegression(nominal=[columns])``.

    P(y <= k | x) = F(theta_k - x^T beta_k),   beta_k[d] = beta[d] for the other columns,

the listed ("nominal") columns have a slope per cut-point (Peterson & Harrell 1990; R's
``ordinal::clm(nominal = ~ x)``, whose threshold effects ``"1|2.x"`` are ``-beta_k``; all
columns: VGAM's ``cumulative(parallel = FALSE)``). It is fitted by the Newton engine on
:class:`~problin._core.model.objective_cumulative.CumulativeObjective` (the alternative of
the likelihood-ratio test of proportional odds) from the proportional-odds fit, so both
come from one solver. The objective is in raw units, dense, in memory.

Reported parameters ``psi``: the slopes column by column (a nominal column's K - 1 slopes
together, named ``"x:a|b"``), then the cut-points; ``psi`` is a signed permutation ``P``
of the objective's ``[a, w_shared, w_nominal by cut]`` (``theta_k = a_k``,
``beta = -w``), so the covariance is ``P H^-1 P^T``.

Away from the data the per-cut slopes may make the cumulative probabilities decrease
from one cut to the next (McCullagh 1980, §3): such a row would have a negative class
probability. ``clm``'s ``predict`` returns it as computed (negative); problin warns,
naming the rows, and takes the running maximum of the cumulative probabilities, which
sets the crossed classes' probabilities to 0 (:func:`cumulative_bounds`; effects and
intervals differentiate the same running maximum, through the cut that attains it). A
training row's likelihood reads only its own class's two cuts, so training rows may cross
at other cuts too (as in ``clm``, whose fit is the same).
"""
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._core.model.contract import Objective
from .._core.model.objective_cumulative import CumulativeObjective
from .._core.solvers.newton import newton
from .._core.solvers.steps import SolverResult
from .._core.types import FloatArray
from ..exceptions import ProblinWarning, warn_at_caller
from ._ordinal_fit import OrdinalFit, model_covariance, sandwich_standard, slope_index

__all__ = ["cumulative_bounds", "fit_cumulative", "nominal_fit", "nominal_mask", "running_max"]


def nominal_mask(names: Sequence[str], columns: Sequence[int | str], what: str
                 ) -> NDArray[np.bool_]:
    """The columns named (or indexed) in ``columns`` as a mask over ``names``."""
    if isinstance(columns, (str, bytes)) or not len(columns):
        raise ValueError(f"{what}: name at least one column whose slopes may differ between "
                         "the cuts, as a list")
    mask = np.zeros(len(names), dtype=bool)
    for v in columns:
        j = names.index(v) if isinstance(v, str) and v in names else v
        if isinstance(j, bool) or not isinstance(j, (int, np.integer)) \
                or not 0 <= j < len(names):
            raise ValueError(f"{what}: {v!r} is not a column of the model "
                             f"({', '.join(names[:20])})")
        mask[j] = True
    return mask


def fit_cumulative(objective: CumulativeObjective, cutpoints: FloatArray, coef: FloatArray,
                   max_iter: int = 100, tol: float = 1e-8) -> SolverResult[Any]:
    """Newton from the proportional-odds estimates (every cut's ``w = -beta``)."""
    M = objective.M
    start = objective.join(np.asarray(cutpoints, dtype=np.float64),
                           np.tile(-np.asarray(coef, dtype=np.float64), (M, 1)))
    engine: Objective[Any] = objective
    return newton(engine, start, max_iter=max_iter, tol=tol)


def _reported_map(objective: CumulativeObjective) -> FloatArray:
    """``P`` with ``psi = P theta`` (a signed permutation: psi has as many entries)."""
    mask, M = objective.nominal, objective.M
    rank = np.cumsum(mask) - 1, np.cumsum(~mask) - 1  # (nominal, shared) ranks
    n_shared, n_nominal = int(np.sum(~mask)), int(np.sum(mask))
    P = np.zeros((objective.n_params, objective.n_params))
    index = slope_index(mask, mask.size, M)
    n_slopes = objective.n_params - M
    for k in range(M):
        for d in range(mask.size):
            at = (M + n_shared + k * n_nominal + rank[0][d]) if mask[d] else M + rank[1][d]
            P[index[k, d], at] = -1.0
        P[n_slopes + k, k] = 1.0
    return P


def nominal_fit(proportional: OrdinalFit, X: FloatArray, t: np.ndarray,
                sample_weight: FloatArray | None, mask: NDArray[np.bool_], max_iter: int,
                tol: float, cov_type: str = "nonrobust",
                clusters: tuple[np.ndarray, int] | None = None
                ) -> tuple[OrdinalFit, SolverResult[Any], bool]:
    """``(record, solver result, singular)`` of the partial proportional-odds model, from
    the proportional-odds record of the same rows (its statistics are replaced by the
    caller); the covariance is the inverse observed information, or its sandwich with
    the rows' scores (HC0, HC1, cluster)."""
    family = proportional.family
    objective = CumulativeObjective(X, family, t, sample_weight, mask)
    result = fit_cumulative(objective, proportional.cutpoints, proportional.coef, max_iter,
                            tol)
    P = _reported_map(objective)
    fit = OrdinalFit(family, None, result.theta, P @ result.theta, P, None, None,
                     "nonrobust", -float(result.value), proportional.null_log_likelihood,
                     proportional.n_obs, result.n_iter, bool(result.converged),
                     result.message, proportional.alpha, nominal=mask.copy())
    cov, singular = model_covariance(objective, result.theta, result.hessian)
    if cov_type != "nonrobust":
        scores = objective.row_scores(result.theta)
        cov = sandwich_standard(lambda lo, hi: scores[lo:hi], scores.shape[0],
                                sample_weight, objective.total_weight, cov, cov_type,
                                clusters)
    return fit.with_covariance(cov, cov_type), result, singular


def running_max(U: FloatArray) -> tuple[FloatArray, NDArray[np.intp]]:
    """``(max_{j <= k} U_j, the j attaining it)`` along each row."""
    source = np.zeros(U.shape, dtype=np.intp)
    for k in range(1, U.shape[1]):
        source[:, k] = np.where(U[:, k] >= U[:, k - 1], k, source[:, k - 1])
    return np.take_along_axis(U, source, axis=1), source


def cumulative_bounds(fit: OrdinalFit, X: Any) -> tuple[FloatArray, NDArray[np.intp]]:
    """``(U, source)``: ``U`` (n, K-1) ``theta_j - x^T beta_j`` of each row at the cut
    ``j = source_k`` that attains the running maximum up to ``k`` (``j = k`` wherever it
    increases: always without nominal columns).

    Rows where the per-cut slopes make it decrease (some class's probability negative:
    see the module docstring) are warned about."""
    U = fit.cutpoints[None, :] - np.asarray(X @ fit.cut_slopes.T, dtype=np.float64)
    if fit.nominal is None:
        return U, np.broadcast_to(np.arange(U.shape[1]), U.shape)
    crossed = np.flatnonzero(np.any(np.diff(U, axis=1) < 0, axis=1))
    if crossed.size:
        warn_at_caller(
            f"the fitted cumulative probabilities cross at {crossed.size} row(s) "
            f"({crossed[:10].tolist()}{', ...' if crossed.size > 10 else ''}): the slopes per "
            "cut of the nominal columns give them a negative class probability there, which "
            "is set to 0 (the cumulative probabilities' running maximum); these rows lie "
            "outside the region the partial proportional-odds model describes",
            ProblinWarning)
    return running_max(U)
