"""The covariance of a GLM fit from its information matrix, and what it cannot identify.

The inverse information on the identified parameters (by one equilibrated Cholesky
factorisation where all are, NaN rows and columns elsewhere), mapped from the solver's
standardised coordinates to raw units (:meth:`~problin._core.model.basis.ColumnBasis.
covariance_to_raw`); a prior's rank-one term that only pins an invariance (softmax
intercepts summing to zero) is taken out again. The parameters that are not identified
(collinear or constant columns) are held at 0, as R's ``glm`` reports them, with a
``CollinearityWarning`` naming them. Shared by the classifiers' diagnosis
(:mod:`problin.glm._diagnostics`) and the regressors' (:mod:`problin.glm._regression_fit`).
"""
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._core.blocks import small_blas
from .._core.linalg import (
    cholesky,
    equilibrated_cholesky,
    identified_columns,
    inverse_from_equilibrated,
    solve_psd,
)
from .._core.model.contract import Objective
from .._core.model.objective import InMemoryObjective
from ..exceptions import CollinearityWarning, NumericalWarning, warn_at_caller

__all__ = ["covariance", "flat_direction", "held_at_zero", "to_raw", "unidentified_held"]


def covariance(objective: Objective, H: NDArray[np.float64]
               ) -> tuple[NDArray[np.float64], NDArray[np.bool_], NDArray[np.float64]]:
    """``(covariance, identified, covariance_standard)``: the inverse information
    ``H`` on the identified parameters (NaN elsewhere), in raw units, which
    parameters are identified, and the same covariance in the solver's coordinates."""
    # A prior's precision identifies the parameters it covers, however weak against
    # the data (an L2 penalty in raw units on columns at 1e6 is ~1e-10 of the diagonal).
    prior_diag = objective.penalty.hessian_diagonal()
    with small_blas(H.shape[0]):
        whole = equilibrated_cholesky(H, prior_diag=prior_diag)
    if whole is not None:  # every parameter identified: one factorisation
        identified, cov = np.ones(H.shape[0], dtype=bool), inverse_from_equilibrated(*whole)
    else:
        identified = identified_columns(H, prior_diag=prior_diag)
        cov = np.full_like(H, np.nan)
    idx = np.flatnonzero(identified) if whole is None else None
    if idx is not None and idx.size:
        chol = cholesky(H[np.ix_(idx, idx)])
        cov[np.ix_(idx, idx)] = chol.inverse()
        if chol.jitter > 0:
            warn_at_caller("the information matrix is numerically singular; standard errors "
                           f"are regularised by a jitter of {chol.jitter:.2e}", NumericalWarning)
    # A rank-one prior term c v v^T that only pins an invariance (softmax
    # intercepts summing to zero, H v = 0) is removed again: (H + c v v^T)^-1
    # = H^+ + v v^T / (c |v|^4), and H^+ is the covariance on the constraint.
    for v, c in _rank_one(objective):  # (the GLMs' intercepts are unpenalised: v is flat)
        cov -= np.outer(v, v) / (c * float(v @ v) ** 2)
    return to_raw(objective, cov), identified, cov


def flat_direction(objective: Objective | InMemoryObjective) -> NDArray[np.float64] | None:
    """The prior's rank-one direction that only pins an invariance (softmax with all
    K blocks free: the common shift of the intercepts), or None."""
    flat = None
    for v, _ in _rank_one(objective):
        flat = v
    return flat


def _rank_one(objective: Objective | InMemoryObjective) -> list[tuple[NDArray[np.float64], float]]:
    """The rank-one terms of a Gaussian prior's precision (none for other penalties)."""
    gaussian = objective.penalty.gaussian
    return [] if gaussian is None else gaussian.precision.rank_one


def to_raw(objective: Objective | InMemoryObjective, cov_z: NDArray[np.float64]) -> NDArray[np.float64]:
    """A covariance in the solver's coordinates mapped to raw units (NaN rows kept)."""
    basis = objective.design.basis
    if basis is None:
        return cov_z.copy()
    return basis.covariance_to_raw(cov_z, objective.n_blocks, flat_direction(objective))


def unidentified_held(est: Any, names: Callable[[], list[str]], theta: NDArray[np.float64],
                       H: NDArray[np.float64], identified: NDArray[np.bool_]
                       ) -> NDArray[np.float64] | None:
    """``theta`` with the parameters that are not identified held at 0
    (:func:`held_at_zero`), saying which (a ``CollinearityWarning``; ``names()``: the
    parameters' names, formed only then); None where all are."""
    if identified.all():
        return None
    lost = [n for n, ok in zip(names(), identified) if not ok]
    warn_at_caller(f"parameters not identified (collinear or constant columns): {lost}. "
                   "Predictions are unaffected; drop these columns or set alpha > 0 for "
                   "unique coefficients.", CollinearityWarning)
    return held_at_zero(theta, H, identified)


def held_at_zero(theta: NDArray[np.float64], H: NDArray[np.float64],
                 identified: NDArray[np.bool_]) -> NDArray[np.float64]:
    """The same optimum with the parameters that are not identified at 0, as R's ``glm``
    reports them (NA) and as the fit without their columns has it.

    A parameter is not identified where its column is (to ``identified_columns``'
    tolerance) a combination ``Z_U = Z_I A`` of the identified ones, ``A = H_II^-1 H_IU``
    (weighted least squares: ``H = Z^T W Z``). Moving ``theta_U`` onto them,
    ``theta_I + A theta_U``, leaves every linear predictor as it was; the solver leaves
    ``theta_U`` wherever its path ended, and the others' values depend on that.
    """
    I, U = np.flatnonzero(identified), np.flatnonzero(~identified)
    theta = np.array(theta, dtype=np.float64)
    if I.size:
        A, _ = solve_psd(H[np.ix_(I, I)], H[np.ix_(I, U)])
        theta[I] += A @ theta[U]
    theta[U] = 0.0
    return theta
