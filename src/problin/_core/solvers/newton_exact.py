"""Newton's exact phase: the engine's iterate, its fixed policy, and the result.

:func:`~.newton.newton` runs its phases over one mutable iterate, ``_State`` (the point,
its derivatives, and what the Hessian in hand is: built at this point or carried over by a
chord step, float32 or double), with what the caller fixed for the run in a frozen
``_Policy``. The iterate lives here, apart from the entry that sequences the phases, so
that the phases before this one (:mod:`.newton_sketch`) hand over a ``_State`` without
importing the entry (the solvers' modules import one another without cycles).

Each iteration (``_iteration``) takes the Newton direction by Cholesky (within the data's
span once ``H`` was singular), tests the decrement, then takes one of three steps: the
last step, which squares the remaining error; a full step without search, where the
decrease it promises is below the rounding of ``f``; or a searched step, the full step
fused with the next gradient and Hessian (one pass over X) and Armijo backtracking on the
cached ``eta`` only where it fails. After a sketched phase or a BFGS opening a Hessian may
serve a second (chord) step, and Hessians are float32 until Newton's next step is the
last: only the Hessian of the answer needs double precision.
"""
import math
from dataclasses import dataclass
from typing import Generic

import numpy as np

from ..linalg import solve_psd
from ..model.contract import CurvatureChange, Eta, Gram, Objective
from ..model.design_small import SMALL_ELEMENTS
from .steps import SolverResult, _rounding_level, take_step

# In Newton's quadratic regime a decrement lambda^2/2 below this is followed
# by one below tol: the Hessian after such a step is the last, built in double.
_LAST_STEP_DECREMENT = 0.5

# The Hessian returned (for the covariance) is the one at the answer to this
# relative accuracy in its own metric (standard errors to half of it).
_HESSIAN_RTOL = 1e-6


@dataclass(frozen=True)
class _Policy:
    """What stays fixed through the exact phase."""

    tol: float
    threshold: float  # stop at lambda^2 / 2 <= this: tol, or tol^2 for a non-exact Hessian
    unit: float  # decrements are compared in units of the mean sample weight (weight_unit)
    always_single: bool  # every Hessian in float32 (the caller's approximate fit)
    chords: bool  # a Hessian may serve a second step (after a sketched phase)
    final_hessian: bool  # the caller wants the gradient and Hessian at the answer
    # A Gram in every pass (a penalty of the information, with a sketch: newton_sketch):
    # double Hessians from a decrement below tol, and no last step beyond the answer.
    information: bool = False

    @property
    def double_below(self) -> float:
        """The decrement ``lambda^2 / 2`` below which the next Hessian is the double one."""
        return self.tol if self.information else _LAST_STEP_DECREMENT


@dataclass
class _State(Generic[Eta]):
    """The engine's iterate: the point, its derivatives, and what the Hessian is."""

    theta: np.ndarray
    eta: Eta
    f: float
    g: np.ndarray | None  # the gradient at theta (None only after a failed search)
    H: np.ndarray  # the Hessian in hand
    history: list[float]
    h_single: bool  # H is a float32 product (not the one to report)
    single: bool  # new Hessians are built in float32 (until Newton's next step is the last)
    fresh: bool = True  # H was built at theta (a chord step moves theta, not H)
    span: np.ndarray | None = None  # the data's span, once H was singular: steps stay in it
    rank_deficient: bool = False
    d: np.ndarray | None = None  # the last Newton direction (divergence diagnostics)
    Xd: Eta | None = None  # its X d, where a pass formed it
    converged: bool = False
    message: str = "maximum number of iterations reached"
    decrement_bound: float | None = None  # see SolverResult (set by the last step)


def _hessian_change(objective: Objective[Eta], eta_old: Eta, eta_new: Eta, H: np.ndarray,
                    rowwise: bool = True) -> CurvatureChange:
    """How far ``H`` (built at ``eta_old``) is from the Hessian at ``eta_new``, in
    its own metric: the objective's bound (``GLMObjective.hessian_change``: the
    family's uniform bound from the largest change of a linear predictor, and the
    row-wise one, with rows counted as changed above a quarter of the tolerance).
    Small data take the uniform bound only: a new Hessian costs less than the
    row-wise bound's leverage solve."""
    return objective.hessian_change(eta_old, eta_new, H, _HESSIAN_RTOL / 4,
                                    rowwise=rowwise and not _is_small(objective))


def _is_small(objective: Objective[Eta]) -> bool:
    """Whether a pass over the objective's data costs less than bounding its curvature."""
    return objective.design.n_samples * objective.n_params <= SMALL_ELEMENTS


