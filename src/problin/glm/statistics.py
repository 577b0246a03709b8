"""Likelihood statistics of a fitted GLM classifier: the null model, AIC, BIC, LR test.

For a model with log-likelihood ``l`` at its estimate, ``k`` estimated
(identified) parameters and ``n`` observations,

.. math::

    \\mathrm{AIC} = -2 l + 2 k, \\quad \\mathrm{BIC} = -2 l + k \\log n, \\quad
    D = -2 l, \\quad R^2_{\\mathrm{McF}} = 1 - l / l_0, \\quad
    \\mathrm{LR} = 2 (l - l_0) \\sim \\chi^2_{\\mathrm{df}},

where ``l_0`` is the log-likelihood of the intercept-only model (same weights
and offset; Greene, *Econometric Analysis*, 8th ed., §14.6 and §17.3;
McFadden 1974). The deviance of binary and categorical targets is ``-2 l``
(the saturated model's log-likelihood is 0). The conventions are statsmodels'
``Logit``/``Probit``/``MNLogit``: ``df_model`` is ``k`` minus the null model's
parameters (1, or K - 1 for softmax: ``(K - 1) (r - 1)`` with r identified
columns per block; also without an intercept, where the null model still has
one), the LR test has ``df_model`` degrees of freedom, ``df_resid = n - k``. Sample weights
are frequency weights (weight 2 is a duplicated row): ``n`` is the sum of the
weights, as statsmodels ``GLM(freq_weights=...)`` uses for ``df_resid`` and BIC
and as ``Logit`` reports on the duplicated rows.
"""
import functools
from typing import Any, Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray
from scipy import special

from .._core.model.exponential_family import ExponentialFamily
from .._core.model.fitted_rows import RowProducts, RowSum
from .._core.types import FloatArray

__all__ = ["likelihood_statistics", "null_log_likelihood", "offset_null_log_likelihood",
           "regression_statistics"]

Eta = TypeVar("Eta")
Eta_contra = TypeVar("Eta_contra", contravariant=True)
Null = TypeVar("Null")

#: The statistics that assume maximum likelihood (NaN for penalised fits).
ML_ONLY = ("aic_", "bic_", "lr_statistic_", "lr_pvalue_")


def null_log_likelihood(totals: NDArray[np.float64]) -> float:
    """``sum_k n_k log(n_k / n)``: the intercept-only model, whose fitted class
    probabilities are the weighted class frequencies (closed form for the logit,
    probit and softmax links alike: the intercepts can reach any frequencies)."""
    totals = np.asarray(totals, dtype=np.float64)
    n = float(totals.sum())
    used = totals[totals > 0]
    return float(np.sum(used * np.log(used / n)))


def offset_null_log_likelihood(family: Any, y: NDArray[np.float64], offset: NDArray[np.float64],
                               sample_weight: NDArray[np.float64] | None,
                               max_iter: int = 100) -> float:
    """The intercept-only binary model ``F(b + o_i)`` with a known offset ``o``:
    the log-likelihood at its maximum over ``b``, by Newton's method in one
    parameter (safeguarded by step halving; the objective is convex in ``b``)."""
    mean = float(np.average(y, weights=sample_weight))
    b = float(family.link(np.clip(mean, 1e-10, 1.0 - 1e-10))) - float(
        np.average(offset, weights=sample_weight))
    loss, g, h = family.derivatives(y, offset + b, sample_weight, "observed")
    for _ in range(max_iter):
        grad, curv = float(np.sum(g)), float(np.sum(h))
        if curv <= 0 or not np.isfinite(curv):
            break
        step = -grad / curv
        for _ in range(60):
            new_loss, g_new, h_new = family.derivatives(y, offset + b + step, sample_weight,
                                                        "observed")
            if new_loss <= loss + 1e-12 * abs(loss):
                break
            step *= 0.5
        b += step
        done = abs(new_loss - loss) <= 1e-15 * max(abs(loss), 1.0)
        loss, g, h = new_loss, g_new, h_new
        if done or abs(step) <= 1e-14 * max(abs(b), 1.0):
            break
    return -float(loss)


def likelihood_statistics(log_likelihood: float, null_log_likelihood: float, n_obs: float,
                          n_estimated: int, n_null: int, penalised: bool
                          ) -> dict[str, float]:
    """The fitted attributes ``log_likelihood_`` ... ``lr_pvalue_`` (module docstring).

    ``n_estimated``: identified parameters ``k``; ``n_null``: the null model's
    parameters (1 binary, K - 1 softmax). For penalised fits (``alpha > 0``)
    the log-likelihood, deviance and pseudo-R^2 are those of the MAP estimate,
    and AIC, BIC and the LR test, which assume maximum likelihood, are NaN.
    """
    ll, ll0 = float(log_likelihood), float(null_log_likelihood)
    df_model = float(n_estimated - n_null)
    lr = 2.0 * (ll - ll0)
    out: dict[str, float] = {
        "log_likelihood_": ll, "null_log_likelihood_": ll0,
        "aic_": -2.0 * ll + 2.0 * n_estimated,
        "bic_": -2.0 * ll + np.log(n_obs) * n_estimated if n_obs > 0 else np.nan,
        "deviance_": -2.0 * ll, "df_model_": df_model,
        "df_resid_": float(n_obs - n_estimated), "n_obs_": float(n_obs),
        "pseudo_r2_": 1.0 - ll / ll0 if ll0 != 0 else np.nan,
        "lr_statistic_": lr,
        # (special.chdtrc is what stats.chi2.sf evaluates, without its ~0.1 ms of checks)
        "lr_pvalue_": float(special.chdtrc(df_model, lr)) if df_model > 0 else np.nan,
    }
    if penalised:
        out.update(dict.fromkeys(ML_ONLY, np.nan))
    return out


