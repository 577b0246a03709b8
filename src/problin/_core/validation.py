"""Input checks shared by every estimator (clear errors, never a silent nan)."""
from collections.abc import Callable, Sequence
from numbers import Number
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from .blocks import _default_rows, reduce_row_ranges
from .types import Matrix

__all__ = ["check_sample_weight", "check_total_weight", "check_class_weights",
           "check_class_totals", "check_label_types", "label_values", "category_values",
           "check_priors",
           "check_finite_magnitude", "within_magnitude",
           "extreme_entries", "magnitude_message", "chunk_magnitude_error", "MAX_MAGNITUDE",
           "check_targets_resolvable", "check_columns_resolvable", "check_column_sizes",
           "resolvable", "MIN_MAGNITUDE"]

# The largest magnitude a training value may have. A square overflows float64
# beyond 1.3e154, but the models need more than squares: sums over rows (and,
# for row norms, over columns) of squares and products of centred values --
# scatter and Gram matrices, Newton Hessians X^T W X (weights W <= 1),
# gradients X^T r. With |x| <= 1e144 a centred square is at most
# (2e144)^2 = 4e288, so such a sum stays below float64's largest value,
# 1.8e308, over up to 4e19 terms (rows times columns, or total sample weight):
# more than any data set holds. The bound is far above any measured quantity
# (the observable universe holds ~1e80 atoms): a value beyond it is a sentinel
# or a corrupt cell, and a fit that went on would return zero coefficients,
# NaN or a wrong diagnosis.
MAX_MAGNITUDE = 1e144
# The mirror bound: targets all below this in size have squares (residual sums,
# variances) that underflow float64 toward zero, so a least-squares fit would report
# zero standard errors.
MIN_MAGNITUDE = 1e-144
# The largest total sample weight: the sums above run over up to 4e19 terms of total
# weight (a weight-w row counts w times), so weights summing beyond this could overflow.
MAX_TOTAL_WEIGHT = 1e19


def check_sample_weight(sample_weight: ArrayLike | None, n_samples: int,
                        allow_zero: bool = False) -> np.ndarray | None:
    """Validated float64 sample weights, or ``None`` for unit weights.

    Rejects weights of the wrong shape, non-finite or negative weights, and
    weights that sum to zero (unless ``allow_zero``: a later batch of a stream),
    each with a message naming the problem.
    """
    if sample_weight is None:
        return None
    try:
        raw = np.asarray(sample_weight)
        if raw.dtype.kind == "O":
            raw = raw.astype(np.float64)
    except (TypeError, ValueError):
        raise TypeError("sample_weight must be numeric (real numbers, one per sample)") from None
    if raw.dtype.kind not in "biuf":
        raise TypeError(f"sample_weight must be numeric (real numbers), got dtype {raw.dtype}")
    if raw.ndim == 0:
        raw = np.full(n_samples, raw)
    w = raw.astype(np.float64)
    if w.ndim != 1 or w.shape[0] != n_samples:
        raise ValueError(f"sample_weight has shape {w.shape}, expected ({n_samples},)")
    if not np.all(np.isfinite(w)):
        raise ValueError("sample_weight contains NaN or infinity")
    if np.any(w < 0):
        raise ValueError(f"sample_weight has {int(np.sum(w < 0))} negative values; "
                         "weights must be non-negative")
    total = np.sum(w) if np.all(w <= np.finfo(np.float64).max / max(1, w.size)) else np.inf
    if not (allow_zero and total == 0):
        check_total_weight(float(total))
    return w


def check_total_weight(total: float, where: str = "") -> None:
    """Reject a fit whose sample weights sum to zero, or beyond :data:`MAX_TOTAL_WEIGHT`
    (``total``: their sum; ``where``: which part of the data, e.g. a Dask chunk)."""
    if not total <= MAX_TOTAL_WEIGHT:
        raise ValueError(f"sample_weight is too large: the weights{where} sum to {total:.3g}, "
                         f"beyond {MAX_TOTAL_WEIGHT:.0e} (weighted sums of squares could "
                         "overflow); rescale them")
    if not where and not total > 0:
        raise ValueError("sample_weight sums to zero: there is nothing to fit")


def check_class_weights(codes: np.ndarray, sample_weight: np.ndarray | None,
                        classes: Sequence[Any] | np.ndarray, *,
                        why: str = "their parameters are undefined") -> None:
    """Reject a fit where some class has zero total sample weight.

    ``codes`` are the class indices of the rows (``0..K-1``, the order of
    ``classes``) and ``sample_weight`` the validated weights (``None``: unit
    weights, so every class present has weight). ``why`` says what a class
    without weight would do to the model, in the error message.
    """
    if sample_weight is None:
        return
    totals = np.bincount(codes, weights=sample_weight, minlength=len(classes))
    check_class_totals(totals, classes, why=why)


