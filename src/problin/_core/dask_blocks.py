"""Dask input: the row-block passes of problin, run chunk by chunk on Dask.

A Dask array's row chunks are the blocks of DESIGN.md's row-block principle.
Each chunk is reduced by the very function that reduces an in-memory array
(:func:`~problin._core.least_squares.moments`,
:func:`~problin._core.stats.class_stats`) on the worker that holds it, and the
small per-chunk results (D x D) are merged by a Dask tree reduction with their
exact Chan-Golub-LeVeque updates, so rows never travel and the estimators'
solvers run unchanged on the reduced statistics. Predictions map the
in-memory ``predict`` over the chunks and stay lazy.

Dask is an optional dependency: this module imports it only inside the
functions that need it, and estimators import this module only for Dask input.
"""
import functools

import numpy as np

from .validation import MAX_MAGNITUDE, chunk_magnitude_error, within_magnitude

__all__ = [
    "ClassSums",
    "align_rows",
    "as_dask_rows",
    "dask_class_reduce",
    "dask_class_stats",
    "dask_features",
    "dask_labels",
    "dask_moments",
    "dask_regression_data",
    "is_dask",
    "lazy_on_dask",
    "lazy_rows",
    "reduce_chunks",
]

# Per-chunk results merged per node of the reduction tree.
_FAN_IN = 8


def is_dask(X):
    """True for a Dask collection (array, DataFrame, Series), without importing Dask."""
    return hasattr(X, "__dask_graph__") and type(X).__module__.split(".")[0] == "dask"


def as_dask_rows(X, name="X", ndim=2):
    """``X`` as a ``dask.array.Array`` of ``ndim`` dimensions with known row chunks.

    A Dask DataFrame or Series becomes an array with computed partition
    lengths; unknown chunk sizes (``nan``, e.g. from ``to_dask_array()``
    without ``lengths``) are computed; the columns are merged into one chunk,
    so that every chunk holds whole rows.
    """
    import dask.array as da
    if not isinstance(X, da.Array):
        if not hasattr(X, "to_dask_array"):
            raise TypeError(f"{name} is a {type(X).__name__}; pass a dask.array.Array or a "
                            "Dask DataFrame/Series")
        X = X.to_dask_array(lengths=True)
    if np.isnan(np.asarray(X.chunks[0], dtype=np.float64)).any():
        X = X.compute_chunk_sizes()
    if X.ndim != ndim:
        raise ValueError(f"Expected a {ndim}D Dask array for {name}, got shape {X.shape}"
                         + ("; reshape it to (n_samples, 1) for a single feature"
                            if X.ndim == 1 else ""))
    if X.ndim == 2 and len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    return X


def align_rows(v, X, name):
    """``v`` (numpy or Dask, 1-D or 2-D, or ``None``) chunked like the rows of ``X``."""
    if v is None:
        return None
    import dask.array as da
    if is_dask(v):
        v = as_dask_rows(v, name, ndim=getattr(v, "ndim", 1))
    else:
        v = np.asarray(v)
    if v.ndim == 0 or v.ndim > 2:
        raise ValueError(f"{name} must be 1D or 2D, got shape {v.shape}")
    if v.shape[0] != X.shape[0]:
        raise ValueError(f"{name} has {v.shape[0]} rows but X has {X.shape[0]}: they must be "
                         "aligned row by row")
    if not isinstance(v, da.Array):
        return da.from_array(v, chunks=(X.chunks[0],) + v.shape[1:])
    if v.ndim == 2 and len(v.chunks[1]) > 1:
        v = v.rechunk({1: -1})
    if v.chunks[0] != X.chunks[0]:  # mismatched partitions: follow X's row chunks
        v = v.rechunk({0: X.chunks[0]})
    return v


def _merge_parts(*parts):
    """Merge per-chunk statistics in order (``None``: an empty chunk)."""
    parts = [p for p in parts if p is not None]
    return functools.reduce(lambda a, b: a.merge(b), parts) if parts else None


def _chunk_call(func, *args):
    """One chunk's reduction, its block passes on this task's thread only: the
    scheduler runs the other chunks on the other cores."""
    from .blocks import serial_blocks
    with serial_blocks():
        return func(*args)


