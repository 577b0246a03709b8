"""Dask input: the one-pass statistics of the generative and least-squares models.

Least-squares moments of ``[X, y]`` and per-class statistics, each chunk
reduced by the in-memory function and the results merged exactly (see
:mod:`~problin._dask.chunks`). The class statistics find the labels in the same
pass: each chunk's are keyed by the labels it holds, and a merge spreads both
sides over the union of their labels (a separate pass over ``y`` first, ``da.unique``,
cost 0.25 s at 1e6 rows on a local cluster against 26 ms for ``np.unique``).
"""
import functools
from collections.abc import Callable
from typing import Any, Protocol, Self

import numpy as np
import scipy.sparse as sp

from .._core.labels import distinct_labels, encode_classes
from .._core.moments.class_stats import ClassStats, class_stats, spread_classes
from .._core.moments.least_squares import Moments, moments
from .._core.types import Matrix
from .._core.validation import MAX_MAGNITUDE, check_class_totals, check_total_weight
from .chunks import (
    _check_chunk,
    _chunk_weights,
    _float_rows,
    _pass_rows,
    _scratch_rows,
    _sparse_chunk,
    align_rows,
    as_dask_rows,
    dask_features,
    reduce_chunks,
)

__all__ = [
    "dask_class_counts",
    "ClassReduction",
    "ClassSums",
    "Labelled",
    "dask_class_reduce",
    "dask_class_stats",
    "dask_labels",
    "dask_moments",
    "dask_regression_data",
]


def _moments_chunk(k: int, lo: int, Xb: Matrix, Tb: np.ndarray,
                   wb: np.ndarray | None) -> Moments | None:
    """The moments of chunk ``k``, its rows read once (see :func:`_checked`)."""
    if Xb.shape[0] == 0:
        return None
    Xb = _pass_rows(Xb)
    Tb = np.asarray(Tb, dtype=np.float64).reshape(Xb.shape[0], -1)
    w = _chunk_weights(k, lo, wb)
    return _checked(moments(Xb, Tb, w), k, lo, Xb, w,
                    Tb)  # a regression target: squared too, so bounded as X


def _checked(stats: Any, k: int, lo: int, Xb: Matrix, w: np.ndarray | None,
             Tb: np.ndarray | None = None) -> Any:
    """``stats`` of chunk ``k``'s rows (``Xb``, targets ``Tb``) once they are known to hold
    no NaN, infinity or value beyond the magnitude bound: proved by the statistics
    themselves (``stats.values_within``: the rows are read once, by the pass), or, where
    they cannot prove it (or weights may hide a row), by reading the rows again for the
    error that names the chunk and the row."""
    if w is None and stats.values_within(MAX_MAGNITUDE):
        return stats
    if not sp.issparse(Xb):
        _check_chunk(k, lo, "X", _float_rows(Xb))
    if Tb is not None:
        _check_chunk(k, lo, "y", Tb, bounded=True)
    return stats


def dask_regression_data(estimator: Any, X: Any, y: Any, reset: bool) -> tuple[Any, Any]:
    """``(X, y)`` of a regressor as Dask arrays with aligned row chunks; numeric y.

    Sets ``n_features_in_`` and the estimator's ``_single_output`` flag (``reset``)
    or checks them against an earlier fit.
    """
    X = dask_features(estimator, X, reset)
    y = align_rows(y, X, "y")
    if y.dtype.kind not in "biuf":
        raise TypeError(f"y must be numeric, got dtype {y.dtype}")
    if reset:
        estimator._single_output = y.ndim == 1
    elif (y.ndim == 1) != estimator._single_output:
        raise ValueError("y has a different number of outputs than in the previous fit")
    return X, y


def dask_moments(estimator: Any, X: Any, y: Any, sample_weight: Any, reset: bool) -> Moments:
    """:class:`~problin._core.moments.least_squares.Moments` of ``[X, y]`` from Dask input, one pass.

    Sets ``n_features_in_`` and the estimator's ``_single_output`` flag (``reset``)
    or checks them against an earlier fit.
    """
    X, y = dask_regression_data(estimator, X, y, reset)
    w = align_rows(sample_weight, X, "sample_weight")
    stats = reduce_chunks(_moments_chunk, X, y, w)
    check_total_weight(stats.weight)
    return stats