def check_class_totals(totals: np.ndarray, classes: ArrayLike, *,
                       why: str = "their parameters are undefined") -> None:
    """Reject a fit where some class has zero total sample weight.

    ``totals`` are the classes' total sample weights, in the order of ``classes``;
    ``why`` as in :func:`check_class_weights`.
    """
    empty = totals <= 0
    if np.any(empty):
        raise ValueError(f"classes {np.asarray(classes)[empty].tolist()} have zero total sample "
                         f"weight: {why}. Drop those samples or give them positive weight.")


def check_label_types(y: ArrayLike) -> None:
    """Reject class labels that mix numbers and strings (they cannot be ordered)."""
    if getattr(y, "dtype", object) != object:
        return
    kinds = set()
    for v in np.asarray(y, dtype=object).ravel():
        kinds.add("number" if isinstance(v, (Number, np.number)) else type(v).__name__)
    if len(kinds) > 1:
        raise TypeError("y must hold class labels of one type (all numbers or all strings), "
                        f"but it mixes {', '.join(sorted(kinds))}")


def label_values(y: Any) -> Any:
    """``y`` checked by :func:`check_label_types`, with a pandas categorical of numbers
    or booleans read as its categories' values: scikit-learn's check reads categorical
    booleans as 0.0 and 1.0, while the same labels as a plain column, or on Dask
    (``_dask.chunks``), are False and True. Missing labels are left to the check that
    names them."""
    if type(y) is np.ndarray and y.dtype.kind != "O":  # (the common case, at no cost)
        return y
    values = category_values(y)
    if values is not None and not y.isna().any():
        y = y.astype(values)
    check_label_types(y)
    return y


def category_values(column: Any) -> np.dtype | None:
    """The numpy dtype of a pandas (or Dask) categorical column's categories where they
    are numbers or booleans (the labels' own type), else None."""
    dtype: Any = getattr(column, "dtype", None)
    if getattr(dtype, "name", None) != "category":
        return None
    values = dtype.categories.dtype
    return values if isinstance(values, np.dtype) and values.kind in "biuf" else None


