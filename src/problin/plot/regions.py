"""Decision regions of a classifier over two features (class probabilities along one)."""
from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap

from ._base import MARKERS, Display
from ._data import Columns, columns_of, final_step, grid, jitter, plotted_features, subsample

__all__ = ["DecisionRegionsDisplay", "plot_decision_regions"]

_CONTOURS = [0.1, 0.25, 0.5, 0.75, 0.9]


class DecisionRegionsDisplay(Display):
    """Regions of the predicted class over two features, with contours of the class
    probability; over one feature, the probability of each class along it. The other
    features are held at their mean (continuous) or mode (discrete, see
    :func:`problin.plot.default_features`).

    Create it with :meth:`from_estimator`. Attributes: ``axes`` (the grid's coordinates,
    one array per feature), ``codes`` (index of the predicted class on the grid, shape
    ``(n, n)``; None for one feature), ``proba`` (probabilities on the grid, or None),
    ``classes``, ``feature_names``, ``points`` / ``labels`` (the data drawn), ``discrete``
    (whether each plotted feature is discrete: its points are jittered); after
    :meth:`plot`, ``ax_``, ``figure_`` and ``scatter_`` (one collection per class).

    Examples
    --------
    >>> from problin import LogisticRegression
    >>> from problin.datasets import load_dataset
    >>> from problin.plot import DecisionRegionsDisplay
    >>> X, y = load_dataset("iris")
    >>> model = LogisticRegression(alpha=1.0).fit(X, y)
    >>> display = DecisionRegionsDisplay.from_estimator(
    ...     model, X, y, features=["petal length (cm)", "petal width (cm)"])
    >>> display.ax_.get_xlabel()
    'petal length (cm)'
    """

    def __init__(self, *, axes: list[np.ndarray], codes: np.ndarray | None,
                 proba: np.ndarray | None, classes: Sequence[Any], feature_names: list[str],
                 points: np.ndarray | None = None, labels: np.ndarray | None = None,
                 discrete: Sequence[bool] = (False, False)) -> None:
        self.axes, self.codes, self.proba = axes, codes, proba
        self.classes, self.feature_names = list(classes), feature_names
        self.points, self.labels, self.discrete = points, labels, list(discrete)
        self.scatter_: list[Any] = []

    @classmethod
    def from_estimator(cls, estimator: Any, X: Any, y: Any = None, *,
                       features: Sequence[int | str] | None = None, grid_resolution: int = 150,
                       max_points: int = 2000, ax: Axes | None = None,
                       alpha: float = 0.5, random_state: int = 0) -> "DecisionRegionsDisplay":
        """Evaluate a fitted classifier over a grid and draw it.

        Parameters
        ----------
        estimator : fitted classifier or Pipeline
            With ``predict`` (regions) and ideally ``predict_proba`` (contours).
        X : DataFrame or ndarray of shape (n_samples, n_features)
            Numeric data: the grid spans it, and it sets the held values.
        y : array-like of shape (n_samples,), optional
            Class labels: the points are drawn coloured by class.
        features : list of 1 or 2 names or indices, optional
            Default: the two continuous features with the largest ``|coef| * sd``
            (:func:`default_features`).
        grid_resolution : int, default=150
            Points per feature of the grid.
        max_points : int, default=2000
            At most this many data points are drawn (a random subset).
        ax : matplotlib Axes, optional
        alpha : float, default=0.5
            Opacity of the points, so that classes drawn over each other show.
        random_state : int, default=0
            Seed of the subset and of the jitter of discrete features.

        Returns
        -------
        DecisionRegionsDisplay
        """
        cols = columns_of(X)
        chosen = plotted_features(estimator, cols, features)
        classes = list(getattr(final_step(estimator), "classes_", []))
        if not classes:
            raise TypeError(f"{type(estimator).__name__} has no classes_: decision regions "
                            "need a fitted classifier")
        G, axes = grid(cols, chosen, grid_resolution if len(chosen) == 2 else 300)
        Gin = cols.as_input(G)
        proba = estimator.predict_proba(Gin) if hasattr(estimator, "predict_proba") else None
        codes = None
        if len(chosen) == 2:
            pred = np.asarray(estimator.predict(Gin))
            codes = np.searchsorted(np.asarray(classes), pred).reshape(len(axes[1]),
                                                                        len(axes[0]))
        elif proba is None:
            raise TypeError(f"{type(estimator).__name__} has no predict_proba: along one "
                            "feature the plot shows class probabilities")
        points, labels = _points(cols, chosen, y, max_points, random_state)
        display = cls(axes=axes, codes=codes, proba=proba, classes=classes,
                      feature_names=[cols.names[j] for j in chosen], points=points,
                      labels=labels, discrete=[bool(cols.discrete[j]) for j in chosen])
        display.plot(ax, alpha=alpha, random_state=random_state)
        return display

    def _draw(self, ax: Axes, alpha: float = 0.5, random_state: int = 0) -> None:
        colours = [f"C{k % 10}" for k in range(len(self.classes))]
        if self.codes is None:
            self._draw_curves(ax, colours)
        else:
            self._draw_regions(ax, colours)
        self._draw_points(ax, colours, alpha, np.random.default_rng(random_state))
        ax.set_xlabel(self.feature_names[0])
        if self.points is not None or self.codes is None:
            ax.legend(fontsize="small", loc="best", framealpha=0.8)

    def _draw_regions(self, ax: Axes, colours: list[str]) -> None:
        xs, ys = self.axes
        assert self.codes is not None
        k = len(self.classes)
        ax.contourf(xs, ys, self.codes, levels=np.arange(k + 1) - 0.5,
                    cmap=ListedColormap(colours[:k]), alpha=0.2)
        if self.proba is not None:
            z = self.proba[:, 1] if k == 2 else self.proba.max(axis=1)
            z = z.reshape(len(ys), len(xs))
            levels = [v for v in _CONTOURS if z.min() < v < z.max()]
            if levels:
                lines = ax.contour(xs, ys, z, levels=levels, colors="k", linewidths=0.7)
                ax.clabel(lines, fontsize="x-small")
        what = f"p({self.classes[1]})" if k == 2 else "top-class probability"
        ax.set_title(f"Decision regions; contours: {what}" if self.proba is not None
                     else "Decision regions")
        ax.set_ylabel(self.feature_names[1])

    def _draw_curves(self, ax: Axes, colours: list[str]) -> None:
        assert self.proba is not None
        for k, c in enumerate(self.classes):
            ax.plot(self.axes[0], self.proba[:, k], color=colours[k], label=f"p({c} | x)")
        ax.set_ylim(-0.05 - 0.04 * len(self.classes) if self.points is not None else -0.02,
                    1.02)
        ax.set_ylabel("class probability")
        ax.set_title("Class probabilities")

    def _draw_points(self, ax: Axes, colours: list[str], alpha: float,
                     rng: np.random.Generator) -> None:
        if self.points is None or self.labels is None:
            return
        x = jitter(self.points[:, 0], self.discrete[0], rng)
        two = self.codes is not None
        y = jitter(self.points[:, 1], self.discrete[1], rng) if two else None
        for k, c in enumerate(self.classes):
            rows = self.labels == c
            if not rows.any():
                continue
            # along one feature: a rug per class below the curves
            ys = y[rows] if y is not None else np.full(rows.sum(), -0.04 * (k + 1))
            self.scatter_.append(ax.scatter(
                x[rows], ys, s=14 if two else 30, marker=MARKERS[k % len(MARKERS)] if two
                else "|", color=colours[k], alpha=alpha, edgecolors="k" if two else None,
                linewidths=0.3 if two else 1.0, label=str(c) if two else None))


def _points(cols: Columns, chosen: list[int], y: Any, most: int,
            seed: int) -> tuple[np.ndarray | None, np.ndarray | None]:
    if y is None:
        return None, None
    labels = np.asarray(y)
    if labels.shape != (cols.values.shape[0],):
        raise ValueError(f"y must have one label per row of X ({cols.values.shape[0]}), "
                         f"got shape {labels.shape}")
    rows = subsample(len(labels), most, seed)
    return cols.values[np.ix_(rows, np.asarray(chosen))], labels[rows]


def plot_decision_regions(estimator: Any, X: Any, y: Any = None, *,
                          features: Sequence[int | str] | None = None,
                          ax: Axes | None = None, **kwargs: Any) -> Axes:
    """:meth:`DecisionRegionsDisplay.from_estimator`, returning its Axes.

    Examples
    --------
    >>> from problin import LogisticRegression
    >>> from problin.datasets import load_dataset
    >>> from problin.plot import plot_decision_regions
    >>> X, y = load_dataset("iris")
    >>> ax = plot_decision_regions(LogisticRegression(alpha=1.0).fit(X, y), X, y)
    """
    return DecisionRegionsDisplay.from_estimator(estimator, X, y, features=features, ax=ax,
                                                 **kwargs).ax_
