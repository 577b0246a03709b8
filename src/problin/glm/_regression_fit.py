"""After a GLM regressor's fit: its information matrix, identifiability and convergence.

The classifiers' :func:`~problin.glm._diagnostics.diagnose` also looks for separated
classes, which regression targets do not have; the rest is shared with it
(:func:`~problin.glm._covariance.covariance`, the parameters that are not identified
held at 0). The information is the estimator's ``information``: the expected
information by default, whose inverse is what statsmodels' ``GLM`` (IRLS) and R's
``glm`` report for every link; the observed one with ``information="observed"``
(the same for canonical links).
"""
from typing import Any, Protocol

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.base import BaseEstimator

from .._core.linalg import solve_psd
from .._core.solvers.steps import SolverResult
from .._core.model.boundary import boundary_rows
from .._core.model.contract import Eta, Objective
from .._core.model.exponential_family import ExponentialFamily
from .._core.model.objective import GLMObjective
from .._core.model.separation import LP_MAX_SIZE
from ..exceptions import ConvergenceWarning, PerfectFitWarning, warn_at_caller
from ._covariance import covariance, unidentified_held
from ._diagnostics import Diagnosis, hessian_affordable
from ._gaussian_prior import penalised
from .inference import parameter_names

__all__ = ["Penalised", "boundary_fit", "regression_diagnosis", "converged_within"]

# A row at an end of the mean's range whose unit deviance is below this is fitted at
# that end (the classifiers' threshold on a row's loss, doubled: the deviance is twice
# the loss): the sign that some coefficients run off to infinity.
_AT_END = 2e-7

class Penalised(Protocol):
    """What the boundary check reads of the estimator: its penalty."""

    alpha: float
    prior_mean: Any
    prior_precision: Any


def converged_within(objective: Objective[Eta], result: SolverResult[Eta], unit: float,
                     tol: float) -> bool:
    """Whether Newton's decrement at the answer, ``g^T H^-1 g / 2`` in ``unit``, is at most
    ``tol²``: a further Newton step would move the answer by ~``tol`` standard errors or
    less. The solver's bound on it where that suffices; else one gradient pass (the row
    derivatives at the answer are cached) instead of another Newton run (a pass with a
    Hessian, then the last step's pass)."""
    H = result.hessian
    if H is None or result.eta is None:
        return False
    if result.decrement_bound is not None and result.decrement_bound / unit <= tol * tol:
        return True  # (bounded by the solver's last step: no pass)
    _, g = objective.value_grad(result.theta, result.eta)
    step, rank = solve_psd(H, g)
    return rank == H.shape[0] and float(g @ step) / (2.0 * unit) <= tol * tol


def boundary_fit(est: Penalised, objective: GLMObjective[ExponentialFamily],
                 result: SolverResult) -> NDArray[np.bool_] | None:
    """The rows fitted at an end of the mean's range along a direction of the
    coefficients that moves no other row (:mod:`problin._core.model.boundary`: zero
    counts, proportions of 0 or 1), None where there are none. The linear program runs
    only where some row at an end is fitted within ``_AT_END`` of it and the design is
    small enough (the classifiers' ``LP_MAX_SIZE``); under a penalty only the intercept
    is free to run off."""
    family = objective.family
    signs = family.boundary_signs(objective.y)
    if signs is None or not signs.any():
        return None
    sw = objective.sample_weight
    used = np.ones(signs.size, dtype=bool) if sw is None else sw > 0
    at = np.flatnonzero(used & (signs != 0))  # (the rows at an end: the deviance of those)
    eta = result.eta if result.eta is not None else objective.linear_predictor(result.theta)
    eta = eta[at] if objective.offset is None else eta[at] + objective.offset[at]
    with np.errstate(all="ignore"):  # (means that under- or overflow are at the ends)
        d = family.unit_deviance(objective.y[at], family.mean(eta))
    design = objective.design
    if not np.any(d < _AT_END) or design.n_samples * design.n_params > LP_MAX_SIZE:
        return None
    if penalised(est) and not design.intercept:
        return None
    rows = np.flatnonzero(used)
    if sp.issparse(design.X):  # (the LP takes the sparse rows; the scaling changes nothing)
        X = design.X[rows]
        if design.intercept:
            X = sp.hstack([np.ones((rows.size, 1)), X], format="csr")
    else:
        X = design.dense_rows(rows)
    found = boundary_rows(X[:, :1] if penalised(est) else X, signs[rows])
    if not found.any():
        return None
    mask = np.zeros(signs.size, dtype=bool)
    mask[rows[found]] = True
    return mask


def regression_diagnosis(est: BaseEstimator, objective: Objective[Eta],
                         result: SolverResult[Eta], hessian: NDArray[np.float64] | None = None,
                         boundary: NDArray[np.bool_] | None = None) -> Diagnosis:
    """The unscaled covariance (the inverse of ``hessian``, the information at the answer,
    or of the objective's own; None where too costly), which parameters are identified,
    and a warning: a ``PerfectFitWarning`` where rows are fitted at the boundary of the
    mean's range (``boundary``, :func:`boundary_fit`: the estimates diverge, which says
    it all), else a ``ConvergenceWarning`` where the solver stopped early."""
    cov = identified = cov_z = theta = None
    if hessian is not None or hessian_affordable(objective.design.n_samples,
                                                 objective.n_params):
        H = hessian
        if H is None:
            H = objective.value_grad_hess(result.theta, result.eta)[2]
        cov, identified, cov_z = covariance(objective, H)
        if boundary is None:  # (at the boundary the information fades for that reason)
            theta = unidentified_held(
                est, lambda: parameter_names(est, objective.design.n_features), result.theta,
                H, identified)
    if boundary is not None:
        used = boundary.size if objective.sample_weight is None \
            else int(np.count_nonzero(objective.sample_weight))
        warn_at_caller(f"{type(est).__name__}: {int(boundary.sum())} of {used} rows are "
                       "fitted at the boundary of the mean's range (zero counts by means "
                       "tending to 0, proportions of 0 or 1) along a direction that changes "
                       "no other row: the maximum-likelihood coefficients do not exist (they "
                       "diverge; separated_ marks the rows). The returned coefficients are "
                       "finite because the iteration stopped; drop or merge what isolates "
                       "those rows, or set alpha > 0 (where the intercept alone runs off, "
                       "every y is at the boundary).", PerfectFitWarning)
    elif not result.converged:
        warn_at_caller(f"{type(est).__name__} did not converge in {result.n_iter} iterations "
                       f"({result.message}); increase max_iter or tol.", ConvergenceWarning)
    return Diagnosis(cov, identified, boundary, cov_z, theta)
