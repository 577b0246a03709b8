"""Coefficients with their intervals, from a model's ``summary()``."""
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from ._base import Display
from ._data import Columns, columns_of, final_step

__all__ = ["CoefficientDisplay", "plot_coefficients"]

_ESTIMATES = ("coef", "mean")  # GLMs and least squares; Bayesian posteriors


class CoefficientDisplay(Display):
    """Each coefficient as a point with its interval (``summary()``'s ``ci_low`` and
    ``ci_high``: Wald confidence intervals of the GLMs and least squares, credible
    intervals of the Bayesian models), a line at zero, one row per parameter.

    With ``X`` given, coefficients and intervals are multiplied by the standard deviation
    of their feature, so that features in different units compare: the change of the
    linear predictor per standard deviation of the feature.

    Attributes: ``names``, ``estimate``, ``low``, ``high`` (in the order of
    ``summary()``), ``level``, ``xlabel``; after :meth:`plot`, ``ax_``, ``figure_`` and
    ``errorbar_``. Parameters the model could not identify (no interval) are drawn as
    hollow points.

    Examples
    --------
    >>> from problin import LogisticRegression
    >>> from problin.datasets import load_dataset
    >>> from problin.plot import CoefficientDisplay
    >>> X, y = load_dataset("breast-cancer")
    >>> model = LogisticRegression(alpha=1.0).fit(X.iloc[:, :5], y)
    >>> display = CoefficientDisplay.from_estimator(model)
    >>> display.names[0]
    'mean radius'
    """

    def __init__(self, *, names: list[str], estimate: np.ndarray, low: np.ndarray,
                 high: np.ndarray, level: float, xlabel: str = "coefficient") -> None:
        self.names, self.estimate, self.low, self.high = names, estimate, low, high
        self.level, self.xlabel = level, xlabel
        self._size = (6.0, 1.2 + 0.28 * len(names))  # a new figure fits the rows

    @classmethod
    def from_estimator(cls, estimator: Any, X: Any = None, *, level: float = 0.95,
                       include_intercept: bool = False,
                       ax: Axes | None = None) -> "CoefficientDisplay":
        """From a fitted model's ``summary(level)``.

        Parameters
        ----------
        estimator : fitted model or Pipeline whose last step has ``summary()``
            ``LogisticRegression``, ``ProbitRegression``, ``LinearRegression`` (``alpha=0``),
            ``BayesianLinearRegression``, ``BayesianLogisticRegression``.
        X : DataFrame or ndarray, optional
            The data in the model's input units: coefficients are then shown per standard
            deviation of their feature (not for a Pipeline, whose last step sees
            transformed features).
        level : float, default=0.95
        include_intercept : bool, default=False
        ax : matplotlib Axes, optional

        Returns
        -------
        CoefficientDisplay
        """
        est = final_step(estimator)
        if not hasattr(est, "summary"):
            raise TypeError(f"{type(est).__name__} has no summary(): no coefficient "
                            "intervals to plot")
        if X is not None and hasattr(estimator, "steps"):
            raise ValueError("X scales the coefficients of a model fitted on X itself; "
                             "a Pipeline's last step sees transformed features")
        display = cls.from_summary(est.summary(level), X, level=level,
                                   include_intercept=include_intercept, plot=False)
        display.plot(ax)
        return display

    @classmethod
    def from_summary(cls, table: pd.DataFrame, X: Any = None, *, level: float = 0.95,
                     include_intercept: bool = False, ax: Axes | None = None,
                     plot: bool = True) -> "CoefficientDisplay":
        """From a ``summary()`` table (``coef`` or ``mean``, ``ci_low``, ``ci_high``).

        Parameters
        ----------
        table : DataFrame
            Indexed by parameter, or by ``(class, parameter)``.
        X : DataFrame or ndarray, optional
            Data whose columns are named as the table's parameters: coefficients are then
            shown per standard deviation of their feature.
        level : float, default=0.95
            The level the table's intervals were computed at (for the label).
        include_intercept : bool, default=False
        ax : matplotlib Axes, optional
        plot : bool, default=True
            Draw it now.

        Returns
        -------
        CoefficientDisplay
        """
        estimate = next((c for c in _ESTIMATES if c in table.columns), None)
        if estimate is None or not {"ci_low", "ci_high"} <= set(table.columns):
            raise ValueError("the table needs an estimate column (coef or mean) and ci_low, "
                             f"ci_high; it has {list(table.columns)}")
        keep = np.array([include_intercept or _parameter(i) != "intercept"
                         for i in table.index])
        if not keep.any():
            raise ValueError("the table has no coefficient besides the intercept")
        rows = table.loc[keep]
        f = np.ones(len(rows)) if X is None else _scales(columns_of(X), rows.index)
        values = [rows[c].to_numpy(np.float64) * f for c in (estimate, "ci_low", "ci_high")]
        display = cls(names=[_label(i) for i in rows.index], estimate=values[0], low=values[1],
                      high=values[2], level=level,
                      xlabel=("per standard deviation of the feature" if X is not None
                              else ("coefficient" if estimate == "coef" else "posterior mean")))
        if plot:
            display.plot(ax)
        return display

    def _draw(self, ax: Axes) -> None:
        n = len(self.names)
        pos = np.arange(n)[::-1]  # the table's first row on top
        shown = np.isfinite(self.low) & np.isfinite(self.high)
        err = np.vstack([self.estimate - self.low, self.high - self.estimate])
        err[:, ~shown] = 0.0
        self.errorbar_ = ax.errorbar(self.estimate, pos, xerr=err, fmt="none", ecolor="C0",
                                     elinewidth=1.5, capsize=2)
        ax.scatter(self.estimate[shown], pos[shown], color="C0", zorder=3)
        if not shown.all():  # the only marker that needs a legend
            ax.scatter(self.estimate[~shown], pos[~shown], facecolors="none", edgecolors="C0",
                       zorder=3, label="no interval (not identified)")
            ax.legend(fontsize="small", loc="best")
        ax.axvline(0.0, color="grey", linestyle=":", linewidth=1)
        ax.set_yticks(pos, self.names, fontsize="small" if n > 12 else None)
        ax.set_ylim(-0.7, n - 0.3)
        ax.set_xlabel(self.xlabel)
        ax.set_title(f"Coefficients with {self.level:.0%} intervals")


def _parameter(index: Any) -> str:
    return str(index[-1] if isinstance(index, tuple) else index)


def _label(index: Any) -> str:
    return ": ".join(map(str, index)) if isinstance(index, tuple) else str(index)


def _scales(cols: Columns, index: pd.Index) -> np.ndarray:
    """The standard deviation of each row's feature (1 for an intercept)."""
    sd = dict(zip(cols.names, cols.values.std(axis=0)))
    out = []
    for i in index:
        name = _parameter(i)
        if name == "intercept":
            out.append(1.0)
            continue
        if name not in sd:
            raise ValueError(f"parameter {name!r} is not a column of X: pass the X the model "
                             "was fitted on")
        out.append(float(sd[name]))
    return np.asarray(out)


def plot_coefficients(estimator: Any, X: Any = None, *, level: float = 0.95,
                      ax: Axes | None = None) -> Axes:
    """:meth:`CoefficientDisplay.from_estimator`, returning its Axes.

    Examples
    --------
    >>> from problin import LinearRegression
    >>> from problin.datasets import load_dataset
    >>> from problin.plot import plot_coefficients
    >>> X, y = load_dataset("diabetes")
    >>> ax = plot_coefficients(LinearRegression().fit(X, y), X)
    """
    return CoefficientDisplay.from_estimator(estimator, X, level=level, ax=ax).ax_
