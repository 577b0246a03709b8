"""Class probabilities of ordered classes along one feature: the cumulative curves
``P(y <= k | x)`` and the stack of the class probabilities."""
from typing import Any

import numpy as np
from matplotlib.axes import Axes

from ._base import Display
from ._data import columns_of, final_step, grid, plotted_features

__all__ = ["OrdinalProbabilityDisplay", "plot_ordinal_probabilities"]

_KINDS = ("cumulative", "stack")


class OrdinalProbabilityDisplay(Display):
    """Probabilities of ordered classes along one feature, the others held at their mean
    (continuous) or mode (discrete).

    ``kind="cumulative"``: one curve ``P(y <= k | x)`` per cut between consecutive classes
    (for a cumulative-link model ``F(theta_k - x^T beta)``: under the logit link, shifted
    copies of one logistic curve, the picture of proportional odds); ``kind="stack"``:
    the class probabilities stacked to one, lowest class at the bottom. The classes are
    taken in the estimator's order (``classes_``), which for
    :class:`~problin.OrdinalRegression` is the order of the outcome.

    Attributes: ``x`` (the grid), ``proba`` (grid x K), ``classes``, ``kind``,
    ``feature_name``; after :meth:`plot`, ``ax_``, ``figure_``.

    Examples
    --------
    >>> import numpy as np
    >>> from problin import OrdinalRegression
    >>> from problin.plot import OrdinalProbabilityDisplay
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2))
    >>> y = np.digitize(X @ [1.0, -0.5] + rng.logistic(size=200), [-1.0, 0.5, 2.0])
    >>> model = OrdinalRegression().fit(X, y)
    >>> display = OrdinalProbabilityDisplay.from_estimator(model, X, feature=0)
    >>> display.proba.shape, display.ax_.get_ylabel()
    ((200, 4), 'P(y ≤ k)')
    """

    def __init__(self, *, x: np.ndarray, proba: np.ndarray, classes: np.ndarray, kind: str,
                 feature_name: str) -> None:
        self.x, self.proba, self.classes = x, proba, classes
        self.kind, self.feature_name = kind, feature_name

    @classmethod
    def from_estimator(cls, estimator: Any, X: Any, *, feature: int | str | None = None,
                       kind: str = "cumulative", grid_resolution: int = 200,
                       ax: Axes | None = None) -> "OrdinalProbabilityDisplay":
        """Evaluate ``predict_proba`` along ``feature`` and draw it.

        Parameters
        ----------
        estimator : fitted classifier of ordered classes, or a Pipeline ending in one
        X : DataFrame or ndarray of shape (n_samples, n_features)
            The rows that set the feature's range and where the others are held.
        feature : name or index, optional
            Default: the continuous feature with the largest ``|coef| * sd``.
        kind : {"cumulative", "stack"}, default="cumulative"
        grid_resolution : int, default=200
        ax : matplotlib Axes, optional

        Returns
        -------
        OrdinalProbabilityDisplay
        """
        if kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
        if not hasattr(final_step(estimator), "predict_proba"):
            raise TypeError(f"{type(final_step(estimator)).__name__} gives no class "
                            "probabilities (predict_proba)")
        cols = columns_of(X)
        j = plotted_features(estimator, cols, feature, most=1)[0]
        G, (xs,) = grid(cols, [j], grid_resolution)
        proba = np.asarray(estimator.predict_proba(cols.as_input(G)), dtype=np.float64)
        display = cls(x=xs, proba=proba, classes=np.asarray(final_step(estimator).classes_),
                      kind=kind, feature_name=cols.names[j])
        display.plot(ax)
        return display

    def _draw(self, ax: Axes) -> None:
        labels = [str(c) for c in self.classes]
        if self.kind == "cumulative":
            cumulative = np.cumsum(self.proba, axis=1)[:, :-1]
            for k in range(cumulative.shape[1]):
                ax.plot(self.x, cumulative[:, k], label=f"P(y ≤ {labels[k]})")
            ax.set_ylabel("P(y ≤ k)")
            ax.set_title("Cumulative probabilities")
        else:
            ax.stackplot(self.x, self.proba.T, labels=labels, alpha=0.85)
            ax.set_ylabel("class probability (stacked)")
            ax.set_title("Class probabilities")
        ax.set_ylim(0.0, 1.0)
        ax.set_xlabel(f"{self.feature_name} (other features at their mean or mode)")
        ax.legend(fontsize="small", loc="best")


def plot_ordinal_probabilities(estimator: Any, X: Any, *, feature: int | str | None = None,
                               kind: str = "cumulative", ax: Axes | None = None,
                               **kwargs: Any) -> Axes:
    """:meth:`OrdinalProbabilityDisplay.from_estimator`, returning its Axes.

    Examples
    --------
    >>> import numpy as np
    >>> from problin import OrdinalRegression
    >>> from problin.plot import plot_ordinal_probabilities
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 1))
    >>> y = np.digitize(X[:, 0] + rng.logistic(size=200), [-1.0, 1.0])
    >>> ax = plot_ordinal_probabilities(OrdinalRegression().fit(X, y), X, kind="stack")
    >>> ax.get_title()
    'Class probabilities'
    """
    return OrdinalProbabilityDisplay.from_estimator(estimator, X, feature=feature, kind=kind,
                                                    ax=ax, **kwargs).ax_
