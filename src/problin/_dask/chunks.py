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
import threading
import uuid
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._core.blocks import serial_blocks
from .._core.moments.class_stats import ClassStats, aligned_rows
from .._core.moments.standardize import column_stats
from .._core.types import Matrix
from .._core.validation import (
    MAX_MAGNITUDE,
    category_values,
    check_total_weight,
    chunk_magnitude_error,
    within_magnitude,
)

__all__ = [
    "align_rows",
    "as_dask_rows",
    "column_stats_chunk",
    "dask_features",
    "in_task",
    "is_dask",
    "reduce_chunks",
    "take_rows",
]

# Per-chunk results merged per node of the reduction tree.
_FAN_IN = 8


def is_dask(X: Any) -> bool:
    """True for a Dask collection (array, DataFrame, Series), without importing Dask."""
    return hasattr(X, "__dask_graph__") and type(X).__module__.split(".")[0] == "dask"


def as_dask_rows(X: Any, name: str = "X", ndim: int = 2, known_rows: bool = True) -> Any:
    """``X`` as a ``dask.array.Array`` of ``ndim`` dimensions, each chunk whole rows.

    With ``known_rows`` (the fits, which align labels and weights with the
    rows), a Dask DataFrame or Series becomes an array with computed partition
    lengths, and unknown chunk sizes (``nan``, e.g. from ``to_dask_array()``
    without ``lengths``, or a boolean row selection) are computed, on a copy:
    the caller's array is left as it was. Without (the lazy predictions, chunk
    by chunk), nothing is computed: the row counts may stay unknown. The
    columns are merged into one chunk.
    """
    import dask.array as da
    if not isinstance(X, da.Array):
        if not hasattr(X, "to_dask_array"):
            raise TypeError(f"{name} is a {type(X).__name__}; pass a dask.array.Array or a "
                            "Dask DataFrame/Series")
        X = _plain_dtypes(X, name)
        try:
            X = X.to_dask_array(lengths=True if known_rows else None)
        except ValueError as exc:
            # dask.dataframe counts the lengths on an expression optimised further than
            # the array's (Parquet row groups of few columns merged): "The number of
            # items in 'lengths' does not match the number of partitions. 2 != 3"
            # (dask 2026.8). The array's own chunks are counted below instead (a pass).
            if "lengths" not in str(exc):
                raise
            X = X.to_dask_array()
    if known_rows and np.isnan(np.asarray(X.chunks[0], dtype=np.float64)).any():
        X = X.copy().compute_chunk_sizes()  # (it computes in place: not the caller's array)
    if X.ndim != ndim:
        raise ValueError(f"Expected a {ndim}D Dask array for {name}, got shape {X.shape}"
                         + ("; reshape it to (n_samples, 1) for a single feature"
                            if X.ndim == 1 else ""))
    if X.ndim == 2 and len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    return X


def _plain_dtypes(frame: Any, name: str) -> Any:
    """A Dask DataFrame or Series with numpy dtypes where pandas' would make an object
    array: numeric extension and boolean columns (``Int64``, ``Float64``, pyarrow
    doubles, bool beside floats) as float64, a categorical Series of numbers or booleans
    as its categories' type. Text columns stay (refused later, by name)."""
    import pandas as pd
    if getattr(frame, "ndim", 1) == 2:
        dtypes = frame.dtypes
        text = [str(c) for c, t in zip(frame.columns, dtypes)
                if not (pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t))]
        if text:
            raise TypeError(f"{name} has columns that are not numbers: {text[:10]}; encode "
                            "them first (problin.io.read_dask reads a file with its "
                            "categorical columns encoded)")
        # (numbers of numpy dtypes mix into one; bool beside them makes objects)
        plain = all(isinstance(t, np.dtype) and t.kind in "iuf" for t in dtypes) or \
            all(isinstance(t, np.dtype) and t.kind == "b" for t in dtypes)
        return frame if plain else frame.astype(np.float64)
    values = category_values(frame)
    return frame if values is None else frame.astype(values)


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
    """One chunk's task: its block passes and its BLAS on this task's thread only
    (:func:`~problin._core.blocks.serial_blocks`): the scheduler runs the other
    chunks on the other cores, one task per worker thread (threads, processes or a
    ``dask.distributed`` worker's ``nthreads``), so one BLAS thread a task fits
    every worker's threads."""
    with serial_blocks():
        return func(*args)


