"""Newton's opening by BFGS from an exact start Hessian that costs no pass over X.

At the usual start point (intercepts at the class frequencies, slopes zero)
every row has the same probabilities, so the softmax Hessian there is one
Kronecker product (``Objective.shared_hessian``): exact, for the price of a
p x p Gram. Anywhere else a Hessian costs ``n (Mp)^2 / 2`` multiply-adds,
which at 5,000 x 10 with 10 classes is the time of ~7 gradients (measured).

From that exact curvature, BFGS steps (Nocedal & Wright 2006, §6.1, the
inverse update eq. 6.17) cost one gradient each and shrink the decrement
5-10 fold per step. Once the decrement in the BFGS metric is below
``_SWITCH`` (or a step shrank it by less than ``_SLOW``: far from the optimum
of strongly separated classes BFGS crawls) the exact Hessian is formed at the
next point, in the step's own pass, and Newton's quadratic steps finish the
fit: convergence is still judged by the exact Hessian's decrement, and the
covariance comes from the exact Hessian at the answer. Measured at
5,000 x 10 x 10: 8 BFGS steps and 3 Hessians instead of 6 (21.5 -> 15.4 ms
with the faster derivatives); 20,000 x 30 x 10: 336 -> 251 ms.

:func:`secant_solve` is the same BFGS run to the end, from a row sketch's Hessian,
where no Hessian of all rows is worth its cost (wide rows: the Newton engine's
``_secant_phase``).
"""
from dataclasses import dataclass
from typing import Generic

import numpy as np
from scipy.linalg import blas

from ..blocks import one_blas_thread, small_blas
from ..linalg import equilibrated_cholesky, inverse_from_equilibrated
from ..model.contract import Eta, Objective
from .steps import _ARMIJO, _rounding_level, backtrack, evaluate, take_step

__all__ = ["Opening", "Secant", "secant_opening", "secant_solve"]

# lambda^2 / 2 in the BFGS metric below which the next point gets the exact
# Hessian (measured: 1e-2 to 1e-3 leave one Newton step plus the final Hessian;
# since the engine bounds the last step's change of the Hessian, 1e-2 saves one or
# two BFGS steps on most data and never took more evaluations: softmax 1,000-20,000
# rows, 5-30 features, 3-10 classes, three seeds each).
_SWITCH = 1e-2
# BFGS steps before Newton takes over regardless (separable data diverge slowly).
_MAX_STEPS = 15
# Newton takes over after a step that shrank the decrement by less than this factor:
# far from the optimum, where curvature changes fast, BFGS crawls (measured: 30 steps
# on strongly separated classes, where Newton needs 8).
_SLOW = 0.5
# The exact line search: Newton steps in t (the rows' derivatives along the line; each
# ~1/50 of a pass at p = 400), stopped once a step moves t by less than this fraction.
_LINE_NEWTON = 6
_LINE_RTOL = 1e-3


@dataclass(frozen=True)
class Opening(Generic[Eta]):
    """Where the BFGS opening left the fit: the point, its derivatives and exact Hessian."""

    theta: np.ndarray
    eta: Eta
    f: float
    g: np.ndarray
    H: np.ndarray  # the exact double-precision Hessian at theta
    history: list[float]  # f at the start and after each step
    n_steps: int


def secant_opening(objective: Objective[Eta], theta: np.ndarray, max_steps: int,
                   unit: float = 1.0) -> Opening:
    """BFGS steps from ``theta`` (where ``objective.shared_curvature`` holds) until the
    exact Hessian is worth its cost; see the module docstring. ``unit``: the
    decrements' (``steps.weight_unit``)."""
    point = evaluate(objective, theta, None)
    eta, f, g = point.eta, point.f, point.grad
    assert g is not None  # (no acceptance test: always formed)
    history = [f]
    B = objective.shared_inverse(theta)  # the inverse Hessian's estimate
    if B is None:
        H0 = objective.shared_hessian(theta)
        B = _inverse(H0)
        if B is None:  # singular: the exact phase's data-span solve takes over
            return Opening(theta, eta, f, g, H0, history, 0)
    # B's upper triangle, in Fortran order, is what BLAS's symmetric routines read and
    # update in place (dsymv, dsyr2: ~4x faster than numpy's outer products at 99 x 99).
    B = np.asfortranarray(B)
    n_steps, previous = 0, np.inf
    max_steps = min(max_steps, _MAX_STEPS)
    for n_steps in range(1, max_steps + 1):
        d = blas.dsymv(-1.0, B, g)
        decrement2 = float(-g @ d)
        if not (np.isfinite(decrement2) and decrement2 > 0.0):
            n_steps -= 1
            break
        last = (decrement2 / 2 <= _SWITCH * unit or decrement2 > _SLOW * previous
                or n_steps == max_steps)
        previous = decrement2
        step = take_step(objective, theta, eta, f, -decrement2, d, "double" if last else None)
        if step.t is None:
            n_steps -= 1
            break
        s, theta, eta, f = step.theta - theta, step.theta, step.eta, step.f
        history.append(f)
        if last and step.hess is not None:
            assert step.grad is not None
            return Opening(theta, eta, f, step.grad, step.hess, history, n_steps)
        if last:
            break
        g_new = step.grad if step.grad is not None else objective.value_grad(theta, eta)[1]
        B = _bfgs_update(B, s, g_new - g)
        g = g_new
    f, g, H = objective.value_grad_hess(theta, eta)
    return Opening(theta, eta, f, g, H, history, n_steps)


