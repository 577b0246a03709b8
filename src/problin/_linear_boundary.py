"""The distance from a point to a two-class linear decision boundary (shared mixin).

A linear classifier of two classes decides by the sign of ``y(x) = w^T x + w_0``; its
boundary ``y(x) = 0`` is a hyperplane with normal ``w``, and ``y(x) / |w|`` is the
signed Euclidean distance from ``x`` to it (Bishop 2006 §4.1.1, eq. 4.7). Every
linear classifier of problin keeps the weights of its scores in ``coef_``: one row
(``w``: the GLMs, the perceptron) or one row per class (``w_k``: Fisher, LDA, least
squares), whose two-class decision function is ``y_2(x) - y_1(x)``, of normal
``w_2 - w_1``. The mixin reads that normal and divides the estimator's own
``decision_function`` by its length, so far rows (``+-inf`` scores) and Dask input
(lazy) behave as ``decision_function`` does.
"""
from typing import Any, Protocol

import numpy as np
from sklearn.utils.validation import check_is_fitted

__all__ = ["LinearBoundaryMixin"]


class _LinearClassifier(Protocol):
    """What the mixin reads of the classifier it is mixed into."""

    coef_: np.ndarray
    classes_: np.ndarray

    def decision_function(self, X: Any) -> Any: ...


class LinearBoundaryMixin:
    """``signed_distance(X)`` for a two-class classifier with a linear ``decision_function``."""

    def signed_distance(self: _LinearClassifier, X: Any) -> Any:
        """The signed Euclidean distance from each row of ``X`` to the decision
        boundary, ``y(x) / |w|`` (Bishop 2006 eq. 4.7), shape (n_samples,).

        ``y(x)`` is :meth:`decision_function` and ``w`` its weights on the features
        (``coef_[0]``, or ``coef_[1] - coef_[0]`` for per-class scores), so the
        distance is positive on the side of ``classes_[1]``, negative on that of
        ``classes_[0]``, and 0 on the boundary, where both classes are equally
        likely (or, for the least-squares and perceptron discriminants, equally
        scored). It is measured in the units of ``X``: unlike probabilities it
        changes with the columns' units, as Euclidean geometry does. Two classes
        only (K classes have K(K-1)/2 pairwise boundaries).
        """
        check_is_fitted(self)
        if self.classes_.size != 2:
            raise ValueError(f"signed_distance needs a two-class model: a boundary "
                             f"y(x) = 0; this one has {self.classes_.size} classes")
        coef = np.asarray(self.coef_, dtype=np.float64)
        normal = coef[0] if coef.shape[0] == 1 else coef[1] - coef[0]
        length = float(np.linalg.norm(normal))
        if length == 0.0:
            raise ValueError("the decision function does not depend on x (all weights are "
                             "0): there is no boundary to measure the distance to")
        return self.decision_function(X) / length
