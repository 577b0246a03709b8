"""Truncated Newton: Newton directions from conjugate gradients on Hessian-vector products.

For models whose full Hessian is too costly to build even once (softmax with
many classes on many rows, wide dense rows): each Newton system is solved
approximately by conjugate gradients, each iteration costing one fused
Hessian-vector product (one read of every block of X from memory, the second from
cache), preconditioned by the Hessian of a row sketch.
"""
from collections.abc import Callable

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from ..blocks import small_blas
from ..model.contract import Eta, Objective, Trial
from .steps import SolverResult, _rounding_level, evaluate, take_step

__all__ = ["truncated_newton"]

_MAX_CG = 50


def _preconditioned_cg(hessp: Callable[[np.ndarray], np.ndarray], g: np.ndarray,
                       precondition: Callable[[np.ndarray], np.ndarray], rtol: float,
                       max_iter: int) -> np.ndarray:
    """Approximately solve ``H d = -g`` by conjugate gradients preconditioned with ``M^-1``.

    The first iterate is the preconditioner's step ``-M^-1 g`` (the sketched
    Newton step) scaled optimally in the ``H`` metric; iteration stops when
    the residual, in the ``M^-1`` norm, is below ``rtol`` times the gradient's.
    """
    d = np.zeros_like(g)
    r = -g
    z = precondition(r)
    rz = float(r @ z)
    limit = rtol * rtol * rz
    direction = z
    for _ in range(max(1, max_iter)):
        Hp = hessp(direction)
        curvature = float(direction @ Hp)
        if curvature <= 0:
            break
        step = rz / curvature
        d = d + step * direction
        r = r - step * Hp
        z = precondition(r)
        rz, rz_old = float(r @ z), rz
        if rz <= limit:
            break
        direction = z + (rz / rz_old) * direction
    return d



def truncated_newton(objective: Objective[Eta], sketch: Objective[np.ndarray], theta: np.ndarray, tol: float,
                     max_iter: int, H: np.ndarray | None = None, unit: float = 1.0,
                     point: Trial[Eta] | None = None, single: bool = True
                     ) -> SolverResult | None:
    """Newton with conjugate-gradient solves: exact gradients and Hessian-vector
    products (one fused pass each on dense rows in memory), the sketch's Hessian
    ``H`` (formed at ``theta`` where None) as preconditioner.

    For models whose full Hessian is too costly to build even once, and for wide
    rows, where it costs ~p/32 gradient passes. Each Newton system is solved to a
    relative accuracy (the forcing term) of at most 0.03, tightened as the
    decrement shrinks; once ``lambda^2 / 2 <= tol`` the last system is solved
    accurately enough that the final step leaves ``lambda`` below ``sqrt(2) tol``
    (relative residual ``eta`` leaves ``lambda_new ~ eta lambda``), as the exact
    engine's final step does (``lambda_new ~ lambda^2 <= 2 tol``). Decrements are in
    ``unit`` (the mean sample weight: ``steps.weight_unit``). Every step is the
    objective's fused ``advance`` (``X d``, the rows' derivatives and the next
    gradient in one pass), backtracking on the cached ``eta`` only where the full
    step fails Armijo's test. ``point``: ``theta``'s evaluation where the caller has
    it (its gradient formed). ``single``: the products in float32 (``Objective.hessp``).
    """
    if point is None:
        point = evaluate(objective, theta, None)
    eta, f, g = point.eta, point.f, point.grad
    assert g is not None
    if H is None:
        H = sketch.value_grad_hess(theta, sketch.linear_predictor(theta), single=True)[2]
    try:
        with small_blas(H.shape[0]):
            chol = cho_factor(H, check_finite=False)
    except np.linalg.LinAlgError:
        return None  # singular sketch: the exact engine's data-span solve takes over
    if not np.all(np.isfinite(chol[0])):
        return None

    def precondition(r: np.ndarray) -> np.ndarray:
        with small_blas(H.shape[0]):
            return cho_solve(chol, r, check_finite=False)

    history, converged, forcing, n_iter = [f], False, 0.03, 0
    d: np.ndarray | None = None
    Xd: Eta | None = None
    for n_iter in range(1, max_iter + 1):
        lam2 = float(g @ precondition(g)) / unit  # the sketched decrement: ~ the exact one
        final = lam2 / 2 <= tol
        if final:
            forcing = min(0.1, np.sqrt(2.0) * tol / np.sqrt(max(lam2, 1e-300)))
        # (Products in float32 with ``single``: directions only, to ~1e-7, far inside
        # every forcing term; the gradient and the decrement stay exact.)
        d = _preconditioned_cg(lambda v: objective.hessp(theta, eta, v, single), g,
                               precondition, forcing, _MAX_CG)
        decrement2 = float(-g @ d) / unit
        if final or decrement2 / 2 <= tol * tol:
            # The last, full step (no search: f would change below its rounding), with
            # the gradient at the answer from the same pass.
            trial = objective.advance(theta, eta, d, None)
            assert trial.grad is not None
            theta, eta, f, g, Xd = theta + d, trial.eta, trial.f, trial.grad, trial.Xd
            history.append(f)
            converged = True
            break
        step = take_step(objective, theta, eta, f, -decrement2 * unit, d, None)
        if step.t is None:
            converged = decrement2 / 2 <= _rounding_level(f, unit) / unit
            break
        theta, eta, f, Xd = step.theta, step.eta, step.f, step.Xd
        g = step.grad if step.grad is not None else objective.value_grad(theta, eta)[1]
        history.append(f)
        forcing = min(0.03, np.sqrt(decrement2))
    return SolverResult(theta=theta, eta=eta, value=history[-1], n_iter=n_iter,
                        converged=converged, history=history,
                        message="converged" if converged else "truncated Newton stopped",
                        grad=g, direction=d, direction_eta=Xd)