@dataclass(frozen=True)
class Secant(Generic[Eta]):
    """Where :func:`secant_solve` stopped: the point, its derivatives, the inverse
    Hessian's estimate there, and how it got there."""

    theta: np.ndarray
    eta: Eta
    f: float
    g: np.ndarray
    B: np.ndarray  # the inverse Hessian's estimate (upper triangle, Fortran order)
    history: list[float]  # f after each step
    n_steps: int
    converged: bool
    message: str
    d: np.ndarray | None  # the last direction, and its X d where a pass formed it
    Xd: Eta | None


def secant_solve(objective: Objective[Eta], theta: np.ndarray, eta: Eta, f: float,
                 g: np.ndarray, start: np.ndarray, threshold: float, max_steps: int,
                 unit: float = 1.0) -> "Secant[Eta] | None":
    """BFGS from ``theta`` until ``lambda^2 / 2 <= threshold`` in the BFGS metric
    (``g^T B g / 2``, in units of ``unit``), then the last, full step; no Hessian of
    the data. ``start`` is the Hessian whose inverse starts ``B`` (a row sketch's);
    None where it is singular.

    From a sketch's Hessian of relative error ``eps ~ sqrt(p / m)`` the first steps
    contract ``lambda^2`` as sketched Newton steps do, by ``~eps^2``; BFGS's updates
    then learn what the sketch missed. Where the objective has the rows at hand
    (``line_derivatives``), each step's length is the exact minimum along the line
    (Newton in ``t`` on the rows' derivatives along ``eta + t X d``, no pass over X):
    one ``X d`` and one ``X^T g`` pass a step, the pair of exact line search that
    makes BFGS conjugate gradients on a quadratic (Nocedal & Wright 2006, §6.1):
    measured at 200,000 x 400, 9 steps instead of 13 from a 32,768-row sketch. Elsewhere
    (Dask) the fused step with Armijo backtracking, one pass.
    """
    # Its linear algebra (the inverse, BLAS level 2 in the loop) on one BLAS thread:
    # threaded, the inverse took 1.6 s at p = 401 on a busy two-core machine, and
    # an update 40 ms at p = 1001 (small_blas keeps threads from p = 1000).
    with one_blas_thread():
        B = _inverse(start)
    if B is None:
        return None
    B = np.asfortranarray(B)
    history = [f]
    exact = objective.line_derivatives(eta, eta) is not None  # (rows at hand: no pass)
    converged, message = False, "maximum number of iterations reached"
    d: np.ndarray | None = None
    Xd: Eta | None = None
    n_steps, previous = 0, 0.0  # (the decrement before: none yet)
    for n_steps in range(1, max_steps + 1):
        with one_blas_thread():
            d = blas.dsymv(-1.0, B, g)
        decrement2 = float(-g @ d) / unit
        if not (np.isfinite(decrement2) and decrement2 > 0.0):
            message = "non-finite BFGS step"
            break
        below_rounding = decrement2 / 2 <= _rounding_level(f, unit) / unit
        # The last step: within the tolerance, or where the contraction of the step
        # before (BFGS's is linear where the updates have not yet learnt the whole
        # metric) promises the next step lands there (one step fewer).
        contraction = min(1.0, decrement2 / previous) if previous > 0.0 else 1.0
        previous = decrement2
        if decrement2 / 2 <= threshold or contraction * decrement2 / 2 <= threshold:
            # Converged: the last, full step (no search: f would change below its rounding).
            trial = objective.advance(theta, eta, d, None)
            assert trial.grad is not None
            theta, eta, f, g, Xd = theta + d, trial.eta, trial.f, trial.grad, trial.Xd
            history.append(f)
            converged, message = True, "converged"
            break
        if exact:
            Xd = objective.linear_predictor(d)
            t, eta_t, f_t = _line_minimum(objective, theta, eta, f, -decrement2 * unit, d, Xd,
                                          below_rounding)
            if t is None:
                converged = below_rounding
                message = "converged" if converged else "line search failed"
                break
            s, theta, eta, f = t * d, theta + t * d, eta_t, f_t
            g_new = objective.value_grad(theta, eta)[1]
        elif below_rounding:  # (a line search would judge rounding noise)
            trial = objective.advance(theta, eta, d, None)
            assert trial.grad is not None
            s, theta, eta, f, g_new, Xd = d, theta + d, trial.eta, trial.f, trial.grad, trial.Xd
        else:
            step = take_step(objective, theta, eta, f, -decrement2 * unit, d, None)
            if step.t is None:
                message = "line search failed"
                break
            s, theta, eta, f, Xd = step.theta - theta, step.theta, step.eta, step.f, step.Xd
            g_new = step.grad if step.grad is not None else objective.value_grad(theta, eta)[1]
        history.append(f)
        with one_blas_thread():
            B = _bfgs_update(B, s, g_new - g)
        g = g_new
    return Secant(theta, eta, f, g, B, history, n_steps, converged, message, d, Xd)


