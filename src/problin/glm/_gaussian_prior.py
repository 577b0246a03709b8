"""The estimators' ``prior_mean`` and ``prior_precision``: a Gaussian prior ``N(m_0, S_0^-1)``
on the raw parameters (Bishop 2006, §4.5, eq. 4.140), as one validated value object.

The parameters are ``theta = [b, w_1, ..., w_D]``: the intercept first where
``fit_intercept``, then the slopes in the order of X's columns (one linear predictor:
binary classifiers and the GLM regressors). The prior is on the *raw* intercept, the
texts' model, whatever the data's centre; the solvers see it in their own basis
(``GaussianPenalty.on_raw``). How the parameters combine with ``alpha``:

* the penalised GLMs (``LogisticRegression``, ``ProbitRegression``, the regressors):
  ``prior_precision`` *is* ``S_0`` (positive semidefinite: a zero row leaves its
  parameter unpenalised), and then ``alpha`` must be 0; ``prior_mean`` alone centres
  ``alpha``'s ridge, ``S_0 = diag(0, alpha, ..., alpha)`` (the intercept unpenalised).
* ``BayesianLogisticRegression``: ``S_0 = alpha P`` as in ``BayesianLinearRegression``
  (``alpha=1``, the default, uses ``prior_precision = P`` as it is), positive definite
  (a proper prior, so that the evidence is a marginal likelihood); ``prior_mean``
  alone: ``S_0 = diag(intercept_alpha, alpha, ..., alpha)`` on the raw intercept.
  ``intercept_alpha`` other than its default does not combine with
  ``prior_precision`` (the intercept's precision is its first row and column).

Firth's penalty (the Jeffreys prior) does not combine with them (one clear error).
"""
from typing import Any, Protocol

import numpy as np

from .._core.model.prior import GaussianPrior

__all__ = ["PRIOR_CONSTRAINTS", "PriorSettings", "GLMPriorSettings", "BayesPriorSettings",
           "bayes_prior",
           "glm_prior", "has_prior", "penalised"]

#: scikit-learn's constraints of the two parameters (shapes and values are checked at fit).
PRIOR_CONSTRAINTS: dict[str, list[Any]] = {"prior_mean": ["array-like", None],
                                           "prior_precision": ["array-like", None]}


class PriorSettings(Protocol):
    """What the prior reads of an estimator."""

    alpha: Any
    prior_mean: Any
    prior_precision: Any


class GLMPriorSettings(PriorSettings, Protocol):
    """What a penalised GLM's prior reads of it."""

    fit_intercept: bool
    penalty: str


class BayesPriorSettings(PriorSettings, Protocol):
    """What a Bayesian logistic regression's prior reads of it."""

    fit_intercept: bool
    alpha_prior: Any


def has_prior(est: PriorSettings) -> bool:
    """Whether ``est`` was given a Gaussian prior of its own (``prior_mean`` or
    ``prior_precision``)."""
    return est.prior_mean is not None or est.prior_precision is not None


def penalised(est: PriorSettings) -> bool:
    """Whether ``est``'s estimate maximises a likelihood penalised by a Gaussian prior
    (``alpha > 0`` or a prior of its own): AIC, BIC and the LR test do not apply, and
    the coefficients stay finite under separation."""
    return est.alpha > 0 or has_prior(est)


def _parameters(fit_intercept: bool, n_features: int) -> str:
    """The parameters a prior is on, for its error messages."""
    head = "[intercept, coef_1, ...]" if fit_intercept else "[coef_1, ...]"
    return f"{head} for {n_features} feature{'s' * (n_features != 1)}"


def glm_prior(est: GLMPriorSettings, n_features: int) -> GaussianPrior | None:
    """The prior of a penalised GLM (None: ``alpha``'s ridge or maximum likelihood)."""
    if not has_prior(est):
        return None
    penalty = est.penalty
    if penalty != "l2":
        raise ValueError(f"penalty={penalty!r} (the Jeffreys prior) does not combine with "
                         "prior_mean/prior_precision: use penalty='l2' with them")
    p = n_features + int(est.fit_intercept)
    if est.prior_precision is not None:
        if est.alpha != 0:
            raise ValueError(f"alpha={est.alpha!r} and prior_precision both set the prior's "
                             "precision: give prior_precision alone (the whole S_0, the "
                             "intercept's row included), or alpha alone")
        precision = est.prior_precision
    else:
        if not est.alpha > 0:
            raise ValueError("prior_mean needs a precision: give alpha > 0 (a ridge centred "
                             "at prior_mean, the intercept unpenalised) or prior_precision")
        precision = np.full(p, float(est.alpha))
        if est.fit_intercept:
            precision[0] = 0.0
    return GaussianPrior(est.prior_mean, precision, p, definite=False,
                         parameters=_parameters(est.fit_intercept, n_features))


def bayes_prior(est: BayesPriorSettings, n_features: int, alpha: float | None,
                intercept_alpha: float, intercept_default: float) -> GaussianPrior | None:
    """The prior of a Bayesian logistic regression at unit scale: ``N(m_0, P^-1)``, whose
    precision ``alpha`` scales (``alpha=None``: estimated; with ``prior_precision``
    only). None: the estimator's own prior, on the intercept at the data's centre."""
    if not has_prior(est):
        return None
    p = n_features + int(est.fit_intercept)
    if est.prior_precision is not None:
        if intercept_alpha != intercept_default:
            raise ValueError(f"intercept_alpha={intercept_alpha!r} does not combine with "
                             "prior_precision, whose first row and column are the "
                             "intercept's precision: leave intercept_alpha at its default")
        base = est.prior_precision
    else:
        if alpha is None or est.alpha_prior is not None:
            what = "alpha=None" if alpha is None else "alpha_prior"
            raise ValueError(f"{what} estimates the scale of prior_precision: give "
                             "prior_precision with prior_mean, or a fixed alpha")
        if est.fit_intercept and not intercept_alpha > 0:
            raise ValueError("prior_mean places a proper prior on the raw intercept: "
                             "intercept_alpha must be > 0 with it")
        base = np.ones(p)
        if est.fit_intercept:
            base[0] = intercept_alpha / alpha
    return GaussianPrior(est.prior_mean, base, p, definite=True,
                         parameters=_parameters(est.fit_intercept, n_features))
