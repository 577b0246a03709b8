"""ROC curves: true against false positive rate over every threshold, with the area."""
from collections.abc import Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from sklearn.metrics import auc, roc_curve

from ._base import Display, check_1d
from ._data import final_step

__all__ = ["RocDisplay", "plot_roc", "class_scores"]


class RocDisplay(Display):
    """ROC curve of a binary classifier, or one-vs-rest curves of each class (K > 2),
    computed by scikit-learn's ``roc_curve`` with the area under each curve in the legend.

    Attributes: ``curves`` (``{class label: (fpr, tpr)}``), ``aucs`` (``{label: area}``);
    after :meth:`plot`, ``ax_``, ``figure_`` and ``lines_`` (``{label: Line2D}``).

    Examples
    --------
    >>> from problin import LogisticRegression
    >>> from problin.datasets import load_dataset
    >>> from problin.plot import RocDisplay
    >>> X, y = load_dataset("breast-cancer")
    >>> display = RocDisplay.from_estimator(LogisticRegression(alpha=1.0).fit(X, y), X, y)
    >>> list(display.aucs)
    ['malignant']
    """

    def __init__(self, *, curves: dict[Any, tuple[np.ndarray, np.ndarray]],
                 aucs: dict[Any, float]) -> None:
        self.curves, self.aucs = curves, aucs
        self.lines_: dict[Any, Any] = {}

    @classmethod
    def from_predictions(cls, y_true: Any, y_score: Any, *,
                         classes: Sequence[Any] | None = None, pos_label: Any = None,
                         ax: Axes | None = None) -> "RocDisplay":
        """From labels and scores (probabilities or decision values).

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
        y_score : array-like of shape (n_samples,) or (n_samples, n_classes)
            One column: the score of ``pos_label``. Several (in the order of ``classes``):
            two, one curve for the second class; more, one curve per class against the rest.
        classes : sequence, optional
            Labels of ``y_score``'s columns (required with several columns).
        pos_label : label, optional
            With one column: the positive class (scikit-learn's default otherwise).
        ax : matplotlib Axes, optional

        Returns
        -------
        RocDisplay
        """
        y = check_1d(y_true, "y_true")
        s = np.asarray(y_score, dtype=np.float64)
        if s.shape[0] != y.shape[0]:
            raise ValueError(f"y_true has {y.shape[0]} labels but y_score {s.shape[0]} rows")
        if not np.isfinite(s).all():
            raise ValueError("y_score holds values that are not finite")
        if s.ndim == 1:
            pos = pos_label if pos_label is not None else np.unique(y)[-1]
            pairs = [(pos, y == pos, s)]
        elif classes is None or len(classes) != s.shape[1]:
            raise ValueError("y_score with several columns needs classes=, one label per column")
        else:
            ks = [1] if len(classes) == 2 else range(len(classes))
            pairs = [(classes[k], y == classes[k], s[:, k]) for k in ks]
        curves, aucs = {}, {}
        for label, truth, score in pairs:
            if truth.all() or not truth.any():
                continue  # no positives or no negatives: no curve for this class
            fpr, tpr, _ = roc_curve(truth, score)
            curves[label], aucs[label] = (fpr, tpr), float(auc(fpr, tpr))
        if not curves:
            raise ValueError("a ROC curve needs both positive and negative examples of a "
                             "class; y_true has only one class")
        display = cls(curves=curves, aucs=aucs)
        display.plot(ax)
        return display

    @classmethod
    def from_estimator(cls, estimator: Any, X: Any, y: Any, *,
                       ax: Axes | None = None) -> "RocDisplay":
        """From a fitted classifier's ``predict_proba`` (else ``decision_function``).

        Parameters
        ----------
        estimator : fitted classifier or Pipeline
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        ax : matplotlib Axes, optional

        Returns
        -------
        RocDisplay
        """
        return cls.from_predictions(y, class_scores(estimator, X),
                                    classes=list(final_step(estimator).classes_), ax=ax)

    def _draw(self, ax: Axes) -> None:
        for label, (fpr, tpr) in self.curves.items():
            (self.lines_[label],) = ax.plot(fpr, tpr, drawstyle="steps-post",
                                            label=f"{label} (AUC {self.aucs[label]:.3f})")
        ax.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1, label="chance")
        ax.set_xlim(-0.01, 1.01)
        ax.set_ylim(-0.01, 1.01)
        ax.set_xlabel("false positive rate")
        ax.set_ylabel("true positive rate")
        ax.set_title("ROC curve" + ("s (one class against the rest)"
                                    if len(self.curves) > 1 else ""))
        ax.legend(loc="lower right", fontsize="small")


def class_scores(estimator: Any, X: Any) -> np.ndarray:
    """One score column per class: ``predict_proba``, else ``decision_function`` (a
    binary one as ``[-s, s]``); a ``TypeError`` for a model with neither."""
    if hasattr(estimator, "predict_proba"):
        return np.asarray(estimator.predict_proba(X), dtype=np.float64)
    if hasattr(estimator, "decision_function"):
        s = np.asarray(estimator.decision_function(X), dtype=np.float64)
        return np.column_stack([-s, s]) if s.ndim == 1 else s
    raise TypeError(f"{type(estimator).__name__} has neither predict_proba nor "
                    "decision_function: a ROC curve needs scores")


def plot_roc(estimator: Any, X: Any, y: Any, *, ax: Axes | None = None) -> Axes:
    """:meth:`RocDisplay.from_estimator`, returning its Axes.

    Examples
    --------
    >>> from problin import LinearDiscriminantAnalysis
    >>> from problin.datasets import load_dataset
    >>> from problin.plot import plot_roc
    >>> X, y = load_dataset("wine")
    >>> ax = plot_roc(LinearDiscriminantAnalysis().fit(X, y), X, y)
    """
    return RocDisplay.from_estimator(estimator, X, y, ax=ax).ax_
