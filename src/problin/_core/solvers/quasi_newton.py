"""Hessian-free fitting for wide or sparse data: L-BFGS in standardised coordinates.

When the p x p Hessian is too large to build or factor (a 50,000-word
vocabulary gives p = 50,001), the objective is minimised by L-BFGS using
only ``f`` and its gradient, each one ``X w`` and one ``X^T v`` pass over the
data (sparse input stays sparse). The problem is solved for the standardised
coefficients ``u`` with ``theta = T u`` (see :class:`~problin._core.solvers.ascent.Standardiser`),
which is what makes a first-order method converge in tens rather than
thousands of iterations on raw features of very different scales.

The two-loop recursion (Nocedal & Wright 2006, Algorithm 7.4) runs here in numpy
over ``m`` stored pairs, not in scipy's L-BFGS-B: its bound-constrained machinery
costs ~1.5 us per parameter and iteration even without bounds (measured with
scipy 1.17: 135 ms an iteration at p = 60,000), which made the solver's own work
dominate a sparse softmax fit (10 of 13 s at 3,000 x 3,000, K = 20), where the
recursion costs ``4 m p`` flops. The step is searched along ``eta + t X d``
(Armijo backtracking on the cached linear predictor, :func:`~.steps.backtrack`):
one forward and one backward pass an iteration. Stored pairs are the memory the
fit needs beyond the data: :func:`lbfgs_memory` states it, and :func:`history_size`
chooses how many pairs fit (fewer, down to :data:`MIN_PAIRS`, where memory is short).

Stopping rule: ``max |T^T grad f| <= tol * sqrt(n) * mean weight`` (``sqrt(n)`` for
unit weights), the same test as the other first-order solvers (a few ``tol``
standard errors; :func:`~.steps.gradient_unit`).
"""
import math
from collections.abc import Callable

import numpy as np

from ..blocks import one_blas_thread
from ..model.contract import Eta, Objective
from .ascent import Standardiser, _gradient_small
from .steps import SolverResult, _rounding_level, backtrack, gradient_unit, require_smooth

__all__ = ["lbfgs", "lbfgs_memory", "history_size", "MAX_PAIRS", "MIN_PAIRS"]

MAX_PAIRS = 20  # stored curvature pairs: more pairs, fewer passes over X
MIN_PAIRS = 3  # fewer than this and L-BFGS is little better than gradient descent
# Parameter-sized float64 arrays alive at once besides the pairs: theta, its
# gradient, the gradient and direction in u, the direction in theta, the trial
# point, the prior's two terms, and the design's products (the gradient's X^T G
# with its intercept row stacked on, the coefficients' transposed copy for X W).
_VECTORS = 12
# Row arrays (n x M float64) alive at once: eta, X d, the trial eta, the
# probabilities and the gradient weights of the softmax state.
_ROW_ARRAYS = 5


def lbfgs_memory(n_params: int, n_rows: int, n_blocks: int, pairs: int = MAX_PAIRS) -> int:
    """Bytes an L-BFGS fit allocates beyond its data: the ``2 m p`` pairs, the
    parameter-sized vectors and the n x M row arrays (float64)."""
    return 8 * ((2 * pairs + _VECTORS) * n_params + _ROW_ARRAYS * n_rows * n_blocks)


