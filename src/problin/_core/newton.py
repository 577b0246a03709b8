"""The one damped Newton / IRLS engine.

Each iteration reads like the algorithm (the seeds' IRLS update
``w <- w - (Phi^T R Phi + P)^-1 (Phi^T (y - t) + P w)``):

    build gradient and Hessian (one fused pass) -> Cholesky solve (the
    solve within the span of the data where the Hessian is singular) ->
    Newton decrement test -> backtracking line search on the cached eta.

The line search costs one ``X d`` product per iteration and no further
pass: trial points move ``eta`` along ``X d``. Convergence is declared when
half the squared Newton decrement ``lambda^2 / 2 = -g^T d / 2`` (an
affine-invariant estimate of ``f - f*``, i.e. of the distance to the optimum
in standard-error units) falls below ``tol``; the final Newton step is then
taken, which squares the remaining error. When the curvature is not the
exact Hessian (Fisher scoring with expected information) steps converge only
linearly, so the test becomes ``lambda^2 / 2 <= tol^2``: either way the
answer ends within about ``tol`` standard errors of the optimum.
"""
from dataclasses import dataclass, field

import numpy as np

from .linalg import solve_psd

__all__ = ["SolverResult", "newton", "backtrack"]

_ARMIJO = 1e-4
_MAX_HALVINGS = 50


@dataclass
class SolverResult:
    """What a solver returns: the optimum and how it got there."""

    theta: np.ndarray
    eta: np.ndarray
    value: float
    n_iter: int
    converged: bool
    history: list = field(default_factory=list)
    message: str = ""
    grad: np.ndarray | None = None
    hessian: np.ndarray | None = None
    rank_deficient: bool = False


def _rounding_level(f):
    """Objective changes below this are lost to floating-point rounding."""
    return 64 * np.finfo(float).eps * max(1.0, abs(f))


def backtrack(objective, theta, eta, f, slope, d, Xd, step=1.0):
    """Armijo backtracking along ``theta + t d`` using ``eta + t X d``.

    Returns ``(t, f_new, eta_new)`` or ``(None, f, eta)`` when no step in
    ``_MAX_HALVINGS`` halvings decreases ``f`` (a descent direction that is
    lost in rounding, or a broken objective).
    """
    t = step
    for _ in range(_MAX_HALVINGS):
        eta_t = eta + t * Xd
        f_t = objective.value(theta + t * d, eta_t)
        if np.isfinite(f_t) and f_t <= f + _ARMIJO * t * slope:
            return t, f_t, eta_t
        t *= 0.5
    return None, f, eta


def newton(objective, theta0, *, max_iter=100, tol=1e-8, final_hessian=True):
    """Minimise ``objective`` by damped Newton from ``theta0``.

    Parameters
    ----------
    objective : GLMObjective (or anything with the same methods)
    theta0 : ndarray of shape (p,)
    max_iter : int
        Maximum number of Newton iterations.
    tol : float
        Stop when ``lambda^2 / 2 <= tol`` (Newton decrement; ``tol^2`` when
        ``objective.exact_hessian`` is False).
    final_hessian : bool
        Evaluate the gradient and Hessian at the returned point (one more
        pass), as covariance estimates need.

    Returns
    -------
    SolverResult
    """
    theta = np.array(theta0, dtype=np.float64)
    eta = objective.linear_predictor(theta)
    f, g, H = objective.value_grad_hess(theta, eta)
    history = [f]
    threshold = tol if getattr(objective, "exact_hessian", True) else tol * tol
    converged, message, rank_deficient, at_theta = (False, "maximum number of iterations reached",
                                                    False, True)
    n_iter, basis = 0, None
    for n_iter in range(1, max_iter + 1):
        if basis is None:
            step, rank = solve_psd(H, g)
            if rank < H.shape[0]:
                rank_deficient = True
                basis = objective.data_range_basis()
        if basis is not None:
            # Newton within the span of the data: components along directions
            # no observation sees stay exactly zero, instead of being rounding
            # errors amplified by a near-zero curvature.
            step = basis @ solve_psd(basis.T @ H @ basis, basis.T @ g)[0]
        d = -step
        decrement2 = float(-g @ d)
        if not np.isfinite(decrement2):
            message = "non-finite Newton step"
            break
        Xd = objective.linear_predictor(d)  # the change of eta per unit step
        t, f_new, eta_new = backtrack(objective, theta, eta, f, -decrement2, d, Xd)
        if t is None:
            # No decrease left to find: converged if the predicted decrease
            # is itself at the level of rounding in f.
            converged = decrement2 / 2 <= max(threshold, _rounding_level(f))
            message = "converged" if converged else "line search failed"
            break
        theta = theta + t * d
        eta, f = eta_new, f_new
        history.append(f)
        at_theta = False
        if decrement2 / 2 <= threshold:
            converged, message = True, "converged"
            break
        f, g, H = objective.value_grad_hess(theta, eta)
        at_theta = True
    if not at_theta:
        if final_hessian:
            f, g, H = objective.value_grad_hess(theta, eta)
        else:
            g = H = None
    return SolverResult(theta=theta, eta=eta, value=f, n_iter=n_iter, converged=converged,
                        history=history, message=message, grad=g, hessian=H,
                        rank_deficient=rank_deficient)
