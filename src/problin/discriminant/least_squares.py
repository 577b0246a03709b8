"""Least squares for classification: regress 1-of-K targets on the features."""
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin

from .._core.blocks import small_blas
from .._core.model.layout import class_layout
from .._core.moments.least_squares import class_moments
from .._core.moments.lstsq import solve_factors
from .._core.types import MatrixLike
from .._dask.lazy import lazy_on_dask
from .._params import validate_params
from .._state import AllOrNothingFit
from .._linear_boundary import LinearBoundaryMixin
from ..linear_model._base import warn_least_squares
from ._class_data import fit_class_stats, linear_scores

__all__ = ["LeastSquaresClassifier"]


class LeastSquaresClassifier(AllOrNothingFit, LinearBoundaryMixin, ClassifierMixin,
                             BaseEstimator):
    """Least-squares classifier: K linear discriminants fitted to 1-of-K target codes.

    .. math::

        y_k(x) = w_k^T x + w_{k0}, \\quad
        \\tilde W = \\arg\\min \\tfrac12 \\| \\tilde X \\tilde W - T \\|_F^2
        = \\tilde X^{+} T, \\quad \\hat{C}(x) = \\arg\\max_k y_k(x)

    ``T`` has a 1 in the column of each row's class and 0 elsewhere. One
    blocked pass reduces ``[x, T]`` to its weighted means and the triangular
    factor ``R`` of the centred rows (the regression's sufficient statistics,
    :func:`~problin._core.moments.least_squares.moments`; ``x`` centred when the
    intercept is fitted): the weights solve ``R W = Q^T T`` by back
    substitution, as accurately as QR of the rows (not the normal equations,
    which square the condition number), and ``w_k0 = n_k / n - m^T w_k`` (``m``
    the mean of ``x``). When the features are numerically collinear (or
    constant, or fewer than the rows) the minimum-norm solution comes from an
    SVD of ``R`` (pseudo-inverse; the intercept is then not part of the norm,
    as it is never penalised in problin). For a full-rank design this is
    exactly ``pinv(X~) T``.

    The outputs ``y_k(x)`` sum to 1 over ``k`` but are *not* probabilities:
    they can be negative or exceed 1, and least squares is sensitive to
    outliers and can mask a class in the middle (Bishop 2006, §4.1.3; Hastie et al.
    2009, §4.2). So
    there is no ``predict_proba``; use a probabilistic classifier for that.

    Parameters
    ----------
    fit_intercept : bool, default=True
        Whether to fit the biases ``w_k0``.

    Attributes
    ----------
    coef_ : ndarray of shape (K, n_features)
        The weight vectors ``w_k``, one row per class (two rows for binary data).
    intercept_ : ndarray of shape (K,)
    classes_ : ndarray of shape (K,)
    rank_ : int
        Numerical rank of the (centred) normal equations.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from problin import LeastSquaresClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = LeastSquaresClassifier().fit(X, y)
    >>> round(clf.score(X, y), 3)
    0.847
    >>> clf.decision_function(X[:1]).round(3)  # y_k(x) sum to 1, but are not probabilities
    array([[ 0.979,  0.125, -0.104]])
    """

    _parameter_constraints = {"fit_intercept": ["boolean"]}

    def __init__(self, fit_intercept: bool = True) -> None:
        self.fit_intercept = fit_intercept

    def fit(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Solve the least-squares problem for the 1-of-K codes of ``y``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Or a Dask array/DataFrame: the class statistics are then reduced
            chunk by chunk on the active Dask scheduler.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights of the squared errors; weight 2 equals a duplicated row.

        Returns
        -------
        self
        """
        validate_params(self)
        _, stats = fit_class_stats(self, X, y, sample_weight, reduce=class_moments)
        moments = stats.moments  # of [x, 1-of-K code]
        with small_blas(moments.factor.shape[0]):  # D x D work: threads only cost here
            F = moments.factors(centred=self.fit_intercept)
            solution = solve_factors(F)
        self.rank_ = solution.rank
        self.coef_ = np.ascontiguousarray(solution.coef.T)
        # w_k0 = n_k / n - m^T w_k: the mean of the codes less the features' part
        self.intercept_ = moments.t_mean - self.coef_ @ moments.x_mean if self.fit_intercept \
            else np.zeros(self.classes_.size)
        warn_least_squares(solution, F.xx.shape[0], "The features are collinear (rank {rank} "
                           "of {d}): the minimum-norm least-squares weights are used.")
        return self

    def _discriminants(self, X: MatrixLike) -> np.ndarray:
        return linear_scores(self, X)

    @lazy_on_dask(columns=lambda self: class_layout(self.classes_.size).score_columns)
    def decision_function(self, X: MatrixLike) -> np.ndarray:
        """The K discriminants ``y_k(x) = w_k^T x + w_k0``, shape (n_samples, K); for two
        classes ``y_2(x) - y_1(x)``, shape (n_samples,) (positive: ``classes_[1]``)."""
        scores = self._discriminants(X)  # (checks that the model is fitted)
        return class_layout(self.classes_.size).decision(scores)

    @lazy_on_dask(dtype=lambda self: self.classes_.dtype)
    def predict(self, X: MatrixLike) -> np.ndarray:
        """The class with the largest discriminant ``y_k(x)``."""
        k = np.argmax(linear_scores(self, X, relative=True), axis=1)  # no ties at +inf
        return self.classes_[k]

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
