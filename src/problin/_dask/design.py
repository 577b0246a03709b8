"""Dask input for the GLM classifiers: the validated data and the chunk passes.

A :class:`DaskDesign` stands where :class:`~problin._core.model.design.Design`
stands for in-memory data, but it also carries the labels and the sample
weights, because on Dask a row's label lives in the chunk that holds its row.
Every pass over the data is :meth:`DaskDesign.reduce`: on each row chunk the
very in-memory code runs (an in-memory ``Design``, and the objective built on
it), and only its small results (a loss, a p-vector, a p x p matrix) travel,
summed in Dask's tree (:func:`~problin._dask.chunks.reduce_chunks`).

Validation costs no pass over X of its own: one pass over ``y`` and the
weights finds the classes and their total weights (what the starting point
needs; the rows of the basis's sample and of a binary GLM's Hessian sketch come
with it, each chunk handing over its own, and the columns' ranges, which bound
the last Newton step's move without a pass), and X's chunks are checked for NaN
or infinity during the first pass of the solver, with a message naming the chunk
and the row. Data read from files are read again on every pass: these passes
are counted in ``tests/dask/test_dask_passes.py``.
"""
import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._core.blocks import block_rows
from .._core.labels import encode_classes
from .._core.model.basis import ColumnBasis, moments_from_sums, sample_rows
from .._core.model.design import Design
from .._core.solvers.newton import sketch_rows
from .._core.validation import check_label_types, within_magnitude
from .chunks import (
    _check_chunk,
    _chunk_weights,
    _aligned,
    _float_rows,
    _sparse_chunk,
    _stack,
    align_rows,
    dask_features,
    reduce_chunks,
    take_rows,
)

__all__ = ["DaskDesign", "Sums", "dask_classifier_data"]


class Sums:
    """Per-chunk results that merge entrywise: by addition, or ``max``/``min``
    where ``ops`` says so. ``None`` entries (nothing computed) stay ``None``."""

    def __init__(self, *parts: Any, ops: tuple[str, ...] | None = None) -> None:
        self.parts, self.ops = parts, ops

    def merge(self, other: "Sums") -> "Sums":
        ops = self.ops or ("sum",) * len(self.parts)
        merged = []
        for op, a, b in zip(ops, self.parts, other.parts):
            merged.append(None if a is None else a + b if op == "sum" else
                          max(a, b) if op == "max" else min(a, b))
        return Sums(*merged, ops=self.ops)


class _LabelWeights:
    """The distinct labels of some rows and their total weights (merge: union)."""

    def __init__(self, labels: np.ndarray, weights: np.ndarray) -> None:
        self.labels, self.weights = labels, weights

    def merge(self, other: "_LabelWeights") -> "_LabelWeights":
        labels, inverse = np.unique(np.concatenate([self.labels, other.labels]),
                                    return_inverse=True)
        weights = np.bincount(inverse.ravel(), np.concatenate([self.weights, other.weights]),
                              minlength=labels.size)
        return _LabelWeights(labels, weights)


def _label_chunk(k: int, lo: int, yb: Any, wb: Any) -> "_LabelWeights | None":
    yb = np.asarray(yb)
    if yb.shape[0] == 0:
        return None
    check_label_types(yb)
    if yb.dtype.kind in "fc":
        _check_chunk(k, lo, "y", yb)
    w = _chunk_weights(k, lo, wb)
    small = _small_integer_labels(yb)
    if small is not None:  # counting, not sorting (labels 0..K-1, the common case)
        present = np.flatnonzero(np.bincount(small))
        weights = np.bincount(small, w, minlength=present[-1] + 1)[present]
        return _LabelWeights(present.astype(yb.dtype), weights)
    labels, inverse = np.unique(yb, return_inverse=True)
    return _LabelWeights(labels, np.bincount(inverse.ravel(), w, minlength=labels.size))


class _LabelSample(_LabelWeights):
    """:class:`_LabelWeights` with some rows of X, y and the weights, in row order,
    (where asked) the weighted column sums of all rows (``sums``) and (dense X) the
    columns' smallest and largest values (``low``, ``high``)."""

    def __init__(self, labels: np.ndarray, weights: np.ndarray, X: Any, y: np.ndarray,
                 w: np.ndarray | None, sums: np.ndarray | None = None,
                 low: np.ndarray | None = None, high: np.ndarray | None = None) -> None:
        super().__init__(labels, weights)
        self.X, self.y, self.w, self.sums = X, y, w, sums
        self.low, self.high = low, high

    def merge(self, other: "_LabelWeights") -> "_LabelSample":
        assert isinstance(other, _LabelSample)
        found = super().merge(other)
        return _LabelSample(found.labels, found.weights, _stack([self.X, other.X]),
                            np.concatenate([self.y, other.y]),
                            None if self.w is None else np.concatenate([self.w, other.w]),
                            None if self.sums is None else self.sums + other.sums,
                            None if self.low is None or other.low is None
                            else np.minimum(self.low, other.low),
                            None if self.high is None or other.high is None
                            else np.maximum(self.high, other.high))