class RegressionTargets(Protocol[Eta_contra, Null]):
    """What the statistics ask of a regressor's rows at its linear predictors ``Eta``, in
    memory (:class:`~problin.glm._regression_data.RegressionData`: arrays) or in Dask
    chunks (:class:`~problin._dask.regression.DaskRegressionRows`: each answer a pass);
    ``Null``: their intercept-only model."""

    @property
    def n_obs(self) -> float: ...

    def fitted_sums(self, family: ExponentialFamily, eta: Eta_contra) -> tuple[float, float]:
        """``(deviance, Pearson's chi²)`` at the linear predictors ``eta`` (no offset)."""
        ...

    def null_model(self, family: ExponentialFamily) -> Null:
        """The intercept-only model (with the offset)."""
        ...

    def likelihoods(self, family: ExponentialFamily, eta: Eta_contra, null: Null,
                    ll_scale: float, phi: float) -> tuple[float, float, float]:
        """``(log-likelihood at eta and ll_scale, the null model's at phi, its deviance)``."""
        ...

    def row_sums(self, design: RowProducts | None, family: ExponentialFamily,
                 eta: Eta_contra, op: RowSum) -> tuple[float | FloatArray, ...]:
        """``op`` summed over the rows at ``eta`` (the maximum-likelihood dispersion's
        score: no design)."""
        ...


def regression_statistics(family: ExponentialFamily, data: RegressionTargets[Eta, Null],
                          eta: Eta, n_estimated: int,
                          scale: float | str | None, penalised: bool,
                          extra_params: int = 0,
                          sums: tuple[float, float] | None = None) -> dict[str, float]:
    """A GLM regressor's fitted statistics at its linear predictor ``eta`` (without the
    offset; ``data``: the rows, :class:`RegressionTargets`).

    With ``k`` estimated parameters and ``n`` observations (the sum of the frequency
    weights): the deviance ``D`` and Pearson's ``X²`` (McCullagh & Nelder 1989, §2.4),
    the dispersion ``phi`` (the family's where ``scale`` is None: 1 where fixed, else
    Pearson's ``X² / df_resid``; ``"X2"``, ``"dev"``: Pearson's or the deviance's over
    ``df_resid``; ``"ml"``: the maximum-likelihood dispersion at the fitted means, the
    family's ``ml_dispersion``; a number: that value), the log-likelihood ``l`` at ``phi``
    (the family's; for the Gaussian with the identity link at the maximum-likelihood
    ``phi = RSS / n``, as statsmodels' and ``LinearRegression``'s), the same for the
    intercept-only model (fitted with the offset), ``AIC = -2 l + 2 k`` and
    ``BIC = -2 l + k log n`` (statsmodels' ``aic`` and ``bic_llf``, the scale not
    counted as a parameter; ``extra_params`` estimated ones outside the coefficients, the
    negative binomial's alpha, are: statsmodels ``NegativeBinomial``'s ``aic``),
    ``df_model = k - 1``, ``df_resid = n - k``. AIC and BIC are NaN for penalised fits
    (not maximum likelihood). ``sums``: ``data.fitted_sums(family, eta)`` where the
    caller has them already (a pass over the rows saved).
    """
    n_obs = data.n_obs
    df_resid = float(n_obs - n_estimated)
    deviance, pearson = data.fitted_sums(family, eta) if sums is None else sums
    if isinstance(scale, (int, float)):
        phi = float(scale)
    elif scale is None and family.fixed_dispersion:
        phi = 1.0
    elif scale == "ml":  # (a search whose every step is one sum over the rows)
        phi = family.ml_dispersion(functools.partial(data.row_sums, None, family, eta),
                                   deviance, n_obs)
    else:
        phi = (deviance if scale == "dev" else pearson) / df_resid if df_resid > 0 else np.nan
    null = data.null_model(family)
    # (the family's reporting convention: statsmodels' Gaussian identity-link model at the
    # maximum-likelihood dispersion RSS / n, the concentrated likelihood of least squares)
    ll_scale = family.log_likelihood_scale(phi, deviance, n_obs) if scale is None else phi
    ll, ll0, null_deviance = data.likelihoods(family, eta, null, ll_scale, phi)
    return {
        "deviance_": float(deviance), "null_deviance_": null_deviance,
        "pearson_chi2_": float(pearson), "scale_": phi,
        "log_likelihood_": float(ll), "null_log_likelihood_": float(ll0),
        "aic_": np.nan if penalised else -2.0 * ll + 2.0 * (n_estimated + extra_params),
        "bic_": np.nan if penalised or n_obs <= 0
        else -2.0 * ll + np.log(n_obs) * (n_estimated + extra_params),
        "df_model_": float(n_estimated - 1), "df_resid_": df_resid, "n_obs_": n_obs,
        "scale_estimated_": not (scale is None and family.fixed_dispersion)
        and not isinstance(scale, (int, float)),
    }
