"""Scores of probabilistic classifiers shared by ``problin compare`` and the report."""
import numpy as np
from numpy.typing import ArrayLike

__all__ = ["brier_score", "expected_calibration_error"]

_SUM_TOL = 1e-6  # a row of probabilities sums to 1 within this (float32 models: ~1e-7)


def class_columns(y: ArrayLike, classes: ArrayLike) -> np.ndarray:
    """The column of each label of ``y`` among ``classes`` (distinct, as a fitted model's
    ``classes_``: sorted, or in the order an ordinal model was given); a label not among
    them is an error, never the column of a neighbour (as a bare ``searchsorted`` would
    give it)."""
    classes, y = np.asarray(classes), np.asarray(y)
    order = np.argsort(classes, kind="stable") if classes.ndim == 1 else np.zeros(0, int)
    ranked = classes[order] if classes.ndim == 1 else classes
    if classes.ndim != 1 or classes.size == 0 or np.any(ranked[1:] <= ranked[:-1]):
        raise ValueError("classes must be the distinct labels of the probability columns "
                         f"(a model's classes_), got {classes.tolist()[:10]}")
    cols = order[np.minimum(np.searchsorted(ranked, y), classes.size - 1)]
    unseen = classes[cols] != y
    if np.any(unseen):
        raise ValueError(f"labels {np.unique(y[unseen]).tolist()[:10]} are not among the "
                         f"classes {classes.tolist()[:10]}: they have no probability column")
    return cols


def _codes(proba: ArrayLike, y: ArrayLike, classes: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    proba = np.asarray(proba, dtype=np.float64)
    cols = class_columns(y, classes)
    if proba.ndim != 2 or proba.shape != (cols.size, np.asarray(classes).size):
        raise ValueError(f"proba has shape {proba.shape}; expected one row per label and one "
                         f"column per class, ({cols.size}, {np.asarray(classes).size})")
    # Probabilities: finite, in [0, 1], rows summing to 1 (to rounding), or the scores
    # are silently NaN or meaningless.
    bad = ~np.isfinite(proba).all(axis=1) | (proba < 0).any(axis=1) | (proba > 1).any(axis=1)
    with np.errstate(invalid="ignore"):
        bad |= ~(np.abs(proba.sum(axis=1) - 1.0) <= _SUM_TOL)
    if bad.any():
        rows = np.flatnonzero(bad)
        raise ValueError(f"proba rows {rows[:10].tolist()} are not probabilities (NaN, "
                         "outside [0, 1], or not summing to 1): pass predict_proba's output")
    return proba, cols


def brier_score(proba: ArrayLike, y: ArrayLike, classes: ArrayLike,
                scale_by_half: bool | str = "auto") -> float:
    """Brier score, as scikit-learn's :func:`sklearn.metrics.brier_score_loss` defines it.

    The mean over samples of ``sum_k (p_k - [y = k])^2``, halved for two classes
    (``scale_by_half="auto"``): for a binary target that is the mean squared error of
    the positive-class probability, ``mean((p_1 - [y = classes[1]])^2)``, between 0
    (perfect) and 1; for more classes the sum over classes, between 0 and 2.

    Parameters
    ----------
    proba : array-like of shape (n_samples, n_classes)
        Predicted probabilities, one column per class in the order of ``classes``.
    y : array-like of shape (n_samples,)
        True labels, each one of ``classes``.
    classes : array-like of shape (n_classes,)
        The class labels, distinct, in the order of the columns (an estimator's
        ``classes_``).
    scale_by_half : bool or "auto", default="auto"
        Halve the sum over classes: ``"auto"`` does for two classes only
        (scikit-learn's default); ``True`` or ``False`` always or never.

    Returns
    -------
    float

    Examples
    --------
    >>> round(brier_score([[0.9, 0.1], [0.2, 0.8]], ["a", "b"], ["a", "b"]), 6)
    0.025
    >>> round(brier_score([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1]], ["a", "b"], ["a", "b", "c"]), 6)
    0.1
    """
    proba, cols = _codes(proba, y, classes)
    onehot = np.zeros_like(proba)
    onehot[np.arange(len(cols)), cols] = 1.0
    score = float(np.mean(np.sum((proba - onehot) ** 2, axis=1)))
    if scale_by_half != "auto" and not isinstance(scale_by_half, (bool, np.bool_)):
        raise ValueError(f"scale_by_half must be True, False or 'auto', got {scale_by_half!r}")
    if scale_by_half == "auto":
        scale_by_half = proba.shape[1] < 3
    return 0.5 * score if scale_by_half else score


def expected_calibration_error(proba: ArrayLike, y: ArrayLike, classes: ArrayLike,
                               n_bins: int = 10) -> float:
    """Expected calibration error of the top-class confidence: samples binned by
    ``max_k p_k`` into ``n_bins`` equal-width bins, the mean ``|accuracy - confidence|``
    over bins weighted by their sizes.

    Examples
    --------
    >>> round(expected_calibration_error([[0.9, 0.1], [0.2, 0.8]], ["a", "a"], ["a", "b"]), 6)
    0.45
    """
    if not (isinstance(n_bins, (int, np.integer)) and not isinstance(n_bins, bool)
            and n_bins >= 1):
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    proba, cols = _codes(proba, y, classes)
    conf = proba.max(axis=1)
    hit = (np.argmax(proba, axis=1) == cols).astype(np.float64)
    bins = np.minimum((conf * n_bins).astype(int), n_bins - 1)
    gap = np.bincount(bins, weights=hit - conf, minlength=n_bins)
    return float(np.sum(np.abs(gap)) / len(cols))