def _label_sample_chunk(k: int, lo: int, Xb: Any, yb: Any, wb: Any, *,
                        rows: np.ndarray, sums: bool = False) -> "_LabelSample | None":
    """The labels' pass of a chunk, with its rows among (sorted) ``rows`` and, with
    ``sums`` (dense X), the weighted sums of its columns."""
    found = _label_chunk(k, lo, yb, wb)
    if found is None:
        return None
    local = rows[np.searchsorted(rows, lo):np.searchsorted(rows, lo + Xb.shape[0])] - lo
    Xs = (Xb.tocsr() if sp.issparse(Xb) else np.asarray(Xb))[local]
    values = Xs.data if sp.issparse(Xs) else Xs
    if values.dtype.kind == "f" and not within_magnitude(np.ascontiguousarray(values)):
        # NaN, infinity or values too large for the arithmetic: an error named
        # by chunk and row, as the solver's first pass would give, before any
        # other chunk is read in a basis that such a value would have set
        _sparse_chunk(k, lo, Xb) if sp.issparse(Xb) else _check_chunk(k, lo, "X", Xb)
    weights = None if wb is None else np.asarray(wb, dtype=np.float64)
    column_sums = low = high = None
    if not sp.issparse(Xb):
        Xb = np.asarray(Xb)
        if sums:
            whole = np.ones(Xb.shape[0]) if weights is None else weights
            column_sums = whole @ np.asarray(Xb, dtype=np.float64)
        low, high = Xb.min(axis=0), Xb.max(axis=0)  # (finite: checked above for the sample)
    return _LabelSample(found.labels, found.weights, Xs, np.asarray(yb)[local],
                        None if weights is None else weights[local], column_sums, low, high)


def _small_integer_labels(yb: np.ndarray, limit: int = 1024) -> np.ndarray | None:
    """``yb`` as intp when its labels are integers in ``[0, limit)``, else None."""
    if yb.ndim != 1 or yb.dtype.kind not in "biuf" or yb.dtype == np.bool_:
        return None
    low, high = yb.min(), yb.max()
    if not (0 <= low and high < limit):  # also false for nan
        return None
    codes = yb.astype(np.intp)
    if yb.dtype.kind == "f" and not np.array_equal(codes, yb):
        return None
    return codes


# Rows per block of a chunk's design at most: its kernels' per-row temporaries
# (32 KB) then stay on the heap. On dask's workers, which hand freed memory back
# to the system at once (MALLOC_TRIM_THRESHOLD_), larger ones are fresh pages
# each block: measured 10-20 % slower passes with the in-memory default (6,553
# rows for 20 columns).
_BLOCK_ROWS = 4096


class _ChunkReader:
    """Turns a row chunk into in-memory ``(Design, class indices, weights)``.

    The class indices are intp, or the float64 labels themselves where those
    are the indices (0.0, 1.0, ...): the models convert what they need
    (the binary GLMs read floats), so a chunk's labels are not copied twice."""

    def __init__(self, classes: np.ndarray, intercept: bool,
                 basis: ColumnBasis | None = None) -> None:
        self.basis = basis
        self.order = np.argsort(classes, kind="stable")
        self.sorted = np.asarray(classes)[self.order]
        self.intercept = intercept
        self.identity = (self.sorted.dtype.kind in "biuf" and
                         np.array_equal(self.sorted, np.arange(self.sorted.size)) and
                         np.array_equal(self.order, np.arange(self.order.size)))

    def __call__(self, k: int, lo: int, Xb: Any, yb: Any, wb: Any,
                 check: bool) -> tuple[Design, np.ndarray, np.ndarray | None]:
        design = self.design(k, lo, Xb, check)
        yb = _aligned(np.asarray(yb))
        if self.identity and yb.dtype == np.float64:
            t = yb  # labels 0.0..K-1 are their own codes (checked by the labels' pass)
        elif self.identity and yb.dtype.kind in "biu":
            t = yb.astype(np.intp, copy=False)
        else:
            t = self.order[np.searchsorted(self.sorted, yb)].astype(np.intp)
        w = None if wb is None else _aligned(np.asarray(wb, dtype=np.float64))
        return design, t, w

    def design(self, k: int, lo: int, Xb: Any, check: bool) -> Design:
        """Chunk ``k``'s in-memory design (``check``: X's values, named by chunk and row)."""
        if sp.issparse(Xb):
            Xb = _sparse_chunk(k, lo, Xb)
        else:
            Xb = _float_rows(Xb)
            if check:
                _check_chunk(k, lo, "X", Xb)
        basis = self.basis
        if basis is not None and basis.center is not None and sp.issparse(Xb):
            basis = None  # (never: sparse Dask designs get uncentred bases)
        # Blocks of at most _BLOCK_ROWS rows (narrow X): see _BLOCK_ROWS
        rows = None if sp.issparse(Xb) else min(block_rows(Xb.shape[1]), _BLOCK_ROWS)
        return Design(Xb, self.intercept, rows, basis)


