r"""Inference for (weighted) least squares: the fit record ``OLSFit``, robust covariances,
the coefficient table and prediction intervals.

The model is ``t_i = b + w^T x_i + eps_i``, ``eps_i ~ N(0, sigma^2 / v_i)`` with
``v_i`` the precision weights (``sample_weight``; statsmodels ``WLS``). With
``theta = [b, w]``, ``X~ = [1, X]`` and ``V = diag(v)`` (Greene 2012, §4.5, §9.2):

.. math::

    \hat\sigma^2 = \frac{\sum_i v_i e_i^2}{n - k}, \qquad
    \operatorname{Cov}(\hat\theta) = \hat\sigma^2 (\tilde X^T V \tilde X)^{-1},

``n`` the rows of positive weight, ``k`` the rank. Everything comes from the triangular
factor ``R_c`` of the centred, weighted features (``R_c^T R_c`` their scatter): the
factor of the full weighted design is ``R = [[sqrt(W), sqrt(W) xbar^T], [0, R_c]]``
(``W = sum v``), whose inverse is written down from ``R_c^-1`` (triangular solves, no
``inv``): ``M = R^-1 = [[1/sqrt(W), -xbar^T R_c^-1], [0, R_c^-1]]``, so
``(X~^T V X~)^-1 = M M^T`` and a row's whitened design is
``z_i = x~_i^T M = [1/sqrt(W), (x_i - xbar)^T R_c^-1]``, computed centred.

Every covariance is held as ``M C M^T``: ``C = sigma^2 I`` (classical) or the
sandwich core ``C = c sum_i u_i u_i^T`` with ``u_i = v_i e_i z_i`` (scaled by the
leverage factor for HC2/HC3, summed per cluster for ``"cluster"``), see
:mod:`problin._core.model.sandwich`; the leverage is ``h_i = v_i |z_i|^2``.
Prediction variances are ``z C z^T`` of the new rows' ``z``.
"""
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy import linalg, stats

from .._core.blocks import iter_blocks
from .._core.extreme import row_quadratic_root
from .._core.model.sandwich import (
    group_codes,
    inference_df,
    leverage_scale,
    meat,
    sandwich,
    small_sample_factor,
    weighted_groups,
)
from .._core.moments.least_squares import Factors, Moments
from .._core.types import Matrix
from ..inference.hypothesis import wald_quadratic_form

__all__ = ["OLSFit", "ols_fit", "robust_fit", "coefficient_table", "prediction_frame",
           "parameter_names", "posterior_table"]


