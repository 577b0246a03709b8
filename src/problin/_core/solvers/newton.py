"""The one damped Newton / IRLS engine.

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

**Sketched Hessians for many rows.** The Hessian costs ``n p^2`` per
iteration, the gradient only ``n p``. With ``sketch_rows`` the engine first
iterates with the *exact gradient* and the Hessian of a fixed random subset
of rows (scaled to the full data): each step contracts the error by about
``sqrt(p / m)`` for m sketch rows, at the cost of a gradient. Once the
decrement is below ``tol^2`` the full Hessian is built once, at a point that
is already converged, to confirm convergence and for the covariance; where
even one full Hessian is too costly (``exact_final=False``) the engine stops
there.

**Wide rows.** From ``SECANT_MIN_PARAMS`` columns a Hessian of all rows costs many
gradients (~p/32), so the engine forms none (``_wide_phase``): a warm start by truncated
Newton on the sketch's rows, then truncated Newton on all rows where they are in memory
(each conjugate-gradient iteration one fused Hessian-vector pass, over a float32 copy of
X with ``float32_copy``), BFGS on Dask (:func:`~.secant.secant_solve`), both
preconditioned by a (larger) sketch's Hessian at the warm start, to ``lambda`` within
``sqrt(2) tol``; the double-precision Hessian is then formed once at the answer where the
covariance is wanted and affordable.

**Phases.** :func:`newton` runs named phases over one iterate, ``_State``
(the point, its derivatives, and what the Hessian in hand is: built here or
carried over by a chord step, float32 or double): ``_start`` or, with a
sketch, ``_warm_start`` and ``_sketched_phase``; then ``_exact_phase``, whose
``_iteration`` takes the Newton direction and one of three steps (the last
step, a full step without search, or a searched step); then ``_finish``.
What the caller fixed for the run (tolerances, float32 throughout, chord
steps) is the ``_Policy``.

**A penalty of the information** (Firth's ``-1/2 log |I|``, ``penalty.reads_information``)
needs a Gram at every point: its own float64 pass unless the step's pass forms one, and a
leverage pass besides. With a sketch, every point therefore gets a float32 Gram in its
fused pass (the penalty's information until the double one), which is also the step's
Hessian: no sketched steps and no chord steps (each would cost a Newton step's passes
and contract far less). The Hessians are float32 until the decrement is below ``tol``
(Fisher scoring stops at ``tol^2``; a float32 step from there lands below it, measured
~1e-9 contraction), and the engine stops AT the first point with the double Hessian and
``lambda^2 / 2 <= tol^2`` instead of stepping on: its score and Hessian are exact there,
and a point beyond would cost the penalty one more Gram pass for its value. The first
two points' penalty gradient is the sketch's at the warm start (``penalty.lagged``:
Fisher scoring with lagged leverages keeps its fixed point, and the next points' are
exact; measured at 300,000 x 50: the decrement at the third point 1e-5 instead of 2e-6,
the same number of points, two leverage passes over all rows fewer; lagged at the third
point too, it took one point more).
"""
import math
from dataclasses import dataclass
from typing import Generic

import numpy as np

from ..blocks import OneThreadBLAS, one_blas_thread
from ..linalg import solve_psd
from ..model.contract import CurvatureChange, Eta, Gram, Objective, Trial
from ..model.design_small import SMALL_ELEMENTS
from .secant import secant_opening, secant_solve
from .steps import (SolverResult, _rounding_level, backtrack, evaluate, require_smooth,
                    take_step, weight_unit)
from .truncated_newton import truncated_newton

__all__ = ["SolverResult", "newton", "backtrack", "sketch_rows", "sketch_size", "SECANT_MIN_PARAMS"]

# The warm start's error is statistical: at the sketch's optimum the full
# data's lambda^2 / 2 is about (n/m - 1) p / 2 (measured: 7752 predicted
# 6700 for softmax, n/m = 30, p = 459). Solving the sketch beyond a fraction
# _WARM_FRACTION of that (and beyond _WARM_TOL) buys nothing.
_WARM_TOL = 10.0
_WARM_FRACTION = 0.01
# Sketched steps before full Hessians: each costs a gradient and shrinks
# lambda^2 ~1000-fold; two leave one float32 Newton step before the last.
_SKETCH_STEPS = 2
# In Newton's quadratic regime a decrement lambda^2/2 below this is followed
# by one below tol: the Hessian after such a step is the last, built in double.
_LAST_STEP_DECREMENT = 0.5
# The Hessian returned (for the covariance) is the one at the answer to this
# relative accuracy in its own metric (standard errors to half of it).
_HESSIAN_RTOL = 1e-6
# After a sketch's warm start, BFGS steps from a sketch's Hessian (two gradient passes
# each) replace the sketched steps and the float32 Hessians of the exact phase where a
# Hessian of the data costs more than a few gradients: from this many columns of [1, X]
# (a float32 Hessian pass costs ~p/32 gradient passes, measured on dense 200,000 x 400:
# 1.6 s against 0.25 s for X w and X^T v; BFGS takes several steps more than the ~2-3
# Hessians of the sketched path). Counted per parameter block, the columns X is read
# with: a softmax's gradients do M classes' row work besides, and its Hessian is
# cheaper than the extra steps where the blocks are narrow (measured at 300,000 x 50
# with 10 classes, 459 parameters: 4.1 s by the sketched path, 5.9 s by BFGS).
SECANT_MIN_PARAMS = 128
_PRECONDITIONER_ROWS = 32_768


