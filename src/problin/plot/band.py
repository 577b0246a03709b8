"""Posterior predictive band along one feature: the predictive mean and ± k standard
deviations (or the interval of the same nominal coverage)."""
import inspect
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from scipy.stats import norm
from sklearn.base import is_classifier

from ._base import Display
from ._data import columns_of, final_step, grid, jitter, plotted_features, subsample

__all__ = ["PredictiveBandDisplay", "plot_predictive_band"]


class PredictiveBandDisplay(Display):
    """The predictive distribution along one feature, the others held at their mean
    (continuous) or mode (discrete).

    A model whose ``predict`` takes ``return_std`` (``BayesianLinearRegression``) is drawn
    as ``mean ± k sd`` of the posterior predictive. A model with ``predict_interval``
    gets the interval of the same nominal coverage, ``level = 2 Phi(k) - 1`` (95.4 % for
    ``k = 2``): for ``LinearRegression`` the interval of a new observation, for a binary
    ``LogisticRegression``/``ProbitRegression`` the confidence interval of the
    probability of the second class.

    Attributes: ``x`` (the grid), ``mean``, ``low``, ``high``, ``band_label``,
    ``feature_name``, ``points`` (``(feature, target)`` rows drawn, or None); after
    :meth:`plot`, ``ax_``, ``figure_``, ``band_``, ``line_``.

    Examples
    --------
    >>> from problin import BayesianLinearRegression
    >>> from problin.datasets import load_dataset
    >>> from problin.plot import PredictiveBandDisplay
    >>> X, y = load_dataset("diabetes")
    >>> model = BayesianLinearRegression().fit(X, y)
    >>> display = PredictiveBandDisplay.from_estimator(model, X, y, feature="bmi")
    >>> display.band_label
    'mean ± 2 sd'
    """

    def __init__(self, *, x: np.ndarray, mean: np.ndarray, low: np.ndarray, high: np.ndarray,
                 band_label: str, feature_name: str, ylabel: str = "prediction",
                 points: np.ndarray | None = None, discrete: bool = False) -> None:
        self.x, self.mean, self.low, self.high = x, mean, low, high
        self.band_label, self.feature_name, self.ylabel = band_label, feature_name, ylabel
        self.points, self.discrete = points, discrete

    @classmethod
    def from_estimator(cls, estimator: Any, X: Any, y: Any = None, *,
                       feature: int | str | None = None, k: float = 2.0,
                       grid_resolution: int = 200, max_points: int = 2000,
                       ax: Axes | None = None, alpha: float = 0.4,
                       random_state: int = 0) -> "PredictiveBandDisplay":
        """Evaluate the predictive distribution along ``feature`` and draw it.

        Parameters
        ----------
        estimator : fitted regressor or binary classifier, or a Pipeline ending in one
            With ``predict(X, return_std=True)`` or ``predict_interval(X, level)``.
        X : DataFrame or ndarray of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), optional
            Targets, drawn as points (for a classifier, 1 for the second class).
        feature : name or index, optional
            Default: the continuous feature with the largest ``|coef| * sd``.
        k : float, default=2.0
            Half-width of the band in standard deviations.
        grid_resolution : int, default=200
        max_points : int, default=2000
        ax : matplotlib Axes, optional
        alpha : float, default=0.4
            Opacity of the points.
        random_state : int, default=0
            Seed of the subset of points and of the jitter of a discrete feature.

        Returns
        -------
        PredictiveBandDisplay
        """
        if not k > 0:
            raise ValueError(f"k must be positive, got {k}")
        cols = columns_of(X)
        j = plotted_features(estimator, cols, feature, most=1)[0]
        G, (xs,) = grid(cols, [j], grid_resolution)
        mean, low, high, label, ylabel = _band(estimator, cols.as_input(G), k)
        points = None
        if y is not None:
            t = np.asarray(y)
            if t.shape != (len(cols.values),):
                raise ValueError(f"y must have one value per row of X ({len(cols.values)}), "
                                 f"got shape {t.shape}")
            if is_classifier(final_step(estimator)):
                t = (t == final_step(estimator).classes_[1]).astype(np.float64)
            rows = subsample(len(t), max_points, random_state)
            points = np.column_stack([cols.values[rows, j], t[rows].astype(np.float64)])
        display = cls(x=xs, mean=mean, low=low, high=high, band_label=label,
                      feature_name=cols.names[j], ylabel=ylabel, points=points,
                      discrete=bool(cols.discrete[j]))
        display.plot(ax, alpha=alpha, random_state=random_state)
        return display

    def _draw(self, ax: Axes, alpha: float = 0.4, random_state: int = 0) -> None:
        self.band_ = ax.fill_between(self.x, self.low, self.high, alpha=0.3,
                                     label=self.band_label)
        (self.line_,) = ax.plot(self.x, self.mean, label="predictive mean")
        if self.points is not None:
            rng = np.random.default_rng(random_state)
            ax.scatter(jitter(self.points[:, 0], self.discrete, rng), self.points[:, 1], s=9,
                       color="k", alpha=alpha, linewidths=0, label="data")
        ax.set_xlabel(f"{self.feature_name} (other features at their mean or mode)")
        ax.set_ylabel(self.ylabel)
        ax.set_title("Predictive distribution")
        ax.legend(fontsize="small", loc="best")


def _band(estimator: Any, G: Any,
          k: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, str, str]:
    """``(mean, low, high, band label, y label)`` over the rows ``G``."""
    est = final_step(estimator)
    name = type(est).__name__
    if "return_std" in inspect.signature(est.predict).parameters:
        mean, std = (np.asarray(v, dtype=np.float64)
                     for v in estimator.predict(G, return_std=True))
        _one_output(mean, name)
        return mean, mean - k * std, mean + k * std, f"mean ± {k:g} sd", "prediction"
    if not hasattr(est, "predict_interval"):
        raise TypeError(f"{name} has neither predict(return_std=True) nor predict_interval: "
                        "it gives no predictive band")
    level = float(2.0 * norm.cdf(k) - 1.0)
    Z = estimator[:-1].transform(G) if hasattr(estimator, "steps") else G
    frame = est.predict_interval(Z, level=level)
    lo, hi = ("obs_ci_low", "obs_ci_high") if "obs_ci_low" in frame else ("ci_low", "ci_high")
    what = "prediction interval" if lo.startswith("obs") else "confidence interval"
    ylabel = f"p({est.classes_[1]})" if is_classifier(est) else "prediction"
    return (frame["mean"].to_numpy(np.float64), frame[lo].to_numpy(np.float64),
            frame[hi].to_numpy(np.float64), f"{level:.1%} {what}", ylabel)


def _one_output(mean: np.ndarray, name: str) -> None:
    if mean.ndim != 1:
        raise ValueError(f"{name} has {mean.shape[1]} outputs: a predictive band is drawn "
                         "for one; fit one model per output")


def plot_predictive_band(estimator: Any, X: Any, y: Any = None, *,
                         feature: int | str | None = None, k: float = 2.0,
                         ax: Axes | None = None, **kwargs: Any) -> Axes:
    """:meth:`PredictiveBandDisplay.from_estimator`, returning its Axes.

    Examples
    --------
    >>> from problin import LinearRegression
    >>> from problin.datasets import load_dataset
    >>> from problin.plot import plot_predictive_band
    >>> X, y = load_dataset("diabetes")
    >>> ax = plot_predictive_band(LinearRegression().fit(X, y), X, y, feature="bmi")
    """
    return PredictiveBandDisplay.from_estimator(estimator, X, y, feature=feature, k=k, ax=ax,
                                                **kwargs).ax_
