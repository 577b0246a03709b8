"""Validation and the one pass of class statistics shared by Fisher and least squares."""
import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import validate_data

from .._core.stats import class_stats
from .._core.validation import check_label_types, check_sample_weight
from ..glm._targets import encode_classes

__all__ = ["fit_class_stats"]


def fit_class_stats(estimator, X, y, sample_weight):
    """Validate ``(X, y, sample_weight)`` for ``estimator`` and read the tied class statistics.

    Sets ``classes_`` (and ``n_features_in_``/``feature_names_in_``) on the
    estimator; returns ``(X, stats)`` with ``stats`` a ``kind="tied"``
    :class:`~problin._core.stats.ClassStats` (weighted counts, class means,
    within-class scatter ``S_W``), read in one blocked pass.
    """
    check_label_types(y)
    X, y = validate_data(estimator, X, y, accept_sparse=["csr", "csc"],
                         dtype=[np.float64, np.float32])
    if sp.issparse(X):
        X = X.tocsr()
    estimator.classes_, t = encode_classes(y, owner=type(estimator).__name__)
    sw = check_sample_weight(sample_weight, X.shape[0])
    stats = class_stats(X, t, estimator.classes_.size, sw, kind="tied")
    if np.any(stats.counts <= 0):
        empty = estimator.classes_[stats.counts <= 0].tolist()
        raise ValueError(f"classes {empty} have zero total sample weight: drop those samples "
                         "or give them positive weight")
    return X, stats
