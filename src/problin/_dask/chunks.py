"""Dask input: the row chunks of a Dask collection as problin's row blocks.

A Dask array's row chunks are the blocks of the row-block principle
(``docs/design.md``). Each chunk is reduced by the very function that reduces
an in-memory array (:func:`~problin._core.moments.least_squares.moments`,
:func:`~problin._core.moments.class_stats.class_stats`) on the worker that
holds it, and the small per-chunk results (D x D) are merged by a Dask tree
reduction with their exact Chan-Golub-LeVeque updates, so rows never travel
and the estimators' solvers run unchanged on the reduced statistics
(:func:`reduce_chunks`). Each chunk is checked as it is read: NaN, infinity
and values beyond the magnitude bound are errors naming the chunk and row.

Dask is an optional dependency: these modules import it only inside the
functions that need it (importing ``problin`` never imports Dask).
"""
import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from .._core.blocks import serial_blocks
from .._core.moments.class_stats import ClassStats
from .._core.moments.standardize import column_stats
from .._core.types import Matrix
from .._core.validation import MAX_MAGNITUDE, chunk_magnitude_error, within_magnitude

__all__ = [
    "align_rows",
    "as_dask_rows",
    "column_stats_chunk",
    "dask_features",
    "is_dask",
    "reduce_chunks",
]

# Per-chunk results merged per node of the reduction tree.
_FAN_IN = 8


def is_dask(X: Any) -> bool:
    """True for a Dask collection (array, DataFrame, Series), without importing Dask."""
    return hasattr(X, "__dask_graph__") and type(X).__module__.split(".")[0] == "dask"


def as_dask_rows(X: Any, name: str = "X", ndim: int = 2) -> Any:
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


def align_rows(v: Any, X: Any, name: str) -> Any:
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


def _merge_parts(*parts: Any) -> Any:
    """Merge per-chunk statistics in order (``None``: an empty chunk)."""
    present = [p for p in parts if p is not None]
    return functools.reduce(lambda a, b: a.merge(b), present) if present else None


def _chunk_call(func: Callable[..., Any], *args: Any) -> Any:
    """One chunk's reduction, its block passes on this task's thread only: the
    scheduler runs the other chunks on the other cores."""
    with serial_blocks():
        return func(*args)


def reduce_chunks(func: Callable[..., Any], X: Any, *arrays: Any) -> Any:
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


def dask_features(estimator: Any, X: Any, reset: bool) -> Any:
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


def _string_columns(X: Any) -> np.ndarray | None:
    columns = getattr(X, "columns", None)
    if columns is not None and all(isinstance(c, str) for c in columns):
        return np.asarray(list(columns), dtype=object)
    return None


def _float_rows(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    return a if a.dtype in (np.float64, np.float32) else a.astype(np.float64)


def _check_chunk(k: int, lo: int, name: str, a: np.ndarray, bounded: bool | None = None) -> None:
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


def _chunk_weights(k: int, lo: int, w: np.ndarray | None) -> np.ndarray | None:
    if w is None:
        return None
    w = np.asarray(w, dtype=np.float64)
    _check_chunk(k, lo, "sample_weight", w)
    if (w < 0).any():
        raise ValueError(f"sample_weight has negative values in chunk {k}; weights must be "
                         "non-negative")
    return w


def _sparse_chunk(k: int, lo: int, Xb: Matrix) -> Matrix:
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


def column_stats_chunk(k: int, lo: int, Xb: Matrix) -> ClassStats | None:
    """:func:`~problin._core.moments.standardize.column_stats` of Dask chunk ``k``
    (first row ``lo``); None when empty. NaN or infinity is reported naming the chunk."""
    if Xb.shape[0] == 0:
        return None
    Xb = np.asarray(Xb, dtype=np.float64)
    _check_chunk(k, lo, "X", Xb)
    return column_stats(Xb)
