"""The GLMs' :class:`~problin.inference.effects.EffectsModel`: what ``slopes``,
``comparisons`` and ``predictions`` read of a fitted classifier or regressor.

Binary classifiers and the regressors are one linear predictor and the inverse of a link
(the probability of the second class; the mean), softmax the class probabilities (all K,
the reference included); on the link scale, the linear predictors (softmax: the free
blocks' logits). Offsets are not part of the data's variables: the predictions take none
(0, as ``predict(X)`` without ``offset``).
"""
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._core.model.links import make_link
from ..inference.effects import EffectsModel, IdentityMap, LinkMap, MeanMap, SoftmaxMap
from .result import GLMFit

__all__ = ["classifier_effects_model", "regressor_effects_model"]


def _fit(estimator: Any, message: str) -> GLMFit:
    check_is_fitted(estimator)
    fit: GLMFit = estimator._result
    if fit.covariance is None:
        raise ValueError(message)
    return fit


def classifier_effects_model(estimator: Any, type: str) -> EffectsModel:
    """A GLM classifier's (binary: ``F(eta)``; softmax: the K probabilities)."""
    check_is_fitted(estimator)
    fit = _fit(estimator, estimator._no_covariance_message())
    classes = list(estimator.classes_)
    mean: MeanMap
    if len(classes) == 2:
        mean = LinkMap(make_link(estimator._family.name)) if type == "response" \
            else IdentityMap()
        outputs = None
    elif type == "response":
        mean, outputs = SoftmaxMap(fit.reference_class), classes
    else:
        mean, outputs = IdentityMap(), classes[len(classes) - fit.n_blocks:]
    return EffectsModel(fit.raw_blocks(), fit.fit_intercept, mean, outputs,
                        np.asarray(fit.covariance, dtype=np.float64), None)


def regressor_effects_model(estimator: Any, type: str) -> EffectsModel:
    """A GLM regressor's (``g^-1(eta)``; z, or t where the dispersion is estimated)."""
    fit = _fit(estimator, "covariance_ was not computed during fit (too many parameters)")
    mean: MeanMap = (LinkMap(estimator._make_family().link_function) if type == "response"
                     else IdentityMap())
    return EffectsModel(fit.raw_blocks(), fit.fit_intercept, mean, None,
                        np.asarray(fit.covariance, dtype=np.float64), fit.t_df)
