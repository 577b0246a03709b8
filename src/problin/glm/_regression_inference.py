"""Intervals for the fitted mean and marginal effects of a GLM regressor, and how its
dispersion was found (the summary says which).

For a row with linear predictor ``eta = x~^T theta + o`` (``x~ = [1, x]``) and Wald
variance ``v = x~^T Cov x~`` (:func:`~problin.glm.interval.linear_predictor_se`), the
mean ``mu = g^-1(eta)`` has the interval ``g^-1(eta -+ q sqrt(v))``, formed on the
linear predictor's scale and so inside the mean's range, and the delta-method
standard error ``|mu'(eta)| sqrt(v)`` (statsmodels ``GLM.get_prediction()``).

The marginal effect of feature ``j`` on the mean is ``d mu / d x_j = mu'(eta) w_j``;
averaged over rows with weights ``s_i`` (``at="overall"``) or at the weighted column
means (``at="mean"``). Its Jacobian in ``theta`` is ``mu''(eta) w_j x~ + mu'(eta) e_j``
(Greene, *Econometric Analysis*, 8th ed., §4.6), so the averaged Jacobian is
``w a^T + b E`` with ``a`` the weighted mean of ``mu''(eta_i) x~_i`` and ``b`` that of
``mu'(eta_i)``: one pass over the rows, no n x p temporary. ``q`` and the tables'
reference distribution are the summary's: normal, or t on ``df_resid_`` where the
dispersion is estimated.
"""
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy import stats
from sklearn.utils.validation import check_is_fitted

from .._core.validation import check_sample_weight
from .inference import parameter_names, wald_table
from .interval import linear_predictor_se
from .result import GLMFit

__all__ = ["dispersion_source", "mean_effects_table", "mean_interval_table"]

AT = ("overall", "mean")


def dispersion_source(scale: float | str | None, fixed: bool) -> str:
    """How a regressor's ``scale_`` was found, in the summary's words: from its ``scale``
    parameter and whether the family fixes the dispersion at 1."""
    if scale is None and fixed:
        return "fixed at 1"
    if not isinstance(scale, str) and scale is not None:
        return "the value given"
    return {"ml": "maximum likelihood",
            "dev": "the deviance / df_resid"}.get(scale or "X2", "Pearson's chi2 / df_resid")


def _quantile(fit: GLMFit, level: float) -> float:
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    tail = (1.0 - float(level)) / 2.0
    return float(stats.norm.isf(tail) if fit.t_df is None else stats.t.isf(tail, fit.t_df))


def mean_interval_table(fit: GLMFit, family: Any, X: Any, eta: NDArray[np.float64],
                        level: float, index: Any = None) -> pd.DataFrame:
    """``mean, std_err, ci_low, ci_high`` of ``g^-1(eta)`` (module docstring)."""
    q = _quantile(fit, level)
    se = linear_predictor_se(fit, X)
    link = family.link_function
    mu, slope, _ = link.inverse_derivatives(eta)
    ends = np.stack([link.inverse(eta - q * se), link.inverse(eta + q * se)])
    return pd.DataFrame({"mean": mu, "std_err": np.abs(slope) * se,
                         "ci_low": ends.min(axis=0), "ci_high": ends.max(axis=0)}, index=index)


def mean_effects_table(est: Any, X: Any, at: str, sample_weight: Any, level: float,
                       offset: Any, exposure: Any) -> pd.DataFrame:
    """The table of :meth:`GLMRegressor.marginal_effects` (module docstring)."""
    check_is_fitted(est)
    if not isinstance(at, str) or at not in AT:
        raise ValueError(f"at must be one of {AT}, got {at!r}")
    fit: GLMFit = est._result
    if fit.covariance is None:
        raise ValueError("marginal_effects needs covariance_, which this fit does not have")
    Xv, eta = est._eta(X, offset, exposure)
    n = Xv.shape[0]
    if n == 0:
        raise ValueError("marginal_effects needs at least one row of X")
    sw = check_sample_weight(sample_weight, n)
    s = np.full(n, 1.0 / n) if sw is None else sw / sw.sum()
    link = est._make_family().link_function
    i0 = int(fit.fit_intercept)
    theta = fit.theta
    w = theta[i0:]
    if at == "mean":  # eta at the weighted means of the columns (and of the offset)
        x_bar = np.asarray(Xv.T @ s).ravel()
        eta_bar = float(eta @ s)
        _, d1, d2 = (float(v[0]) for v in link.inverse_derivatives(np.array([eta_bar])))
        a = d2 * (np.concatenate([[1.0], x_bar]) if i0 else x_bar)
        b = d1
    else:
        _, d1v, d2v = link.inverse_derivatives(eta)
        xa = np.asarray((Xv.T @ (s * d2v)) if not sp.issparse(Xv) else Xv.T @ (s * d2v))
        a = np.concatenate([[float(s @ d2v)], xa.ravel()]) if i0 else xa.ravel()
        b = float(s @ d1v)
    J = np.outer(w, a)
    J[:, i0:] += b * np.eye(w.size)
    held = np.isnan(np.diag(fit.covariance))
    cov = np.where(np.isnan(fit.covariance), 0.0, fit.covariance)
    names = parameter_names(est, Xv.shape[1])[i0:]
    table = wald_table(names, b * w, J @ cov @ J.T, level,
                       None if not held.any() else ~held[i0:], df=fit.t_df)
    table = table.rename(columns={"coef": "dy/dx"})
    table.index.name = "feature"
    table.attrs.update(model=type(est).__name__, at=at, level=float(level), n_rows=n)
    return table