class ClassSums:
    """Per-class sums that merge by addition: ``counts`` (the class weights
    ``n_k``) and further arrays ``sums`` (e.g. naive Bayes' feature counts)."""

    def __init__(self, counts: np.ndarray, *sums: np.ndarray) -> None:
        self.counts, self.sums = counts, sums

    def merge(self, other: "ClassSums") -> "ClassSums":
        return ClassSums(self.counts + other.counts,
                         *(a + b for a, b in zip(self.sums, other.sums)))

    def spread(self, index: np.ndarray, n_classes: int) -> "ClassSums":
        """These sums as those of ``n_classes`` classes, class ``k`` at ``index[k]``."""
        return ClassSums(*(spread_classes(a, index, n_classes)
                           for a in (self.counts, *self.sums)))


class ClassReduction(Protocol):
    """A per-class statistic of rows (:class:`ClassSums`,
    :class:`~problin._core.moments.class_stats.ClassStats`, ...): the class weights,
    an exact merge with the statistic of other rows, and its spread over more classes."""

    counts: np.ndarray

    def merge(self, other: Self) -> Self: ...

    def spread(self, index: np.ndarray, n_classes: int) -> Self: ...


class Labelled:
    """A :class:`ClassReduction` keyed by the sorted labels of its classes: the
    statistic of chunks that need not hold the same labels. The merge spreads
    each side over the union of the labels (nothing to do when they agree)."""

    def __init__(self, labels: np.ndarray, stats: ClassReduction) -> None:
        self.labels, self.stats = labels, stats

    def merge(self, other: "Labelled") -> "Labelled":
        a, b = self.labels, other.labels
        if a.shape == b.shape and bool(np.all(a == b)):
            return Labelled(a, self.stats.merge(other.stats))
        union = np.union1d(a, b)
        return Labelled(union, self.stats.spread(np.searchsorted(union, a), union.size)
                        .merge(other.stats.spread(np.searchsorted(union, b), union.size)))


def _sparse_rows(k: int, lo: int, Xb: Matrix, accept_sparse: bool) -> Matrix:
    """A scipy.sparse chunk as checked CSR (see :func:`_sparse_chunk`), or the error of an
    estimator that takes no sparse rows."""
    if not accept_sparse:
        raise TypeError(f"chunk {k} of X is a scipy.sparse matrix, which this estimator "
                        "does not take; pass dense chunks (X.map_blocks(lambda b: "
                        "b.toarray()))")
    return _sparse_chunk(k, lo, Xb)


def _class_chunk(k: int, lo: int, Xb: Matrix, yb: np.ndarray, wb: np.ndarray | None,
                 classes: np.ndarray | int, reduce: Callable[..., Any], accept_sparse: bool,
                 coded: bool = False) -> Any:
    """``reduce`` of chunk ``k`` with labels ``yb`` among ``classes`` (or, ``coded``, class
    codes ``yb`` of ``classes`` classes)."""
    if Xb.shape[0] == 0:
        return None
    if sp.issparse(Xb):
        Xb = _sparse_rows(k, lo, Xb, accept_sparse)
    else:
        Xb = _scratch_rows(Xb)
        _check_chunk(k, lo, "X", Xb)
    if coded:
        return reduce(Xb, yb, _chunk_weights(k, lo, wb), classes)
    classes = np.asarray(classes)
    codes = np.searchsorted(classes, np.asarray(yb))
    return reduce(Xb, codes, _chunk_weights(k, lo, wb), classes.size)


def _chunk_labels(k: int, lo: int, yb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, codes)`` of chunk ``k``: the sorted labels it holds and each row's."""
    yb = np.asarray(yb)
    if yb.dtype.kind == "f":
        _check_chunk(k, lo, "y", yb, bounded=False)
    return distinct_labels(yb)


def _labelled_chunk(k: int, lo: int, Xb: Matrix, yb: np.ndarray, wb: np.ndarray | None,
                    reduce: Callable[..., ClassReduction], accept_sparse: bool
                    ) -> Labelled | None:
    """A chunk's class statistic keyed by the labels it holds (see :class:`Labelled`)."""
    if Xb.shape[0] == 0:
        return None
    labels, codes = _chunk_labels(k, lo, yb)
    return Labelled(labels, _class_chunk(k, lo, Xb, codes, wb, labels.size, reduce,
                                         accept_sparse, coded=True))


