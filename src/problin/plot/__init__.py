"""Plots of fitted models, drawn with matplotlib (``pip install 'problin[report]'``).

Each plot is a display object in the manner of scikit-learn's ``*Display``: a class
method ``from_estimator`` (and ``from_predictions`` where predictions suffice) computes
what is drawn, keeps it as attributes that can be checked, and draws it on ``ax`` (a new
figure if None); the drawn display has ``ax_`` and ``figure_``. Each has a function
``plot_*`` returning the Axes.

=========================  ==========================  =========================================
display                    function                    what it shows
=========================  ==========================  =========================================
DecisionRegionsDisplay     plot_decision_regions       predicted class over two features, with
                                                       probability contours (one feature:
                                                       class probabilities along it)
ReliabilityDisplay         plot_reliability            calibration: observed frequency against
                                                       predicted probability, bin counts
RocDisplay                 plot_roc                    ROC curves and their areas
PredictiveBandDisplay      plot_predictive_band        predictive mean ± k sd along a feature
CoefficientDisplay         plot_coefficients           coefficients with ``summary()``'s intervals
McmcTraceDisplay           plot_mcmc_trace             MCMC draws of a parameter per chain
OptimiserTraceDisplay      plot_optimiser_trace        the optimiser's objective per iteration
ActivationUncertaintyDisplay                           posterior sd of a Bayesian classifier's
                                                       linear predictor over two features
OrdinalProbabilityDisplay  plot_ordinal_probabilities  ordered classes along a feature: the
                                                       cumulative P(y <= k), or the stack
=========================  ==========================  =========================================

Features not plotted are held at their mean (continuous) or their most frequent value
(discrete: at most 10 distinct values); by default the plotted features are the
continuous ones that move the model most, never a 0/1 indicator
(:func:`default_features`). Points of discrete features are jittered and drawn
translucent, so that classes on top of each other both show.

Examples
--------
>>> from problin import LogisticRegression
>>> from problin.datasets import load_dataset
>>> from problin.plot import plot_roc
>>> X, y = load_dataset("breast-cancer")
>>> ax = plot_roc(LogisticRegression(alpha=1.0).fit(X, y), X, y)
>>> ax.get_xlabel()
'false positive rate'
"""
from typing import Any

from .._optional import missing_dependency
from ._data import columns_of, importance
from ._data import default_features as _choose

try:  # matplotlib is the ``report`` extra: without it, one error naming the extra
    from .band import PredictiveBandDisplay, plot_predictive_band
    from .calibration import ReliabilityDisplay, plot_reliability
    from .coefficients import CoefficientDisplay, plot_coefficients
    from .ordinal import OrdinalProbabilityDisplay, plot_ordinal_probabilities
    from .regions import DecisionRegionsDisplay, plot_decision_regions
    from .roc import RocDisplay, plot_roc
    from .trace import (
        McmcTraceDisplay,
        OptimiserTraceDisplay,
        plot_mcmc_trace,
        plot_optimiser_trace,
    )
    from .uncertainty import ActivationUncertaintyDisplay
except ModuleNotFoundError as exc:
    if (exc.name or "").partition(".")[0] != "matplotlib":
        raise
    raise missing_dependency("matplotlib", "report", "problin.plot") from exc

__all__ = [
    "DecisionRegionsDisplay", "ReliabilityDisplay", "RocDisplay", "PredictiveBandDisplay",
    "CoefficientDisplay", "McmcTraceDisplay", "OptimiserTraceDisplay",
    "ActivationUncertaintyDisplay", "OrdinalProbabilityDisplay",
    "plot_decision_regions", "plot_reliability", "plot_roc", "plot_predictive_band",
    "plot_coefficients", "plot_mcmc_trace", "plot_optimiser_trace",
    "plot_ordinal_probabilities", "default_features",
]


def default_features(model: Any, X: Any, n: int = 2) -> list[int]:
    """Indices of the ``n`` features the plots show by default for ``model`` on ``X``:
    continuous features first (more than 10 distinct values), by ``|coef| * sd`` where the
    model has coefficients, then features with 3 to 10 values; never a two-valued
    indicator or a constant. Fewer than ``n`` when there are not enough.

    Examples
    --------
    >>> import numpy as np
    >>> from problin import LinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([rng.integers(0, 2, 200), rng.normal(size=200), rng.normal(size=200)])
    >>> y = 5 * X[:, 0] + X[:, 1] + 0.1 * X[:, 2] + rng.normal(size=200)
    >>> default_features(LinearRegression().fit(X, y), X, n=1)
    [1]
    """
    cols = columns_of(X)
    return _choose(cols, importance(model, cols), n)
