"""The one damped Newton / IRLS engine: its entry, :func:`newton`, and the order of its phases.

Each iteration reads like the algorithm (the IRLS update of Bishop 2006,
§4.3.3 eq. 4.99, with the prior's precision ``P`` added to the Hessian as
in §4.5.1 eq. 4.143: ``w <- w - (Phi^T R Phi + P)^-1 (Phi^T (y - t) + P w)``):

    Cholesky solve (within the span of the data where the Hessian is
    singular) -> Newton decrement test -> full step, fused with the next
    gradient and Hessian (one pass over X) -> backtracking on the cached
    eta if the full step does not decrease f enough.

An iteration reads X once where the objective fuses the step (see
``steps.take_step``); backtracking trial points move ``eta`` along ``X d``
without further passes. Convergence is declared when half the squared Newton
decrement ``lambda^2 / 2 = -g^T d / 2`` (an affine-invariant estimate of
``f - f*``, i.e. of the distance to the optimum in standard-error units; Boyd &
Vandenberghe 2004, §9.5.1) falls below ``tol``; the final Newton step is
then taken, which squares the remaining error. When the curvature is not the
exact Hessian (Fisher scoring with expected information) steps converge only
linearly, so the test becomes ``lambda^2 / 2 <= tol^2``: either way the
answer ends within about ``tol`` standard errors of the optimum.

**Phases.** :func:`newton` runs named phases over one iterate, ``_State`` (the point, its
derivatives, and what the Hessian in hand is), with what the caller fixed for the run in a
frozen ``_Policy``; each phase lives with its concept:

- ``_start`` (here): one pass for f, g and H at ``theta0``; or, where the start's Hessian
  costs no pass (a softmax at its intercepts), BFGS steps from it
  (:func:`~.secant.secant_opening`) while Hessians cost more than gradients;
- with a row sketch, many rows (:mod:`.newton_sketch`): ``_warm_start`` (here: this engine
  on the sketch's rows alone), then ``_sketched_phase``, Newton steps with the exact
  gradient and the sketch's Hessian (for a penalty of the information, Firth's,
  ``_information_opening`` instead: full float32 steps with lagged leverages);
- with a row sketch and wide rows (:mod:`.newton_wide`): ``_wide_phase``, which forms no
  Hessian of all rows, then ``_confirmed`` (:mod:`.newton_exact`) where the covariance is
  wanted and affordable;
- ``_exact_phase`` (:mod:`.newton_exact`), whose ``_iteration`` takes the Newton direction
  and one of three steps (the last step, a full step without search, or a searched step);
  then ``_finish``, the :class:`~.steps.SolverResult`.
"""
import numpy as np

from ..model.contract import Eta, Objective
from .newton_exact import _confirmed, _exact_phase, _finish, _Policy, _State
from .newton_sketch import (_SKETCH_STEPS, _information_opening, _sketch_objectives,
                            _sketched_phase, _warm_tol, sketch_rows, sketch_size)
from .newton_wide import SECANT_MIN_PARAMS, _wide_phase
from .secant import secant_opening
from .steps import SolverResult, backtrack, evaluate, require_smooth, weight_unit
from .truncated_newton import truncated_newton

# (sketch_rows, sketch_size and SECANT_MIN_PARAMS: the callers' names for the engine's options)
__all__ = ["SolverResult", "newton", "backtrack", "sketch_rows", "sketch_size", "SECANT_MIN_PARAMS"]


