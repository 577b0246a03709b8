"""The report's scores table: one row per way of predicting (out of sample, in sample)."""
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from ..glm.regression import GLMRegressor
from ..metrics import brier_score, class_columns, expected_calibration_error
from .evaluation import Predictions

__all__ = ["scores_table", "classifier_scores", "regression_scores", "DevianceFamily",
           "deviance_residuals", "fitted_family"]


class DevianceFamily(Protocol):
    """What the report asks of a GLM regressor's family (distribution x link)."""

    def unit_deviance(self, y: np.ndarray, mu: np.ndarray) -> np.ndarray: ...


def fitted_family(est: Any) -> Any:
    """A fitted GLM regressor's family (distribution x link, the negative binomial's at
    its fitted alpha), or None for any other model."""
    return est.get_family() if isinstance(est, GLMRegressor) else None


def deviance_residuals(family: DevianceFamily, y: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """``sign(y - mu) sqrt(d(y, mu))``, ``d`` the unit deviance (McCullagh & Nelder 1989,
    §2.4.3; statsmodels' ``resid_deviance`` at unit weights)."""
    y, mu = np.asarray(y, dtype=np.float64), np.asarray(mu, dtype=np.float64)
    return np.sign(y - mu) * np.sqrt(np.clip(family.unit_deviance(y, mu), 0.0, None))


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
    order = np.argsort(np.asarray(classes), kind="stable")  # scikit-learn: sorted labels
    return float(roc_auc_score(t, proba[:, order], multi_class="ovr",
                               labels=list(np.asarray(classes)[order])))


def regression_scores(p: Predictions, y: np.ndarray,
                      family: DevianceFamily | None = None) -> dict[str, float]:
    """RMSE, MAE and R² (1 - residual / total sum of squares about the mean); with a GLM
    regressor's ``family``, its mean unit deviance and D², the fraction of deviance
    explained against the mean of these rows (scikit-learn's ``d2_tweedie_score``)."""
    t = y[p.rows].astype(np.float64)
    mu = np.asarray(p.pred, dtype=np.float64)
    resid = t - mu
    total = float(np.sum((t - t.mean()) ** 2))
    out = {"RMSE": float(np.sqrt(np.mean(resid ** 2))), "MAE": float(np.mean(np.abs(resid))),
           "R²": 1.0 - float(np.sum(resid ** 2)) / total if total > 0 else float("nan")}
    if family is not None:
        deviance = float(np.sum(family.unit_deviance(t, mu)))
        null = float(np.sum(family.unit_deviance(t, np.full_like(t, t.mean()))))
        out["mean deviance"] = deviance / t.size
        out["D²"] = 1.0 - deviance / null if null > 0 else float("nan")
    return out


def scores_table(predictions: Sequence[Predictions], y: np.ndarray,
                 classes: Sequence[Any] | None,
                 family: DevianceFamily | None = None) -> pd.DataFrame:
    """One row per entry of ``predictions`` (indexed by its label), scores as columns
    (``family``: a GLM regressor's, for its deviance and D²)."""
    rows = [classifier_scores(p, y, classes) if classes is not None else
            regression_scores(p, y, family) for p in predictions]
    return pd.DataFrame(rows, index=[p.label for p in predictions])
