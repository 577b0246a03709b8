"""A GLM regressor's solve: the engine run on its objective, and the fit record made of it.

The solver (Newton by default, L-BFGS beyond :data:`~problin.glm._base.NEWTON_MAX_PARAMS`)
minimises the deviance / 2 at unit dispersion; where the dispersion is estimated and
small, Newton continues in the likelihood's units. The information of the covariance
(``information``: expected by default, statsmodels' IRLS and R's ``glm``), the
diagnosis (identifiability, the boundary of the mean's range, convergence) and the
statistics at the dispersion ``scale`` (:func:`~problin.glm.statistics.
regression_statistics`) complete the :class:`~problin.glm.result.GLMFit`, whose
covariance is the dispersion times the inverse information.
"""
from dataclasses import replace
from typing import Any, Protocol, TypeVar

import numpy as np

from .._core.model.contract import DesignShape
from .._core.model.exponential_family import ExponentialFamily
from .._core.solvers.newton import newton, sketch_rows
from .._core.solvers.steps import weight_unit
from ._base import DEFAULT_MAX_ITER, NEWTON_MAX_PARAMS, SOLVERS
from ._diagnostics import hessian_affordable, lbfgs_pairs
from ._regression_data import RegressionObjective, RegressionRows
from ._regression_fit import converged_within, regression_diagnosis
from ._gaussian_prior import penalised
from .result import GLMFit
from .statistics import regression_statistics

__all__ = ["RegressorSettings", "solve_regression"]

Obj = TypeVar("Obj", bound=RegressionObjective)


class RegressorSettings(Protocol):
    """What the solve reads of the estimator: its parameters, and the objective of an
    information (:meth:`~problin.glm.regression.GLMRegressor._objective`)."""

    alpha: float
    prior_mean: Any
    prior_precision: Any
    solver: str
    max_iter: int | None
    tol: float
    information: str
    scale: float | str | None

    def _objective(self, design: DesignShape, family: ExponentialFamily,
                   data: RegressionRows[Obj], information: str | None = None) -> Obj: ...


def solve_regression(est: RegressorSettings, objective: Obj,
                     family: ExponentialFamily, data: RegressionRows[Obj],
                     theta0: np.ndarray | None = None, extra_params: int = 0) -> GLMFit:
    """Minimise ``objective`` from ``theta0`` (None: the family's start) and make the
    fit's record; ``extra_params``: the family's estimated parameters outside the
    coefficients (counted by AIC and BIC)."""
    design = objective.design
    if theta0 is None:
        theta0 = np.zeros(design.n_params)
        if design.intercept:  # the intercept-only model's mean (statsmodels' start too)
            theta0[0] = data.start_intercept(family)
    solver = est.solver
    if solver == "auto":
        solver = "newton" if design.n_params <= NEWTON_MAX_PARAMS else "lbfgs"
    data.check_solver(solver)
    options: dict[str, Any] = {}
    if solver == "newton":
        options = {"sketch": sketch_rows(design.n_samples, design.n_params),
                   "exact_final": data.exact_final(
                       hessian_affordable(design.n_samples, design.n_params))}
    elif solver == "lbfgs":
        options = {"pairs": lbfgs_pairs(objective, design.n_samples)}
    max_iter = est.max_iter if est.max_iter is not None else DEFAULT_MAX_ITER[solver]
    result = SOLVERS[solver](objective, theta0, max_iter=max_iter, tol=est.tol, **options)
    sums = None  # (deviance, Pearson's chi²) at the solver's eta, where computed
    if solver == "newton" and not family.fixed_dispersion and result.converged:
        # The loss is the deviance / 2 at unit dispersion: the log-likelihood is it
        # over phi, and so are its Newton decrements. Where phi is small (a Gamma's
        # 0.004) the test in unit-dispersion terms stopped 1/phi too early; Newton
        # continues from there in the likelihood's units (a step or two).
        sums = data.fitted_sums(family, result.eta)
        phi = sums[1] / data.n_obs
        unit = weight_unit(objective) * phi
        if 0 < phi < 1 and not converged_within(objective, result, unit, est.tol):
            again = newton(objective, result.theta, max_iter=max_iter, tol=est.tol,
                           unit=unit)
            result = replace(again, n_iter=result.n_iter + again.n_iter)
            sums = None  # (a new answer: its own sums)
    hessian = result.hessian
    if objective.information != est.information and not family.canonical and (
            hessian is not None or hessian_affordable(design.n_samples, design.n_params)):
        # the covariance's own information, at the answer (a canonical link's two
        # informations are one: no second Hessian pass)
        hessian = est._objective(design, family, data, est.information).value_grad_hess(
            result.theta, result.eta)[2]
    found = regression_diagnosis(est, objective, result, hessian,
                                 data.boundary(est, objective, result))
    if found.theta is not None:
        result = replace(result, theta=found.theta)
    fit = GLMFit.from_solver(objective, result, solver=solver, alpha=est.alpha,
                             covariance=found.covariance, identified=found.identified,
                             covariance_standard=found.covariance_standard,
                             separated=found.separated)
    # (the solver's eta where the answer is its theta: a pass over X saved)
    if found.theta is None and result.eta is not None:
        eta = result.eta
    else:
        eta, sums = objective.linear_predictor(result.theta), None
    # (the sums of the dispersion's check above where eta is the same: a pass saved)
    stats = regression_statistics(family, data, eta, fit.n_estimated, est.scale,
                                  penalised(est), extra_params, sums)
    phi = float(stats["scale_"])
    return fit.replace(
        dispersion=phi, t_df=stats["df_resid_"] if stats["scale_estimated_"] else None,
        regression_statistics=stats,
        null_log_likelihood=stats["null_log_likelihood_"],
        covariance=None if fit.covariance is None else fit.covariance * phi,
        covariance_standard=None if fit.covariance_standard is None
        else fit.covariance_standard * phi)
