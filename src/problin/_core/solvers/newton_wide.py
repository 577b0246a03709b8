"""Wide rows: the phase that forms no Hessian of all rows.

From ``SECANT_MIN_PARAMS`` columns of a parameter block a float32 Hessian of all rows
costs about ``p/32`` gradient passes, so with a row sketch the engine forms none
(``_wide_phase``): a warm start by truncated Newton on the sketch's rows, then truncated
Newton on all rows where they are in memory (each conjugate-gradient iteration one fused
Hessian-vector pass, over a float32 copy of X with ``float32_copy``), BFGS on Dask
(:func:`~.secant.secant_solve`, ``_secant_phase``), both preconditioned by the Hessian of
a larger sketch (``_larger_sketch``) at the warm start, to ``lambda`` within
``sqrt(2) tol``. Where the covariance is wanted and affordable, :func:`~.newton.newton`
then forms the double-precision Hessian once at the answer and the exact phase confirms
convergence (:func:`~.newton_exact._confirmed`); this module finds the answer only.
"""
import numpy as np

from ..blocks import one_blas_thread
from ..model.contract import Eta, Objective, Trial
from .newton_sketch import _warm_tol
from .secant import secant_solve
from .steps import SolverResult, evaluate
from .truncated_newton import truncated_newton

__all__ = ["SECANT_MIN_PARAMS"]

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


def _wide_phase(objective: Objective[Eta], sub: Objective[np.ndarray],
                large: Objective[np.ndarray], theta: np.ndarray, m: int, tol: float,
                max_iter: int, unit: float, float32_copy: bool) -> SolverResult[Eta] | None:
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
    leave ``lambda`` within ``sqrt(2) tol``: the answer, without the Hessian there (the
    caller confirms it with one where the covariance is wanted and affordable)."""
    with one_blas_thread():  # (the sketch's factorisations: see newton._warm_start)
        warm = truncated_newton(sub, sub, theta, _warm_tol(objective, m), max_iter, None, unit,
                                single=False)
        if warm is None:
            return None
        start = large.value_grad_hess(warm.theta, large.linear_predictor(warm.theta),
                                      single=True)[2]
    point = evaluate(objective, warm.theta, None)
    if objective.line_derivatives(point.eta, point.eta) is None:  # (rows not at hand)
        return _secant_phase(objective, warm.theta, start, tol, max_iter, unit, point)
    with one_blas_thread():  # (the passes run on their own threads)
        return truncated_newton(objective, large, warm.theta, tol, max_iter, start, unit, point,
                                single=float32_copy)


def _secant_phase(objective: Objective[Eta], theta: np.ndarray, start: np.ndarray, tol: float,
                  max_iter: int, unit: float, point: Trial[Eta]) -> SolverResult[Eta] | None:
    """BFGS from the warm start ``theta``, a sketch's Hessian ``start`` there the first
    inverse estimate (:func:`~.secant.secant_solve`); None where it is singular.

    BFGS's metric is not the Hessian's, and its last step shrinks the error by a
    factor, not to its square: it stops at ``g^T B g / 2 <= tol^2``, the engine's test
    for a Hessian that is not exact (truncated Newton's final step likewise leaves
    ``lambda <= sqrt(2) tol``; measured: ``lambda`` of 4e-6 after stopping at ``tol``,
    ~1e-9 at ``tol^2``, ~4 steps more). Where a covariance is wanted and affordable the
    double-precision Hessian is then formed there, once, and the exact phase confirms
    convergence by the exact Newton decrement, as everywhere else
    (:func:`~.newton_exact._confirmed`: at ``tol^2`` its last step keeps that Hessian as
    the answer's).
    """
    assert point.grad is not None
    threshold = tol * tol
    run = secant_solve(objective, theta, point.eta, point.f, point.grad, start, threshold,
                       max_iter, unit)
    if run is None:
        return None
    return SolverResult(theta=run.theta, eta=run.eta, value=run.f, n_iter=run.n_steps,
                        converged=run.converged, history=run.history, message=run.message,
                        grad=run.g, direction=run.d, direction_eta=run.Xd)
