"""What the ordinal model's interpretation, interval and text summary read of a fit.

Effects per category go through the interpretation API's generic path
(:mod:`problin._effects_methods`): the model is the ``K - 1`` cumulative linear predictors
``eta_j = theta_j - x^T beta`` (blocks ``[theta_j, -beta]``, whose covariance is the fit's
mapped by the 0/1 matrix that repeats ``beta``) and :class:`CumulativeMap`, their map to
the K category probabilities ``p_k = F(eta_k) - F(eta_{k-1})``. The probabilities sum to one
in every row, so effects on them sum to zero across the categories.
"""
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import special, stats
from sklearn.utils.validation import check_is_fitted

from .._core.model.family_ordinal import LatentDistribution, log_interval
from .._core.types import FloatArray
from ..inference.effects import EffectsModel, IdentityMap, MeanMap
from ..inference.text import SummaryText, format_p, format_summary, format_value
from ._ordinal_nominal import cumulative_bounds, running_max

__all__ = ["CumulativeMap", "cumulative_effects_model", "cut_blocks",
           "ordinal_effects_model", "ordinal_interval", "ordinal_summary_text"]


@dataclass(frozen=True)
class CumulativeMap:
    """The K category probabilities of the ``K - 1`` cumulative linear predictors."""

    dist: LatentDistribution

    def _density(self, eta: FloatArray) -> FloatArray:
        return np.exp(self.dist.log_pdf(eta))

    def __call__(self, eta: FloatArray) -> tuple[FloatArray, FloatArray]:
        p, d, _ = self._terms(eta, False)
        return p, d

    def _terms(self, eta: FloatArray, curvature: bool
               ) -> tuple[FloatArray, FloatArray, FloatArray | None]:
        """Through the running maximum of ``eta`` (the identity where it increases, as
        proportional odds always does; see :mod:`._ordinal_nominal`)."""
        n, L = eta.shape
        U, source = running_max(eta)
        bounds = np.column_stack((np.full(n, -np.inf), U, np.full(n, np.inf)))
        p = np.exp(log_interval(self.dist, bounds[:, 1:], bounds[:, :-1]))
        f = self._density(U)
        fprime = f * self.dist.score(U)
        d = np.zeros((n, L + 1, L))
        T = np.zeros((n, L + 1, L, L)) if curvature else None
        rows = np.arange(n)
        for k in range(L):
            j = source[:, k]
            d[rows, k, j] += f[:, k]
            d[rows, k + 1, j] -= f[:, k]
            if T is not None:
                T[rows, k, j, j] += fprime[:, k]
                T[rows, k + 1, j, j] -= fprime[:, k]
        return p, d, T

    def curvature(self, eta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        p, d, T = self._terms(eta, True)
        assert T is not None
        return p, d, T


def cut_blocks(params: FloatArray, index: NDArray[np.intp], n_slopes: int) -> FloatArray:
    """Rows of ``[slopes, theta]`` (S, P) -> the cumulative predictors' blocks
    ``[theta_j, -beta_j]`` (S, K-1, 1 + D); ``index`` places cut ``j``'s slopes
    (``OrdinalFit.slope_index``)."""
    params = np.atleast_2d(params)
    cuts = params[:, n_slopes:]
    return np.concatenate((cuts[:, :, None], -params[:, index]), axis=2)


def cumulative_effects_model(params: FloatArray, covariance: FloatArray,
                             index: NDArray[np.intp], dist: LatentDistribution, type: str,
                             classes: list[Any], cut_names: list[str]) -> EffectsModel:
    """The response scale: category probabilities (outputs the classes); the link scale:
    the cumulative linear predictors (outputs the cut-points' names). ``covariance`` of
    ``params = [slopes, theta]`` is mapped to the blocks' by the 0/1 matrix ``M`` with
    ``vec(blocks) = M params`` (which repeats shared slopes)."""
    L, D = index.shape
    n_slopes = params.size - L
    M = np.zeros((L * (1 + D), params.size))
    for j in range(L):
        row = j * (1 + D)
        M[row, n_slopes + j] = 1.0
        M[row + 1 + np.arange(D), index[j]] = -1.0
    mean: MeanMap
    if type == "response":
        mean, outputs = CumulativeMap(dist), classes
    else:
        mean, outputs = IdentityMap(), cut_names
    return EffectsModel(cut_blocks(params, index, n_slopes)[0], True, mean, outputs,
                        M @ covariance @ M.T, None)


def ordinal_effects_model(estimator: Any, type: str) -> EffectsModel:
    """:func:`cumulative_effects_model` of a fitted OrdinalRegression."""
    check_is_fitted(estimator)
    fit = estimator._result
    return cumulative_effects_model(fit.params, fit.covariance, fit.slope_index,
                                    fit.family.dist, type, list(estimator.classes_),
                                    estimator.parameter_names()[fit.n_slopes:])


def ordinal_interval(estimator: Any, X: Any, level: float) -> pd.DataFrame:
    """Each class's probability, its delta-method standard error and an interval formed
    on the log-odds ``log(p / (1 - p))`` (statsmodels' ``MNLogit`` convention)."""
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    fit = estimator._result
    check_is_fitted(estimator)
    Xd = estimator._design_rows(X)
    Xd = np.asarray(Xd.toarray() if hasattr(Xd, "toarray") else Xd, dtype=np.float64)
    u, source = cumulative_bounds(fit, Xd)  # theta_j - x^T beta_j, j = source_k (n, K-1)
    logp = fit.family.log_proba_bounds(u)
    n, K = logp.shape
    S, index = fit.n_slopes, fit.slope_index
    f = np.exp(fit.family.dist.log_pdf(u))  # (n, K-1)
    V = np.asarray(fit.covariance)
    var = np.empty((n, K))
    rows = np.arange(n)
    for k in range(K):  # p_k = F(u_k) - F(u_{k-1}), u_k = theta_j - x^T beta_j, j = source_k
        G = np.zeros((n, S + K - 1))
        for cut, sign in ((k, 1.0), (k - 1, -1.0)):
            if 0 <= cut < K - 1:
                j = source[:, cut]
                G[rows, S + j] += sign * f[:, cut]
                G[rows[:, None], index[j]] -= sign * Xd * f[:, cut, None]
        var[:, k] = np.einsum("ij,jk,ik->i", G, V, G)
    p = np.exp(logp)
    se = np.sqrt(np.clip(var, 0.0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        log_odds = logp - np.log(-np.expm1(logp))
        se_odds = se / (p * (1.0 - p))
    z = stats.norm.isf((1.0 - float(level)) / 2.0)
    index = X.index if isinstance(X, pd.DataFrame) else pd.RangeIndex(n)
    frame = pd.DataFrame({"mean": p.ravel(), "std_err": se.ravel(),
                          "ci_low": special.expit(log_odds - z * se_odds).ravel(),
                          "ci_high": special.expit(log_odds + z * se_odds).ravel()},
                         index=pd.MultiIndex.from_product([index, estimator.classes_.tolist()],
                                                          names=["row", "class"]))
    return frame


def ordinal_summary_text(model: Any, table: pd.DataFrame) -> SummaryText:
    """The header of the fit (link, method, covariance, likelihood statistics) above the
    coefficient table, as statsmodels' ``OrderedModel`` summary shows it."""
    alpha = float(model.alpha)

    def rows(items: list[tuple[str, Any, str]]) -> list[tuple[str, str]]:
        return [(label, format_p(v, 4) if kind == "p" else format_value(v))
                for label, v, kind in items
                if v is not None and not (isinstance(v, float) and np.isnan(v))]

    left = rows([("Model", f"OrdinalRegression ({model.link})", ""),
                 ("Method", "MLE" if alpha == 0 else f"MAP, alpha={alpha:g}", ""),
                 ("Covariance", model.cov_type, ""), ("Converged", bool(model.converged_), ""),
                 ("Iterations", model.n_iter_, ""), ("AIC", model.aic_, ""),
                 ("BIC", model.bic_, "")])
    right = rows([("No. Observations", model.n_obs_, ""), ("Df Residuals", model.df_resid_, ""),
                  ("Df Model", model.df_model_, ""), ("Log-Likelihood", model.log_likelihood_, ""),
                  ("LL-Null", model.null_log_likelihood_, ""),
                  ("Pseudo R-squ.", model.pseudo_r2_, ""),
                  ("LLR p-value", model.lr_pvalue_, "p")])
    notes = ["P(y <= k | x) = F(theta_k - x'beta): the cut-points 'a|b' separate classes a "
             "and b; a positive slope moves the rows towards the higher classes."]
    if model._result.nominal is not None:
        notes.append("Partial proportional odds: a column 'x' of nominal= has a slope per "
                     "cut, 'x:a|b' (P(y <= k | x) = F(theta_k - x'beta_k)); R clm's "
                     "'a|b.x' is minus it.")
    return format_summary("OrdinalRegression results", left, right, table, notes)
