"""The posterior summary table of :class:`~problin.bayesian.BayesianLogisticRegression`."""
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ..glm.inference import parameter_names
from ..glm.problem import parameter_index
from .result import PosteriorFit

__all__ = ["posterior_table"]


def posterior_table(est: Any, fit: PosteriorFit, level: float) -> pd.DataFrame:
    """``mean, sd, z, p_opposite, ci_low, ci_high`` per parameter of ``fit``, the
    posterior of ``est`` (whose feature names and classes index the table; see
    ``BayesianLogisticRegression.summary``): normal quantiles of a Gaussian
    posterior, or quantiles of the MCMC draws."""
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    mean = fit.mean
    samples = fit.samples
    if samples is not None:
        flat = samples.reshape(-1, samples.shape[2])
        sd = flat.std(axis=0, ddof=1) if flat.shape[0] > 1 else np.zeros(mean.size)
        lo, hi = np.quantile(flat, [(1 - level) / 2, (1 + level) / 2], axis=0)
        p_opp = np.mean(np.sign(flat) == -np.sign(mean), axis=0)
    else:
        sd = np.sqrt(np.clip(np.diag(fit.cov), 0.0, None))
        q = stats.norm.isf((1.0 - float(level)) / 2.0)
        lo, hi = mean - q * sd, mean + q * sd
        with np.errstate(divide="ignore", invalid="ignore"):
            p_opp = stats.norm.sf(np.abs(mean / sd))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = mean / sd
    names = parameter_names(est, est.n_features_in_)
    index = parameter_index(est._fitted_family(), names, est.classes_, fit.n_blocks)
    table = pd.DataFrame({"mean": mean, "sd": sd, "z": z, "p_opposite": p_opp,
                          "ci_low": lo, "ci_high": hi}, index=index)
    table.attrs.update(model=type(est).__name__, inference=fit.inference,
                       n_obs=fit.n_obs, alpha=fit.alpha, level=float(level),
                       log_evidence=fit.log_evidence)
    return table