@dataclass(frozen=True)
class OLSFit:
    """One least-squares fit with its inference (single output, ``alpha = 0``).

    ``theta`` is ``[intercept, coef...]`` (no intercept entry without one);
    the covariance is ``M core M^T``; a row's whitened design is
    ``[lead, (x - center)] @ A`` (``lead`` = 1 with an intercept, else absent).
    """

    theta: np.ndarray
    M: np.ndarray
    A: np.ndarray
    center: np.ndarray
    intercept: bool
    core: np.ndarray
    cov_type: str
    n_obs: float
    rank: int
    ssr: float
    tss: float
    sum_log_weight: float
    df_inference: float
    n_groups: int | None = None
    # Without an intercept, the direction of the coefficients along which X w is
    # constant, where the features span the constant (Moments.constant_direction):
    # the model has a constant all the same, and its R^2, F test and degrees of
    # freedom are the centred ones (statsmodels' k_constant).
    constant: np.ndarray | None = None

    @property
    def has_constant(self) -> bool:
        return self.intercept or self.constant is not None

    @property
    def covariance(self) -> np.ndarray:
        V = self.M @ self.core @ self.M.T
        return 0.5 * (V + V.T)

    @property
    def df_resid(self) -> float:
        return float(self.n_obs - self.rank)

    @property
    def df_model(self) -> float:
        return float(self.rank - (1 if self.has_constant else 0))

    @property
    def scale(self) -> float:
        """``sigma^2 = SSR / (n - k)`` (weighted SSR for WLS)."""
        return self.ssr / self.df_resid if self.df_resid > 0 else float("nan")

    def log_likelihood(self, ssr: float) -> float:
        """Gaussian log-likelihood at the ML ``sigma^2 = ssr / n`` (statsmodels WLS ``llf``)."""
        n = self.n_obs
        with np.errstate(divide="ignore"):  # an exact fit: +inf, as statsmodels
            log_ssr = np.log(np.float64(2.0 * np.pi * ssr / n))
        return float(-0.5 * n * (log_ssr + 1.0) + 0.5 * self.sum_log_weight)

    def f_test(self) -> tuple[float, float]:
        """F statistic of all slopes being zero, and its p-value (F(df_model, df))."""
        q = int(self.df_model)
        if q <= 0 or self.df_resid <= 0:
            return float("nan"), float("nan")
        if self.cov_type == "nonrobust":
            F = float(np.float64(self.tss - self.ssr) / q / np.float64(self.scale))  # exact: inf
        else:  # Wald test with the robust covariance, as statsmodels' fvalue: the
            # cluster meat has rank at most G - 1, so a pseudo-inverse and its rank
            # (Slopes the data do not identify, held at 0 with variance 0, are not
            # tested: F equals the fit's without those columns, not NaN.)
            s = slice(1, None) if self.intercept else slice(None)
            theta, cov = self.theta[s], self.covariance[s, s]
            if self.constant is not None:
                # An implicit constant: the coefficients' component along it is not
                # tested (statsmodels gives NaN there).
                L = np.eye(theta.size) - np.outer(self.constant, self.constant)
                theta, cov = L @ theta, L @ cov @ L.T
            W, rank = wald_quadratic_form(theta, cov)
            F = W / rank if rank else float("nan")
            q = rank or q
        return float(F), float(stats.f.sf(F, q, self.df_inference))

    def condition_number(self) -> float:
        """``sigma_max / sigma_min`` of the weighted design ``V^1/2 X~`` (statsmodels');
        infinite for a rank-deficient design (``M`` spans only the kept directions:
        their ratio, 2.1 for a design with a collinear column, was no condition number;
        statsmodels gives its rounding, ~1e16)."""
        if self.rank < self.theta.size:
            return float("inf")
        s = linalg.svdvals(self.M)
        return float(s.max() / s.min()) if s.size and s.min() > 0 else float("inf")

    def attributes(self) -> dict[str, Any]:
        """The fitted attributes of the estimator derived from this record."""
        llf = self.log_likelihood(self.ssr)
        k = self.rank
        r2 = 1.0 - self.ssr / self.tss if self.tss > 0 else float("nan")
        dfr, dfm = self.df_resid, self.df_model
        base = self.n_obs - (1 if self.has_constant else 0)
        adj = 1.0 - base / dfr * (1.0 - r2) if dfr > 0 else float("nan")
        F, p = self.f_test()
        return {"covariance_": self.covariance, "cov_type_": self.cov_type,
                "log_likelihood_": llf, "null_log_likelihood_": self.log_likelihood(self.tss),
                "aic_": -2.0 * llf + 2.0 * k, "bic_": -2.0 * llf + np.log(self.n_obs) * k,
                "deviance_": self.ssr, "df_model_": dfm, "df_resid_": dfr,
                "n_obs_": self.n_obs, "r2_": r2, "adj_r2_": adj, "f_statistic_": F,
                "f_pvalue_": p, "condition_number_": self.condition_number(),
                "scale_": self.scale}

    def whitened(self, Xb: np.ndarray) -> np.ndarray:
        """``z = [1, x - center] @ A`` for the rows of a dense block."""
        Z = (Xb - self.center) @ self.A[1:] if self.intercept else (Xb - self.center) @ self.A
        if self.intercept:
            Z += self.A[0]
        return np.asarray(Z)


def ols_fit(stats_: Moments, F: Factors, W: np.ndarray, fit_intercept: bool, n_obs: float,
            sum_log_weight: float, rank: int) -> OLSFit:
    """The classical fit record from the (centred if ``fit_intercept``) factors ``F``,
    the solution ``W`` (D x 1) and the rows' count and summed log weights."""
    d = F.xx.shape[0]
    R = F.xx
    full = rank == d and bool(np.all(F.live)) and (d == 0 or np.all(np.diagonal(R) != 0))
    xbar = stats_.x_mean
    sw = np.sqrt(stats_.weight)
    if full:  # M = R^-1 written down from R_c^-1 (triangular solve, no inv)
        Rinv = linalg.solve_triangular(R, np.eye(d), check_finite=False)
        if fit_intercept:
            A = linalg.block_diag(1.0 / sw, Rinv)
            M = A.copy()
            M[0, 1:] = -(xbar @ Rinv)
        else:
            A = M = Rinv
        center = xbar if fit_intercept else np.zeros(d)
    else:  # rank-deficient: the pseudo-inverse (statsmodels' pinv), from an SVD of R;
        # constant features (coefficient 0, not identified) get zero rows: no variance
        Rf = np.zeros((d + 1, d + 1)) if fit_intercept else R.copy()
        if fit_intercept:
            Rf[0, 0], Rf[0, 1:], Rf[1:, 1:] = sw, sw * xbar, R
        used = np.concatenate([[True], F.live]) if fit_intercept else F.live.copy()
        _, s, Vt = linalg.svd(Rf[np.ix_(used, used)], check_finite=False)
        keep = s > s[0] * max(Rf.shape) * np.finfo(np.float64).eps if s.size else s > 0
        A = np.zeros((used.size, int(np.sum(keep))))
        A[used] = Vt[keep].T / s[keep]
        M = A
        center = np.zeros(d)
    theta = W[:, 0]
    if fit_intercept:
        theta = np.concatenate([[float(stats_.t_mean[0] - xbar @ W[:, 0])], theta])
    k = int(rank + (1 if fit_intercept else 0))
    ssr, tss = F.residual_sum_of_squares(W), F.total_sum_of_squares
    constant = None if fit_intercept else stats_.constant_direction(n_obs)
    if constant is not None:  # the centred total sum of squares
        tss = float(np.sum(stats_.factor[:, stats_.n_features:] ** 2))
    record = OLSFit(theta, M, A, center, fit_intercept, np.eye(M.shape[1]), "nonrobust",
                    float(n_obs), k, ssr, tss, float(sum_log_weight), float(n_obs - k),
                    constant=constant)
    return replace(record, core=record.scale * np.eye(M.shape[1]))