def _line_minimum(objective: Objective[Eta], theta: np.ndarray, eta: Eta, f: float,
                  slope: float, d: np.ndarray, Xd: Eta, below_rounding: bool
                  ) -> tuple[float | None, Eta, float]:
    """``(t, eta + t Xd, f there)`` at the minimum of ``f`` along ``theta + t d``: Newton
    in ``t`` from the full step on the rows' derivatives (and the penalty's, quadratic
    along a line where Gaussian), checked by Armijo's test (Armijo backtracking where
    it fails); ``t`` None where no step decreases ``f``. Below ``f``'s rounding the
    derivatives' minimum is taken as it is: values there are noise."""
    penalty = objective.penalty
    slope_penalty = float(penalty.gradient(theta) @ d)
    curvature_penalty = float(d @ penalty.hessp(theta, d))
    t = 1.0
    for _ in range(_LINE_NEWTON):
        found = objective.line_derivatives(t * Xd + eta, Xd)
        if found is None:
            break
        first = found[0] + slope_penalty + t * curvature_penalty
        second = found[1] + curvature_penalty
        if not (np.isfinite(first) and second > 0.0):
            t = 1.0
            break
        step = -first / second
        t = min(max(t + step, 0.25 * t), 4.0 * t)  # (a safeguarded Newton step in t)
        if abs(step) <= _LINE_RTOL * t:
            break
    eta_t = t * Xd + eta
    f_t = objective.value(theta + t * d, eta_t)
    if below_rounding or (np.isfinite(f_t) and f_t <= f + _ARMIJO * t * slope):
        return t, eta_t, f_t
    found_t, f_new, eta_new = backtrack(objective, theta, eta, f, slope, d, Xd, 1.0)
    return found_t, eta_new, f_new


def _inverse(H: np.ndarray) -> np.ndarray | None:
    """``H^-1`` by an equilibrated Cholesky factor (None where ``H`` is singular)."""
    factored = equilibrated_cholesky(np.asarray(H, dtype=np.float64))
    return None if factored is None else inverse_from_equilibrated(*factored)


def _bfgs_update(B: np.ndarray, s: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The BFGS update of the inverse Hessian estimate ``B`` for the step ``s`` and
    gradient change ``y``: ``(I - r s y^T) B (I - r y s^T) + r s s^T``, ``r = 1 / y^T s``,
    in rank-one terms (O(p^2)). ``B``: its upper triangle (Fortran order) holds the
    estimate, updated in place. Kept as it is where ``y^T s`` is lost in rounding."""
    sy = float(s @ y)
    if not sy > 1e-12 * np.sqrt(float(s @ s) * float(y @ y)):
        return B
    r = 1.0 / sy
    # On one BLAS thread (small_blas): threaded level-2 BLAS waits on its threads'
    # barriers, and on a busy two-core machine each wait can be a time slice
    # (measured at p = 110: 16 ms a update on two threads, 11 us on one).
    with small_blas(B.shape[0]):
        By = blas.dsymv(1.0, B, y)
        # c s s^T - r (s By^T + By s^T) = s v^T + v s^T with v = c/2 s - r By: one
        # symmetric rank-two update.
        v = (0.5 * (r * r * float(y @ By) + r)) * s - r * By
        return blas.dsyr2(1.0, s, v, a=B, overwrite_a=1)
