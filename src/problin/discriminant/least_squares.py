"""Least squares for classification: regress 1-of-K targets on the features."""
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from .._core.dask_blocks import lazy_on_dask
from .._core.least_squares import solve_normal_equations
from .._core.stats import between_scatter, pooled_scatter
from ..exceptions import CollinearityWarning
from ._class_data import fit_class_stats, linear_scores

__all__ = ["LeastSquaresClassifier"]


class LeastSquaresClassifier(ClassifierMixin, BaseEstimator):
    """Least-squares classifier: K linear discriminants fitted to 1-of-K target codes.

    .. math::

        y_k(x) = w_k^T x + w_{k0}, \\quad
        \\tilde W = \\arg\\min \\tfrac12 \\| \\tilde X \\tilde W - T \\|_F^2
        = \\tilde X^{+} T, \\quad \\hat{C}(x) = \\arg\\max_k y_k(x)

    ``T`` has a 1 in the column of each row's class and 0 elsewhere. The
    normal equations are formed from one blocked pass of per-class
    sufficient statistics: with an intercept, in centred form,
    ``S_T W = [n_k (m_k - m)]_k`` (``S_T = S_W + S_B`` the total scatter,
    ``m_k`` the class means, ``m`` the overall mean) and ``w_k0 = n_k / n - m^T w_k``;
    they are solved by Cholesky, or, when ``S_T`` is numerically singular
    (collinear or constant features, more features than rows), by the
    minimum-norm solution from an eigendecomposition (pseudo-inverse; the
    intercept is then not part of the norm, as it is never penalised in
    problin). For a full-rank design this is exactly ``pinv(X~) T``.

    The outputs ``y_k(x)`` sum to 1 over ``k`` but are *not* probabilities:
    they can be negative or exceed 1, and least squares is sensitive to
    outliers and can mask a class in the middle (the seeds' examples). So
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

    def __init__(self, fit_intercept=True):
        self.fit_intercept = fit_intercept

    def fit(self, X, y, sample_weight=None):
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
        self._validate_params()
        _, stats = fit_class_stats(self, X, y, sample_weight)
        n_k, m_k = stats.counts, stats.means
        n = float(n_k.sum())
        m = n_k @ m_k / n
        S = pooled_scatter(stats) + between_scatter(stats)  # S_T, centred
        if self.fit_intercept:
            C = ((m_k - m) * n_k[:, None]).T  # centred X^T T
        else:
            S += n * np.outer(m, m)  # raw X^T X
            C = (m_k * n_k[:, None]).T  # raw X^T T
        W, self.rank_ = solve_normal_equations(S, C)
        self.coef_ = np.ascontiguousarray(W.T)
        self.intercept_ = n_k / n - self.coef_ @ m if self.fit_intercept else np.zeros(n_k.size)
        if self.rank_ < S.shape[0]:
            warnings.warn(f"The features are collinear (rank {self.rank_} of {S.shape[0]}): "
                          "the minimum-norm least-squares weights are used.",
                          CollinearityWarning, stacklevel=2)
        return self

    def _discriminants(self, X):
        return linear_scores(self, X)

    @lazy_on_dask(columns=lambda self: None if self.classes_.size == 2 else self.classes_.size)
    def decision_function(self, X):
        """The K discriminants ``y_k(x) = w_k^T x + w_k0``, shape (n_samples, K); for two
        classes ``y_2(x) - y_1(x)``, shape (n_samples,) (positive: ``classes_[1]``)."""
        scores = self._discriminants(X)
        return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores

    @lazy_on_dask(dtype=lambda self: self.classes_.dtype)
    def predict(self, X):
        """The class with the largest discriminant ``y_k(x)``."""
        k = np.argmax(self._discriminants(X), axis=1)
        return self.classes_[k]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
