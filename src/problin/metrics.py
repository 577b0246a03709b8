"""Scores of probabilistic classifiers shared by ``problin compare`` and the report."""
import numpy as np
from numpy.typing import ArrayLike

__all__ = ["brier_score", "expected_calibration_error"]


def _codes(proba: ArrayLike, y: ArrayLike, classes: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    proba = np.asarray(proba, dtype=np.float64)
    cols = np.searchsorted(np.asarray(classes), np.asarray(y))
    return proba, cols


def brier_score(proba: ArrayLike, y: ArrayLike, classes: ArrayLike) -> float:
    """Multiclass Brier score: mean over samples of ``sum_k (p_k - [y = k])^2`` (0 is
    perfect, 2 the worst; binary: twice the usual one-column Brier score).

    Examples
    --------
    >>> round(brier_score([[0.9, 0.1], [0.2, 0.8]], ["a", "b"], ["a", "b"]), 6)
    0.05
    """
    proba, cols = _codes(proba, y, classes)
    onehot = np.zeros_like(proba)
    onehot[np.arange(len(cols)), cols] = 1.0
    return float(np.mean(np.sum((proba - onehot) ** 2, axis=1)))


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
    proba, cols = _codes(proba, y, classes)
    conf = proba.max(axis=1)
    hit = (np.argmax(proba, axis=1) == cols).astype(np.float64)
    bins = np.minimum((conf * n_bins).astype(int), n_bins - 1)
    gap = np.bincount(bins, weights=hit - conf, minlength=n_bins)
    return float(np.sum(np.abs(gap)) / len(cols))