@dataclass(frozen=True)
class _Policy:
    """What stays fixed through the exact phase."""

    tol: float
    threshold: float  # stop at lambda^2 / 2 <= this: tol, or tol^2 for a non-exact Hessian
    unit: float  # decrements are compared in units of the mean sample weight (weight_unit)
    always_single: bool  # every Hessian in float32 (the caller's approximate fit)
    chords: bool  # a Hessian may serve a second step (after a sketched phase)
    final_hessian: bool  # the caller wants the gradient and Hessian at the answer
    # A Gram in every pass (a penalty of the information, with a sketch: module docstring):
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


def sketch_rows(n_samples: int, n_params: int, random_state: int = 0) -> np.ndarray | None:
    """Sorted random rows for a Hessian sketch, or None when the data are too few.

    ``m`` rows make one sketched Hessian cost about ``m p^2 / 2 = 2.5e7``
    multiply-adds (measured: larger sketches contract a little more per step
    but cost more in the warm start than they save), with at least ``20 p``
    rows (relative error of the sketch ``~ sqrt(p / m) <= 0.22``) and 10,000,
    and at most 32,768: for few columns the rule gave 100,000 rows and more
    (p = 21: 113,000), whose gathering and warm start cost more than the
    extra contraction saves (measured with the cap: 1e6 x 20 in memory 479 ->
    422 ms, 3e5 x 30 220 -> 181 ms, Dask 2e6 x 20 ~15 % faster, 1e6 x 50 and
    Dask 1e7 x 20 unchanged). Sketching pays only when n is well above m
    (Pilanci & Wainwright 2017, Newton sketch).
    """
    m = sketch_size(n_samples, n_params)
    if m is None:
        return None
    rng = np.random.default_rng(random_state)
    return np.sort(rng.choice(n_samples, size=m, replace=False))


def sketch_size(n_samples: int, n_params: int) -> int | None:
    """How many rows :func:`sketch_rows` draws (None: no sketch), without drawing them."""
    m = int(min(max(5e7 / n_params**2, 20 * n_params, 10_000), 32_768, n_samples))
    return None if n_samples < 8 * m else m


def newton(objective: Objective[Eta], theta0: np.ndarray, *, max_iter: int = 100, tol: float = 1e-8,
           final_hessian: bool = True, sketch: np.ndarray | None = None,
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
        the module docstring and :func:`sketch_rows`).
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
        larger = _larger_sketch(objective, sketch) if wide else None
        if larger is None:
            sub = OneThreadBLAS(objective.subsample(sketch))
        else:  # (the sketch's rows gathered once, as part of the larger one's)
            rows, within = larger
            large = OneThreadBLAS(objective.subsample(rows))
            sub = OneThreadBLAS(large.subsample(within))
        if wide:
            found = _wide_phase(objective, sub, large if larger is not None else sub, theta,
                                len(sketch), tol, max_iter, unit, exact_final and final_hessian,
                                float32_copy)
            if found is not None:
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
    policy = _Policy(tol, tol if objective.exact_hessian else tol * tol, unit, always_single=single,
                     chords=(sketch is not None or n_sketched > 0) and not information,
                     final_hessian=final_hessian, information=information)
    if information:  # (a penalty of the information: module docstring)
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


def _warm_start(objective: Objective[Eta], sub: Objective[np.ndarray], theta: np.ndarray, m: int,
                max_iter: int, unit: float) -> SolverResult[np.ndarray]:
    """A rough fit to the sketch rows alone (~m/n of a pass per iteration); its
    error is statistical, ~sqrt(n/m) standard errors, and so is its tolerance. (Where
    the fit is wide, the engine's own Cholesky solves of it run on one BLAS thread, as
    the sketch's products do: threaded, a solve at p = 1001 took 1.3 s on a busy
    two-core machine, beyond small_blas's order 1000.)"""
    n = objective.design.n_samples
    warm_tol = max(_WARM_TOL, _WARM_FRACTION * (n / m - 1) * objective.n_params / 2)
    return newton(sub, theta, max_iter=max_iter, tol=warm_tol, final_hessian=False, single=True,
                  unit=unit)