def check_priors(priors: ArrayLike, n_classes: int, *, name: str = "priors") -> np.ndarray:
    """Validated class prior probabilities as a float64 K-vector.

    Rejects a vector of the wrong shape, non-finite or negative entries, and
    entries that do not sum to 1 (to within 1e-6), each with a message naming
    the problem. Zero entries are allowed: such a class is never predicted.
    """
    try:
        p = np.asarray(priors, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numeric (one probability per class)") from None
    if p.shape != (n_classes,):
        raise ValueError(f"{name} has shape {p.shape}, expected ({n_classes},): "
                         "one probability per class, in the order of classes_")
    if not np.all(np.isfinite(p)):
        raise ValueError(f"{name} contains NaN or infinity")
    if np.any(p < 0):
        raise ValueError(f"{name} must be non-negative, got {p.tolist()}")
    if abs(float(p.sum()) - 1.0) > 1e-6:
        raise ValueError(f"{name} must sum to 1, but they sum to {float(p.sum()):.6g}")
    return p


# Up to this many values (1 MB) max and min cost less than setting up the blocks.
_SMALL_VALUES = 1 << 17
# A contiguous array is checked as rows of this many values in memory order (4 KB):
# whatever its shape and order (a DataFrame's values are column-major), in place.
_FLAT_ROW = 512


def within_magnitude(values: np.ndarray, limit: float = MAX_MAGNITUDE) -> bool:
    """Whether every value is finite and ``|value| <= limit``: one pass (a sum of
    squares of each cache-sized block, both cores on a large contiguous array,
    C- or F-ordered; max and min of a block only where that bound fails). NaN
    fails the comparisons, so it is caught too."""
    def bad_blocks(rows: np.ndarray, lo: int, hi: int, step: int, blas: bool) -> int:
        bad = 0
        with np.errstate(over="ignore", invalid="ignore"):  # (thread-local: set here)
            for start in range(lo, hi, step):
                block = rows[start:min(hi, start + step)]
                # One BLAS read: a sum of squares <= limit^2 bounds every |value|
                # (NaN and inf fail it); only a block that fails is looked at
                # entry by entry (many values near the limit may still pass).
                if blas:
                    flat = block.reshape(-1)  # (a view: the rows are C-contiguous)
                    if float(np.dot(flat, flat)) <= limit * limit:
                        continue
                if not (float(block.max()) <= limit and float(block.min()) >= -limit):
                    bad += 1
        return bad

    if values.size <= _SMALL_VALUES:  # in cache: max and min (NaN fails them too)
        return float(values.max()) <= limit and float(values.min()) >= -limit
    if values.flags.c_contiguous or values.flags.f_contiguous:
        # The values in memory order, as rows of _FLAT_ROW (no copy: a transposed
        # F array is C-contiguous), and the few left over.
        flat = (values.T if values.flags.f_contiguous else values).reshape(-1)
        whole = flat.size - flat.size % _FLAT_ROW
        rows = flat[:whole].reshape(-1, _FLAT_ROW)
        step = _default_rows(rows)
        tail = flat[whole:]
        return (reduce_row_ranges(lambda lo, hi: bad_blocks(rows, lo, hi, step, True),
                                  rows.shape[0], 8 * step) == 0
                and bool(np.all(np.abs(tail) <= limit)))
    # Strided (a slice of columns): block by block, read in place. (No BLAS call from
    # the calling thread: a multi-threaded OpenBLAS call there leaves its threads
    # spinning, measured to slow the next pass by 40 %.)
    step = _default_rows(values) if values.ndim == 2 else values.shape[0]
    return bad_blocks(values, 0, values.shape[0], max(1, step), False) == 0


def extreme_entries(X: Matrix, limit: float = MAX_MAGNITUDE,
                    test: Callable[[np.ndarray], np.ndarray] | None = None
                    ) -> tuple[np.ndarray, np.ndarray, float]:
    """``(rows, columns, largest)`` of the entries of X beyond ``limit`` (or where
    ``test(block)`` is True): sorted row and column indices and the largest
    magnitude among them. Block by block: no N x D mask."""
    test = test or (lambda a: np.abs(a) > limit)
    if sp.issparse(X):
        X = X if X.format in ("csr", "csc") else X.tocsr()
        hit = np.flatnonzero(test(X.data))
        major = np.searchsorted(X.indptr, hit, side="right") - 1
        rows, cols = (major, X.indices[hit]) if X.format == "csr" else (X.indices[hit], major)
        return np.unique(rows), np.unique(cols), float(np.max(np.abs(X.data[hit])))
    X = X.reshape(X.shape[0], -1)
    rows, cols, largest = [], np.zeros(X.shape[1], dtype=bool), 0.0
    for lo in range(0, X.shape[0], 4096):
        block = X[lo:lo + 4096]
        over = test(block)
        if over.any():
            rows.append(lo + np.flatnonzero(over.any(axis=1)))
            cols |= over.any(axis=0)
            largest = max(largest, float(np.max(np.abs(block[over]))))
    return np.concatenate(rows), np.flatnonzero(cols), largest


def _column_names(cols: Sequence[int] | np.ndarray, feature_names: Sequence[Any] | None) -> str:
    labels: list[Any]
    if feature_names is not None and len(feature_names) > int(np.max(cols)):
        labels = [str(feature_names[j]) for j in cols]
    else:
        labels = [int(j) for j in cols]
    shown = labels[:10] + (["..."] if len(labels) > 10 else [])
    return f"column{'s' * (len(labels) != 1)} {shown}"


def _row_count(rows: Sequence[int] | np.ndarray) -> str:
    n = len(rows)
    return f"in {n} row{'s' * (n != 1)} (first: row {int(rows[0])})"


def magnitude_message(name: str, rows: np.ndarray, cols: np.ndarray, largest: float,
                      feature_names: Sequence[Any] | None = None, where: str | None = None) -> str:
    """The error for values beyond :data:`MAX_MAGNITUDE` (see :func:`check_finite_magnitude`).

    ``where``: how to say which rows (default: their count and the first one);
    the Dask chunk checks name the chunk there.
    """
    return (f"Input {name} holds values too large for the model's arithmetic (|value| > "
            f"{MAX_MAGNITUDE:.0e}, up to {largest:.3g}) {where or _row_count(rows)}, in "
            f"{_column_names(cols, feature_names)}: sums of their squares and products "
            "could overflow float64. Rescale those columns (e.g. change their units) or "
            "remove those rows.")


def chunk_magnitude_error(k: int, lo: int, name: str, a: Matrix) -> ValueError:
    """The ``ValueError`` for row chunk ``k`` of a Dask input (its first row ``lo``; ``a``
    dense or sparse) holding values beyond :data:`MAX_MAGNITUDE`, named as the
    chunk checks of :mod:`problin._dask.chunks` name NaN."""
    rows, cols, largest = extreme_entries(a)
    n = len(rows)
    return ValueError(magnitude_message(
        name, rows, cols, largest, where=f"in chunk {k} (row {lo + int(rows[0])}, {n} "
        f"row{'s' * (n != 1)} of the chunk; the chunk holds rows {lo} to {lo + a.shape[0] - 1})"))


def check_finite_magnitude(X: Matrix, estimator: Any = None, name: str = "X") -> None:
    """Raise ``ValueError`` if ``X`` holds NaN, infinity or values beyond :data:`MAX_MAGNITUDE`.

    ``X`` is a validated numpy array (1-D or 2-D) or scipy.sparse matrix (only
    its stored values are read). NaN, infinity and values beyond
    :data:`MAX_MAGNITUDE` (see there for why) are each an error naming the
    columns (by ``estimator.feature_names_in_`` where set, else by index) and
    the number of rows. One pass over X on both cores when nothing is wrong (a
    max and a min per cache-sized block): it replaces the finiteness check
    where it is called.
    """
    values = X.data if sp.issparse(X) else np.asarray(X)
    if values.dtype.kind != "f" or values.size == 0 or within_magnitude(values):
        return
    names = getattr(estimator, "feature_names_in_", None)
    for what, test in (("NaN", np.isnan), ("infinity", np.isinf)):
        rows, cols, _ = extreme_entries(X, test=test) if test(values).any() else ((),) * 3
        if len(rows):
            raise ValueError(f"Input {name} contains NaN or infinity: {what} "
                             f"{_row_count(rows)}, in {_column_names(cols, names)}.")
    rows, cols, largest = extreme_entries(X)
    raise ValueError(magnitude_message(name, rows, cols, largest, names))


def check_columns_resolvable(means: np.ndarray, variances: np.ndarray,
                             names: Any = None) -> None:
    """Raise ``ValueError`` if a column of X is not all zero but all below
    :data:`MIN_MAGNITUDE` in size, judged from per-class statistics (``means`` and
    ``variances``, shape (K, D)): its squares underflow float64, so its spread reads as
    0 (the column was silently dropped, or its variance overflowed when inverted)."""
    with np.errstate(invalid="ignore"):
        size = np.max(np.abs(means) + np.sqrt(np.maximum(variances, 0.0)), axis=0,
                      initial=0.0)
    check_column_sizes(size, names)


def resolvable(estimator: Any, stats: Any) -> Any:
    """``stats`` (per-class statistics: ``counts``, ``means``, ``var()``), once no column
    of X is too small for float64 (:func:`check_columns_resolvable`, on the classes that
    hold weight; named by the estimator's feature names)."""
    seen = stats.counts > 0
    check_columns_resolvable(stats.means[seen], stats.var()[seen],
                             getattr(estimator, "feature_names_in_", None))
    return stats


def check_column_sizes(size: np.ndarray, names: Any = None) -> None:
    """Raise ``ValueError`` if a column of X has a size (``size``: per column, e.g. its
    largest |value|, or |mean| + spread) above 0 but below :data:`MIN_MAGNITUDE`."""
    tiny = np.flatnonzero((size > 0) & (size < MIN_MAGNITUDE))
    if tiny.size:
        many = tiny.size > 1
        raise ValueError(
            f"{_column_names(tiny, names)} of X hold{'' if many else 's'} "
            f"only values too small for the model's arithmetic (below {MIN_MAGNITUDE:.0e} "
            f"in size, down to {float(size[tiny].min()):.3g}): their squares underflow "
            "float64. Rescale them (e.g. change the units).")


def check_targets_resolvable(T: np.ndarray, name: str = "y") -> None:
    """Raise ``ValueError`` if a column of the (2-D, finite) regression targets ``T`` is
    not all zero but all below :data:`MIN_MAGNITUDE` in size (see there)."""
    top = np.max(np.abs(T), axis=0, initial=0.0)
    tiny = (top > 0) & (top < MIN_MAGNITUDE)
    if tiny.any():
        raise ValueError(f"Input {name} holds only values too small for the model's arithmetic "
                         f"(|value| < {MIN_MAGNITUDE:.0e}, at most {float(top[tiny].max()):.3g}"
                         f"): their squares underflow float64, and residual sums and standard "
                         f"errors with them. Rescale {name} (e.g. change its units).")
