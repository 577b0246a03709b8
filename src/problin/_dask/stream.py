"""Dask batches for the generative classifiers' ``partial_fit``.

A Dask batch is reduced chunk by chunk to the same per-class statistics as an
in-memory batch (by :func:`~problin._dask.chunks.reduce_chunks`), with
its labels coded against the ``classes_`` known from the first call; the
estimator then merges them into its running statistics exactly as it merges
an in-memory batch.
"""
import functools
from collections.abc import Callable
from typing import Any

from numpy.typing import ArrayLike
from sklearn.utils.multiclass import check_classification_targets

from .._core.validation import check_label_types
from .chunks import align_rows, reduce_chunks
from .reductions import _class_chunk, dask_labels

__all__ = ["dask_stream_batch"]


def dask_stream_batch(estimator: Any, X: Any, y: Any, sample_weight: Any, classes: ArrayLike | None,
                      first: bool, reduce: Callable[..., Any], *,
                      accept_sparse: bool = False) -> Any:
    """``merge(reduce(X_k, codes_k, w_k, n_classes))`` over the row chunks of one Dask batch.

    On the ``first`` call sets ``n_features_in_`` and ``classes_`` (``classes``,
    or the labels of ``y`` as ``estimator._stream_classes`` decides), else
    checks them; a label not in ``classes_`` is an error, as in memory. One
    pass over ``y`` (its labels), one over ``X``.
    """
    X, y, present = dask_labels(estimator, X, y, reset=first)
    check_label_types(present)
    check_classification_targets(present)
    if first:
        estimator.classes_ = estimator._stream_classes(present, classes)
    try:
        estimator._codes(present)  # every label known (else the in-memory error)
        w = align_rows(sample_weight, X, "sample_weight")
        return reduce_chunks(functools.partial(_class_chunk, classes=estimator.classes_,
                                               reduce=reduce, accept_sparse=accept_sparse),
                             X, y, w)
    except Exception:
        if first:  # leave the estimator unfitted, as it was
            del estimator.classes_
        raise
