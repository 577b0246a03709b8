"""First-order solvers of the seeds: gradient ascent and one coefficient at a time.

Both maximise the log-likelihood (minimise the objective ``f``) and reach the
optimum of the Newton engine, only more slowly. Both work in *standardised
coordinates* ``theta = T u`` (features centred and scaled, the intercept
absorbing the centring): the same model, but a far better conditioned
problem, so that plain gradient steps converge in a reasonable number of
iterations. Stopping rule: ``max |T^T grad f| <= tol * sqrt(sum(weights))``.
In standardised coordinates the Hessian is about ``c W`` (``W`` the total
weight, ``c`` the mean curvature, ~0.1-0.25) and a standard error about
``1 / sqrt(c W)``, so the rule bounds the distance to the optimum by a few
``tol`` standard errors: the same scale as the Newton engine's decrement test.
"""
import numpy as np

from .newton import SolverResult, backtrack

__all__ = ["standardising_map", "gradient_descent", "coordinate_descent"]


def standardising_map(design):
    """Matrix ``T`` with ``theta = T u``: ``u`` are coefficients on standardised columns."""
    mean, std = design.column_moments()
    scale = np.where(std > 0, 1.0 / np.where(std > 0, std, 1.0), 1.0)
    if not design.intercept:
        return np.diag(scale)
    p = design.n_params
    T = np.zeros((p, p))
    T[0, 0] = 1.0
    T[1:, 1:] = np.diag(scale)
    T[0, 1:] = -mean * scale  # centring moves into the intercept
    return T


def _gradient_small(objective, T, grad, tol):
    return float(np.max(np.abs(T.T @ grad), initial=0.0)) <= tol * np.sqrt(objective.total_weight)


def gradient_descent(objective, theta0, *, max_iter=10000, tol=1e-8):
    """Gradient descent on ``f`` (gradient ascent on the log-likelihood).

    Steps ``theta <- theta - t T T^T grad f`` with a Barzilai-Borwein trial
    step ``t`` and Armijo backtracking; each iteration is one ``X^T v`` and
    one ``X v`` pass.
    """
    T = standardising_map(objective.design)
    theta = np.array(theta0, dtype=np.float64)
    eta = objective.linear_predictor(theta)
    f, grad = objective.value_grad(theta, eta)
    history, converged, message = [f], False, "maximum number of iterations reached"
    step, prev = 1.0 / max(objective.total_weight, 1.0), None
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        if _gradient_small(objective, T, grad, tol):
            converged, message, n_iter = True, "converged", n_iter - 1
            break
        gu = T.T @ grad
        if prev is not None:  # Barzilai-Borwein step in u-coordinates
            du, dg = prev[0], gu - prev[1]
            curv = float(du @ dg)
            step = float(du @ du) / curv if curv > 0 else step * 2.0
        d = -T @ gu
        t, f_new, eta_new = backtrack(objective, theta, eta, f, float(grad @ d), d,
                                      objective.design.matvec(d), step)
        if t is None:
            converged = _gradient_small(objective, T, grad, np.sqrt(tol))
            message = "line search failed at rounding level"
            break
        prev = (-t * gu, gu)
        theta, eta, f = theta + t * d, eta_new, f_new
        f, grad = objective.value_grad(theta, eta)
        history.append(f)
    return SolverResult(theta=theta, eta=eta, value=f, n_iter=n_iter, converged=converged,
                        history=history, message=message, grad=grad)


def coordinate_descent(objective, theta0, *, max_iter=1000, tol=1e-8):
    """Cyclic coordinate descent: one coefficient at a time (the seeds' variant).

    Each coordinate takes an exact one-dimensional Newton step along its
    standardised column ``c_j = [1, X] T e_j`` (backtracked until ``f``
    decreases). ``max_iter`` counts sweeps over all coefficients.
    """
    design = objective.design
    T = standardising_map(design)
    theta = np.array(theta0, dtype=np.float64)
    eta = objective.linear_predictor(theta)
    f, grad = objective.value_grad(theta, eta)
    history, converged, message = [f], False, "maximum number of iterations reached"
    P = objective.P
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        if _gradient_small(objective, T, grad, tol):
            converged, message, n_iter = True, "converged", n_iter - 1
            break
        for j in range(objective.n_params):
            v = T[:, j]  # direction in theta-space
            c = design.column(j) * T[j, j]  # the standardised column [1, X] T e_j
            if design.intercept and j > 0:
                c += T[0, j]
            _, g, h = objective.row_derivatives(eta)
            slope = float(c @ g)
            curv = float(h @ np.square(c))
            if P is not None:
                slope += float(v @ (P @ (theta - objective.m)))
                curv += float(v @ P @ v)
            if curv <= 0 or slope == 0.0:
                continue
            delta = -slope / curv
            t, f_new, eta_new = backtrack(objective, theta, eta, f, slope * delta,
                                          delta * v, delta * c)
            if t is not None:
                theta, eta, f = theta + t * delta * v, eta_new, f_new
        f, grad = objective.value_grad(theta, eta)
        history.append(f)
    return SolverResult(theta=theta, eta=eta, value=f, n_iter=n_iter, converged=converged,
                        history=history, message=message, grad=grad)
