"""Reliability diagram: observed frequency against mean predicted probability per bin,
with the number of predictions in each bin."""
from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from sklearn.calibration import calibration_curve

from ._base import Display, check_1d
from ._data import final_step

__all__ = ["ReliabilityDisplay", "plot_reliability"]


class ReliabilityDisplay(Display):
    """Reliability diagram (calibration curve) with the count of predictions per bin.

    Binary: the probability of the positive class; several classes: the confidence
    (probability of the predicted class) against the frequency with which that class is
    right. The points are scikit-learn's ``calibration_curve`` (same bins); bars on a
    second y axis (``count_ax_``) show how many predictions each bin holds, so that a
    point made from three predictions is not read like one made from three hundred.

    Attributes: ``prob_true``, ``prob_pred``, ``counts`` (per non-empty bin), ``bins``
    (the indices of the non-empty bins), ``edges`` (all bin edges), ``what`` (the
    probability on the x axis); after :meth:`plot`, ``ax_``, ``figure_``, ``line_``,
    ``bars_``, ``count_ax_``.

    Examples
    --------
    >>> from problin import LogisticRegression
    >>> from problin.datasets import load_dataset
    >>> from problin.plot import ReliabilityDisplay
    >>> X, y = load_dataset("breast-cancer")
    >>> model = LogisticRegression(alpha=1.0).fit(X, y)
    >>> display = ReliabilityDisplay.from_estimator(model, X, y, n_bins=5)
    >>> int(display.counts.sum())
    569
    """

    def __init__(self, *, prob_true: np.ndarray, prob_pred: np.ndarray, counts: np.ndarray,
                 bins: np.ndarray, edges: np.ndarray, what: str = "predicted probability"
                 ) -> None:
        self.prob_true, self.prob_pred, self.counts = prob_true, prob_pred, counts
        self.bins, self.edges, self.what = bins, edges, what

    @classmethod
    def from_predictions(cls, y_true: Any, y_prob: Any, *, classes: Sequence[Any] | None = None,
                         pos_label: Any = None, n_bins: int = 10, strategy: str = "uniform",
                         ax: Axes | None = None) -> "ReliabilityDisplay":
        """From labels and predicted probabilities.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
        y_prob : array-like of shape (n_samples,) or (n_samples, n_classes)
            One column: the probability of ``pos_label``. Several columns (in the order
            of ``classes``): two, the second class's; more, the top class's.
        classes : sequence, optional
            The labels of ``y_prob``'s columns (required with several columns).
        pos_label : label, optional
            With one column: the positive class (scikit-learn's default otherwise).
        n_bins : int, default=10
        strategy : {"uniform", "quantile"}, default="uniform"
            Equal-width bins, or bins with equal numbers of predictions.
        ax : matplotlib Axes, optional

        Returns
        -------
        ReliabilityDisplay
        """
        truth, p, what = _binary(y_true, y_prob, classes, pos_label)
        prob_true, prob_pred = calibration_curve(truth, p, n_bins=n_bins, strategy=strategy)
        edges = (np.linspace(0.0, 1.0, n_bins + 1) if strategy == "uniform"
                 else np.percentile(p, np.linspace(0, 100, n_bins + 1)))
        ids = np.searchsorted(edges[1:-1], p)  # calibration_curve's own binning
        counts = np.bincount(ids, minlength=n_bins)
        used = np.flatnonzero(counts)
        display = cls(prob_true=prob_true, prob_pred=prob_pred, counts=counts[used],
                      bins=used, edges=edges, what=what)
        display.plot(ax)
        return display

    @classmethod
    def from_estimator(cls, estimator: Any, X: Any, y: Any, *, n_bins: int = 10,
                       strategy: str = "uniform",
                       ax: Axes | None = None) -> "ReliabilityDisplay":
        """From a fitted classifier's ``predict_proba`` on ``X``.

        Parameters
        ----------
        estimator : fitted classifier or Pipeline with ``predict_proba``
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        n_bins : int, default=10
        strategy : {"uniform", "quantile"}, default="uniform"
        ax : matplotlib Axes, optional

        Returns
        -------
        ReliabilityDisplay
        """
        if not hasattr(estimator, "predict_proba"):
            raise TypeError(f"{type(estimator).__name__} has no predict_proba: a reliability "
                            "diagram needs probabilities")
        return cls.from_predictions(y, estimator.predict_proba(X),
                                    classes=final_step(estimator).classes_, n_bins=n_bins,
                                    strategy=strategy, ax=ax)

    def _draw(self, ax: Axes) -> None:
        left, width = self.edges[:-1][self.bins], np.diff(self.edges)[self.bins]
        self.count_ax_ = ax.twinx()
        self.bars_ = self.count_ax_.bar(left, self.counts, width=width, align="edge",
                                        color="0.6", alpha=0.35, edgecolor="0.4",
                                        linewidth=0.5)
        self.count_ax_.set_ylim(0, 3.0 * max(int(self.counts.max()), 1))  # bars: lower third
        self.count_ax_.set_ylabel("predictions per bin (bars)")
        ax.set_zorder(self.count_ax_.get_zorder() + 1)  # the curve above the bars
        ax.patch.set_visible(False)
        ax.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1,
                label="perfectly calibrated")
        (self.line_,) = ax.plot(self.prob_pred, self.prob_true, marker="o", label="model")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel(f"mean {self.what} in bin")
        ax.set_ylabel("observed frequency")
        ax.set_title("Reliability diagram")
        ax.legend(loc="upper left", fontsize="small")


def _binary(y_true: Any, y_prob: Any, classes: Sequence[Any] | None,
            pos_label: Any) -> tuple[np.ndarray, np.ndarray, str]:
    """``(truth as 0/1, probability, its name)`` of a binary or top-class calibration."""
    y = check_1d(y_true, "y_true")
    p = np.asarray(y_prob, dtype=np.float64)
    if p.shape[0] != y.shape[0]:
        raise ValueError(f"y_true has {y.shape[0]} labels but y_prob {p.shape[0]} rows")
    if p.size and (not np.isfinite(p).all() or p.min() < 0 or p.max() > 1):
        raise ValueError("y_prob must hold probabilities in [0, 1]")
    if p.ndim == 1:
        labels = np.unique(y)
        if labels.size > 2:
            raise ValueError(f"one column of probabilities needs two classes, y_true has "
                             f"{labels.size}: pass every column with classes=")
        pos = pos_label if pos_label is not None else labels[-1]
        return (y == pos).astype(np.float64), p, f"p({pos})"
    if classes is None or len(classes) != p.shape[1]:
        raise ValueError("y_prob with several columns needs classes=, one label per column")
    names = np.asarray(classes)
    if len(names) == 2:
        return (y == names[1]).astype(np.float64), p[:, 1], f"p({names[1]})"
    top = np.argmax(p, axis=1)
    return (y == names[top]).astype(np.float64), p[np.arange(len(y)), top], \
        "confidence (top-class probability)"


def plot_reliability(estimator: Any, X: Any, y: Any, *, n_bins: int = 10,
                     ax: Axes | None = None) -> Axes:
    """:meth:`ReliabilityDisplay.from_estimator`, returning its Axes.

    Examples
    --------
    >>> from problin import GaussianNB
    >>> from problin.datasets import load_dataset
    >>> from problin.plot import plot_reliability
    >>> X, y = load_dataset("breast-cancer")
    >>> ax = plot_reliability(GaussianNB().fit(X, y), X, y)
    """
    return ReliabilityDisplay.from_estimator(estimator, X, y, n_bins=n_bins, ax=ax).ax_
