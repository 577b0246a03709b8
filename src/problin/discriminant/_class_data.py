"""What Fisher's discriminant and the least-squares classifier share: validation, the
one pass of class statistics, and linear class scores."""
import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core.dask_blocks import is_dask
from .._core.stats import class_stats
from .._core.validation import check_class_weights, check_label_types, check_sample_weight
from ..glm._targets import encode_classes

__all__ = ["fit_class_stats", "validated_X", "linear_scores"]


def fit_class_stats(estimator, X, y, sample_weight):
    """Validate ``(X, y, sample_weight)`` for ``estimator`` and read the tied class statistics.

    Sets ``classes_`` (and ``n_features_in_``/``feature_names_in_``) on the
    estimator; returns ``(X, stats)`` with ``stats`` a ``kind="tied"``
    :class:`~problin._core.stats.ClassStats` (weighted counts, class means,
    within-class scatter ``S_W``), read in one blocked pass. Dask ``X``: chunk by
    chunk on the active Dask scheduler (chunks may be scipy.sparse), ``(None, stats)``.
    """
    if is_dask(X):
        from .._core.dask_blocks import dask_class_stats
        return None, dask_class_stats(estimator, X, y, sample_weight, "tied",
                                      accept_sparse=True)
    check_label_types(y)
    X, y = validate_data(estimator, X, y, accept_sparse=["csr", "csc"],
                         dtype=[np.float64, np.float32])
    if sp.issparse(X):
        X = X.tocsr()
    estimator.classes_, t = encode_classes(y, owner=type(estimator).__name__)
    sw = check_sample_weight(sample_weight, X.shape[0])
    check_class_weights(t, sw, estimator.classes_)
    return X, class_stats(X, t, estimator.classes_.size, sw, kind="tied")


def validated_X(estimator, X):
    """``X`` checked for a fitted ``estimator``: dense or CSR/CSC, float, its features."""
    check_is_fitted(estimator)
    return validate_data(estimator, X, accept_sparse=["csr", "csc"],
                         dtype=[np.float64, np.float32], reset=False)


def linear_scores(estimator, X):
    """The class scores ``X @ coef_.T + intercept_`` (dense float64), shape (n_samples, K)."""
    X = validated_X(estimator, X)
    return np.asarray(X @ estimator.coef_.T, dtype=np.float64) + estimator.intercept_
