"""Least squares with a q-norm penalty, solved on the Gram matrix.

Each output column minimises

    f(w) = 1/2 w^T G w - c^T w + alpha/2 sum_j |w_j|^q

(``G = Phi^T Phi``, ``c = Phi^T t``: Bishop's (2006) ``E_D(w) + lambda E_W(w)``
with the regulariser of §3.1.4 eq. 3.29, up to the constant ``t^T t / 2``).
Only D x D quantities are touched, so a solve costs nothing next to the
pass that built ``G``.

* ``q = 1`` (lasso): cyclic coordinate descent, then an exact solve on the
  active set, accepted when it satisfies the optimality conditions.
* ``q < 2``: majorise-minimise (Hunter & Lange 2004). ``|w|^q = (w^2)^{q/2}`` is concave in ``w^2``,
  so its tangent at the current ``w0`` bounds it from above:
  ``|w|^q <= |w0|^q + q/2 |w0|^{q-2} (w^2 - w0^2)``. Minimising the bound is a
  ridge problem with per-coefficient precisions ``alpha q/2 |w0|^{q-2}``
  (iteratively reweighted least squares); solved in the variables
  ``v = |w0|^{(q-2)/2} w`` it never divides by a zero coefficient. Each step
  cannot increase ``f`` (the bound touches ``f`` at ``w0`` and lies above it),
  so ``f`` converges; for ``q >= 1`` ``f`` is convex and the limit is the
  minimum, for ``q < 1`` a stationary point (zeros stay zero; coefficients
  that have shrunk below 1e-12 of the largest are set to exactly zero).
* ``q > 2``: ``f`` is convex and twice differentiable: damped Newton with a
  backtracking (Armijo) line search (the solvers' shared one,
  :func:`~problin._core.solvers.steps.armijo`), which converges to the minimum.
"""
from collections.abc import Callable

import numpy as np

from ..moments.lstsq import solve_normal_equations
from .steps import armijo

__all__ = ["lq_objective", "lasso_gram", "lq_gram"]

# Halvings of the Newton step before it is given up (a step of 2^-60 changes
# nothing representable in w).
_MAX_HALVINGS = 60
# Newton steps polishing MM's answer for 1 < q < 2 (quadratic: 2-4 suffice).
_POLISH_STEPS = 8

# One scheme's update: (G, c, w, alpha, q, f(w)) -> the next w.
_Update = Callable[[np.ndarray, np.ndarray, np.ndarray, float, float, float], np.ndarray]


def lq_objective(G: np.ndarray, c: np.ndarray, w: np.ndarray, alpha: float, q: float) -> float:
    """``f(w)`` above for one output."""
    return 0.5 * float(w @ G @ w) - float(c @ w) + 0.5 * alpha * float(np.sum(np.abs(w) ** q))


def lasso_gram(G: np.ndarray, c: np.ndarray, alpha: float, *, tol: float = 1e-10,
               max_iter: int = 10000) -> tuple[np.ndarray, int, bool]:
    """Minimise ``f`` with ``q = 1``; returns ``(w, n_sweeps, converged)``."""
    G = np.asarray(G, dtype=np.float64)
    penalty = 0.5 * alpha
    diag = np.diag(G).copy()
    w = np.zeros_like(c)
    r = np.array(c, dtype=np.float64)  # r = c - G w
    free = np.flatnonzero(diag > 0)  # constant columns keep w_j = 0
    scale = np.sqrt(np.where(diag > 0, diag, 0.0))
    converged = False
    for sweep in range(1, max_iter + 1):
        biggest = 0.0
        for j in free:
            rho = r[j] + diag[j] * w[j]
            new = np.sign(rho) * max(abs(rho) - penalty, 0.0) / diag[j]
            delta = new - w[j]
            if delta != 0.0:
                r -= delta * G[j]
                w[j] = new
                biggest = max(biggest, abs(delta) * scale[j])
        if biggest <= tol * (1.0 + float(np.max(np.abs(w) * scale, initial=0.0))):
            converged = True
            break
    return _polish_active_set(G, c, w, penalty), sweep, converged


def _polish_active_set(G: np.ndarray, c: np.ndarray, w: np.ndarray,
                       penalty: float) -> np.ndarray:
    """Solve exactly on the active set; keep the result if it meets the KKT conditions."""
    active = np.flatnonzero(w != 0)
    if active.size == 0:
        return w
    sign = np.sign(w[active])
    exact, rank = solve_normal_equations(G[np.ix_(active, active)], c[active] - penalty * sign)
    if rank < active.size or np.any(np.sign(exact) != sign):
        return w
    trial = np.zeros_like(w)
    trial[active] = exact
    slack = np.abs(c - G @ trial)
    slack[active] = 0.0
    if np.all(slack <= penalty * (1.0 + 1e-9)):
        return trial
    return w


