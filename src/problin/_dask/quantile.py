"""Exact column quantiles of a Dask array, equal to ``np.quantile(X, q, axis=0)``.

A quantile needs order statistics, i.e. a sort, which would bring every value
of a feature to one place. Instead each wanted order statistic is narrowed
down by counting: every pass (a tree reduction of per-chunk histograms, see
:func:`~problin._dask.chunks.reduce_chunks`) splits the interval that
holds it into 256 bins and keeps the bin where its rank falls. The bins are
cut in the order-preserving integer code of float64 (sign-magnitude turned
into unsigned order), not in value, so each pass divides the number of
representable values in the interval by 256: at most 8 passes, whatever the
scale or skew of the data. Once an interval holds at most 4096 values they
are collected and sorted on the client (at most ``4096 x n_ranks x D``
values, never the data). The interpolation between neighbouring order
statistics is numpy's ``"linear"`` method, so the result is numpy's.
"""
import functools
from typing import Any

import numpy as np

from .chunks import _check_chunk, reduce_chunks

__all__ = ["dask_quantiles"]

_BINS = 256
_COLLECT = 4096
_TOP = np.uint64(1 << 63)


def _keys(v: np.ndarray) -> np.ndarray:
    """Order-preserving uint64 codes of float64 values (negatives reversed)."""
    b = np.ascontiguousarray(v, dtype=np.float64).view(np.uint64)
    return np.where(b & _TOP, ~b, b | _TOP)


def _value(key: Any) -> float:
    """The float64 value of a code of :func:`_keys`."""
    k = np.array([key], dtype=np.uint64)
    b = np.where(k & _TOP, k ^ _TOP, ~k)
    return float(b.view(np.float64)[0])


def _edges(lo: Any, hi: Any) -> np.ndarray:
    """``_BINS + 1`` integer edges from ``lo`` to ``hi`` (exact, no overflow)."""
    q, r = divmod(int(hi) - int(lo), _BINS)
    i = np.arange(_BINS + 1, dtype=np.uint64)
    return np.uint64(lo) + np.uint64(q) * i + (np.uint64(r) * i) // np.uint64(_BINS)


class _Counts:
    """Per wanted statistic: values below its interval, and a histogram of the interval."""

    def __init__(self, below: np.ndarray, counts: np.ndarray) -> None:
        self.below, self.counts = below, counts

    def merge(self, other: "_Counts") -> "_Counts":
        return _Counts(self.below + other.below, self.counts + other.counts)


class _Values:
    """Per wanted statistic: the values inside its interval (lists of arrays)."""

    def __init__(self, parts: list[list[np.ndarray]]) -> None:
        self.parts = parts

    def merge(self, other: "_Values") -> "_Values":
        return _Values([a + b for a, b in zip(self.parts, other.parts)])


def _chunk_keys(k: int, first: int, Xb: np.ndarray) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    Xb = np.asarray(Xb, dtype=np.float64)
    _check_chunk(k, first, "X", Xb)
    return Xb, {}


def _inside(Xb: np.ndarray, cache: dict[int, np.ndarray], j: int, lo: Any,
            hi: Any) -> tuple[np.ndarray, np.ndarray]:
    if j not in cache:
        cache[j] = _keys(Xb[:, j])
    keys = cache[j]
    return keys, (keys >= np.uint64(lo)) & (keys < np.uint64(hi))


def _count_chunk(k: int, first: int, Xb: np.ndarray, items: Any) -> _Counts | None:
    if Xb.shape[0] == 0:
        return None
    Xb, cache = _chunk_keys(k, first, Xb)
    below = np.zeros(len(items), dtype=np.int64)
    counts = np.zeros((len(items), _BINS), dtype=np.int64)
    for m, (j, lo, hi) in enumerate(items):
        keys, inside = _inside(Xb, cache, j, lo, hi)
        below[m] = np.count_nonzero(keys < np.uint64(lo))
        bins = np.searchsorted(_edges(lo, hi), keys[inside], side="right") - 1
        counts[m] = np.bincount(bins, minlength=_BINS)
    return _Counts(below, counts)


def _collect_chunk(k: int, first: int, Xb: np.ndarray, items: Any) -> _Values | None:
    if Xb.shape[0] == 0:
        return None
    Xb, cache = _chunk_keys(k, first, Xb)
    return _Values([[Xb[_inside(Xb, cache, j, lo, hi)[1], j]] for j, lo, hi in items])


def column_order_statistics(X: Any, ranks: np.ndarray) -> np.ndarray:
    """``S[j, i]``: the ``ranks[i]``-th smallest value (0-based) of column ``j`` of Dask ``X``."""
    D, ranks = X.shape[1], np.asarray(ranks, dtype=np.int64)
    cols, rank = np.repeat(np.arange(D), ranks.size), np.tile(ranks, D)
    lo = [0] * cols.size                                  # intervals [lo, hi) of codes
    hi = [int(_keys(np.array([np.inf]))[0])] * cols.size  # every finite value is below
    below = np.zeros(cols.size, dtype=np.int64)
    size = np.full(cols.size, X.shape[0], dtype=np.int64)
    out = np.full(cols.size, np.nan)
    while True:
        pending = [m for m in range(cols.size) if size[m] > _COLLECT and hi[m] - lo[m] > 1]
        if not pending:
            break
        items = [(int(cols[m]), lo[m], hi[m]) for m in pending]
        hist = reduce_chunks(functools.partial(_count_chunk, items=items), X)
        for row, m in enumerate(pending):
            cum = hist.below[row] + np.cumsum(hist.counts[row])
            b = int(np.searchsorted(cum, rank[m], side="right"))
            edges = _edges(lo[m], hi[m])
            below[m] = hist.below[row] + hist.counts[row, :b].sum()
            lo[m], hi[m], size[m] = int(edges[b]), int(edges[b + 1]), hist.counts[row, b]
    single = [m for m in range(cols.size) if hi[m] - lo[m] == 1]
    for m in single:  # one representable value left: it is the statistic
        out[m] = _value(lo[m])
    rest = [m for m in range(cols.size) if hi[m] - lo[m] > 1]
    if rest:
        items = [(int(cols[m]), lo[m], hi[m]) for m in rest]
        found = reduce_chunks(functools.partial(_collect_chunk, items=items), X)
        for parts, m in zip(found.parts, rest):
            out[m] = np.sort(np.concatenate(parts))[rank[m] - below[m]]
    return out.reshape(D, ranks.size)


def dask_quantiles(X: Any, q: Any) -> np.ndarray:
    """``np.quantile(X, q, axis=0)`` (method ``"linear"``) of a Dask ``X``: shape (len(q), D)."""
    n, q = X.shape[0], np.asarray(q, dtype=np.float64)
    virtual = (n - 1) * q  # numpy's virtual index for "linear"
    prev = np.floor(virtual)
    above = virtual >= n - 1
    lo_rank = np.where(above, n - 1, prev).astype(np.int64)
    hi_rank = np.where(above, n - 1, prev + 1).astype(np.int64)
    ranks = np.unique(np.concatenate([lo_rank, hi_rank]))
    stats = column_order_statistics(X, ranks)
    a = stats[:, np.searchsorted(ranks, lo_rank)].T
    b = stats[:, np.searchsorted(ranks, hi_rank)].T
    t = (virtual - prev)[:, None]
    diff = b - a  # numpy's _lerp, evaluated from the nearer end
    return np.where(t >= 0.5, b - diff * (1 - t), a + diff * t)
