"""Dask input for the sequential (online) learners: one epoch as a chain of chunk tasks.

The perceptron and LMS update their weights row after row, so an epoch cannot
be a tree reduction: the state after row ``n`` is needed before row ``n + 1``.
An epoch is therefore a *chain* of tasks, one per segment of the epoch's row
sequence, each running the very in-memory update on its rows and handing the
small state (the weights) to the next. Rows never reach the client.

* Rows in storage order (no shuffling): the segments are the row chunks
  themselves, so each task runs on the worker that holds its chunk and only
  the state travels between workers.
* Rows in a random order (the in-memory fit draws a fresh permutation of all
  ``N`` rows every epoch): to visit the rows in exactly that order, segment
  ``j`` of the permuted sequence gathers its rows from every chunk. Each chunk
  is loaded once per epoch and split into its pieces on its own worker; the
  pieces travel to the task of their segment, which restores the permuted
  order. The result equals the in-memory fit, at the price of moving every
  row once per epoch and of an ``O(K^2)`` task graph for ``K`` chunks, plus
  the ``N`` permuted row indices (8 bytes a row) built on the client.

The update functions ``step(state, first, *rows)`` receive the position
``first`` of their first row in the epoch's sequence, so that they can cut
their rows into the same blocks as the in-memory loop (identical arithmetic).
"""
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .chunks import in_task

__all__ = ["chunk_starts", "sequential_epoch"]


def chunk_starts(X: Any) -> np.ndarray:
    """First row of every row chunk of ``X``, and the total (length ``K + 1``)."""
    return np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.int64)


def _chunk_step(step: Callable[..., Any], prepare: Callable[..., Any], state: Any, k: int, lo: int,
                *blocks: Any) -> Any:
    rows = prepare(k, lo, *blocks)
    if rows[0].shape[0] == 0:
        return state
    return step(state, lo, *rows)


def _split_chunk(prepare: Callable[..., Any], k: int, lo: int, pieces: Sequence[np.ndarray],
                 *blocks: Any) -> tuple[tuple[Any, ...], ...]:
    """The rows of chunk ``k`` that each segment needs (validated by ``prepare``)."""
    rows = prepare(k, lo, *blocks)
    return tuple(tuple(a[idx] for a in rows) for idx in pieces)


def _segment_step(step: Callable[..., Any], first: int, inverse: np.ndarray, state: Any,
                  *pieces: Any) -> Any:
    """Concatenate a segment's pieces (grouped by chunk) and run ``step`` in sequence order."""
    rows = [np.concatenate(parts)[inverse] for parts in zip(*pieces)]
    return step(state, first, *rows)


def sequential_epoch(step: Callable[..., Any], state: Any, prepare: Callable[..., Any], X: Any,
                     *arrays: Any, order: np.ndarray | None = None) -> Any:
    """The state after one epoch of ``step`` over the rows of a Dask ``X``, computed.

    ``prepare(k, lo, X_k, *arrays_k)`` validates chunk ``k`` (first row ``lo``)
    and returns its rows as a tuple of numpy arrays; ``step(state, first,
    *rows)`` updates and returns a (new) state. ``arrays`` are Dask arrays
    chunked like ``X`` (:func:`~problin._dask.chunks.align_rows`).
    ``order``: ``None`` for storage order, else a permutation of the rows:
    the epoch visits row ``order[0]``, then ``order[1]``, ...
    """
    import dask
    xs = X.to_delayed().ravel()
    parts = [a.to_delayed().ravel() for a in arrays]
    starts = chunk_starts(X)
    if order is None:
        for k in range(len(xs)):
            state = dask.delayed(in_task(_chunk_step))(step, prepare, state, k,
                                                       int(starts[k]), xs[k],
                                                       *(p[k] for p in parts))
        return dask.compute(state)[0]
    segments = _plan_segments(order, starts)
    wanted: list[list[Any]] = [[] for _ in xs]  # per chunk: (segment, local row indices)
    for j, (_, _, pieces) in enumerate(segments):
        for k, idx in pieces:
            wanted[k].append((j, idx))
    delivered = {}
    for k, want in enumerate(wanted):
        if not want:
            continue
        split = dask.delayed(in_task(_split_chunk), nout=len(want))(
            prepare, k, int(starts[k]), [idx for _, idx in want], xs[k], *(p[k] for p in parts))
        for (j, _), piece in zip(want, split):
            delivered[j, k] = piece
    for j, (first, inverse, pieces) in enumerate(segments):
        state = dask.delayed(in_task(_segment_step))(step, first, inverse, state,
                                                     *(delivered[j, k] for k, _ in pieces))
    return dask.compute(state)[0]


def _plan_segments(order: np.ndarray, starts: np.ndarray) -> list[Any]:
    """Cut the permuted row sequence into segments as long as the chunks.

    For segment ``j`` (sequence positions ``first`` to ``first + len - 1``):
    which rows each chunk contributes (local indices, in sequence order), and
    the permutation ``inverse`` that turns the pieces, concatenated chunk by
    chunk, back into sequence order.
    """
    order = np.asarray(order, dtype=np.int64)
    chunk_of = np.searchsorted(starts, order, side="right") - 1
    segments = []
    for first, stop in zip(starts[:-1], starts[1:]):
        if stop == first:
            continue
        rows, ks = order[first:stop], chunk_of[first:stop]
        by_chunk = np.argsort(ks, kind="stable")
        sorted_ks = ks[by_chunk]
        inverse = np.empty_like(by_chunk)
        inverse[by_chunk] = np.arange(by_chunk.size)
        bounds = np.searchsorted(sorted_ks, np.arange(starts.size))
        pieces = [(k, rows[by_chunk[bounds[k]:bounds[k + 1]]] - starts[k])
                  for k in range(starts.size - 1) if bounds[k + 1] > bounds[k]]
        segments.append((int(first), inverse, pieces))
    return segments
