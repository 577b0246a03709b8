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
"""
from dataclasses import dataclass
from typing import Generic

import numpy as np
from scipy.linalg import blas

from ..blocks import small_blas
from ..linalg import equilibrated_cholesky, inverse_from_equilibrated
from ..model.contract import Eta, Objective
from .steps import evaluate, take_step

__all__ = ["Opening", "secant_opening"]

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
        factored = equilibrated_cholesky(H0)
        if factored is None:  # singular: the exact phase's data-span solve takes over
            return Opening(theta, eta, f, g, H0, history, 0)
        B = inverse_from_equilibrated(*factored)
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
