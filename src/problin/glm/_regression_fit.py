"""After a GLM regressor's fit: its information matrix, identifiability and convergence.

The classifiers' :func:`~problin.glm._diagnostics.diagnose` also looks for separated
classes, which regression targets do not have; the rest is shared with it
(:func:`~problin.glm._diagnostics.covariance`, the parameters that are not identified
held at 0). The information is the one the objective was built with: the expected
information by default, whose inverse is what statsmodels' ``GLM`` (IRLS) and R's
``glm`` report for every link; the observed one with ``information="observed"``
(the same for canonical links).
"""
import warnings
from typing import Any

from ..exceptions import ConvergenceWarning
from ._diagnostics import Diagnosis, _unidentified_held, covariance, hessian_affordable
from .inference import parameter_names

__all__ = ["regression_diagnosis"]


def regression_diagnosis(est: Any, objective: Any, result: Any) -> Diagnosis:
    """The unscaled covariance (inverse information; None where too costly), which
    parameters are identified, and a ``ConvergenceWarning`` where the solver stopped
    early (nothing about separation)."""
    cov = identified = cov_z = theta = None
    if result.hessian is not None or hessian_affordable(objective.design.n_samples,
                                                        objective.n_params):
        H = result.hessian
        if H is None:
            H = objective.value_grad_hess(result.theta, result.eta)[2]
        cov, identified, cov_z = covariance(objective, H)
        names = parameter_names(est, objective.design.n_features)
        theta = _unidentified_held(est, names, result.theta, H, identified)
    if not result.converged:
        warnings.warn(f"{type(est).__name__} did not converge in {result.n_iter} iterations "
                      f"({result.message}); increase max_iter or tol.", ConvergenceWarning,
                      stacklevel=4)
    return Diagnosis(cov, identified, None, cov_z, theta)
