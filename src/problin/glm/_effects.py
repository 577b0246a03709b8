"""The GLMs' :class:`~problin.inference.effects.EffectsModel`: what ``slopes``,
``comparisons`` and ``predictions`` read of a fitted classifier or regressor.

Binary classifiers and the regressors are one linear predictor and the inverse of a link
(the probability of the second class; the mean), softmax the class probabilities (all K,
the reference included); on the link scale, the linear predictors (softmax: the free
blocks' logits). Offsets are not variables of the data: the methods' ``offset=`` (binary
classifiers and regressors) and ``exposure=`` (regressors of the log link) give each row
its own, as ``predict(X, offset=, exposure=)`` (none: 0, as ``predict(X)``).
"""
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._core.model.exponential_family import ExponentialFamily
from .._core.model.links import make_link
from ..inference.effects import (
    EffectsModel,
    FloatArray,
    IdentityMap,
    LinkMap,
    MeanMap,
    NoOffsets,
    RowOffsets,
    SoftmaxMap,
)
from ._regression_data import log_exposure
from .interval import check_offset
from .result import GLMFit

__all__ = ["classifier_effects_model", "regressor_effects_model"]


def _fit(estimator: Any, message: str) -> GLMFit:
    check_is_fitted(estimator)
    fit: GLMFit = estimator._result
    if fit.covariance is None:
        raise ValueError(message)
    return fit


@dataclass(frozen=True)
class GLMOffsets:
    """``offset + log(exposure)`` checked as ``predict`` checks them; ``family``: the
    regressor's (exposure needs its log link), None for a binary classifier (no
    exposure)."""

    family: ExponentialFamily | None = None

    def __call__(self, offset: Any, exposure: Any, n_rows: int) -> FloatArray | None:
        total = check_offset(offset, n_rows)
        if exposure is None:
            return total
        if self.family is None:
            raise ValueError("exposure is for the GLM regressors of the log link; a "
                             "classifier takes offset= only")
        log_e = log_exposure(self.family, exposure, n_rows)
        return log_e if total is None else total + log_e


def classifier_effects_model(estimator: Any, type: str) -> EffectsModel:
    """A GLM classifier's (binary: ``F(eta)``; softmax: the K probabilities)."""
    check_is_fitted(estimator)
    fit = _fit(estimator, estimator._no_covariance_message())
    classes = list(estimator.classes_)
    mean: MeanMap
    offsets: RowOffsets = NoOffsets("a softmax model (offsets are for binary models)")
    if len(classes) == 2:
        mean = LinkMap(make_link(estimator._family.name)) if type == "response" \
            else IdentityMap()
        outputs, offsets = None, GLMOffsets()
    elif type == "response":
        mean, outputs = SoftmaxMap(fit.reference_class), classes
    else:
        mean, outputs = IdentityMap(), classes[len(classes) - fit.n_blocks:]
    return EffectsModel(fit.raw_blocks(), fit.fit_intercept, mean, outputs,
                        np.asarray(fit.covariance, dtype=np.float64), None,
                        offsets=offsets)


def regressor_effects_model(estimator: Any, type: str) -> EffectsModel:
    """A GLM regressor's (``g^-1(eta)``; z, or t where the dispersion is estimated)."""
    fit = _fit(estimator, "covariance_ was not computed during fit (too many parameters)")
    family = estimator._make_family()
    mean: MeanMap = LinkMap(family.link_function) if type == "response" else IdentityMap()
    return EffectsModel(fit.raw_blocks(), fit.fit_intercept, mean, None,
                        np.asarray(fit.covariance, dtype=np.float64), fit.t_df,
                        offsets=GLMOffsets(family))
