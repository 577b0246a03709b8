"""The one damped Newton / IRLS engine.

Each iteration reads like the algorithm (the seeds' IRLS update
``w <- w - (Phi^T R Phi + P)^-1 (Phi^T (y - t) + P w)``):

    Cholesky solve (within the span of the data where the Hessian is
    singular) -> Newton decrement test -> full step, fused with the next
    gradient and Hessian (one pass over X) -> backtracking on the cached
    eta if the full step does not decrease f enough.

An iteration reads X once where the objective fuses the step (see
``steps.take_step``); backtracking trial points move ``eta`` along ``X d``
without further passes. Convergence is declared when
half the squared Newton decrement ``lambda^2 / 2 = -g^T d / 2`` (an
affine-invariant estimate of ``f - f*``, i.e. of the distance to the optimum
in standard-error units) falls below ``tol``; the final Newton step is then
taken, which squares the remaining error. When the curvature is not the
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
"""
import numpy as np
from scipy.linalg import cho_factor, cho_solve, solve_triangular

from ..blocks import ELEMENTWISE_ROWS, reduce_row_ranges, small_blas
from ..linalg import solve_psd
from .steps import SolverResult, _rounding_level, backtrack, evaluate, take_step
from .truncated_newton import truncated_newton

__all__ = ["SolverResult", "newton", "backtrack", "sketch_rows"]

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