def newton(objective: Objective[Eta], theta0: np.ndarray, *, max_iter: int = 100,
           tol: float = 1e-8, final_hessian: bool = True, sketch: np.ndarray | None = None,
           exact_final: bool = True, single: bool = False,
           unit: float | None = None, float32_copy: bool = False) -> SolverResult[Eta]:
    """Minimise ``objective`` by damped Newton from ``theta0``.

    Parameters
    ----------
    objective : Objective (see :mod:`~problin._core.model.contract`)
    theta0 : ndarray of shape (p,)
    max_iter : int
        Maximum number of Newton iterations (per phase).
    tol : float
        Stop when ``lambda^2 / 2 <= tol`` (Newton decrement; ``tol^2`` when
        ``objective.exact_hessian`` is False).
    final_hessian : bool
        Evaluate the gradient and Hessian at the returned point (one more
        pass), as covariance estimates need.
    sketch : ndarray of row indices or None
        Rows whose Hessian stands in for the full one in a first phase (see
        :mod:`.newton_sketch` and :func:`sketch_rows`).
    exact_final : bool
        After a sketched phase, build the full Hessian once (default) or stop.
    single : bool
        Form every Hessian in float32 (for approximate fits such as warm starts).
    unit : float, optional
        The unit of the decrements (:func:`~.steps.weight_unit`, the objective's by
        default; a sketch's warm start takes the full data's).
    float32_copy : bool
        Truncated Newton's Hessian-vector products may read a float32 copy of X (half
        of its memory: the caller checked that it fits); else they run in double
        precision (a softmax design's in float32 block by block, without a copy).
    """
    require_smooth(objective, "Newton")
    theta = np.array(theta0, dtype=np.float64)
    if unit is None:
        unit = weight_unit(objective)
    if sketch is None and not single and max_iter > 1 and objective.shared_curvature(theta):
        # The start's Hessian costs no pass: BFGS from it while Hessians cost more.
        opening = secant_opening(objective, theta, max_iter - 1, unit)
        state = _State(opening.theta, opening.eta, opening.f, opening.g, opening.H,
                       opening.history, h_single=False, single=False)
        n_sketched = opening.n_steps
    elif sketch is None:
        state, n_sketched = _start(objective, theta, single), 0
    else:
        wide = objective.design.n_params >= SECANT_MIN_PARAMS  # (columns a block reads)
        sub, large = _sketch_objectives(objective, sketch, wide)
        if wide:
            found = _wide_phase(objective, sub, large, theta, len(sketch), tol, max_iter, unit,
                                float32_copy)
            if found is not None:
                if exact_final and final_hessian:  # (the covariance wanted and affordable)
                    return _confirmed(objective, found, tol, max_iter, unit)
                return found
        warm = _warm_start(objective, sub, theta, len(sketch), max_iter, unit)
        if not exact_final:
            # Where even one full Hessian is too costly: truncated Newton, the
            # warm start's last sketch Hessian (one step back) preconditioning.
            result = truncated_newton(objective, sub, warm.theta, tol, max_iter,
                                      warm.last_hessian, unit, single=float32_copy)
            if result is not None:
                return result
        n_sketched = 0  # (counted below)
    # After a sketched phase: full Hessians, in float32 until Newton's next step
    # is the last, reused for a step where that costs less than building one anew
    # (also after a BFGS opening: its Hessians cost many gradients).
    information = sketch is not None and objective.penalty.reads_information
    policy = _Policy(tol, tol if objective.exact_hessian else tol * tol, unit,
                     always_single=single, final_hessian=final_hessian,
                     chords=(sketch is not None or n_sketched > 0) and not information,
                     information=information)
    if information:  # (a penalty of the information: see newton_sketch)
        state, n_sketched = _information_opening(objective, sub, warm.theta, policy), 1
    elif sketch is not None:
        state = _sketched_phase(objective, sub, warm.theta, _SKETCH_STEPS)
        n_sketched = len(state.history) - 1
        state.history[-1] = state.f  # the point the exact phase starts from
    n_iter = _exact_phase(objective, state, policy, max(max_iter - n_sketched, 1))
    return _finish(objective, state, n_sketched + n_iter, final_hessian)


def _start(objective: Objective[Eta], theta: np.ndarray, single: bool) -> _State[Eta]:
    """The engine's first point without a sketch: one pass for f, g and H. Where every
    row has the start's curvature (softmax at its intercepts: a warm start on a
    sketch), H is its Kronecker form, exact and without a Hessian pass (a 459 x 459
    float32 Hessian of 10,000 sketch rows took ~45 ms)."""
    if objective.shared_curvature(theta):
        point = evaluate(objective, theta, None)
        assert point.grad is not None
        return _State(theta, point.eta, point.f, point.grad, objective.shared_hessian(theta),
                      [point.f], h_single=False, single=single)
    point = evaluate(objective, theta, "single" if single else "double")
    assert point.grad is not None and point.hess is not None
    return _State(theta, point.eta, point.f, point.grad, point.hess, [point.f],
                  h_single=single, single=single)


def _warm_start(objective: Objective[Eta], sub: Objective[np.ndarray], theta: np.ndarray,
                m: int, max_iter: int, unit: float) -> SolverResult[np.ndarray]:
    """A rough fit to the sketch rows alone (~m/n of a pass per iteration); its
    error is statistical, ~sqrt(n/m) standard errors, and so is its tolerance. (Where
    the fit is wide, the engine's own Cholesky solves of it run on one BLAS thread, as
    the sketch's products do: threaded, a solve at p = 1001 took 1.3 s on a busy
    two-core machine, beyond small_blas's order 1000.)"""
    return newton(sub, theta, max_iter=max_iter, tol=_warm_tol(objective, m),
                  final_hessian=False, single=True, unit=unit)