def in_task(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` as problin's Dask tasks run it (see :func:`_chunk_call`): for the
    graphs built outside :func:`reduce_chunks` (a ``blockwise``, a chain of tasks)."""
    return functools.partial(_chunk_call, func)


def _task_names(prefix: str) -> Callable[[int], str]:
    """Task keys ``prefix-<fresh token>-<index>``: no hashing of the arguments
    (a pass's tokenizing cost ~2 ms), never the key of an earlier pass still
    being forgotten by the scheduler, and the tasks ordered by their index
    (the order in which a scheduler breaks ties)."""
    token = uuid.uuid4().hex
    return lambda i: f"{prefix}-{token}-{i:08d}"


def reduce_chunks(func: Callable[..., Any], X: Any, *arrays: Any) -> Any:
    """``merge(func(k, first_row, X_k, *arrays_k))`` over the row chunks ``k`` of ``X``.

    ``arrays`` are row-aligned Dask arrays (see :func:`align_rows`) or ``None``.
    The per-chunk results (objects with an exact ``merge``) are merged in a
    tree of fan-in 8 on the active scheduler (threads, processes or a
    ``dask.distributed`` Client); only they travel, never rows. The tree's
    last node is the caller's: its (at most 8) inputs are merged here, which
    spares each pass a round trip through the scheduler (~5 ms of ~20 ms on a
    local cluster).
    """
    import dask
    xs, parts = _delayed_chunks(X, *arrays)
    starts = np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.int64)
    name = _task_names("problin-chunk")
    nodes = [dask.delayed(_chunk_call, pure=False)(func, k, int(starts[k]), xs[k],
                                                  *(None if p is None else p[k] for p in parts),
                                                  dask_key_name=name(k))
             for k in range(len(xs))]
    level = 0
    while len(nodes) > _FAN_IN:
        level, name = level + 1, _task_names(f"problin-merge{level + 1}")
        nodes = [dask.delayed(_merge_parts, pure=False)(*nodes[i:i + _FAN_IN],
                                                       dask_key_name=name(i // _FAN_IN))
                 for i in range(0, len(nodes), _FAN_IN)]
    (found,) = dask.compute(nodes)
    total = _merge_parts(*found)
    if total is None:
        raise ValueError("Found a Dask array with 0 sample(s): there is nothing to fit")
    return total


def _delayed_chunks(X: Any, *arrays: Any) -> tuple[Any, list[Any]]:
    """The row chunks of ``X`` and of the row-aligned ``arrays`` (``None`` kept) as
    Delayed objects, their graphs not optimised: where X's and y's chunks come from one
    task (a file partition read once: ``io.read_dask``), optimising (fusing, even the
    arrays together) puts a copy of that task in each and runs it twice a pass."""
    parts = [None if a is None else a.to_delayed(optimize_graph=False).ravel()
             for a in arrays]
    return X.to_delayed(optimize_graph=False).ravel(), parts


def _take(local: np.ndarray, *blocks: Any) -> tuple[Any, ...]:
    """Rows ``local`` of each of a chunk's blocks (``None`` stays ``None``)."""
    return tuple(None if b is None else (b.tocsr() if sp.issparse(b) else b)[local]
                 for b in blocks)


def _stack(parts: list[Any]) -> Any:
    if parts[0] is None:
        return None
    return sp.vstack(parts, format="csr") if sp.issparse(parts[0]) else np.concatenate(parts)


def take_rows(rows: Any, X: Any, *arrays: Any) -> tuple[Any, ...]:
    """``(X[rows], *(a[rows] for a in arrays))`` in memory, in the order of ``rows``.

    Each chunk picks its own rows (one task per chunk that holds some, on the
    worker that holds it) and only those rows travel: no fancy indexing of the
    Dask array, whose graph and shuffle cost more than the rows themselves.
    ``arrays``: row-aligned Dask arrays (see :func:`align_rows`) or ``None``.
    """
    import dask
    n = int(X.shape[0])
    rows = np.asarray(rows, dtype=np.intp).ravel()
    rows = np.where(rows < 0, rows + n, rows)
    if rows.size and (rows.min() < 0 or rows.max() >= n):
        raise IndexError(f"row index out of range for {n} rows")
    order = np.argsort(rows, kind="stable")
    ordered = rows[order]
    starts = np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.intp)
    cuts = np.searchsorted(ordered, starts)
    xs, parts = _delayed_chunks(X, *arrays)
    name = _task_names("problin-take")
    tasks = [dask.delayed(_take, pure=False)(ordered[cuts[k]:cuts[k + 1]] - starts[k], xs[k],
                                             *(None if p is None else p[k] for p in parts),
                                             dask_key_name=name(k))
             for k in range(len(xs)) if cuts[k + 1] > cuts[k]]
    if not tasks:  # no rows: empty slices of the first chunk, for shapes and dtypes
        tasks = [dask.delayed(_take, pure=False)(ordered, xs[0],
                                                 *(None if p is None else p[0] for p in parts),
                                                 dask_key_name=name(0))]
    (taken,) = dask.compute(tasks)
    out = [_stack([t[j] for t in taken]) for j in range(1 + len(arrays))]
    if np.any(order[1:] < order[:-1]):  # rows were not sorted: back to their order
        inverse = np.empty_like(order)
        inverse[order] = np.arange(order.size)
        out = [None if a is None else a[inverse] for a in out]
    return tuple(out)


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
    """A dense chunk as the kernels read it at full speed: float64 (float32 kept),
    and aligned. A chunk that a worker received from another one can be a view
    into the message at any byte offset; on such a view products ran 2.5-4x and
    the finiteness check 15x slower than after a copy (measured on 500,000 x 20
    float64: a pass's products 18-51 ms instead of 72-116, the copy 16 ms)."""
    a = np.asarray(a)
    return _aligned(a) if a.dtype in (np.float64, np.float32) else a.astype(np.float64)


_SCRATCH = threading.local()


def _pass_rows(a: np.ndarray) -> np.ndarray:
    """A dense chunk for a pass that reads it block by block into buffers of its own
    (:func:`~problin._core.moments.class_stats.class_stats` gathers each block by class,
    :func:`~problin._core.moments.least_squares.moments` copies a misaligned block,
    :func:`~problin._core.moments.class_stats.aligned_rows`): float rows as they are,
    misaligned or not; others as :func:`_scratch_rows` gives them. A whole chunk's copy
    costs a write and a read of the chunk through memory (~25 ms a 250,000 x 30 chunk,
    a sixth of its class statistics); a block's, into a buffer in cache, about none."""
    a = np.asarray(a)
    if a.dtype in (np.float64, np.float32) and (a.flags.aligned or a.flags.c_contiguous):
        return a
    return _scratch_rows(a)


def _scratch_rows(a: np.ndarray) -> np.ndarray:
    """:func:`_float_rows` for a pass that keeps nothing of the chunk (a reduction to
    statistics): a misaligned float chunk is copied byte for byte into this worker
    thread's own aligned buffer, reused by its later tasks (one chunk's size a thread).
    Chunks persisted on a ``LocalCluster`` are all misaligned views into the message
    that brought them, so a fresh copy each pass cost ~88 ms a 250,000 x 30 chunk
    (the new memory's page faults, and numpy's unaligned copy loop); the bytes into
    memory already mapped ~12 ms."""
    a = np.asarray(a)
    if a.flags.aligned or a.dtype not in (np.float64, np.float32) or \
            not a.flags.c_contiguous:
        return _float_rows(a)
    buffer = getattr(_SCRATCH, "buffer", None)
    if buffer is None or buffer.size < a.nbytes:
        buffer = _SCRATCH.buffer = np.empty((a.nbytes + 7) // 8, dtype=np.float64)
    return aligned_rows(a, buffer)


def _aligned(a: np.ndarray) -> np.ndarray:
    """``a``, or an aligned copy of it (see :func:`_float_rows`)."""
    return a if a.flags.aligned else np.array(a)


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
    # (The whole's total is checked where a pass sums it; a chunk's alone already bounds it.)
    check_total_weight(float(w.sum()), f" of chunk {k}")
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
