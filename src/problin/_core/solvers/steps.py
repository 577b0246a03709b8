"""What every solver shares: its result, the Armijo line search, and the
fused step that carries the next gradient with it.

Trial points move ``eta`` along ``X d`` (no pass over X per trial). Where
the objective offers ``advance`` (GLMs on dense data), the full step
``t = 1`` is tried in the same pass that forms the gradient (and Hessian)
there: in Newton's regime it is nearly always the accepted step, and one
read of X replaces two.
"""
from dataclasses import dataclass, field

import numpy as np

__all__ = ["SolverResult", "backtrack", "take_step", "evaluate"]

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
    direction: np.ndarray | None = None  # the last Newton step (divergence diagnostics)
    direction_eta: np.ndarray | None = None  # its change of eta, X direction
    last_hessian: np.ndarray | None = None  # the last Hessian built, wherever it was


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
        eta_t = t * Xd
        eta_t += eta  # one new array per trial, not two
        f_t = objective.value(theta + t * d, eta_t)
        if np.isfinite(f_t) and f_t <= f + _ARMIJO * t * slope:
            return t, f_t, eta_t
        t *= 0.5
    return None, f, eta


def evaluate(objective, theta, gram=None):
    """``(eta, f, g, H)`` at ``theta`` (``H`` None unless ``gram`` is
    "single" or "double"); one pass over X where the objective fuses them."""
    if hasattr(objective, "advance"):
        eta, f, g, H = objective.advance(np.zeros_like(theta), None, theta, gram)
        return eta, f, g, H
    eta = objective.linear_predictor(theta)
    if gram is None:
        return (eta, *objective.value_grad(theta, eta), None)
    return (eta, *objective.value_grad_hess(theta, eta, single=gram == "single"))


def take_step(objective, theta, eta, f, slope, d, gram=None):
    """Move along ``d`` with the Armijo rule, trying the full step first.

    Returns ``(t, theta, eta, f, g, H, Xd)``. ``g`` (and ``H`` with
    ``gram``) come with the point only when the full step was accepted and
    the objective fuses the pass; otherwise they are None and the caller
    evaluates them. ``Xd`` (the change of eta per unit step) is None where
    the fused pass never formed it. ``t`` is None when no step decreases ``f``.
    """
    start = 1.0
    if hasattr(objective, "advance"):
        eta_1, f_1, g_1, H_1 = objective.advance(theta, eta, d, gram)
        if np.isfinite(f_1) and f_1 <= f + _ARMIJO * slope:
            return 1.0, theta + d, eta_1, f_1, g_1, H_1, None
        Xd, start = eta_1 - eta, 0.5  # X d to rounding: enough for trial points
    else:
        Xd = objective.linear_predictor(d)
    t, f_new, eta_new = backtrack(objective, theta, eta, f, slope, d, Xd, step=start)
    if t is None:
        return None, theta, eta, f, None, None, Xd
    return t, theta + t * d, eta_new, f_new, None, None, Xd