def _chunk_task(k: int, lo: int, Xb: Any, yb: Any, wb: Any, *, reader: _ChunkReader,
                model: Callable[..., Any] | None, op: Callable[..., Any], check: bool,
                rows: int | None = None) -> Any:
    n = Xb.shape[0]
    if n == 0:
        return None
    if rows is None or n <= rows or sp.issparse(Xb):
        design, t, w = reader(k, lo, Xb, yb, wb, check)
        return op(design, t, w) if model is None else op(model(design, t, w))
    # By sub-blocks of ``rows`` rows, merged: the n-vectors of an op that forms
    # them (eta, row derivatives) stay small. A chunk-sized one is fresh memory
    # each pass (dask's workers return freed memory to the system at once:
    # MALLOC_TRIM_THRESHOLD_), a page fault per 4 KB: measured 2x slower.
    Xb, yb = np.asarray(Xb), np.asarray(yb)
    if check:
        _check_chunk(k, lo, "X", _float_rows(Xb))  # the whole chunk: its own row numbers
    total = None
    for a in range(0, n, rows):
        b = min(a + rows, n)
        part = _chunk_task(k, lo + a, Xb[a:b], yb[a:b], None if wb is None else wb[a:b],
                           reader=reader, model=model, op=op, check=False)
        total = part if total is None else total.merge(part)
    return total


