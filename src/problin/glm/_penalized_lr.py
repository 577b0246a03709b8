"""Likelihood-ratio tests by refitting a model under restrictions: ``summary(pvalues="lr")``
and the estimators' ``restricted_lr_test``.

The restricted fit minimises the fit's own objective over ``R beta = q`` (``beta`` the
reported parameters, :func:`problin._core.solvers.profile.constrained_minimum`); the
statistic is ``2 (f_restricted - f_hat) / phi``, chi² on the number of restrictions.
For maximum-likelihood fits this is the ordinary likelihood-ratio test (Wilks 1938; R's
``drop1(test="Chisq")`` parameter by parameter: the deviance change over the fitted
dispersion). For Firth's fits it is the penalised likelihood-ratio test of Heinze &
Schemper (2002), R ``logistf``'s p-values and ``logistftest``: the objective keeps the
Jeffreys penalty of the *full* model, ``1/2 log|I(beta)|`` of the full design at the
restricted ``beta``, so that ``anova(fit, smaller_fit)`` (logistf's default ``method =
"nested"``) is this test of the smaller model's missing terms at 0.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._core.solvers.profile import ConstrainedMinimum, constrained_minimum
from ..exceptions import ConvergenceWarning
from ..inference.hypothesis import Restrictions, TestResult, restriction_matrix, table_names
from ._profile import Refit

__all__ = ["PVALUE_KINDS", "check_pvalues", "lr_pvalue_table", "restricted_lr_test"]

#: The p-values ``summary(pvalues=...)`` shows.
PVALUE_KINDS = ("wald", "lr")


def check_pvalues(pvalues: str, X: Any, y: Any, alpha: float, prior: bool = False) -> None:
    """One clear error for an unknown ``pvalues``, LR p-values asked for without the
    rows, or for an L2 fit (its penalised likelihood ratio has no chi² reference;
    ``prior``: a Gaussian prior of the estimator's own, ``prior_mean``/``prior_precision``)."""
    if pvalues not in PVALUE_KINDS:
        raise ValueError(f"pvalues must be one of {PVALUE_KINDS}; got {pvalues!r}")
    if pvalues == "lr":
        check_lr_inputs(X, y, alpha, "pvalues='lr'", prior)


def check_lr_inputs(X: Any, y: Any, alpha: float, what: str, prior: bool = False) -> None:
    """The training rows are needed and an L2 ``alpha`` is refused."""
    if X is None or y is None:
        raise ValueError(f"{what} refits the model under each restriction: pass the "
                         "training rows X and y (the estimator keeps no copy of its "
                         "training data)")
    if alpha > 0 or prior:
        penalty = f"alpha={alpha:g}" if alpha > 0 else "prior_mean/prior_precision"
        raise ValueError(f"{what} needs a maximum-likelihood or Firth fit: an L2 penalty "
                         f"({penalty}) gives no chi-squared likelihood ratio")


def _minimum(refit: Refit) -> ConstrainedMinimum:
    """The unconstrained minimum, polished by the same iteration as the restricted fits
    (so that both objectives carry the same error)."""
    empty = np.zeros((0, refit.theta.size))
    return constrained_minimum(refit.function, refit.theta, empty, np.zeros(0))


def _statistic(refit: Refit, f_hat: float, C: np.ndarray, v: np.ndarray, label: str
               ) -> float:
    """``2 (f_restricted - f_hat) / phi`` of the restriction ``C theta = v``; a restricted
    fit that does not converge warns (its statistic is then a lower bound)."""
    restricted = constrained_minimum(refit.function, refit.theta, C, v)
    if not restricted.converged:
        warnings.warn(f"likelihood-ratio test of {label}: the restricted fit did not converge "
                      f"in {restricted.n_iter} iterations (its statistic is a lower bound, "
                      "as under separation)", ConvergenceWarning, stacklevel=4)
    return max(2.0 * (restricted.value - f_hat) / refit.phi, 0.0)


def lr_pvalue_table(table: pd.DataFrame, refit: Refit) -> pd.DataFrame:
    """``table`` (a ``summary()``) with its ``z``/``t`` column replaced by ``chi2``, the
    likelihood-ratio statistic of each parameter at 0 (the model refitted without it),
    and ``p_value`` by its chi²(1) tail; parameters not identified keep NaN."""
    f_hat = _minimum(refit).value
    keep = np.isfinite(table["std_err"].to_numpy(dtype=np.float64))
    chi2 = np.full(len(table), np.nan)
    for j in map(int, np.flatnonzero(keep)):
        chi2[j] = _statistic(refit, f_hat, refit.T[j:j + 1], np.zeros(1),
                             f"{table.index[j]} = 0")
    statistic = "t" if "t" in table.columns else "z"
    out = table.rename(columns={statistic: "chi2"})
    out["chi2"] = chi2
    out["p_value"] = stats.chi2.sf(chi2, 1)
    out.attrs.update(table.attrs)
    out.attrs["pvalues"] = "lr"
    out.attrs["pvalue_note"] = (
        ("Penalised likelihood-ratio" if refit.penalised else "Likelihood-ratio")
        + " tests: chi2 = 2 (l_hat - l_0)" + ("" if refit.phi == 1.0 else " / dispersion")
        + " of each parameter fixed at 0, the model refitted"
        + (" with the full model's Jeffreys penalty (logistf's)" if refit.penalised else "")
        + ".")
    return out


def restricted_lr_test(table: pd.DataFrame, refit: Refit, R: Restrictions,
                       q: Any = None) -> TestResult:
    """The likelihood-ratio test of ``R beta = q`` (``beta`` in the order of the
    ``summary()`` ``table``) by the model refitted under it: chi² on the number of
    restrictions."""
    R_arr, q_arr = restriction_matrix(R, q, table_names(table.index))
    identified = np.isfinite(table["std_err"].to_numpy(dtype=np.float64))
    if np.any(R_arr[:, ~identified] != 0):
        raise ValueError("the restrictions involve parameters that are not identified "
                         "(collinear columns): restrict the identified ones only")
    f_hat = _minimum(refit).value
    statistic = _statistic(refit, f_hat, R_arr @ refit.T, q_arr, "the restrictions")
    df = float(R_arr.shape[0])
    return TestResult(statistic, df, float(stats.chi2.sf(statistic, df)))
