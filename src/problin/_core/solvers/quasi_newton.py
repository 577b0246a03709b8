"""Hessian-free fitting for wide or sparse data: L-BFGS in standardised coordinates.

When the p x p Hessian is too large to build or factor (a 50,000-word
vocabulary gives p = 50,001), the objective is minimised by L-BFGS using
only ``f`` and its gradient, each one ``X w`` and one ``X^T v`` pass over the
data (sparse input stays sparse). The problem is solved for the standardised
coefficients ``u`` with ``theta = T u`` (see :class:`~problin._core.solvers.ascent.Standardiser`),
which is what makes a first-order method converge in tens rather than
thousands of iterations on raw features of very different scales.

Stopping rule: ``max |T^T grad f| <= tol * sqrt(sum of weights)``, the same
test as the other first-order solvers (a few ``tol`` standard errors).
"""
from typing import Any

import numpy as np
from scipy.optimize import minimize

from ..model.contract import Objective
from .ascent import Standardiser, _gradient_small
from .steps import SolverResult

__all__ = ["lbfgs"]

_MEMORY = 20  # stored curvature pairs: more pairs, fewer passes over X


def lbfgs(objective: Objective, theta0: np.ndarray, *, max_iter: int = 1000,
          tol: float = 1e-8) -> SolverResult:
    """Minimise ``objective`` by L-BFGS (scipy's L-BFGS-B without bounds)."""
    T = Standardiser(objective)
    u0 = _inverse_apply(T, np.asarray(theta0, dtype=np.float64))
    history: list[float] = []
    cache: dict[str, Any] = {}

    def fun(u: np.ndarray) -> tuple[float, np.ndarray]:
        theta = T.apply(u)
        eta = objective.linear_predictor(theta)
        f, grad = objective.value_grad(theta, eta)
        cache.update(theta=theta, eta=eta, f=f, grad=grad)
        if not history:  # the starting point
            history.append(f)
        return f, T.apply_transpose(grad)

    def callback(intermediate_result: Any) -> None:
        history.append(float(intermediate_result.fun))

    gtol = tol * np.sqrt(objective.total_weight)
    res = minimize(fun, u0, jac=True, method="L-BFGS-B", callback=callback,
                   options={"maxiter": max_iter, "maxcor": _MEMORY, "gtol": gtol,
                            "ftol": 0.0, "maxls": 50})
    theta = T.apply(res.x)
    if cache.get("theta") is None or not np.array_equal(cache["theta"], theta):
        fun(res.x)
    converged = _gradient_small(objective, T, cache["grad"], tol)
    # scipy stops (success, or an abnormal line search) when f no longer
    # decreases at all: the rounding level, where the gradient test may be
    # out of reach; accept it if the gradient is small at sqrt(tol).
    if not converged and (res.success or res.status == 2):
        converged = _gradient_small(objective, T, cache["grad"], np.sqrt(tol))
    return SolverResult(theta=theta, eta=cache["eta"], value=cache["f"], n_iter=int(res.nit),
                        converged=bool(converged), history=history, message=str(res.message), grad=cache["grad"])


def _inverse_apply(T: Standardiser, theta: np.ndarray) -> np.ndarray:
    """``u = T^{-1} theta``: T is triangular (scale the weights, then undo the shift)."""
    Theta = T._split(theta)
    U = np.empty_like(Theta)
    if T.shift is None:
        U[:] = Theta / T.scale
        return U.ravel()
    U[:, 1:] = Theta[:, 1:] / T.scale
    U[:, 0] = Theta[:, 0] - U[:, 1:] @ T.shift
    return U.ravel()