def _hessian_change(objective, eta_old, eta_new, H):
    """A bound on ``max_v |v^T (H_new - H) v| / v^T H v``: how far the Hessian
    ``H`` in hand (built at ``eta_old``) is from the one at ``eta_new``, in
    its own metric; inf when the objective has no per-row curvature (softmax).

    With ``r_i = |h_i(new) - h_i(old)| / h_i(old)``, rows with ``r_i <= c``
    contribute at most ``c`` and the few rows ``L`` above it at most
    ``trace(H^-1 sum_L |dh_i| x_i x_i^T) = sum_L |dh_i| x_i^T H^-1 x_i``. A
    final Newton step moves the curvature of tail rows, where ``h`` is tiny
    and ``|h' / h|`` large, by relatively much more than that of the others:
    the plain ``max_i r_i`` would condemn a Hessian these rows barely shape.
    """
    if hasattr(objective, "hessian_change"):  # Dask: the same bound, one distributed pass
        return objective.hessian_change(eta_old, eta_new, H, _HESSIAN_RTOL / 4)
    if np.ndim(eta_old) != 1 or not hasattr(objective, "row_derivatives"):
        return np.inf
    h_old = objective.row_derivatives(eta_old)[2]
    h_new = objective.row_derivatives(eta_new)[2]
    cut = _HESSIAN_RTOL / 4

    def rows_above(lo, hi):  # |dh_i| > cut h_i (also h_i = 0 < |dh_i|)
        change = np.abs(h_new[lo:hi] - h_old[lo:hi])
        return [np.flatnonzero(~(change <= cut * h_old[lo:hi])) + lo]

    above = np.concatenate(reduce_row_ranges(rows_above, h_old.size, ELEMENTWISE_ROWS))
    if above.size == 0:
        return cut
    change = np.abs(h_new[above] - h_old[above])
    if above.size > max(1000, h_old.size // 16):
        return np.inf  # as costly as building the Hessian anew
    try:
        with small_blas(H.shape[0]):
            chol = cho_factor(H, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        return np.inf
    Z = solve_triangular(chol[0], objective.design.dense_rows(above).T, lower=True,
                         check_finite=False)
    leverage = np.einsum("ij,ij->j", Z, Z)  # x_i^T H^-1 x_i
    return cut + float(change @ leverage)


def _step_without_search(objective, theta, eta, d):
    """The full step ``theta + d`` with the double-precision Hessian there:
    ``(f, g, H, theta, eta, Xd)`` (one fused pass where the objective has one)."""
    if hasattr(objective, "advance"):
        eta, f, g, H = objective.advance(theta, eta, d, "double")
        return f, g, H, theta + d, eta, None
    Xd = objective.linear_predictor(d)
    theta, eta = theta + d, eta + Xd
    f, g, H = objective.value_grad_hess(theta, eta)
    return f, g, H, theta, eta, Xd


def sketch_rows(n_samples, n_params, random_state=0):
    """Sorted random rows for a Hessian sketch, or None when the data are too few.

    ``m`` rows make one sketched Hessian cost about ``m p^2 / 2 = 2.5e7``
    multiply-adds (measured: larger sketches contract a little more per step
    but cost more in the warm start than they save), with at least ``20 p``
    rows (relative error of the sketch ``~ sqrt(p / m) <= 0.22``) and 10,000;
    sketching pays only when n is well above m.
    """
    m = int(min(max(5e7 / n_params**2, 20 * n_params, 10_000), n_samples))
    if n_samples < 8 * m:
        return None
    rng = np.random.default_rng(random_state)
    return np.sort(rng.choice(n_samples, size=m, replace=False))


def _sketched_phase(objective, sketch, theta, n_steps):
    """Newton steps with exact gradients and the sketch's Hessian (float32).

    Each contracts the error by about the sketch's relative error
    (``~ sqrt(p / m)``) for the price of a gradient. Returns
    ``(theta, eta, f, g, H, history)``: the point after the last step with
    its gradient and the full float32 Hessian that the exact phase starts
    from (formed in the last step's pass).
    """
    eta, f, g, H = evaluate(objective, theta, "single" if n_steps == 0 else None)
    history = [f]
    for step_no in range(n_steps):
        Hs = sketch.value_grad_hess(theta, sketch.linear_predictor(theta), single=True)[2]
        step, rank = solve_psd(Hs, g)
        if rank < Hs.shape[0]:
            break  # singular: leave it to the exact phase and its data-span solve
        d = -step
        gram = "single" if step_no == n_steps - 1 else None
        t, theta, eta, f, g, H, _ = take_step(objective, theta, eta, f, float(g @ d), d, gram)
        if t is None:
            break
        history.append(f)
        if g is None:
            f, g = objective.value_grad(theta, eta)
    if H is None:
        f, g, H = objective.value_grad_hess(theta, eta, single=True)
    return theta, eta, f, g, H, history


def newton(objective, theta0, *, max_iter=100, tol=1e-8, final_hessian=True, sketch=None,
           exact_final=True, single=False):
    """Minimise ``objective`` by damped Newton from ``theta0``.

    Parameters
    ----------
    objective : GLMObjective (or anything with the same methods)
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

    Returns
    -------
    SolverResult
    """
    theta = np.array(theta0, dtype=np.float64)
    history, n_sketched, always_single, reuse = [], 0, single, False
    if sketch is not None:
        # 1. Warm start: a rough fit to the sketch rows alone (~m/n of a pass
        #    per iteration); its error is statistical, ~sqrt(n/m) standard errors.
        sub = objective.subsample(sketch)
        n, m = objective.design.n_samples, len(sketch)
        warm_tol = max(_WARM_TOL, _WARM_FRACTION * (n / m - 1) * objective.n_params / 2)
        warm = newton(sub, theta, max_iter=max_iter, tol=warm_tol, final_hessian=False,
                      single=True)
        theta = warm.theta
        # 2. Where even one full Hessian is too costly: truncated Newton.
        if not exact_final:
            # The warm start's last sketch Hessian (one step back) preconditions.
            result = truncated_newton(objective, sub, theta, tol, max_iter, warm.last_hessian)
            if result is not None:
                return result
        # 2'. Else two steps with the sketched Hessian, which remove most of
        #     the warm start's statistical error (~1e-3 of lambda^2 each), then
        theta, eta, f, g, H, history = _sketched_phase(objective, sub, theta, _SKETCH_STEPS)
        n_sketched = len(history) - 1
        # 3. full Hessians, in float32 until Newton's next step is the last,
        #    reused for a step where that costs less than building one anew.
        single = reuse = True
        history = history[:-1] + [f]
    else:
        eta, f, g, H = evaluate(objective, theta, "single" if single else "double")
        history = [f]
    threshold = tol if getattr(objective, "exact_hessian", True) else tol * tol
    converged, message, rank_deficient = False, "maximum number of iterations reached", False
    # fresh: H was built at theta; h_single: H is a float32 product.
    n_iter, basis, d, Xd, fresh, h_single = 0, None, None, None, True, single
    for n_iter in range(1, max_iter + 1):
        if basis is None:
            step, rank = solve_psd(H, g)
            if rank < H.shape[0]:
                rank_deficient = True
                basis = objective.data_range_basis()
        if basis is not None:
            # Newton within the span of the data: components along directions
            # no observation sees stay exactly zero, instead of being rounding
            # errors amplified by a near-zero curvature.
            step = basis @ solve_psd(basis.T @ H @ basis, basis.T @ g)[0]
        d = -step
        decrement2 = float(-g @ d)
        if not np.isfinite(decrement2):
            message, Xd = "non-finite Newton step", None
            break
        if decrement2 / 2 <= threshold:
            # Converged: the last, full Newton step squares the remaining error.
            # No line search: f would change below its own rounding error.
            if (fresh and not h_single) or always_single or not final_hessian:
                # The Hessian in hand (if built in double precision) is the one
                # at the answer, to _HESSIAN_RTOL in its own metric, unless the
                # step changed the curvature by more than that. (Checked before
                # f: the row derivatives at eta_old are still cached.)
                eta_old, Xd = eta, objective.linear_predictor(d)
                theta, eta = theta + d, eta + Xd
                fresh = not h_single and (
                    decrement2 / 2 <= tol * tol or
                    _hessian_change(objective, eta_old, eta, H) <= _HESSIAN_RTOL)
                f = objective.value(theta, eta)
                history.append(f)
                converged, message = True, "converged"
                break
            # A float32 or reused Hessian got us here: the double-precision one
            # is built at the point after this step, already converged, so that
            # the last step from it is tiny and it is the Hessian of the answer.
            f, g, H, theta, eta, Xd = _step_without_search(objective, theta, eta, d)
            history.append(f)
            fresh, h_single = True, False
            continue
        if decrement2 / 2 <= _rounding_level(f):
            # (Only with a non-exact Hessian, converging linearly.) The decrease
            # the step promises is below f's rounding: a line search would judge
            # rounding noise (and so depend on the order of summation, e.g. on
            # chunking). In this regime the full step is the right one.
            f, g, H, theta, eta, Xd = _step_without_search(objective, theta, eta, d)
            history.append(f)
            fresh, h_single = True, False
            continue
        # What the next point needs if the full step is taken: the same Hessian
        # again (a chord step, for the price of a gradient: in the quadratic
        # regime the Hessian moves little over a step) or a new one, in double
        # precision once the next step will be the last (its decrement ~ the
        # square of this one).
        chord = reuse and fresh and decrement2 / 2 <= _LAST_STEP_DECREMENT
        next_single = always_single or (single and decrement2 / 2 > _LAST_STEP_DECREMENT)
        gram = None if chord else ("single" if next_single else "double")
        t, theta, eta, f, g, H_new, Xd = take_step(objective, theta, eta, f, -decrement2, d,
                                                   gram)
        if t is None:
            # No decrease left to find: converged if the predicted decrease
            # is itself at the level of rounding in f.
            converged = decrement2 / 2 <= _rounding_level(f)
            message = "converged" if converged else "line search failed"
            break
        history.append(f)
        if chord and t == 1.0:
            if g is None:
                f, g = objective.value_grad(theta, eta)
            fresh = False
            continue
        single = next_single
        if H_new is None:
            f, g, H_new = objective.value_grad_hess(theta, eta, single=single)
        H, fresh, h_single = H_new, True, single
    at_theta = fresh and not h_single
    last_hessian = H
    if not at_theta:
        if final_hessian:
            f, g, H = objective.value_grad_hess(theta, eta)
        else:
            g = H = None
    return SolverResult(theta=theta, eta=eta, value=f, n_iter=n_sketched + n_iter,
                        converged=converged, history=history, message=message, grad=g,
                        hessian=H, rank_deficient=rank_deficient, direction=d,
                        direction_eta=Xd,
                        last_hessian=last_hessian)
