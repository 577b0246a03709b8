"""Input checks shared by every estimator (clear errors, never a silent nan)."""
from numbers import Number

import numpy as np

__all__ = ["check_sample_weight", "check_class_weights", "check_label_types", "check_priors"]


def check_sample_weight(sample_weight, n_samples):
    """Validated float64 sample weights, or ``None`` for unit weights.

    Rejects weights of the wrong shape, non-finite or negative weights, and
    weights that sum to zero, each with a message naming the problem.
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
    if not np.isfinite(total):
        raise ValueError("sample_weight is too large: the weights' sum overflows; rescale them")
    if not total > 0:
        raise ValueError("sample_weight sums to zero: there is nothing to fit")
    return w


def check_class_weights(codes, sample_weight, classes, *,
                        why="their parameters are undefined"):
    """Reject a fit where some class has zero total sample weight.

    ``codes`` are the class indices of the rows (``0..K-1``, the order of
    ``classes``) and ``sample_weight`` the validated weights (``None``: unit
    weights, so every class present has weight). ``why`` says what a class
    without weight would do to the model, in the error message.
    """
    if sample_weight is None:
        return
    totals = np.bincount(codes, weights=sample_weight, minlength=len(classes))
    empty = totals <= 0
    if np.any(empty):
        raise ValueError(f"classes {np.asarray(classes)[empty].tolist()} have zero total sample "
                         f"weight: {why}. Drop those samples or give them positive weight.")


def check_label_types(y):
    """Reject class labels that mix numbers and strings (they cannot be ordered)."""
    if getattr(y, "dtype", object) != object:
        return
    kinds = set()
    for v in np.asarray(y, dtype=object).ravel():
        kinds.add("number" if isinstance(v, (Number, np.number)) else type(v).__name__)
    if len(kinds) > 1:
        raise TypeError("y must hold class labels of one type (all numbers or all strings), "
                        f"but it mixes {', '.join(sorted(kinds))}")


def check_priors(priors, n_classes, *, name="priors"):
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


def check_all_finite(X, name="X"):
    """Raise ``ValueError`` if ``X`` (dense or sparse) holds NaN or infinity.

    The same test as scikit-learn's (a sum is finite only if every term is),
    but as a blocked sum over row ranges in parallel threads: one read of X
    at the speed of both cores instead of one.
    """
    import scipy.sparse as sp

    from .blocks import _default_rows, reduce_row_ranges
    values = X.data if sp.issparse(X) else X
    if values.dtype.kind != "f" or values.size == 0:
        return
    if values.ndim == 2 and values.flags.c_contiguous:
        rows = 8 * _default_rows(values)
        total = reduce_row_ranges(lambda lo, hi: float(np.sum(values[lo:hi])),
                                  values.shape[0], rows)
    else:
        total = float(np.sum(values))
    if np.isfinite(total):
        return
    with np.errstate(invalid="ignore", over="ignore"):
        if np.isnan(values).any():
            raise ValueError(f"Input {name} contains NaN.")
        if not np.isfinite(values).all():
            raise ValueError(f"Input {name} contains infinity or a value too large for "
                             f"{values.dtype!r}.")
    # the sum overflowed although every value is finite: nothing wrong
