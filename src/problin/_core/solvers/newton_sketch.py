"""Sketched Hessians for many rows: the sketch, and Newton steps with its Hessian.

The Hessian costs ``n p^2`` per iteration, the gradient only ``n p``. With a row sketch
(:func:`sketch_rows`) the engine first fits the sketch's rows alone (the warm start,
:func:`~.newton.newton` on them, to its statistical error: :func:`_warm_tol`), then
iterates with the *exact gradient* and the Hessian of the sketch (``_sketched_phase``):
each step contracts the error by about ``sqrt(p / m)`` for m sketch rows, at the cost of a
gradient (the Newton sketch of Pilanci & Wainwright 2017). The full Hessian is then built
in the last sketched step's pass and the exact phase (:mod:`.newton_exact`) finishes, at a
point that is already nearly converged; where even one full Hessian is too costly
(``exact_final=False``) the engine finishes by truncated Newton instead.

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
import numpy as np

from ..blocks import OneThreadBLAS
from ..linalg import solve_psd
from ..model.contract import Eta, Gram, Objective
from .newton_exact import _iteration, _Policy, _State
from .steps import evaluate, take_step

__all__ = ["sketch_rows", "sketch_size"]

# The warm start's error is statistical: at the sketch's optimum the full
# data's lambda^2 / 2 is about (n/m - 1) p / 2 (measured: 7752 predicted
# 6700 for softmax, n/m = 30, p = 459). Solving the sketch beyond a fraction
# _WARM_FRACTION of that (and beyond _WARM_TOL) buys nothing.
_WARM_TOL = 10.0
_WARM_FRACTION = 0.01
# Sketched steps before full Hessians: each costs a gradient and shrinks
# lambda^2 ~1000-fold; two leave one float32 Newton step before the last.
_SKETCH_STEPS = 2
# The larger sketch's rows at most (its Hessian preconditions wide rows: _larger_sketch).
_PRECONDITIONER_ROWS = 32_768


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


def _warm_tol(objective: Objective[Eta], m: int) -> float:
    """The tolerance of a warm start on ``m`` of the objective's rows: its error is
    statistical, ``~ sqrt(n / m)`` standard errors, and solving it further buys nothing."""
    n = objective.design.n_samples
    return max(_WARM_TOL, _WARM_FRACTION * (n / m - 1) * objective.n_params / 2)


def _sketched_phase(objective: Objective[Eta], sketch: Objective[np.ndarray],
                    theta: np.ndarray, n_steps: int) -> _State[Eta]:
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
        state.f, state.g, state.H = objective.value_grad_hess(state.theta, state.eta,
                                                              single=True)
        state.h_single = state.single = state.fresh = True
        state.converged, state.message = False, "maximum number of iterations reached"
    return state


def _sketch_objectives(objective: Objective[Eta], sketch: np.ndarray, wide: bool
                       ) -> tuple[Objective[np.ndarray], Objective[np.ndarray]]:
    """The objective of the sketch's rows, and the one whose Hessian preconditions the
    fit to all rows: a larger sketch's where the rows are wide and one pays
    (:func:`_larger_sketch`; the sketch's rows then gathered once, as part of it), else
    the same. Both run their products on the calling thread (``OneThreadBLAS``: a
    multithreaded BLAS call between the passes over all rows slowed them ~30 %)."""
    larger = _larger_sketch(objective, sketch) if wide else None
    if larger is None:
        sub = OneThreadBLAS(objective.subsample(sketch))
        return sub, sub
    rows, within = larger
    large = OneThreadBLAS(objective.subsample(rows))
    return OneThreadBLAS(large.subsample(within)), large


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