def _exact_phase(objective: Objective[Eta], state: _State[Eta], policy: _Policy,
                 max_iter: int) -> int:
    """Newton iterations with full Hessians until converged or stopped; the count."""
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        if _iteration(objective, state, policy):
            break
    return n_iter


def _iteration(objective: Objective[Eta], s: _State[Eta], policy: _Policy) -> bool:
    """One Newton iteration from ``s`` (updated in place); True when the engine stops."""
    s.d = d = _newton_direction(objective, s)
    assert s.g is not None
    # (in units of the mean weight: the decrement scales with the weights, the optimum not)
    decrement2 = -float(s.g @ d) / policy.unit
    if not math.isfinite(decrement2):
        s.message, s.Xd = "non-finite Newton step", None
        return True
    if decrement2 / 2 <= policy.threshold:
        return _last_step(objective, s, policy, decrement2)
    if decrement2 / 2 <= _rounding_level(s.f, policy.unit) / policy.unit:
        # (Only with a non-exact Hessian, converging linearly.) The decrease
        # the step promises is below f's rounding: a line search would judge
        # rounding noise (and so depend on the order of summation, e.g. on
        # chunking). In this regime the full step is the right one.
        _step_without_search(objective, s)
        return False
    if policy.information and s.h_single and decrement2 / 2 <= policy.double_below:
        # Into the double point unsearched: f here holds the penalty's log |I| of a
        # float32 Gram, whose rounding (~1e-6 p) is far above the decrease promised
        # (below tol, in Newton's quadratic regime); the next f, of the double Gram, is
        # comparable with the ones after it.
        _step_without_search(objective, s)
        return False
    return _searched_step(objective, s, policy, decrement2)


def _newton_direction(objective: Objective[Eta], s: _State[Eta]) -> np.ndarray:
    """``-H^-1 g`` by Cholesky, within the span of the data once H is singular."""
    assert s.g is not None  # (formed at every point the engine iterates from)
    if s.span is None:
        step, rank = solve_psd(s.H, s.g)
        if rank < s.H.shape[0]:
            s.rank_deficient = True
            s.span = objective.data_range_basis()
    if s.span is not None:
        # Newton within the span of the data: components along directions
        # no observation sees stay exactly zero, instead of being rounding
        # errors amplified by a near-zero curvature.
        span = s.span
        step = span @ solve_psd(span.T @ s.H @ span, span.T @ s.g)[0]
    return -step


def _last_step(objective: Objective[Eta], s: _State[Eta], policy: _Policy,
               decrement2: float) -> bool:
    """Converged: the last, full Newton step squares the remaining error (no line
    search: f would change below its own rounding error). True when done."""
    if not ((s.fresh and not s.h_single) or policy.always_single or not policy.final_hessian):
        # A float32 or reused Hessian got us here: the double-precision one
        # is built at the point after this step, already converged, so that
        # the last step from it is tiny and it is the Hessian of the answer.
        _step_without_search(objective, s)
        return False
    assert s.d is not None
    if policy.information:
        # The point is the answer: its score is exact, lambda^2 / 2 <= tol^2 (Fisher
        # scoring's test: within ~tol standard errors), and H is the double Hessian there.
        s.Xd, s.decrement_bound = None, decrement2 * policy.unit / 2
        s.converged, s.message = True, "converged"
        return True
    if (policy.final_hessian and not policy.always_single
            and decrement2 / 2 > policy.tol * policy.tol and _is_small(objective)):
        # A small design's Hessian costs less than bounding its change (the uniform
        # bound rarely holds past tol^2): the step and the Hessian at the answer in
        # one fused pass.
        _step_without_search(objective, s)
        s.converged, s.message = True, "converged"
        return True
    # The Hessian in hand (if built in double precision) is the one at the
    # answer, to _HESSIAN_RTOL in its own metric, unless the step changed the
    # curvature by more than that. (Checked before f: the row derivatives at
    # eta_old are still cached.)
    eta_old, s.Xd = s.eta, objective.linear_predictor(s.d)
    s.theta, s.eta = s.theta + s.d, s.eta + s.Xd
    # The step solved H d = -g, so the gradient after it is the integral of
    # (H(t) - H) d along it: in H's metric at most delta * lambda, for a delta that
    # bounds the Hessian's change at every point of the step (the family's uniform
    # bound does: it holds for any smaller move of every linear predictor); in the
    # metric of the Hessian at the answer (H_new >= (1 - delta) H), 1 / (1 - delta)
    # times that.
    tiny = decrement2 / 2 <= policy.tol * policy.tol  # (H is the answer's: no row-wise bound)
    change = _hessian_change(objective, eta_old, s.eta, s.H, rowwise=not tiny)
    if change.uniform < 1.0:
        s.decrement_bound = (change.uniform**2 / (1.0 - change.uniform)
                             * decrement2 * policy.unit / 2)
    s.fresh = not s.h_single and (tiny or change.bound <= _HESSIAN_RTOL)
    s.f = objective.value(s.theta, s.eta)
    s.history.append(s.f)
    s.converged, s.message = True, "converged"
    return True