def history_size(n_params: int, n_rows: int, n_blocks: int, budget: float) -> int | None:
    """The most pairs (at most :data:`MAX_PAIRS`) whose fit needs at most ``budget``
    bytes; None when even :data:`MIN_PAIRS` do not fit."""
    fixed = lbfgs_memory(n_params, n_rows, n_blocks, 0)
    pairs = min(MAX_PAIRS, int((budget - fixed) // (16 * max(n_params, 1))))
    return pairs if pairs >= MIN_PAIRS else None


def lbfgs(objective: Objective[Eta], theta0: np.ndarray, *, max_iter: int = 1000,
          tol: float = 1e-8, pairs: int = MAX_PAIRS) -> SolverResult[Eta]:
    """Minimise ``objective`` by L-BFGS with ``pairs`` stored curvature pairs."""
    require_smooth(objective, "L-BFGS")
    theta = np.array(theta0, dtype=np.float64)
    eta = objective.linear_predictor(theta)
    f, grad = objective.value_grad(theta, eta)
    curvature = _block_curvature(objective, eta)
    T = Standardiser(objective, curvature)
    H0 = _start_inverse(objective, theta, T)
    gu = T.apply_transpose(grad)
    history = [f]
    pairs_ = _Pairs(theta.size, pairs, H0)
    # In these coordinates the Hessian's diagonal is about each block's summed
    # curvature: the first step's scale, before any pair.
    gamma = 1.0 / float(np.max(curvature))
    limit = tol * gradient_unit(objective)
    converged, message, n_iter = False, "maximum number of iterations reached", 0
    recentred = False
    for n_iter in range(1, max_iter + 1):
        if float(np.max(np.abs(gu), initial=0.0)) <= limit:
            converged, message, n_iter = True, "converged", n_iter - 1
            break
        du = pairs_.direction(gu, gamma)
        slope = float(gu @ du)
        if not slope < 0.0:  # rounding spoilt the pairs: restart from the gradient
            pairs_.clear()
            du = -gamma * gu if H0 is None else -H0(gu)
            slope = float(gu @ du)
        d = T.apply(du)
        step = _search(objective, theta, eta, f, slope, d, T, float(np.max(np.abs(gu))))
        if step is None and not recentred:
            # Stalled on rounding: the flat directions of all K softmax blocks (a
            # shift of every block alike, seen by the prior alone, ~alpha against the
            # data's ~c W) are what is left; recentre solves them exactly (measured:
            # the gradient stalled at twice the test, all of it there).
            centred = objective.recentre(theta)
            if centred is not theta:
                theta, recentred = centred, True
                eta = objective.linear_predictor(theta)
                f, grad = objective.value_grad(theta, eta)
                gu = T.apply_transpose(grad)
                pairs_.clear()
                continue
        if step is None:  # no decrease left: rounding level reached
            converged = _gradient_small(objective, T, grad, math.sqrt(tol))
            message = "converged at rounding level" if converged else "line search failed"
            n_iter -= 1
            break
        t, eta, f, grad = step
        recentred = False
        theta += t * d
        gu_new = T.apply_transpose(grad)
        du *= t
        gu -= gu_new  # minus y, without another p-vector
        gu *= -1.0
        sy = float(du @ gu)
        if sy > _EPS * float(gu @ gu):  # curvature: keep the pair (else skip it)
            gamma = sy / float(gu @ gu)
            pairs_.push(du, gu, sy)
        gu = gu_new
        history.append(f)
    # eta was carried along X d: recomputed once, so the answer's f and gradient are exact.
    eta = objective.linear_predictor(theta)
    f, grad = objective.value_grad(theta, eta)
    return SolverResult(theta=theta, eta=eta, value=f, n_iter=n_iter, converged=converged,
                        history=history, message=message, grad=grad)


_EPS = float(np.finfo(np.float64).eps)
_ARMIJO = 1e-4  # c_1, as steps.armijo's


def _start_inverse(objective: Objective[Eta], theta: np.ndarray, T: Standardiser
                   ) -> Callable[[np.ndarray], np.ndarray] | None:
    """The inverse Hessian at the start, in u (``T^-1 H^-1 T^-T``), where every row
    has the start's curvature and the objective offers it (softmax with few
    features a class: ``start_curvature.start_preconditioner``); None otherwise,
    and L-BFGS starts from a multiple of the identity."""
    if not objective.shared_curvature(theta):
        return None
    inverse = objective.start_preconditioner(theta)
    if inverse is None:
        return None

    def apply(gu: np.ndarray) -> np.ndarray:
        return T.solve(inverse(T.solve_transpose(gu)))

    return apply


def _block_curvature(objective: Objective[Eta], eta: Eta) -> np.ndarray:
    """Each parameter block's summed row curvature at the start (``sum_i s_i h_ik``,
    the intercept's diagonal Hessian entry): no pass over X. Where the rows are
    not at hand (Dask), the logit's largest, a quarter of the total weight."""
    together = objective.block_curvatures(eta)
    if together is not None:
        return np.maximum(together, _EPS * objective.total_weight)
    ones = np.ones(objective.design.n_samples)
    try:
        c = [objective.coordinate_derivatives(eta, ones, k)[1] for k in range(objective.n_blocks)]
    except NotImplementedError:
        return np.full(objective.n_blocks, objective.total_weight / 4.0)
    return np.maximum(np.asarray(c), _EPS * objective.total_weight)


def _search(objective: Objective[Eta], theta: np.ndarray, eta: Eta, f: float, slope: float,
            d: np.ndarray, T: Standardiser, g_max: float
            ) -> tuple[float, Eta, float, np.ndarray] | None:
    """``(t, eta, f, gradient)`` at an Armijo step along ``d``; None without a decrease.

    The full step, which L-BFGS's scaling makes the usual one, is evaluated with its
    gradient (one pass on Dask, where a value alone would be a pass too); shorter
    ones by backtracking on ``eta + t X d`` (eta is linear in theta), the gradient
    then formed at the step found. Near the optimum ``f`` changes by less than its
    rounding (the gradient test asks for ``tol`` standard errors, a change of ``f``
    ~``tol^2``): there a full step that leaves ``f`` equal to rounding and shrinks
    the gradient is taken (an approximate Wolfe condition, Hager & Zhang 2005),
    where the Armijo test alone stopped ~1e-4 relative short of the optimum."""
    Xd = objective.linear_predictor(d)
    eta_full = Xd + eta
    f_full, grad = objective.value_grad(theta + d, eta_full)
    if math.isfinite(f_full) and f_full <= f + _ARMIJO * slope and f_full < f:
        return 1.0, eta_full, f_full, grad
    if abs(f_full - f) <= _rounding_level(f) and \
            float(np.max(np.abs(T.apply_transpose(grad)))) < g_max:
        return 1.0, eta_full, f_full, grad
    t, f_new, eta_new = backtrack(objective, theta, eta, f, slope, d, Xd, 0.5)
    if t is None or not f_new < f:
        return None
    f_new, grad = objective.value_grad(theta + t * d, eta_new)
    return t, eta_new, f_new, grad


class _Pairs:
    """The stored pairs ``(s, y)`` in a ring of ``m`` rows, allocated once."""

    def __init__(self, p: int, m: int,
                 H0: Callable[[np.ndarray], np.ndarray] | None = None) -> None:
        self.H0 = H0
        self.S = np.empty((m, p))
        self.Y = np.empty((m, p))
        self.rho = np.zeros(m)
        self.m, self.count, self.head = m, 0, 0

    def clear(self) -> None:
        self.count = 0

    def push(self, s: np.ndarray, y: np.ndarray, sy: float) -> None:
        self.S[self.head] = s
        self.Y[self.head] = y
        self.rho[self.head] = 1.0 / sy
        self.head = (self.head + 1) % self.m
        self.count = min(self.count + 1, self.m)

    def direction(self, g: np.ndarray, gamma: float) -> np.ndarray:
        """``-H g`` by the two-loop recursion, ``H_0 = gamma I``."""
        q = g.copy()
        order = [(self.head - 1 - i) % self.m for i in range(self.count)]  # newest first
        a = np.empty(self.count)
        # The recursion's products are level-1 BLAS (a dot product a pair), on one
        # thread: threaded dot products of p ~ 20,000 waited on thread barriers, ~0.1 s a
        # direction on a busy two-core machine against 0.6 ms on one thread.
        with one_blas_thread():
            for i, j in enumerate(order):
                a[i] = self.rho[j] * float(self.S[j] @ q)
                q -= a[i] * self.Y[j]
        if self.H0 is None:
            q *= gamma
        else:
            q = self.H0(q)  # (its batched solves keep BLAS's threads)
        with one_blas_thread():
            for i in range(self.count - 1, -1, -1):
                j = order[i]
                b = self.rho[j] * float(self.Y[j] @ q)
                q += (a[i] - b) * self.S[j]
        q *= -1.0
        return q