class DaskDesign:
    """``[1, X]`` of a row-chunked Dask array, with the labels and weights of its rows.

    Attributes as :class:`~problin._core.model.design.Design` (``n_samples``,
    ``n_features``, ``n_params``, ``intercept``), plus ``classes`` and
    ``class_weights`` (total weight per class, from the labels' pass).
    """

    distributed = True

    def __init__(self, X: Any, y: Any, sample_weight: Any, classes: np.ndarray,
                 class_weights: np.ndarray, intercept: bool = True,
                 basis: ColumnBasis | None = None, basis_rule: str | None = None,
                 sample: tuple[Any, np.ndarray | None, np.ndarray | None] | None = None,
                 prefetched: "_Prefetched | None" = None,
                 column_range: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """``basis``: the coordinates to work in; ``basis_rule`` (``"auto"`` or
        ``"always"``, instead): :meth:`ColumnBasis.from_sample`'s centring rule, applied
        to the same evenly spaced rows as in memory: ``sample``, their ``(X, w)`` where
        already gathered, with the weighted column sums of all rows where the centre
        must be exact (:meth:`ColumnBasis.centre_at`), else one small gather.
        ``prefetched``: rows already gathered (the sketch's, in the labels' pass), which
        :meth:`gather` hands out without a pass. ``column_range``: the columns'
        smallest and largest values (:meth:`predictor_change_bound`)."""
        self.X, self.y, self.sample_weight = X, y, sample_weight
        self._prefetched, self._range = prefetched, column_range
        self.classes, self.class_weights = classes, np.asarray(class_weights, dtype=np.float64)
        self.intercept = bool(intercept)
        self.n_samples, self.n_features = (int(s) for s in X.shape)
        self.n_params = self.n_features + int(self.intercept)
        self.total_weight = float(self.class_weights.sum())
        self._checked = False  # X's chunks are checked for NaN by the first pass
        self.basis = None
        self._reader = self._make_reader(None)
        if basis_rule is not None:  # the in-memory rule, on the same evenly spaced rows
            sums = None
            if sample is None:
                design, _, ws = self.gather(sample_rows(self.n_samples))
                Xs = design.X
            else:
                Xs, ws, sums = sample
                Xs = _sparse_chunk(0, 0, Xs) if sp.issparse(Xs) else _float_rows(Xs)
            basis = ColumnBasis.from_sample(Xs, self.intercept, ws, centre=basis_rule)
            if sums is not None and basis.center is not None:
                basis.centre_at(sums, self.total_weight)
        self.basis = basis
        self._reader = self._make_reader(basis)

    def predictor_change_bound(self, d: np.ndarray) -> float:
        """A bound on ``max_i |[1, x_i] d|`` (``d`` in this design's coordinates) without
        a pass, from the columns' ranges (inf where they are unknown): the largest
        ``|z_ij|`` of each standardised column times ``|d_j|``, summed."""
        if self._range is None:
            return np.inf
        low, high = self._range
        basis, d = self.basis, np.abs(np.asarray(d, dtype=np.float64))
        if basis is not None and basis.center is not None:
            low, high = (low - basis.center) / basis.scale, (high - basis.center) / basis.scale
        elif basis is not None:  # (uncentred: the kernel's parameters are m * d)
            d = d * basis.multipliers()
        reach = np.maximum(np.abs(low), np.abs(high))
        slopes = d[int(self.intercept):]
        bound = float(slopes @ reach) + (float(d[0]) if self.intercept else 0.0)
        return bound if np.isfinite(bound) else np.inf

    def _make_reader(self, basis: ColumnBasis | None) -> "_ChunkReader":
        """What turns a chunk into in-memory rows (a subclass's own targets: its reader)."""
        return _ChunkReader(self.classes, self.intercept, basis)

    def reduce(self, op: Callable[..., Any], model: Callable[..., Any] | None = None,
               rows: int | None = None) -> tuple[Any, ...]:
        """``merge(op(...))`` over the row chunks: ``op(model(design, t, w))``, or
        ``op(design, t, w)`` without ``model`` (both picklable). One pass.
        ``rows``: run ``op`` on dense chunks by sub-blocks of that many rows, its
        results merged (for ops that form n-vectors)."""
        fn = functools.partial(_chunk_task, reader=self._reader, model=model, op=op,
                               check=not self._checked, rows=rows)
        total = reduce_chunks(fn, self.X, self.y, self.sample_weight)
        self._checked = True
        return total.parts

    def gather(self, rows: Any) -> tuple[Design, np.ndarray, np.ndarray | None]:
        """``(X[rows], t[rows], w[rows])`` in memory: for a few rows only (a sketch)."""
        found = None if self._prefetched is None else self._prefetched.take(rows)
        Xs, ys, ws = found or take_rows(rows, self.X, self.y, self.sample_weight)
        Xs = Xs.tocsr() if sp.issparse(Xs) else np.ascontiguousarray(_float_rows(Xs))
        bad = not np.isfinite(Xs.data if sp.issparse(Xs) else Xs).all()
        if bad and not self._checked:
            self.reduce(_nothing)  # names the chunk that holds the bad value
        design, t, _ = self._reader(0, 0, Xs, ys, None, False)
        design = Design(design.X, self.intercept, basis=design.basis)  # in-memory blocks
        return (design, self._gathered(t),
                None if ws is None else np.asarray(ws, dtype=np.float64))

    def _gathered(self, t: np.ndarray) -> np.ndarray:
        """Gathered rows' targets as the in-memory objectives take them (class indices)."""
        return t.astype(np.intp, copy=False)

    def column_moments(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-column mean and standard deviation in this design's coordinates, as
        ``Design.column_moments`` (raw X's moments would standardise twice: L-BFGS
        then took 94 iterations where the same fit in memory takes 8)."""
        s1, s2 = self.reduce(_column_sums)
        return moments_from_sums(s1, s2, self.n_samples, self.basis)

    def used_gram(self) -> np.ndarray:
        """``[1,X]^T diag(s > 0) [1,X]``: the span of the rows that count."""
        return self.reduce(_used_gram)[0]

    def weighted_gram(self) -> np.ndarray:
        """``[1,X]^T diag(s) [1,X]`` (``s``: the sample weights, or ones)."""
        return self.reduce(_weighted_gram)[0]


class _Prefetched:
    """Rows of X, y and the weights gathered by an earlier pass (sorted ``rows``)."""

    def __init__(self, rows: np.ndarray, X: Any, y: np.ndarray, w: np.ndarray | None) -> None:
        self.rows, self.X, self.y, self.w = rows, X, y, w

    def take(self, rows: Any) -> tuple[Any, np.ndarray, np.ndarray | None] | None:
        """``(X[rows], y[rows], w[rows])`` where all of ``rows`` were gathered, else None."""
        rows = np.asarray(rows, dtype=np.intp).ravel()
        at = np.minimum(np.searchsorted(self.rows, rows), self.rows.size - 1)
        if self.rows.size == 0 or not np.array_equal(self.rows[at], rows):
            return None
        return self.X[at], self.y[at], None if self.w is None else self.w[at]


def _nothing(design: Design, t: np.ndarray, w: np.ndarray | None) -> Sums:
    return Sums(0)


def _column_sums(design: Design, t: np.ndarray, w: np.ndarray | None) -> Sums:
    return Sums(*design.column_sums())


def _used_gram(design: Design, t: np.ndarray, w: np.ndarray | None) -> Sums:
    used = np.ones(design.n_samples) if w is None else (w > 0).astype(np.float64)
    return Sums(design.gram(used))


def _weighted_gram(design: Design, t: np.ndarray, w: np.ndarray | None) -> Sums:
    return Sums(design.gram(w))


def dask_classifier_data(est: Any, X: Any, y: Any, sample_weight: Any, multiclass: bool,
                         intercept: bool, *, classes: Any = None, reset: bool = True,
                         standardise: bool | str = False,
                         basis: ColumnBasis | None = None) -> "DaskDesign":
    """As ``glm.problem.check_classifier_data`` for Dask input: returns a
    :class:`DaskDesign`, whose ``classes`` are the class labels in order
    (``classes``: the order wanted, as the estimators' ``classes`` parameter;
    every label found in ``y`` must be among them). ``est`` gets (``reset``;
    else is checked against them) ``n_features_in_`` and the feature names,
    as scikit-learn's ``validate_data``. ``standardise``: the design's basis
    from the same evenly spaced rows as in memory;
    ``basis``: a given one (a fitted model's).

    One pass over ``y`` and the weights: the labels, each class's total
    weight, and every check that the in-memory validation makes of them; with
    ``standardise``, each chunk also hands over its rows of the basis's sample
    (one compute; X is otherwise read by the solver's passes only).
    """
    X = dask_features(est, X, reset=reset)
    y = align_rows(y, X, "y")
    if y.ndim != 1:
        raise ValueError(f"y must be 1D (one label per sample), got shape {y.shape}")
    w = align_rows(sample_weight, X, "sample_weight")
    if w is not None:
        if w.ndim != 1:
            raise ValueError(f"sample_weight has shape {w.shape}, expected ({X.shape[0]},)")
        if w.dtype.kind not in "biuf":
            raise TypeError(f"sample_weight must be numeric (real numbers), got dtype {w.dtype}")
    rule = None
    if standardise and basis is None:
        rule = "always" if standardise == "centred" else "auto"
    if rule is None:
        found = reduce_chunks(_label_chunk, y, w)
    else:  # the basis's sample rows come with the labels' pass (one compute)
        rows = sample_rows(X.shape[0])  # (the exact centre where a prior is placed there)
        sums = rule == "always" and rows.size < X.shape[0]
        # With the rows of a binary GLM's Hessian sketch (newton's subsample), so that
        # the solver's first gather costs no pass of its own (each pass of data read
        # from files reads them again)
        sketch = sketch_rows(X.shape[0], X.shape[1] + int(intercept))
        if sketch is not None:
            rows = np.union1d(rows, sketch)
        found = reduce_chunks(functools.partial(_label_sample_chunk, rows=rows, sums=sums),
                              X, y, w)
    name = type(est).__name__
    classes, codes = encode_classes(found.labels, classes, owner=name)
    if classes.size > 2 and not multiclass:
        raise ValueError(f"Only binary classification is supported. {name} got y with "
                         f"{classes.size} classes: {classes[:10].tolist()}")
    weights = np.bincount(codes, found.weights, minlength=classes.size)
    if not weights.sum() > 0:
        raise ValueError("sample_weight sums to zero: there is nothing to fit")
    empty = weights <= 0
    if empty.any():
        raise ValueError(f"classes {classes[empty].tolist()} have zero total sample "
                         "weight: their parameters would be minus infinity. Drop those "
                         "samples or give them positive weight.")
    sample, prefetched, column_range = None, None, None
    if isinstance(found, _LabelSample):
        if found.low is not None and found.high is not None:
            column_range = (found.low, found.high)
        prefetched = _Prefetched(rows, found.X, found.y, found.w)
        taken = prefetched.take(sample_rows(X.shape[0]))
        assert taken is not None  # (they were among the rows gathered)
        sample = (taken[0], taken[2], found.sums)
    return DaskDesign(X, y, w, classes, weights, intercept, basis=basis, basis_rule=rule,
                      sample=sample, prefetched=prefetched, column_range=column_range)