def reduce_chunks(func, X, *arrays):
    """``merge(func(k, first_row, X_k, *arrays_k))`` over the row chunks ``k`` of ``X``.

    ``arrays`` are row-aligned Dask arrays (see :func:`align_rows`) or ``None``.
    The per-chunk results (objects with an exact ``merge``) are merged in a
    tree of fan-in 8 on the active scheduler (threads, processes or a
    ``dask.distributed`` Client); only they travel, never rows.
    """
    import dask
    xs = X.to_delayed().ravel()
    parts = [None if a is None else a.to_delayed().ravel() for a in arrays]
    starts = np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.int64)
    nodes = [dask.delayed(_chunk_call, pure=True)(func, k, int(starts[k]), xs[k],
                                                  *(None if p is None else p[k] for p in parts))
             for k in range(len(xs))]
    while len(nodes) > 1:
        nodes = [dask.delayed(_merge_parts, pure=True)(*nodes[i:i + _FAN_IN])
                 for i in range(0, len(nodes), _FAN_IN)]
    (total,) = dask.compute(nodes[0])
    if total is None:
        raise ValueError("Found a Dask array with 0 sample(s): there is nothing to fit")
    return total


def dask_features(estimator, X, reset):
    """``X`` as a row-chunked Dask array; sets (``reset``) or checks ``n_features_in_``
    and, for a Dask DataFrame with string column names, ``feature_names_in_``."""
    names = _string_columns(X)
    X = as_dask_rows(X, "X")
    if X.dtype.kind not in "biuf":
        raise TypeError(f"X must be numeric, got a Dask array of dtype {X.dtype}")
    if X.shape[0] == 0:
        raise ValueError("Found a Dask array with 0 sample(s): there is nothing to fit")
    if reset:
        estimator.n_features_in_ = X.shape[1]
        if names is not None:
            estimator.feature_names_in_ = names
        else:
            estimator.__dict__.pop("feature_names_in_", None)
    elif X.shape[1] != estimator.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} features, but {type(estimator).__name__} is "
                         f"expecting {estimator.n_features_in_} features as input.")
    return X


def _float_rows(a):
    a = np.asarray(a)
    return a if a.dtype in (np.float64, np.float32) else a.astype(np.float64)


def _check_chunk(k, lo, name, a, bounded=None):
    """A clear error naming chunk ``k`` if ``a`` holds NaN or infinity, or (``bounded``;
    default: for X) values beyond :data:`~problin._core.validation.MAX_MAGNITUDE`."""
    bounded = name == "X" if bounded is None else bounded
    if a.dtype.kind == "f" and a.size and within_magnitude(
            a, MAX_MAGNITUDE if bounded else np.finfo(a.dtype).max):
        return  # the common case: one pass over the chunk, no mask
    if a.dtype.kind in "fc" and not np.isfinite(a).all():
        bad = np.flatnonzero(~np.isfinite(a.reshape(a.shape[0], -1)).all(axis=1))
        raise ValueError(f"Input {name} contains NaN or infinity in chunk {k} (row "
                         f"{lo + int(bad[0])}; the chunk holds rows {lo} to "
                         f"{lo + a.shape[0] - 1}).")
    if bounded and a.dtype.kind == "f" and a.size:
        raise chunk_magnitude_error(k, lo, name, a)


def _chunk_weights(k, lo, w):
    if w is None:
        return None
    w = np.asarray(w, dtype=np.float64)
    _check_chunk(k, lo, "sample_weight", w)
    if (w < 0).any():
        raise ValueError(f"sample_weight has negative values in chunk {k}; weights must be "
                         "non-negative")
    return w


def _moments_chunk(k, lo, Xb, Tb, wb):
    from .least_squares import moments
    if Xb.shape[0] == 0:
        return None
    Xb = _float_rows(Xb)
    _check_chunk(k, lo, "X", Xb)
    Tb = np.asarray(Tb, dtype=np.float64).reshape(Xb.shape[0], -1)
    _check_chunk(k, lo, "y", Tb, bounded=True)  # a regression target: squared too
    return moments(Xb, Tb, _chunk_weights(k, lo, wb))


def dask_regression_data(estimator, X, y, reset):
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


