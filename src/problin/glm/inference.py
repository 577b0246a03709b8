"""Wald inference tables shared by every GLM (and later the Bayesian models)."""
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

__all__ = ["parameter_names", "wald_table"]

COLUMNS = ["coef", "std_err", "z", "p_value", "ci_low", "ci_high"]


def parameter_names(estimator: Any, n_features: int) -> list[str]:
    """``["intercept", feature names...]`` in the order of ``covariance_``."""
    names = getattr(estimator, "feature_names_in_", None)
    names = [str(n) for n in names] if names is not None else [f"x{j}" for j in range(n_features)]
    return (["intercept"] if estimator.fit_intercept else []) + names


def wald_table(names: Sequence[str] | pd.Index, coef: ArrayLike, covariance: ArrayLike,
               level: float = 0.95, identified: ArrayLike | None = None,
               df: float | None = None) -> pd.DataFrame:
    """Coefficient table with Wald standard errors, z, two-sided p-values and intervals.

    ``z = coef / std_err`` is the Wald statistic (Wald 1943): a weight divided
    by the square root of the corresponding diagonal entry of the inverse
    Hessian. Parameters that are not identified get no statistics and are
    marked in a ``note`` column (present only when there are such).

    ``df``: where the covariance carries an estimated dispersion (a Gamma or
    Gaussian GLM), the statistic is referred to Student's t on ``df`` (the
    residual degrees of freedom) and the column is named ``t``, as R's
    ``summary.glm`` does (McCullagh & Nelder 1989, §2.5 and §8.4); None: the
    normal reference (``z``).
    """
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    coef = np.asarray(coef, dtype=np.float64)
    se = np.sqrt(np.clip(np.diag(covariance), 0.0, None))
    if identified is not None:
        se = np.where(identified, se, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = coef / se
    reference: Any = stats.norm if df is None else stats.t(float(df))
    p = 2.0 * reference.sf(np.abs(z))
    q = reference.isf((1.0 - float(level)) / 2.0)
    table = pd.DataFrame({"coef": coef, "std_err": se, "z" if df is None else "t": z,
                          "p_value": p,
                          "ci_low": coef - q * se, "ci_high": coef + q * se},
                         index=names if isinstance(names, pd.MultiIndex)
                         else pd.Index(names, name="parameter"))
    if identified is not None and not np.all(identified):
        table["note"] = np.where(identified, "", "not identified (collinear)")
    return table
