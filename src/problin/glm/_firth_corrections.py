"""FLIC and FLAC (Puhr, Heinze, Nold, Lusa & Geroldinger 2017): Firth's logistic
regression with calibrated predictions.

Firth's penalty pulls the predicted probabilities towards 1/2, so their mean is not the
event rate. Both corrections restore it:

* **FLIC** (intercept correction): Firth's slopes, the intercept refitted by maximum
  likelihood with the Firth linear predictor (without its intercept) as an offset. The
  intercept's ML score, ``sum_i s_i (y_i - p_i) = 0``, makes the weighted mean prediction
  the weighted event rate exactly. Standard errors as logistf's ``flic``: the slopes'
  are Firth's; the intercept's is ``sqrt([(X^T W X)^-1]_00)`` at the FLIC predictions
  (logistf's ``beta0.se``, which its intercept interval uses), with Firth's
  correlations kept (logistf's own ``var`` weights by ``p``, not ``p (1 - p)``: not
  followed). Its passes are the unpenalised objective's (a gradient pass a Newton
  step, a Gram pass at each end), so it runs on Dask chunks as in memory.
* **FLAC** (augmentation): maximum likelihood on the data augmented by two pseudo-rows
  per row, one with ``y_i`` and one with ``1 - y_i``, each weighted ``h_i / 2`` (the
  leverages of the Firth fit, ``tau h_i``), with an indicator of the pseudo-rows as a
  covariate (dropped from the result). The scores of the intercept and the indicator
  make the mean prediction on the original rows the event rate. Standard errors as
  logistf's ``flac``: the augmented fit's inverse information, the indicator dropped.
  Its refit reads the rows one by one (in memory only).
"""
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, log_expit

from .._core.linalg import cholesky
from .._core.model.contract import Eta, Objective
from .._core.model.objective import InMemoryObjective
from .result import GLMFit

__all__ = ["FIRTH_PENALTIES", "flic", "flac"]

#: The penalty names fitted by Firth's penalty (FLIC and FLAC correct it afterwards).
FIRTH_PENALTIES = ("firth", "flic", "flac")


def _raw_map(fit: GLMFit) -> np.ndarray:
    """``T`` with ``theta = T theta_standard`` (the basis's linear map)."""
    basis, p = fit.basis, fit.theta.size
    if basis is None:
        return np.eye(p)
    return np.column_stack([basis.to_raw(e) for e in np.eye(p)])


def _from_raw(fit: GLMFit, theta: np.ndarray, cov: np.ndarray, **changes: Any) -> GLMFit:
    """``fit`` with the raw estimate ``theta`` and covariance ``cov`` (and the solver's
    coordinates of both)."""
    T = _raw_map(fit)
    theta_z = np.linalg.solve(T, theta)
    cov_z = np.linalg.solve(T, np.linalg.solve(T, cov).T)
    return fit.replace(theta=theta, theta_standard=theta_z, covariance=cov,
                       covariance_standard=0.5 * (cov_z + cov_z.T), penalty=0.0, **changes)


def _log_likelihood(y: np.ndarray, eta: np.ndarray, sw: np.ndarray | None) -> float:
    rows = y * log_expit(eta) + (1.0 - y) * log_expit(-eta)
    return float(rows.sum() if sw is None else sw @ rows)


def _intercept_shift(objective: Objective[Eta], theta: np.ndarray
                     ) -> tuple[float, float, np.ndarray]:
    """``(delta, f, H)``: the shift of the (solver's) intercept ``theta[0]`` at which the
    likelihood's intercept score ``sum_i s_i (y_i - p_i)`` vanishes, with minus the
    log-likelihood and the Fisher information there. ``objective`` is the unpenalised
    one (its gradient's first entry is that score: the intercept's column is ones).

    A scalar Newton from 0, its curvature ``sum_i s_i p_i (1 - p_i)`` the information's
    corner at the start, then secant updates: one gradient pass a step (on Dask one
    distributed pass), a Gram pass at each end (the score is monotone and the shift
    small: a few steps to rounding)."""
    point = np.array(theta, dtype=np.float64)
    f, g, H = objective.value_grad_hess(point, objective.linear_predictor(point))
    curvature, delta, last = float(H[0, 0]), 0.0, (0.0, float(g[0]))
    for _ in range(100):
        if not curvature > 0.0:
            break
        step = -last[1] / curvature
        delta += step
        if abs(step) <= 1e-15 * (1.0 + abs(delta)):
            break
        point[0] = theta[0] + delta
        score = float(objective.value_grad(point, objective.linear_predictor(point))[1][0])
        secant = (score - last[1]) / (delta - last[0])
        if np.isfinite(secant) and secant > 0.0:
            curvature = secant
        last = (delta, score)
    if delta != 0.0:
        point[0] = theta[0] + delta
        f, _, H = objective.value_grad_hess(point, objective.linear_predictor(point))
    return delta, float(f), H