def _larger_sketch(objective: Objective[Eta], sketch: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray] | None:
    """Rows for BFGS's first Hessian, a larger sketch's than the warm start's where one
    costs at most about two gradient passes (``m2 p^2 / 2`` float32 multiply-adds at
    ~16 times a pass's rate: ``m2 <= 64 n / p``, at most 32,768 rows): its relative
    error ``~ sqrt(p / m2)`` sets BFGS's first contractions (measured at 200,000 x 400:
    13 steps from the warm start's 10,000 rows, 9 from 32,768). ``(rows, within)``: the
    sorted rows, the warm start's among them and where (``rows[within] == sketch``);
    None where no larger sketch pays."""
    n, p = objective.design.n_samples, objective.n_params
    m2 = int(min(64 * n / p, _PRECONDITIONER_ROWS, n // 4))
    if m2 < 1.5 * sketch.size:
        return None
    others = np.ones(n, dtype=bool)
    others[sketch] = False
    extra = np.random.default_rng(1).choice(np.flatnonzero(others), size=m2 - sketch.size,
                                            replace=False)
    rows = np.sort(np.concatenate([sketch, extra]))
    return rows, np.searchsorted(rows, sketch)


def _wide_phase(objective: Objective[Eta], sub: Objective[np.ndarray],
                large: Objective[np.ndarray], theta: np.ndarray, m: int, tol: float,
                max_iter: int, unit: float, exact_final: bool, float32_copy: bool
                ) -> SolverResult[Eta] | None:
    """Wide rows: no Hessian of all rows. None where a sketch's Hessian is singular (the
    sketched path's data-span solves take over).

    The warm start is truncated Newton on the sketch rows ``sub`` alone, preconditioned
    by their Hessian at ``theta`` (a Newton fit there formed ~8 float32 Hessians of
    ``m p^2 / 2``, each ~4 passes over all rows: 3.6 s of an 11 s fit at
    200,000 x 1,000). The Hessian of the ``large`` sketch at the warm start then
    preconditions the fit to all rows: truncated Newton where the rows are at hand (each
    conjugate-gradient iteration one fused Hessian-vector pass, contracting ``lambda``
    by ``(sqrt(k) - 1) / (sqrt(k) + 1)``, ``k ~ (1 + e) / (1 - e)`` for the sketch's
    relative error ``e``; BFGS from the same Hessian took two passes a step for ~5-fold
    contractions of ``lambda^2``: 27 steps at 200,000 x 1,000), else (Dask, where a
    Hessian-vector product is a distributed pass) BFGS, :func:`_secant_phase`. Both
    leave ``lambda`` within ``sqrt(2) tol``; with ``exact_final`` the double-precision
    Hessian is formed there once and the exact phase confirms."""
    n = objective.design.n_samples
    warm_tol = max(_WARM_TOL, _WARM_FRACTION * (n / m - 1) * objective.n_params / 2)
    with one_blas_thread():  # (the sketch's factorisations: see _warm_start)
        warm = truncated_newton(sub, sub, theta, warm_tol, max_iter, None, unit, single=False)
        if warm is None:
            return None
        start = large.value_grad_hess(warm.theta, large.linear_predictor(warm.theta),
                                      single=True)[2]
    point = evaluate(objective, warm.theta, None)
    if objective.line_derivatives(point.eta, point.eta) is None:  # (rows not at hand)
        return _secant_phase(objective, warm.theta, start, tol, max_iter, unit, exact_final,
                             point)
    with one_blas_thread():  # (the passes run on their own threads)
        run = truncated_newton(objective, large, warm.theta, tol, max_iter, start, unit, point,
                               single=float32_copy)
    if run is None or not exact_final:
        return run
    return _confirmed(objective, run.theta, run.eta, run.history, run.n_iter, tol, max_iter,
                      unit)


def _confirmed(objective: Objective[Eta], theta: np.ndarray, eta: Eta, history: list[float],
               n_steps: int, tol: float, max_iter: int, unit: float) -> SolverResult[Eta]:
    """The double-precision Hessian at an answer found without one, and the exact phase's
    confirmation by the exact Newton decrement (at ``tol^2``, its last step keeps that
    Hessian as the answer's)."""
    f, g, H = objective.value_grad_hess(theta, eta)
    state = _State(theta, eta, f, g, H, history, h_single=False, single=False)
    policy = _Policy(tol, tol * tol, unit, always_single=False, chords=True, final_hessian=True)
    n_iter = _exact_phase(objective, state, policy, max(max_iter - n_steps, 1))
    return _finish(objective, state, n_steps + n_iter, True)


def _secant_phase(objective: Objective[Eta], theta: np.ndarray, start: np.ndarray, tol: float,
                  max_iter: int, unit: float, exact_final: bool,
                  point: Trial[Eta]) -> SolverResult[Eta] | None:
    """BFGS from the warm start ``theta``, a sketch's Hessian ``start`` there the first
    inverse estimate (:func:`~.secant.secant_solve`); None where it is singular.

    BFGS's metric is not the Hessian's, and its last step shrinks the error by a
    factor, not to its square: it stops at ``g^T B g / 2 <= tol^2``, the engine's test
    for a Hessian that is not exact (truncated Newton's final step likewise leaves
    ``lambda <= sqrt(2) tol``; measured: ``lambda`` of 4e-6 after stopping at ``tol``,
    ~1e-9 at ``tol^2``, ~4 steps more). With ``exact_final`` (a covariance is wanted
    and affordable) the double-precision Hessian is then formed there, once, and the
    exact phase confirms convergence by the exact Newton decrement, as everywhere
    else: at ``tol^2`` its last step keeps that Hessian as the answer's.
    """
    assert point.grad is not None
    threshold = tol * tol
    run = secant_solve(objective, theta, point.eta, point.f, point.grad, start, threshold,
                       max_iter, unit)
    if run is None:
        return None
    if not exact_final:
        return SolverResult(theta=run.theta, eta=run.eta, value=run.f, n_iter=run.n_steps,
                            converged=run.converged, history=run.history,
                            message=run.message, grad=run.g, direction=run.d,
                            direction_eta=run.Xd)
    return _confirmed(objective, run.theta, run.eta, run.history, run.n_steps, tol, max_iter,
                      unit)


def _information_opening(objective: Objective[Eta], sketch: Objective[np.ndarray],
                         theta: np.ndarray, policy: _Policy) -> _State[Eta]:
    """A penalty of the information from the warm start ``theta``: the point with its
    float32 Gram and the first full Newton step, the penalty's gradient at both the
    sketch's at ``theta`` (lagged leverages: ``penalty.lagged``) instead of two leverage
    passes over all rows. The next point's gradient is exact; so is every one the
    engine stops at (the double Hessian's pass is never lagged)."""
    with objective.penalty.lagged(sketch.penalty.gradient(theta)):
        state = _sketched_phase(objective, sketch, theta, 0)
        stopped = _iteration(objective, state, policy)
    if stopped or state.g is None:  # (a failed search: on from there with exact derivatives)
        state.f, state.g, state.H = objective.value_grad_hess(state.theta, state.eta, single=True)
        state.h_single = state.single = state.fresh = True
        state.converged, state.message = False, "maximum number of iterations reached"
    return state


def _sketched_phase(objective: Objective[Eta], sketch: Objective[np.ndarray], theta: np.ndarray,
                    n_steps: int) -> _State[Eta]:
    """Newton steps with exact gradients and the sketch's Hessian (float32).

    Each contracts the error by about the sketch's relative error
    (``~ sqrt(p / m)``) for the price of a gradient; two remove most of the
    warm start's statistical error (~1e-3 of lambda^2 each). Returns the
    point after the last step with its gradient and the full float32 Hessian
    that the exact phase starts from (formed in the last step's pass), and
    ``history`` (one entry per point).
    """
    point = evaluate(objective, theta, "single" if n_steps == 0 else None)
    eta, f, g, H = point.eta, point.f, point.grad, point.hess
    history = [f]
    for step_no in range(n_steps):
        assert g is not None  # (formed at every accepted point)
        Hs = sketch.value_grad_hess(theta, sketch.linear_predictor(theta), single=True)[2]
        direction, rank = solve_psd(Hs, g)
        if rank < Hs.shape[0]:
            break  # singular: leave it to the exact phase and its data-span solve
        d = -direction
        gram: Gram = "single" if step_no == n_steps - 1 else None
        step = take_step(objective, theta, eta, f, float(g @ d), d, gram)
        theta, eta, f, g, H = step.theta, step.eta, step.f, step.grad, step.hess
        if step.t is None:
            break
        history.append(f)
        if g is None:
            f, g = objective.value_grad(theta, eta)
    if H is None:
        f, g, H = objective.value_grad_hess(theta, eta, single=True)
    return _State(theta, eta, f, g, H, history, h_single=True, single=True)


def _exact_phase(objective: Objective[Eta], state: _State[Eta], policy: _Policy, max_iter: int) -> int:
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


def _last_step(objective: Objective[Eta], s: _State[Eta], policy: _Policy, decrement2: float) -> bool:
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


def _searched_step(objective: Objective[Eta], s: _State[Eta], policy: _Policy, decrement2: float) -> bool:
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


def _finish(objective: Objective[Eta], s: _State[Eta], n_iter: int, final_hessian: bool) -> SolverResult[Eta]:
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
