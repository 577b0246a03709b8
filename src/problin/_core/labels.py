"""Class labels: validation and encoding as indices ``0..K-1``."""
from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils.multiclass import check_classification_targets

__all__ = ["distinct_labels", "encode_classes", "stream_labels"]


def _label_list(values: Iterable[Any], limit: int = 10) -> str:
    values = list(values)
    shown = ", ".join(repr(v.item() if hasattr(v, "item") else v) for v in values[:limit])
    return shown + (", ..." if len(values) > limit else "")


def encode_classes(y: ArrayLike, classes: ArrayLike | None = None, *,
                   owner: str = "classifier") -> tuple[np.ndarray, np.ndarray]:
    """Return ``(classes_, t)`` with ``classes_[t] == y``.

    ``classes`` fixes the set and order of the labels (the first is the
    reference class of contrast parameterisations); by default the sorted
    distinct labels of ``y``. Every listed class must occur in ``y`` (a class
    without samples has no finite maximum-likelihood parameters) and every
    label of ``y`` must be listed.
    """
    y = np.asarray(y)
    if classes is None:
        classes_, t = distinct_labels(y)
        if classes_.size < 2:
            raise ValueError(f"{owner} needs samples of at least 2 classes, but the data "
                             f"contain only one class: {_label_list(classes_)}")
        return classes_, t
    check_classification_targets(y)
    present = np.unique(y)
    classes_ = np.asarray(classes)
    if classes_.ndim != 1:
        raise ValueError(f"classes must be a 1-D list of labels, got shape {classes_.shape}")
    if np.unique(classes_).size != classes_.size:
        raise ValueError("classes contains duplicate labels")
    unknown = np.setdiff1d(present, classes_)
    if unknown.size:
        raise ValueError(f"y contains labels that are not in classes: {_label_list(unknown)}")
    absent = [c for c in classes_ if c not in set(present.tolist())]
    if absent:
        raise ValueError(f"classes {_label_list(absent)} have no samples in y: their "
                         "parameters would be minus infinity. Drop them from classes or "
                         "add samples.")
    if classes_.size < 2:
        raise ValueError(f"{owner} needs samples of at least 2 classes, but the data contain "
                         f"only one class: {_label_list(classes_)}")
    order = np.argsort(classes_, kind="stable")
    t = order[np.searchsorted(classes_[order], y)]
    return classes_, t.astype(np.intp)


def stream_labels(y: np.ndarray, classes: ArrayLike | None, owner: str, *,
                  ordered: bool = False) -> np.ndarray:
    """The classes a stream fixes on its first ``partial_fit`` batch ``y``: ``classes``
    (sorted, or as given where ``ordered``: the first a reference class), else the
    batch's sorted labels; at least two, none repeated."""
    if classes is None:
        labels = np.unique(y)
        if labels.size < 2:
            raise ValueError(f"{owner}.partial_fit: the first batch holds only one class "
                             f"({labels.tolist()}); pass classes= with every label of the "
                             "stream on the first call")
        return labels
    given = np.asarray(classes)
    if given.ndim != 1:
        raise ValueError(f"classes must be a 1-D list of labels, got shape {given.shape}")
    labels = given if ordered else np.unique(given)
    if np.unique(given).size != given.size:
        raise ValueError("classes contains duplicate labels")
    if labels.size < 2:
        raise ValueError(f"{owner} needs at least 2 classes, but classes holds only one "
                         f"class: {labels.tolist()}")
    return labels


def distinct_labels(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, t)``: the sorted distinct labels of ``y`` (any number of them, one
    included: a Dask chunk's) and ``t`` with ``labels[t] == y``."""
    two = _two_labels(y)
    if two is not None:
        return two
    as_int = _integer_labels(y)
    if as_int is not None:
        # Integer-valued labels (ints, bools, or floats such as 0.0 / 1.0):
        # one counting pass instead of sorting; they are classes, never a
        # continuous target.
        low = int(as_int.min())
        span = int(as_int.max()) - low + 1
        if span <= 4 * y.size + 1024:
            # Labels 0..K-1 (the common case) are their own codes: no copies.
            shifted = as_int if low == 0 else as_int - low
            shifted = shifted.astype(np.intp, copy=False)
            counts = np.bincount(shifted, minlength=span)
            present = (np.flatnonzero(counts) + low).astype(y.dtype)
            if present.size == span:
                # Never hand back the caller's own array as the codes.
                return present, shifted.copy() if np.shares_memory(shifted, y) else shifted
            codes = (np.cumsum(counts > 0) - 1).astype(np.intp)
            return present, codes[shifted]
    check_classification_targets(y)
    present, t = np.unique(y, return_inverse=True)
    return present, t.astype(np.intp).ravel()


def _numeric_labels(y: np.ndarray) -> bool:
    """Whether ``y`` is a non-empty vector of numbers (the labels the fast paths take)."""
    return y.ndim == 1 and bool(y.size) and y.dtype.kind in "iubf"


def _two_labels(y: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(classes_, t)`` where ``y`` holds exactly two integer-valued labels (binary
    targets, the common case), else None: half the numpy calls of the counting path,
    which in a small fit following other work cost ~5 us each (a cold cache)."""
    if not _numeric_labels(y):
        return None
    low, high = y.min(), y.max()
    if not low < high:  # one label, or a NaN
        return None
    if y.dtype.kind == "f" and not (float(low).is_integer() and float(high).is_integer()):
        return None
    is_high = y == high
    if not (is_high | (y == low)).all():
        return None
    classes_ = np.array([low, high], dtype=y.dtype)
    if y.dtype.kind == "f":
        classes_ += 0.0  # the label -0.0 is 0.0 (as the counting path has it)
    return classes_, is_high.astype(np.intp)


def _integer_labels(y: np.ndarray) -> np.ndarray | None:
    """``y`` as int64 if its labels are integers (any numeric dtype), else None."""
    if not _numeric_labels(y):
        return None
    if y.dtype.kind != "f":
        return y.astype(np.int64, copy=False)
    if not np.abs(y).max() < 2.0**53:  # also rejects nan and inf (a nan maximum)
        return None
    as_int = y.astype(np.int64)
    return as_int if (as_int == y).all() else None