def dask_moments(estimator, X, y, sample_weight, reset):
    """:class:`~problin._core.least_squares.Moments` of ``[X, y]`` from Dask input, one pass.

    Sets ``n_features_in_`` and the estimator's ``_single_output`` flag (``reset``)
    or checks them against an earlier fit.
    """
    X, y = dask_regression_data(estimator, X, y, reset)
    w = align_rows(sample_weight, X, "sample_weight")
    stats = reduce_chunks(_moments_chunk, X, y, w)
    if not stats.weight > 0:
        raise ValueError("sample_weight sums to zero: there is nothing to fit")
    return stats


class ClassSums:
    """Per-class sums that merge by addition: ``counts`` (the class weights
    ``n_k``) and further arrays ``sums`` (e.g. naive Bayes' feature counts)."""

    def __init__(self, counts, *sums):
        self.counts, self.sums = counts, sums

    def merge(self, other):
        return ClassSums(self.counts + other.counts,
                         *(a + b for a, b in zip(self.sums, other.sums)))


def _sparse_chunk(k, lo, Xb):
    """A scipy.sparse chunk as float CSR; NaN, infinity or values beyond the bound of
    :func:`~problin._core.validation.check_finite_magnitude` named by chunk and row."""
    Xb = Xb.tocsr()
    if Xb.dtype not in (np.float64, np.float32):
        Xb = Xb.astype(np.float64)
    if not np.isfinite(Xb.data).all():
        row = int(np.searchsorted(Xb.indptr, np.flatnonzero(~np.isfinite(Xb.data))[0],
                                  side="right")) - 1
        raise ValueError(f"Input X contains NaN or infinity in chunk {k} (row {lo + row}; "
                         f"the chunk holds rows {lo} to {lo + Xb.shape[0] - 1}).")
    if Xb.nnz and not within_magnitude(Xb.data):
        raise chunk_magnitude_error(k, lo, "X", Xb)
    return Xb


def _class_chunk(k, lo, Xb, yb, wb, classes, reduce, accept_sparse):
    import scipy.sparse as sp
    if Xb.shape[0] == 0:
        return None
    if sp.issparse(Xb):
        if not accept_sparse:
            raise TypeError(f"chunk {k} of X is a scipy.sparse matrix, which this estimator "
                            "does not take; pass dense chunks (X.map_blocks(lambda b: "
                            "b.toarray()))")
        Xb = _sparse_chunk(k, lo, Xb)
    else:
        Xb = _float_rows(Xb)
        _check_chunk(k, lo, "X", Xb)
    codes = np.searchsorted(classes, np.asarray(yb))
    return reduce(Xb, codes, _chunk_weights(k, lo, wb), classes.size)


def _class_stats_of(Xb, codes, w, n_classes, kind):
    from .stats import class_stats
    return class_stats(Xb, codes, n_classes, w, kind)


def dask_class_stats(estimator, X, y, sample_weight, kind, *, accept_sparse=False):
    """Per-class :class:`~problin._core.stats.ClassStats` from Dask input.

    Sets ``classes_`` (the sorted labels of ``y``, found by one pass over
    ``y`` only) and ``n_features_in_``; then one pass over ``X``.
    """
    return dask_class_reduce(estimator, X, y, sample_weight,
                             functools.partial(_class_stats_of, kind=kind),
                             accept_sparse=accept_sparse)


def dask_class_reduce(estimator, X, y, sample_weight, reduce, *, accept_sparse=False):
    """``merge(reduce(X_k, codes_k, w_k, n_classes))`` over the row chunks of Dask input.

    As :func:`dask_class_stats` for any per-chunk class statistic: ``reduce``
    (picklable) returns an object with ``counts`` (the class weights) and an
    exact ``merge`` (e.g. :class:`ClassSums`); ``codes_k`` index ``classes_``.
    ``accept_sparse``: whether chunks may be scipy.sparse matrices (as CSR).
    """
    from ..glm._targets import encode_classes
    X, y, present = dask_labels(estimator, X, y, reset=True)
    estimator.classes_, _ = encode_classes(present, owner=type(estimator).__name__)
    w = align_rows(sample_weight, X, "sample_weight")
    stats = reduce_chunks(functools.partial(_class_chunk, classes=estimator.classes_,
                                            reduce=reduce, accept_sparse=accept_sparse),
                          X, y, w)
    empty = stats.counts <= 0
    if empty.any():
        raise ValueError(f"classes {estimator.classes_[empty].tolist()} have zero total "
                         "sample weight: their parameters are undefined. Drop those samples "
                         "or give them positive weight.")
    return stats


