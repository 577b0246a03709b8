"""What Fisher's discriminant and the least-squares classifier share: validation, the
one pass of class statistics, and linear class scores."""
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core import extreme
from .._core.labels import encode_classes
from .._core.moments.class_stats import class_stats
from .._core.types import Matrix, MatrixLike
from .._core.validation import (
    check_class_weights,
    check_finite_magnitude,
    check_sample_weight,
    label_values,
)
from .._source import data_source
from .._dask.reductions import dask_class_reduce, dask_class_stats
from .._frames import encode_frame

__all__ = ["fit_class_stats", "validated_X", "linear_scores"]


def fit_class_stats(estimator: Any, X: MatrixLike, y: Any, sample_weight: ArrayLike | None,
                    reduce: Callable[..., Any] | None = None) -> tuple[Any, Any]:
    """Validate ``(X, y, sample_weight)`` for ``estimator`` and read the tied class statistics.

    Sets ``classes_`` (and ``n_features_in_``/``feature_names_in_``) on the
    estimator; returns ``(X, stats)`` with ``stats`` a ``kind="tied"``
    :class:`~problin._core.moments.class_stats.ClassStats` (weighted counts, class means,
    within-class scatter ``S_W``), read in one blocked pass. Dask ``X``: chunk by
    chunk on the active Dask scheduler (chunks may be scipy.sparse), ``(None, stats)``.
    ``reduce(X, codes, w, n_classes)`` (picklable; its result has ``counts`` and an
    exact ``merge``) reads other per-class statistics in that pass instead.
    """
    def on_chunks(X: MatrixLike) -> tuple[Any, Any]:
        if reduce is not None:
            return None, dask_class_reduce(estimator, X, y, sample_weight, reduce,
                                           accept_sparse=True)
        return None, dask_class_stats(estimator, X, y, sample_weight, "tied",
                                      accept_sparse=True)

    return data_source(X).reduce(
        on_chunks, lambda X: _memory_class_stats(estimator, X, y, sample_weight, reduce))


def _memory_class_stats(estimator: Any, X: MatrixLike, y: Any,
                        sample_weight: ArrayLike | None,
                        reduce: Callable[..., Any] | None) -> tuple[Any, Any]:
    """:func:`fit_class_stats` of rows in memory."""
    y = label_values(y)
    X, y = validate_data(estimator, encode_frame(estimator, X, True), y,
                         accept_sparse=["csr", "csc"],
                         dtype=[np.float64, np.float32], ensure_all_finite=False)
    if sp.issparse(X):
        X = X.tocsr()
    check_finite_magnitude(X, estimator)  # NaN, infinity, or values whose squares overflow
    estimator.classes_, t = encode_classes(y, owner=type(estimator).__name__)
    sw = check_sample_weight(sample_weight, X.shape[0])
    check_class_weights(t, sw, estimator.classes_)
    if reduce is not None:
        return X, reduce(X, t, sw, estimator.classes_.size)
    return X, class_stats(X, t, estimator.classes_.size, sw, kind="tied")


def validated_X(estimator: Any, X: MatrixLike) -> Matrix:
    """``X`` checked for a fitted ``estimator``: dense or CSR/CSC, float, its features."""
    check_is_fitted(estimator)
    return validate_data(estimator, encode_frame(estimator, X, False),
                         accept_sparse=["csr", "csc"],
                         dtype=[np.float64, np.float32], reset=False)


def linear_scores(estimator: Any, X: MatrixLike, relative: bool = False) -> np.ndarray:
    """The class scores ``X @ coef_.T + intercept_`` (dense float64), shape (n_samples, K).

    Never NaN: rows so large that the products overflow (1e308) are recomputed
    scaled, their scores ``+-inf`` where they lie beyond the float range or,
    ``relative``, shifted per row to stay finite with the same argmax and
    softmax (see :mod:`problin._core.extreme`).
    """
    X = validated_X(estimator, X)
    return extreme.linear_scores(X, estimator.coef_, estimator.intercept_, relative)