# Leverages within this of 1 are 1: h = |z|^2 carries ~p ulps of rounding, so 1 - h
# below ~1e-13 is noise (1 - h = 1e-11 still has ~4 digits).
_LEVERAGE_ONE = 1e-13


def robust_fit(record: OLSFit, X: Matrix, t: np.ndarray, sample_weight: np.ndarray | None,
               cov_type: str, groups: Any,
               means: tuple[np.ndarray, np.ndarray] | None = None) -> OLSFit:
    """``record`` with the robust covariance ``cov_type``: a second pass over the rows
    for the residuals, leverages and (cluster) score sums, block by block.

    ``means``: the weighted means of ``[x, t]`` as ``(origin, offset)`` (the moments').
    With an intercept the residuals are then formed centred, ``(t - tbar) - (x -
    xbar)^T w`` (the intercept's normal equation makes them the same numbers): ``x^T w +
    b`` at columns far from zero (1e12, spread 1) cancels their digits, and the robust
    t-values were 6e-5 to 1e-4 off those of the same data centred exactly."""
    n = X.shape[0]
    codes, n_groups = (group_codes(groups, n) if cov_type == "cluster" else (None, None))
    blocks = {"X": X}
    centred = record.intercept and means is not None
    origin, offset = means if means is not None else (np.zeros(0), np.zeros(0))
    d = X.shape[1]

    def residuals(Xb: np.ndarray, tb: np.ndarray) -> np.ndarray:
        if centred:
            return ((tb - origin[d]) - offset[d]) \
                - ((Xb - origin[:d]) - offset[:d]) @ record.theta[1:]
        return tb - (Xb @ record.theta[1:] + record.theta[0] if record.intercept
                     else Xb @ record.theta)

    def scores(lo: int, hi: int) -> np.ndarray:
        Xb = blocks["X"][lo:hi]
        Xb = Xb.toarray() if sp.issparse(Xb) else np.asarray(Xb, dtype=np.float64)
        v = np.ones(hi - lo) if sample_weight is None else sample_weight[lo:hi]
        Z = record.whitened(Xb)
        e = residuals(Xb, t[lo:hi])
        h = v * np.einsum("ij,ij->i", Z, Z)
        # rows of leverage 1 (a parameter fitted by that row alone) have residual 0
        # up to rounding: they carry no score (statsmodels would give 0/0 there).
        # "1" is h within its own rounding (~p eps): a row at 1 - h = 2.4e-11 is
        # not one, and its HC3 score e / (1 - h) can dominate the covariance.
        exact = (v == 0) | (h >= 1.0 - _LEVERAGE_ONE)
        scale = np.where(exact, 0.0, v * e * leverage_scale(cov_type, np.where(exact, 0.0, h)))
        return np.asarray(Z * scale[:, None])

    core = meat(scores, n, codes, n_groups)
    if codes is not None and n_groups is not None:
        n_groups = weighted_groups(codes, n_groups, sample_weight)
    factor = small_sample_factor(cov_type, record.n_obs, record.rank, n_groups)
    return replace(record, core=sandwich(np.eye(core.shape[0]), core, factor),
                   cov_type=cov_type, n_groups=n_groups,
                   df_inference=inference_df(cov_type, record.df_resid, n_groups))


def parameter_names(estimator: Any, n_features: int) -> list[str]:
    """``["intercept", feature names...]`` in the order of ``covariance_``."""
    names = getattr(estimator, "feature_names_in_", None)
    names = [str(c) for c in names] if names is not None else [f"x{j}" for j in range(n_features)]
    return (["intercept"] if estimator.fit_intercept else []) + names


