"""After a GLM regressor's fit: its information matrix, identifiability and convergence.

The classifiers' :func:`~problin.glm._diagnostics.diagnose` also looks for separated
classes, which regression targets do not have; the rest is shared with it
(:func:`~problin.glm._diagnostics.covariance`, the parameters that are not identified
held at 0). The information is the estimator's ``information``: the expected
information by default, whose inverse is what statsmodels' ``GLM`` (IRLS) and R's
``glm`` report for every link; the observed one with ``information="observed"``
(the same for canonical links).
"""
import warnings
from typing import Any

from .._core.linalg import solve_psd
from ..exceptions import ConvergenceWarning
from ._diagnostics import Diagnosis, _unidentified_held, covariance, hessian_affordable
from .inference import parameter_names

__all__ = ["regression_diagnosis", "converged_within"]


def converged_within(objective: Any, result: Any, unit: float, tol: float) -> bool:
    """Whether Newton's decrement at the answer, ``g^T H^-1 g / 2`` in ``unit``, is at most
    ``tol²``: a further Newton step would move the answer by ~``tol`` standard errors or
    less. One gradient pass (the row derivatives at the answer are cached) instead of
    another Newton run (a pass with a Hessian, then the last step's pass)."""
    H = result.hessian
    if H is None or result.eta is None:
        return False
    _, g = objective.value_grad(result.theta, result.eta)
    step, rank = solve_psd(H, g)
    return rank == H.shape[0] and float(g @ step) / (2.0 * unit) <= tol * tol


def regression_diagnosis(est: Any, objective: Any, result: Any,
                         hessian: Any = None) -> Diagnosis:
    """The unscaled covariance (the inverse of ``hessian``, the information at the answer,
    or of the objective's own; None where too costly), which parameters are identified,
    and a ``ConvergenceWarning`` where the solver stopped early (nothing about
    separation)."""
    cov = identified = cov_z = theta = None
    if hessian is not None or hessian_affordable(objective.design.n_samples,
                                                 objective.n_params):
        H = hessian
        if H is None:
            H = objective.value_grad_hess(result.theta, result.eta)[2]
        cov, identified, cov_z = covariance(objective, H)
        theta = _unidentified_held(est, lambda: parameter_names(est, objective.design.n_features),
                                   result.theta, H, identified)
    if not result.converged:
        warnings.warn(f"{type(est).__name__} did not converge in {result.n_iter} iterations "
                      f"({result.message}); increase max_iter or tol.", ConvergenceWarning,
                      stacklevel=4)
    return Diagnosis(cov, identified, None, cov_z, theta)