def flic(fit: GLMFit, objective: Objective[Eta]) -> GLMFit:
    """The FLIC fit from the Firth ``fit`` (see the module docstring); ``objective``: the
    unpenalised log-likelihood of the same rows (and offset), in memory or on Dask."""
    if not fit.fit_intercept:
        raise ValueError("penalty='flic' corrects the intercept: fit_intercept=True needs "
                         "to hold")
    delta, f, G = _intercept_shift(objective, fit.theta_standard)
    theta = fit.theta.copy()
    theta[0] += delta
    # logistf's beta0.se: the raw intercept's variance in (X^T W X)^-1, from the Gram G
    # in the solver's coordinates (theta = T theta_z: e_0^T T G^-1 T^T e_0).
    T = _raw_map(fit)
    u = cholesky(G).solve(T[0])
    se0 = float(np.sqrt(T[0] @ u))
    cov = np.array(fit.covariance, dtype=np.float64)
    scale = np.ones(theta.size)
    scale[0] = se0 / np.sqrt(cov[0, 0])
    cov = cov * scale[:, None] * scale[None, :]
    return _from_raw(fit, theta, cov, objective=f)


def flac(fit: GLMFit, objective: InMemoryObjective, y: np.ndarray,
         offset: np.ndarray | None, tau: float, refit: Any) -> GLMFit:
    """The FLAC fit from the Firth ``fit``; ``refit(X, y, sample_weight, offset)``
    returns the GLMFit of the unpenalised logistic fit to the augmented data."""
    design, sw = objective.design, objective.sample_weight
    n = y.size
    eta = objective.linear_predictor(fit.theta_standard)
    if offset is not None:
        eta = eta + offset
    p = expit(eta)
    w = p * (1.0 - p) if sw is None else sw * p * (1.0 - p)
    # the leverages of the Firth fit, h_i = w_i z_i^T I^-1 z_i (solver's coordinates)
    chol = cholesky(design.gram(w))
    Z = design.dense_rows(np.arange(n))
    h = w * np.einsum("ij,ji->i", Z, chol.solve(Z.T))
    X = design.X
    ones, zeros = np.ones((n, 1)), np.zeros((n, 1))
    if sp.issparse(X):
        X_aug = sp.vstack([sp.hstack([X, zeros]), sp.hstack([X, ones]),
                           sp.hstack([X, ones])]).tocsr()
    else:
        X_aug = np.vstack([np.hstack([X, zeros]), np.hstack([X, ones]), np.hstack([X, ones])])
    s = np.ones(n) if sw is None else sw
    augmented = refit(X_aug, np.concatenate([y, y, 1.0 - y]),
                      np.concatenate([s, tau * h, tau * h]),
                      None if offset is None else np.tile(offset, 3))
    keep = np.arange(augmented.theta.size - 1)  # all but the indicator's
    theta = augmented.theta[keep]
    cov = np.asarray(augmented.covariance, dtype=np.float64)[np.ix_(keep, keep)]
    eta_new = np.asarray(X @ theta[int(fit.fit_intercept):]).ravel()
    if fit.fit_intercept:
        eta_new = eta_new + theta[0]
    if offset is not None:
        eta_new = eta_new + offset
    return _from_raw(fit, theta, cov, objective=-_log_likelihood(y, eta_new, sw),
                     n_iter=fit.n_iter + augmented.n_iter)