def _check_level(level: float) -> float:
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    return float(level)


def coefficient_table(record: OLSFit, names: list[str], level: float) -> pd.DataFrame:
    """``coef, std_err, t, p_value, ci_low, ci_high``: Student t with ``df_inference``
    degrees of freedom (``n - k``; ``G - 1`` for cluster covariances)."""
    level = _check_level(level)
    se = np.sqrt(np.clip(np.diag(record.covariance), 0.0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        tval = record.theta / se
    df = record.df_inference
    q = stats.t.isf((1.0 - level) / 2.0, df)
    table = pd.DataFrame({"coef": record.theta, "std_err": se, "t": tval,
                          "p_value": 2.0 * stats.t.sf(np.abs(tval), df),
                          "ci_low": record.theta - q * se, "ci_high": record.theta + q * se},
                         index=pd.Index(names, name="parameter"))
    # A constant column's coefficient is held at 0 with no variance: it has no standard
    # error, test or interval (0 and [0, 0] would claim certainty), and the table says
    # why, as the GLMs' tables do.
    held = (se == 0.0) & (record.theta == 0.0)
    if held.any():
        table.loc[held, ["std_err", "t", "p_value", "ci_low", "ci_high"]] = np.nan
        table["note"] = np.where(held, "not identified (constant column, held at 0)", "")
    table.attrs.update(cov_type=record.cov_type, df=df, level=level, n_obs=record.n_obs)
    return table


def prediction_frame(record: OLSFit, X: Matrix, level: float) -> pd.DataFrame:
    """``mean, std_err, ci_low, ci_high, obs_ci_low, obs_ci_high`` for the rows of ``X``
    (statsmodels' ``get_prediction().summary_frame()``: the mean's interval from the
    model's covariance, robust or not; the observation's adds ``sigma^2``; Student t on
    ``n - k`` degrees of freedom for every ``cov_type``, as statsmodels)."""
    level = _check_level(level)
    n = X.shape[0]
    mean, se = np.empty(n), np.empty(n)
    for lo, hi, Xb in iter_blocks(X):
        Xb = Xb.toarray() if sp.issparse(Xb) else np.asarray(Xb, dtype=np.float64)
        se[lo:hi] = row_quadratic_root(record.whitened(Xb), record.core)  # (finite far out)
        mean[lo:hi] = (Xb @ record.theta[1:] + record.theta[0] if record.intercept
                       else Xb @ record.theta)
    obs = np.hypot(se, np.sqrt(record.scale))
    # statsmodels' prediction intervals take n - k degrees of freedom, cluster or not
    q = stats.t.isf((1.0 - level) / 2.0, record.df_resid)
    return pd.DataFrame({"mean": mean, "std_err": se, "ci_low": mean - q * se,
                         "ci_high": mean + q * se, "obs_ci_low": mean - q * obs,
                         "obs_ci_high": mean + q * obs})


def posterior_table(estimator: Any, level: float) -> pd.DataFrame:
    """``mean, sd, z, p_opposite, ci_low, ci_high`` of a Gaussian posterior ``N(m_N, S_N)``
    of :class:`~problin.linear_model.BayesianLinearRegression` (the columns of
    ``BayesianLogisticRegression.summary``): equal-tailed credible intervals from normal
    quantiles and ``p_opposite = P(sign(theta) != sign(m_N))``; indexed by ``parameter``,
    or by ``(output, parameter)`` for several outputs."""
    level = _check_level(level)
    mean = np.atleast_2d(estimator.posterior_mean_)  # K x P
    sd = np.sqrt(np.clip(np.diag(estimator.posterior_cov_), 0.0, None))
    q = stats.norm.isf((1.0 - level) / 2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = mean / sd
    names = parameter_names(estimator, estimator.n_features_in_)
    index: pd.Index = pd.Index(names, name="parameter")
    if mean.shape[0] > 1:
        index = pd.MultiIndex.from_product([list(range(mean.shape[0])), names],
                                           names=["output", "parameter"])
    table = pd.DataFrame({"mean": mean.ravel(), "sd": np.tile(sd, mean.shape[0]),
                          "z": z.ravel(), "p_opposite": stats.norm.sf(np.abs(z)).ravel(),
                          "ci_low": (mean - q * sd).ravel(), "ci_high": (mean + q * sd).ravel()},
                         index=index)
    table.attrs.update(model=type(estimator).__name__, inference="conjugate",
                       alpha=estimator.alpha_, beta=estimator.beta_, level=level,
                       log_evidence=estimator.log_evidence_, n_obs=estimator.n_obs_)
    return table
