"""What every solver shares: its result, the Armijo line search, and the
fused step that carries the next gradient with it.

Trial points move ``eta`` along ``X d`` (no pass over X per trial). The full
step ``t = 1`` is tried by the objective's ``advance`` (see
:mod:`~problin._core.model.contract`): where the objective fuses it (GLMs on
dense data), in the same pass that forms the gradient (and Hessian) there; in
Newton's regime it is nearly always the accepted step, and one read of X
replaces two. Backtracking halves the step until the Armijo condition of
sufficient decrease holds (Nocedal & Wright 2006, §3.1 eq. 3.4 and
Algorithm 3.1, with ``c_1 = 1e-4``).
"""
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic

import numpy as np

from ..model.contract import Eta, Gram, Objective, Trial

__all__ = ["SolverResult", "Step", "armijo", "backtrack", "take_step", "evaluate", "weight_unit",
           "gradient_unit", "mean_weight", "require_smooth"]

_ARMIJO = 1e-4  # c_1: the fraction of the linear decrease a step must achieve
_MAX_HALVINGS = 50


@dataclass(frozen=True)
class SolverResult(Generic[Eta]):
    """What a solver returns: the optimum and how it got there."""

    theta: np.ndarray
    eta: Eta
    value: float
    n_iter: int
    converged: bool
    history: list[float] = field(default_factory=list)
    message: str = ""
    grad: np.ndarray | None = None
    hessian: np.ndarray | None = None
    rank_deficient: bool = False
    direction: np.ndarray | None = None  # the last Newton step (divergence diagnostics)
    direction_eta: Eta | None = None  # its change of eta, X direction
    last_hessian: np.ndarray | None = None  # the last Hessian built, wherever it was
    # A bound on half the Newton decrement at ``theta``, ``g^T H^-1 g / 2`` in ``hessian``'s
    # metric (None: unknown), from the last step without a pass at its end (see
    # newton_exact._last_step): a caller that tests convergence more strictly can read it
    # instead of forming the gradient there.
    decrement_bound: float | None = None


@dataclass(frozen=True)
class Step(Generic[Eta]):
    """Where :func:`take_step` went along ``d``: ``theta + t d``."""

    t: float | None  # the step length; None when no step decreased f (the point is unchanged)
    theta: np.ndarray
    eta: Eta
    f: float
    grad: np.ndarray | None  # at the new point, where the full step's pass formed it
    hess: np.ndarray | None  # likewise (only with a ``gram``)
    Xd: Eta | None  # X d, where it was formed (None: the fused pass never did)


_EPS = float(np.finfo(np.float64).eps)  # (np.finfo costs a dictionary search per call)


def _rounding_level(f: float, unit: float = 1.0) -> float:
    """Objective changes below this are lost to floating-point rounding (``unit``: see
    :func:`weight_unit`; the floor for an ``f`` near 0 is in its units)."""
    return 64 * _EPS * max(unit, abs(f))


def require_smooth(objective: Objective[Eta], solver: str) -> None:
    """Refuse a penalty without a gradient everywhere (L1): the gradient-based
    solvers would step across its kinks; it needs a proximal solver."""
    if not objective.penalty.smooth:
        raise ValueError(f"the {solver} solver needs a smooth penalty; "
                         f"{type(objective.penalty).__name__} is not (a proximal solver is)")


def mean_weight(objective: Objective[Eta]) -> float:
    """The objective's mean sample weight (1 without weights)."""
    mean = float(objective.total_weight) / max(1, int(objective.design.n_samples))
    return mean if math.isfinite(mean) and mean > 0.0 else 1.0


def weight_unit(objective: Objective[Eta]) -> float:
    """The unit the Newton engine's stopping rules measure decrements in: the mean
    sample weight where it is below one, else 1.

    The loss, its gradient, its Hessian and so every Newton decrement scale with a
    common factor of the weights, and the unpenalised optimum does not move. Weights
    that are counts (a mean of one or more) keep the rules in absolute units, the
    standard errors of the data they stand for: a weighted fit then takes exactly the
    path of the fit to the repeated rows (the same function; it matters where the
    path decides the answer, on separated data). Smaller weights -- relative weights,
    or counts scaled down -- are measured against their mean, so that scaling them
    down does not stop the fit early (measured before: weights of 1e-10 "converged"
    at the start, a decrement of ~1e-10, probabilities 0.08 off); scaling up only
    tightens the rules, down to the rounding level of ``f``, where the engine stops.
    """
    return min(mean_weight(objective), 1.0)