def _stats_chunk(k: int, lo: int, Xb: Matrix, yb: np.ndarray, wb: np.ndarray | None,
                 kind: str, accept_sparse: bool) -> Labelled | None:
    """A chunk's :class:`~problin._core.moments.class_stats.ClassStats` keyed by the labels
    it holds: dense rows read once, in place (the pass gathers each block by class into a
    buffer of its own, misaligned rows too) and checked through the statistics
    (:func:`_checked`); no copy of the chunk, no pass of its own for the check."""
    if Xb.shape[0] == 0:
        return None
    labels, codes = _chunk_labels(k, lo, yb)
    Xb = _sparse_rows(k, lo, Xb, accept_sparse) if sp.issparse(Xb) else _pass_rows(Xb)
    w = _chunk_weights(k, lo, wb)
    return Labelled(labels, _checked(class_stats(Xb, codes, labels.size, w, kind), k, lo, Xb, w))


def _class_stats_of(Xb: Matrix, codes: np.ndarray, w: np.ndarray | None, n_classes: int,
                    kind: str) -> ClassStats:
    return class_stats(Xb, codes, n_classes, w, kind)


def dask_class_stats(estimator: Any, X: Any, y: Any, sample_weight: Any, kind: str, *,
                     accept_sparse: bool = False) -> ClassStats:
    """Per-class :class:`~problin._core.moments.class_stats.ClassStats` from Dask input.

    Sets ``classes_`` (the sorted labels of ``y``, found in the same pass) and
    ``n_features_in_``: one pass over ``X`` and ``y``.
    """
    return _reduce_labelled(estimator, X, y, sample_weight,
                            functools.partial(_stats_chunk, kind=kind,
                                              accept_sparse=accept_sparse))


def dask_class_reduce(estimator: Any, X: Any, y: Any, sample_weight: Any,
                      reduce: Callable[..., Any], *, accept_sparse: bool = False) -> Any:
    """``merge(reduce(X_k, codes_k, w_k, n_classes))`` over the row chunks of Dask input.

    As :func:`dask_class_stats` for any per-chunk class statistic: ``reduce``
    (picklable) returns a :class:`ClassReduction` (e.g. :class:`ClassSums`) of
    the chunk's own classes, ``codes_k`` indexing the labels the chunk holds;
    the labels of all chunks are found in the same pass (see :class:`Labelled`).
    ``accept_sparse``: whether chunks may be scipy.sparse matrices (as CSR).
    """
    return _reduce_labelled(estimator, X, y, sample_weight,
                            functools.partial(_labelled_chunk, reduce=reduce,
                                              accept_sparse=accept_sparse))


def _reduce_labelled(estimator: Any, X: Any, y: Any, sample_weight: Any,
                     chunk: Callable[..., Labelled | None]) -> Any:
    """The merged statistic of ``chunk(k, first_row, X_k, y_k, w_k)`` (a :class:`Labelled`)
    over the row chunks; sets ``classes_`` and ``n_features_in_``."""
    X = dask_features(estimator, X, True)
    y = _label_rows(y, X)
    w = align_rows(sample_weight, X, "sample_weight")
    found = reduce_chunks(chunk, X, y, w)
    estimator.classes_, _ = encode_classes(found.labels, owner=type(estimator).__name__)
    check_class_totals(found.stats.counts, estimator.classes_)
    return found.stats


def dask_labels(estimator: Any, X: Any, y: Any, reset: bool) -> tuple[Any, Any, np.ndarray]:
    """``(X, y, labels)``: Dask ``X`` (see :func:`dask_features`), ``y`` aligned to its
    row chunks, and the sorted distinct labels of ``y`` (one pass over ``y`` only)."""
    import dask.array as da
    X = dask_features(estimator, X, reset)
    y = _label_rows(y, X)
    present = da.unique(y).compute()
    if present.dtype.kind == "f" and not np.isfinite(present).all():
        raise ValueError("Input y contains NaN or infinity.")
    return X, y, present


def _label_rows(y: Any, X: Any) -> Any:
    """Labels ``y`` aligned to the row chunks of Dask ``X``: one a row."""
    y = align_rows(y, X, "y")
    if y.ndim != 1:
        raise ValueError(f"y must be 1D (one label per sample), got shape {y.shape}")
    return y


def dask_class_counts(X: Any, y: Any, sample_weight: Any, classes: np.ndarray,
                      order: np.ndarray) -> np.ndarray:
    """Weighted class counts of Dask labels ``y``: one pass over ``y`` (and weights)."""
    import dask.array as da
    y = align_rows(y, as_dask_rows(X, "X"), "y")
    codes = y.map_blocks(lambda b: order[np.searchsorted(classes[order], b)], dtype=np.intp)
    w = None if sample_weight is None else align_rows(sample_weight, y, "sample_weight")
    return np.asarray(da.bincount(codes, weights=w, minlength=classes.size).compute(),
                      dtype=np.float64)