def lq_gram(G: np.ndarray, c: np.ndarray, alpha: float, q: float, *, tol: float = 1e-10,
            max_iter: int = 1000) -> tuple[np.ndarray, int, bool]:
    """Minimise ``f`` for ``q`` not 1 or 2; returns ``(w, n_iter, converged)``."""
    G = np.asarray(G, dtype=np.float64)
    w, _ = solve_normal_equations(G, c, alpha)  # the ridge solution starts both schemes
    step: _Update = _newton_step if q > 2 else _mm_step
    f = lq_objective(G, c, w, alpha, q)
    for it in range(1, max_iter + 1):
        w_new = step(G, c, w, alpha, q, f)
        f_new = lq_objective(G, c, w_new, alpha, q)
        move = w_new - w
        w, f_old, f = w_new, f, min(f, f_new)
        # Both tests in the unit of the fit, |X w|^2 = w^T G w: a move of the fitted
        # values, or a decrease of f, below tol^2 of it. (Floors of 1 made them depend
        # on the units of y: y * 1e-8 stopped 2.5e-3 short, without a warning.)
        unit = tol * tol * max(float(w @ G @ w), 0.0)
        if float(move @ G @ move) <= unit or f_old - f_new <= unit:
            return _snap(_polish(G, c, w, alpha, q, tol) if 1 < q < 2 else w, q), it, True
    return _snap(w, q), max_iter, False


def _polish(G: np.ndarray, c: np.ndarray, w: np.ndarray, alpha: float, q: float,
            tol: float) -> np.ndarray:
    """Newton steps on the coefficients MM left nonzero (``f`` is smooth and convex
    there, 1 < q < 2): MM converges linearly, slowest on coefficients that matter
    least to the fit (3e-5 relative on a shrunk one when the fit had converged to
    1e-10); a few quadratic steps take each coefficient to ``tol``."""
    live = np.flatnonzero(w != 0)
    if not live.size:
        return w
    G_l, c_l, v = G[np.ix_(live, live)], c[live], w[live].copy()
    f = lq_objective(G_l, c_l, v, alpha, q)
    for _ in range(_POLISH_STEPS):
        v_new = _newton_step(G_l, c_l, v, alpha, q, f)
        if not np.all(np.isfinite(v_new)) or np.any(np.sign(v_new) != np.sign(v)):
            break  # (a coefficient crossing 0 leaves the smooth part: MM's answer stands)
        done = np.all(np.abs(v_new - v) <= tol * np.abs(v_new))
        v, f = v_new, lq_objective(G_l, c_l, v_new, alpha, q)
        if done:
            break
    out = w.copy()
    out[live] = v
    return out


def _snap(w: np.ndarray, q: float) -> np.ndarray:
    """For q < 1 the minimiser has exact zeros, which MM only approaches geometrically."""
    if q < 1:
        w = np.where(np.abs(w) <= 1e-12 * np.max(np.abs(w), initial=0.0), 0.0, w)
    return w


def _mm_step(G: np.ndarray, c: np.ndarray, w: np.ndarray, alpha: float, q: float,
             f: float) -> np.ndarray:
    """Minimise the quadratic majoriser at ``w`` (in the variables ``v``)."""
    root = np.abs(w) ** (1.0 - 0.5 * q)  # Lambda^{1/2}, Lambda = |w|^{2-q}
    A = G * np.outer(root, root)
    v, _ = solve_normal_equations(A, root * c, 0.5 * alpha * q)
    return root * v


def _newton_step(G: np.ndarray, c: np.ndarray, w: np.ndarray, alpha: float, q: float,
                 f: float) -> np.ndarray:
    """One damped Newton step on the smooth convex ``f`` (q > 2), Armijo-backtracked."""
    a = np.abs(w)
    grad = G @ w - c + 0.5 * alpha * q * np.sign(w) * a ** (q - 1.0)
    H = G + np.diag(0.5 * alpha * q * (q - 1.0) * a ** (q - 2.0))
    direction, _ = solve_normal_equations(H, -grad)
    slope = float(grad @ direction)
    found = armijo(lambda t: lq_objective(G, c, w + t * direction, alpha, q), f, slope,
                   max_halvings=_MAX_HALVINGS)
    return w if found is None else w + found[0] * direction