def gradient_unit(objective: Objective[Eta]) -> float:
    """What the first-order stopping rules measure a gradient in: ``sqrt(n)`` times the
    :func:`mean_weight` (``sqrt(n)``, ``tol`` standard errors, for unit weights).

    Proportional to the weights at every scale, unlike :func:`weight_unit`: these
    solvers have no rounding-level stop of their own, and an absolute test
    (``sqrt(W)``) was out of reach for large weights (all 1e10: "did not converge",
    the line search lost in the rounding of ``f``).
    """
    return math.sqrt(max(1, int(objective.design.n_samples))) * mean_weight(objective)


def armijo(value: Callable[[float], float], f: float, slope: float, step: float = 1.0,
           max_halvings: int = _MAX_HALVINGS) -> tuple[float, float] | None:
    """Armijo backtracking: halve ``t`` from ``step`` until ``value(t) <= f + c_1 t slope``.

    ``value(t)`` is the objective at ``t`` along the direction and ``slope``
    its derivative there at ``t = 0`` (negative for a descent direction).
    Returns ``(t, value(t))``, or None when no step in ``max_halvings`` trials
    decreases ``f`` enough (a descent direction that is lost in rounding, or a
    broken objective).
    """
    t = step
    for _ in range(max_halvings):
        f_t = value(t)
        if math.isfinite(f_t) and f_t <= f + _ARMIJO * t * slope:
            return t, f_t
        t *= 0.5
    return None


def backtrack(objective: Objective[Eta], theta: np.ndarray, eta: Eta, f: float, slope: float,
              d: np.ndarray, Xd: Eta, step: float = 1.0) -> tuple[float | None, float, Eta]:
    """Armijo backtracking along ``theta + t d`` using ``eta + t X d``.

    Returns ``(t, f_new, eta_new)`` or ``(None, f, eta)`` when no step in
    ``_MAX_HALVINGS`` halvings decreases ``f``.
    """
    trial_eta = [eta]  # the linear predictor of the latest trial point

    def value(t: float) -> float:
        if t == 1.0:  # (the full step: no multiply, a pass over an n x M array fewer)
            eta_t = Xd + eta
        else:
            eta_t = t * Xd
            eta_t += eta  # one new array per trial, not two
        trial_eta[0] = eta_t
        return objective.value(theta + t * d, eta_t)

    found = armijo(value, f, slope, step)
    if found is None:
        return None, f, eta
    return found[0], found[1], trial_eta[0]


def evaluate(objective: Objective[Eta], theta: np.ndarray, gram: Gram = None) -> Trial[Eta]:
    """The point ``theta`` with its ``eta``, ``f``, gradient and (with ``gram``
    "single" or "double") Hessian; one pass over X where the objective fuses them."""
    return objective.advance(np.zeros(theta.shape), None, theta, gram)


def take_step(objective: Objective[Eta], theta: np.ndarray, eta: Eta, f: float, slope: float,
              d: np.ndarray, gram: Gram = None) -> Step[Eta]:
    """Move along ``d`` with the Armijo rule, trying the full step first.

    The full step comes with its gradient (and Hessian with ``gram``) when
    it is accepted. Otherwise the search backtracks from ``t = 1/2`` on the
    cached ``eta`` and the caller evaluates the derivatives at the point found
    (``grad`` None); ``t`` is None when no step decreases ``f``.
    """
    bound = f + _ARMIJO * slope
    full = objective.advance(theta, eta, d, gram, accept_below=bound)
    if math.isfinite(full.f) and full.f <= bound:
        return Step(1.0, theta + d, full.eta, full.f, full.grad, full.hess, full.Xd)
    # The rejected trial's X d (to rounding, where only eta_new - eta is at hand)
    # is enough for the trial points.
    Xd = full.Xd if full.Xd is not None else full.eta - eta
    t, f_new, eta_new = backtrack(objective, theta, eta, f, slope, d, Xd, step=0.5)
    if t is None:
        return Step(None, theta, eta, f, None, None, Xd)
    return Step(t, theta + t * d, eta_new, f_new, None, None, Xd)