def _step_without_search(objective: Objective[Eta], s: _State[Eta]) -> None:
    """The full step ``theta + d`` with the double-precision Hessian there (one
    fused pass where the objective has one)."""
    assert s.d is not None
    point = objective.advance(s.theta, s.eta, s.d, "double")
    assert point.hess is not None
    s.theta, s.eta, s.f, s.g, s.H = s.theta + s.d, point.eta, point.f, point.grad, point.hess
    s.Xd = point.Xd
    s.history.append(s.f)
    s.fresh, s.h_single = True, False


def _searched_step(objective: Objective[Eta], s: _State[Eta], policy: _Policy,
                   decrement2: float) -> bool:
    """A Newton step with the Armijo line search; True when the search failed."""
    assert s.d is not None
    # What the next point needs if the full step is taken: the same Hessian
    # again (a chord step, for the price of a gradient: in the quadratic
    # regime the Hessian moves little over a step) or a new one, in double
    # precision once the next step will be the last (its decrement ~ the
    # square of this one).
    chord = policy.chords and s.fresh and decrement2 / 2 <= _LAST_STEP_DECREMENT
    next_single = policy.always_single or (s.single and decrement2 / 2 > policy.double_below)
    gram: Gram = None if chord else ("single" if next_single else "double")
    step = take_step(objective, s.theta, s.eta, s.f, -decrement2 * policy.unit, s.d, gram)
    s.theta, s.eta, s.f, s.g, s.Xd = step.theta, step.eta, step.f, step.grad, step.Xd
    if step.t is None:
        # No decrease left to find: converged if the predicted decrease
        # is itself at the level of rounding in f.
        s.converged = decrement2 / 2 <= _rounding_level(s.f, policy.unit) / policy.unit
        s.message = "converged" if s.converged else "line search failed"
        return True
    s.history.append(s.f)
    if chord and step.t == 1.0:
        if s.g is None:
            s.f, s.g = objective.value_grad(s.theta, s.eta)
        s.fresh = False
        return False
    s.single = next_single
    H = step.hess
    if H is None:
        s.f, s.g, H = objective.value_grad_hess(s.theta, s.eta, single=s.single)
    s.H, s.fresh, s.h_single = H, True, s.single
    return False


def _finish(objective: Objective[Eta], s: _State[Eta], n_iter: int,
            final_hessian: bool) -> SolverResult[Eta]:
    """The result, with the gradient and double-precision Hessian at the answer
    (built now unless the one in hand is that one; dropped without ``final_hessian``)."""
    f, g, H = s.f, s.g, s.H
    hessian: np.ndarray | None = H
    bound = s.decrement_bound  # (in the metric of either Hessian: see _last_step)
    if not (s.fresh and not s.h_single):
        if final_hessian:
            f, g, hessian = objective.value_grad_hess(s.theta, s.eta)
        else:
            g = hessian = None
    return SolverResult(theta=s.theta, eta=s.eta, value=f, n_iter=n_iter,
                        converged=s.converged, history=s.history, message=s.message, grad=g,
                        hessian=hessian, rank_deficient=s.rank_deficient, direction=s.d,
                        direction_eta=s.Xd, last_hessian=H, decrement_bound=bound)


def _confirmed(objective: Objective[Eta], found: SolverResult[Eta], tol: float, max_iter: int,
               unit: float) -> SolverResult[Eta]:
    """The double-precision Hessian at an answer ``found`` without one, and the exact
    phase's confirmation by the exact Newton decrement (at ``tol^2``, its last step keeps
    that Hessian as the answer's)."""
    theta, eta, history, n_steps = found.theta, found.eta, found.history, found.n_iter
    f, g, H = objective.value_grad_hess(theta, eta)
    state = _State(theta, eta, f, g, H, history, h_single=False, single=False)
    policy = _Policy(tol, tol * tol, unit, always_single=False, chords=True, final_hessian=True)
    n_iter = _exact_phase(objective, state, policy, max(max_iter - n_steps, 1))
    return _finish(objective, state, n_steps + n_iter, True)
