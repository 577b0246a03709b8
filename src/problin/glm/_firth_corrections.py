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
  followed).
* **FLAC** (augmentation): maximum likelihood on the data augmented by two pseudo-rows
  per row, one with ``y_i`` and one with ``1 - y_i``, each weighted ``h_i / 2`` (the
  leverages of the Firth fit, ``tau h_i``), with an indicator of the pseudo-rows as a
  covariate (dropped from the result). The scores of the intercept and the indicator
  make the mean prediction on the original rows the event rate. Standard errors as
  logistf's ``flac``: the augmented fit's inverse information, the indicator dropped.
"""
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, log_expit

from .._core.linalg import cholesky
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


def _intercept_shift(y: np.ndarray, eta: np.ndarray, sw: np.ndarray | None) -> float:
    """``delta`` with ``sum_i s_i (y_i - expit(eta_i + delta)) = 0``: Newton on a
    concave score, from 0 (a few steps to rounding)."""
    s = np.ones_like(y) if sw is None else sw
    target, delta = float(s @ y), 0.0
    for _ in range(100):
        p = expit(eta + delta)
        score, curvature = target - float(s @ p), float(s @ (p * (1.0 - p)))
        if curvature <= 0.0:
            break
        step = score / curvature
        delta += step
        if abs(step) <= 1e-15 * (1.0 + abs(delta)):
            break
    return delta


def flic(fit: GLMFit, objective: InMemoryObjective, y: np.ndarray,
         offset: np.ndarray | None) -> GLMFit:
    """The FLIC fit from the Firth ``fit`` (see the module docstring)."""
    if not fit.fit_intercept:
        raise ValueError("penalty='flic' corrects the intercept: fit_intercept=True needs "
                         "to hold")
    design, sw = objective.design, objective.sample_weight
    eta = objective.linear_predictor(fit.theta_standard)
    if offset is not None:
        eta = eta + offset
    delta = _intercept_shift(y, eta, sw)
    theta = fit.theta.copy()
    theta[0] += delta
    eta = eta + delta
    p = expit(eta)
    W = p * (1.0 - p) if sw is None else sw * p * (1.0 - p)
    # logistf's beta0.se: the raw intercept's variance in (X^T W X)^-1, from the Gram G
    # in the solver's coordinates (theta = T theta_z: e_0^T T G^-1 T^T e_0).
    T = _raw_map(fit)
    u = cholesky(design.gram(W)).solve(T[0])
    se0 = float(np.sqrt(T[0] @ u))
    cov = np.array(fit.covariance, dtype=np.float64)
    scale = np.ones(theta.size)
    scale[0] = se0 / np.sqrt(cov[0, 0])
    cov = cov * scale[:, None] * scale[None, :]
    return _from_raw(fit, theta, cov, objective=-_log_likelihood(y, eta, sw))


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
