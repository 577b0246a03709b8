"""The report's scores table: one row per way of predicting (out of sample, in sample)."""
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from ..metrics import brier_score, class_columns, expected_calibration_error
from .evaluation import Predictions

__all__ = ["scores_table", "classifier_scores", "regression_scores"]


def classifier_scores(p: Predictions, y: np.ndarray, classes: Sequence[Any]) -> dict[str, float]:
    """Accuracy, and with probabilities log loss, Brier score (``problin.metrics``),
    expected calibration error and ROC AUC (one class against the rest, macro-averaged,
    for K > 2)."""
    t = y[p.rows]
    out = {"accuracy": float(np.mean(p.pred == t))}
    if p.proba is None:
        return out
    if p.log_proba is not None:
        cols = class_columns(t, classes)
        with np.errstate(over="ignore"):  # rows far from the data: log p ~ -1e300
            out["log loss"] = float(-np.mean(p.log_proba[np.arange(len(t)), cols]))
    out["Brier score"] = brier_score(p.proba, t, classes)
    out["ECE"] = expected_calibration_error(p.proba, t, classes)
    out["ROC AUC"] = _auc(p.proba, t, classes)
    return out


def _auc(proba: np.ndarray, t: np.ndarray, classes: Sequence[Any]) -> float:
    present = np.unique(t)
    if present.size < 2:
        return float("nan")  # one class among these rows: no ranking to score
    if len(classes) == 2:
        return float(roc_auc_score(t == classes[1], proba[:, 1]))
    if present.size < len(classes):
        return float("nan")  # a class absent from these rows: macro AUC undefined
    return float(roc_auc_score(t, proba, multi_class="ovr", labels=list(classes)))


def regression_scores(p: Predictions, y: np.ndarray) -> dict[str, float]:
    """RMSE, MAE and R² (1 - residual / total sum of squares about the mean)."""
    t = y[p.rows].astype(np.float64)
    resid = t - np.asarray(p.pred, dtype=np.float64)
    total = float(np.sum((t - t.mean()) ** 2))
    return {"RMSE": float(np.sqrt(np.mean(resid ** 2))), "MAE": float(np.mean(np.abs(resid))),
            "R²": 1.0 - float(np.sum(resid ** 2)) / total if total > 0 else float("nan")}


def scores_table(predictions: Sequence[Predictions], y: np.ndarray,
                 classes: Sequence[Any] | None) -> pd.DataFrame:
    """One row per entry of ``predictions`` (indexed by its label), scores as columns."""
    rows = [classifier_scores(p, y, classes) if classes is not None else
            regression_scores(p, y) for p in predictions]
    return pd.DataFrame(rows, index=[p.label for p in predictions])