def dask_labels(estimator, X, y, reset):
    """``(X, y, labels)``: Dask ``X`` (see :func:`dask_features`), ``y`` aligned to its
    row chunks, and the sorted distinct labels of ``y`` (one pass over ``y`` only)."""
    import dask.array as da
    X = dask_features(estimator, X, reset)
    y = align_rows(y, X, "y")
    if y.ndim != 1:
        raise ValueError(f"y must be 1D (one label per sample), got shape {y.shape}")
    present = da.unique(y).compute()
    if present.dtype.kind == "f" and not np.isfinite(present).all():
        raise ValueError("Input y contains NaN or infinity.")
    return X, y, present


def _string_columns(X):
    columns = getattr(X, "columns", None)
    if columns is not None and all(isinstance(c, str) for c in columns):
        return np.asarray(list(columns), dtype=object)
    return None


def _apply_rows(estimator, method, tail, dtype, index, kwargs, names, block):
    if block.shape[0] == 0:
        return np.empty((0,) + tail, dtype=dtype)
    if names is not None:  # the chunk of a DataFrame the estimator was fitted on
        import pandas as pd
        block = pd.DataFrame(block, columns=names)
    out = getattr(estimator, method)(block, **kwargs)
    return out if index is None else out[index]


def lazy_rows(estimator, method, X, columns=None, dtype=np.float64, index=None, **kwargs):
    """``estimator.method(X_k, **kwargs)[index]`` on every row chunk of a Dask ``X``, lazily.

    ``columns``: ``None`` for one value per row, else the number of output
    columns; ``index`` picks one output of a method that returns a tuple.
    """
    names, fitted_names = _string_columns(X), getattr(estimator, "feature_names_in_", None)
    X = as_dask_rows(X, "X")
    if X.shape[1] != estimator.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} features, but {type(estimator).__name__} is "
                         f"expecting {estimator.n_features_in_} features as input.")
    if names is not None and (fitted_names is None or list(names) != list(fitted_names)):
        raise ValueError("The feature names of the Dask DataFrame X differ from those seen "
                         f"in fit: {list(names)[:10]} vs "
                         f"{None if fitted_names is None else list(fitted_names)[:10]}")
    if names is None and fitted_names is not None:  # as scikit-learn says it, once
        import warnings
        warnings.warn(f"X does not have valid feature names, but {type(estimator).__name__} "
                      "was fitted with feature names", UserWarning, stacklevel=3)
    dtype = np.dtype(dtype)
    tail = () if columns is None else (int(columns),)
    fn = functools.partial(_apply_rows, estimator, method, tail, dtype, index, kwargs,
                           fitted_names)
    meta = np.empty((0,) + tail, dtype=dtype)
    if columns is None:
        return X.map_blocks(fn, drop_axis=1, dtype=dtype, meta=meta)
    return X.map_blocks(fn, chunks=(X.chunks[0], tail), dtype=dtype, meta=meta)


def lazy_on_dask(columns=None, dtype=None):
    """Decorator: a prediction method ``(self, X)`` returns a lazy Dask array for Dask ``X``.

    ``columns(self)`` gives the number of output columns (``None``: one value
    per row) and ``dtype(self)`` the output dtype (default float64). Other
    input goes to the method unchanged.
    """
    def wrap(method):
        @functools.wraps(method)
        def wrapper(self, X, *args, **kwargs):
            if not is_dask(X):
                return method(self, X, *args, **kwargs)
            from sklearn.utils.validation import check_is_fitted
            check_is_fitted(self)
            if args:  # further positional arguments go to the chunks by name
                import inspect
                names = list(inspect.signature(method).parameters)[2:]
                kwargs.update(zip(names, args))
            return lazy_rows(self, method.__name__, X,
                             None if columns is None else columns(self),
                             np.float64 if dtype is None else dtype(self), **kwargs)
        return wrapper
    return wrap
