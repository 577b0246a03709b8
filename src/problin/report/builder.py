"""Build the HTML report of a fitted model on a dataset (``problin report``)."""
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import is_classifier

from .._core.validation import MAX_MAGNITUDE, extreme_entries, within_magnitude
from ..metrics import brier_score, expected_calibration_error
from . import plots
from .html import render_page
from .tables import describe_model, final_estimator, parameter_table

__all__ = ["build_report", "write_report", "choose_features"]

# Plots in the order a reader wants them: the model's picture first, diagnostics after.
_ORDER = ["Decision regions", "Class probabilities", "Uncertainty", "Predictive uncertainty",
          "Calibration", "ROC", "Confusion matrix", "Predicted against actual", "Residuals",
          "Optimiser trace"]


def choose_features(model: Any, X: Any, names: Sequence[str],
                    requested: Sequence[str] | None = None) -> list[int]:
    """Indices of the (at most two) features to plot: ``requested`` names, else the two
    with the largest coefficients in standard-deviation units, else the first two."""
    if requested:
        unknown = [f for f in requested if f not in names]
        if unknown:
            raise ValueError(f"unknown features {unknown} for the plots; the model's features "
                             f"are {names[:20]}")
        return [names.index(f) for f in requested][:2]
    d = len(names)
    est = final_estimator(model)
    coef = getattr(est, "coef_", None)
    if d > 2 and coef is not None and np.shape(coef)[-1] == d:
        weight = np.abs(np.atleast_2d(np.asarray(coef, dtype=np.float64))).sum(axis=0)
        if not hasattr(model, "steps"):  # coefficients per unit of the raw feature
            weight = weight * np.asarray(X, dtype=np.float64).std(axis=0)
        return sorted(np.argsort(-weight, kind="stable")[:2].tolist())
    return list(range(min(d, 2)))


def _classifier_metrics(model: Any, X: Any, y: np.ndarray, pred: np.ndarray,
                        proba: np.ndarray | None, classes: Sequence[Any]) -> dict[str, Any]:
    scores = {"accuracy": float(np.mean(pred == y))}
    if proba is not None:
        if hasattr(model, "predict_log_proba"):
            log_p = model.predict_log_proba(X)
            cols = np.searchsorted(np.asarray(classes), y)
            with np.errstate(over="ignore"):  # rows far from the data: log p ~ -1e300
                scores["log_loss"] = float(-np.mean(log_p[np.arange(len(y)), cols]))
        scores["brier"] = brier_score(proba, y, classes)
        scores["ece"] = expected_calibration_error(proba, y, classes)
    return scores


def _known_labels(y: Any, classes: Any) -> np.ndarray:
    return np.isin(np.asarray(y), np.asarray(classes))


def _far_rows(X: Any, names: Sequence[str],
              classifier: bool) -> tuple[np.ndarray | None, str | None]:
    """``(mask, note)``: the rows holding feature values beyond ``MAX_MAGNITUDE`` (1e144)
    and a note naming them, or ``(None, None)``. Classifiers score such rows (their
    probabilities are computed by per-row scaling), but a plot axis spanning them
    would reach the end of the float range, so the plots leave them out; a
    regressor's predictions there are themselves near or beyond that end (a
    residual squared overflows), so its scores leave them out too."""
    values = X.data if sp.issparse(X) else X
    if values.size == 0 or within_magnitude(values):
        return None, None
    rows, cols, largest = extreme_entries(X)
    mask = np.zeros(X.shape[0], dtype=bool)
    mask[rows] = True
    shown = [names[j] for j in cols[:10]] + (["..."] if len(cols) > 10 else [])
    return mask, (f"{rows.size} row{'s' * (rows.size != 1)} (first: row {int(rows[0])}) "
                  f"hold feature values beyond ±{MAX_MAGNITUDE:.0e} (up to {largest:.3g}, in "
                  f"{', '.join(map(str, shown))}): they are "
                  + ("scored but left out of the plots." if classifier else
                     "left out of the scores and plots."))


def _plot_rows(dense: Any, y: Any, far: np.ndarray | None) -> tuple[Any, Any]:
    """The rows the plots show: all but the ``far`` ones (``None`` if none is left)."""
    if dense is None or far is None:
        return dense, y
    keep = ~far
    return (dense[keep] if keep.any() else None), (None if y is None else y[keep])


def _require_finite(est: Any, values: np.ndarray, what: str, far: np.ndarray | None) -> None:
    """A clear error if the model gave NaN or infinite ``what`` for some rows."""
    values = np.asarray(values, dtype=np.float64).reshape(len(values), -1)
    bad = np.flatnonzero(~np.isfinite(values).all(axis=1))
    if bad.size:
        why = (" (rows with feature values beyond the float range the model can handle)"
               if far is not None and far[bad].any() else "")
        raise ValueError(f"{type(est).__name__} gave {what} that are not finite for "
                         f"{bad.size} row{'s' * (bad.size != 1)} (first: row {int(bad[0])})"
                         f"{why}: the report needs finite values; remove or rescale them.")


def build_report(model: Any, X: Any, y: Any = None, *, feature_names: Sequence[str] | None = None,
                 bundle: Any = None, features: Sequence[str] | None = None,
                 title: str | None = None, source: str | None = None,
                 progress: Callable[[], Any] | None = None) -> str:
    """The HTML report of a fitted model evaluated on ``X`` (and ``y`` when given).

    Parameters
    ----------
    model : fitted estimator or Pipeline
    X : DataFrame, ndarray or scipy.sparse matrix
    y : array-like, optional
        Targets: metrics, ROC, calibration and confusion matrix need them.
    feature_names : list of str, optional
    bundle : problin.io.ModelFile, optional
        Metadata to describe (target, classes, encoding, version).
    features : list of str, optional
        Up to two features for the decision-region and uncertainty plots.
    title, source : str, optional
        Page title and the data's name.
    progress : callable, optional
        Called once per finished section (for a progress bar); see ``n_steps``.

    Returns
    -------
    str
        A self-contained HTML page.
    """
    step = progress or (lambda: None)
    est = final_estimator(model)
    names = list(feature_names if feature_names is not None else
                 getattr(X, "columns", [f"x{j}" for j in range(X.shape[1])]))
    names = [str(n) for n in names]
    sparse = sp.issparse(X)
    dense = None if sparse else np.asarray(X, dtype=np.float64)
    classifier = is_classifier(est)
    far, far_note = _far_rows(X if sparse else dense, names, classifier)
    pred = np.asarray(model.predict(X))
    if not classifier:
        _require_finite(est, pred if far is None else pred[~far], "predictions", None)
    step()
    d = X.shape[1]
    meta = describe_model(model, bundle, [(
        "data", f"{source or 'given arrays'}: {X.shape[0]} rows, {d} feature{'s' * (d != 1)}"
        + ("" if y is not None else " (no target column: no scores)"))])
    figures: list[tuple[str, str | None, str]] = []
    tables, notes = [], [] if far_note is None else [far_note]
    if y is not None:
        y = np.asarray(y)
    if classifier:
        classes = list(est.classes_)
        proba = model.predict_proba(X) if hasattr(model, "predict_proba") else None
        if proba is not None:
            _require_finite(est, proba, "probabilities", far)
        if y is not None and not _known_labels(y, classes).all():
            notes.append("Some target values are not among the model's classes: scores skipped.")
            y = None
        if y is not None:
            scores = _classifier_metrics(model, X, y, pred, proba, classes)
            tables.append(("Scores on this data", pd.DataFrame([scores])))
            figures.append(("Confusion matrix", plots.confusion_plot(classes, y, pred),
                            "Counts of true (rows) against predicted (columns) classes."))
            figures.append(("ROC", plots.roc_plot(model, X, y, classes),
                            "True against false positive rate over all thresholds."))
            figures.append(("Calibration", plots.calibration_plot(proba, y, classes),
                            "Mean predicted probability against observed frequency, in "
                            "10 equal-width bins; on the diagonal when calibrated."))
        step()
        dense, y = _plot_rows(dense, y, far)
        if dense is not None and names:
            chosen = choose_features(model, dense, names, features)
            regions = plots.regions_plot(model, dense, y, names, chosen, classes)
            figures.append(("Decision regions", regions,
                            "Regions of the predicted class and contours of the posterior "
                            "probability; other features held at their mean.") if len(chosen) > 1
                           else ("Class probabilities", regions, "Posterior probability of "
                                 "each class along the feature; ticks: the data."))
            figures.append(("Uncertainty", plots.uncertainty_plot(model, dense, y, names, chosen),
                            "Posterior standard deviation of the linear predictor."))
    else:
        if y is not None and far is not None:  # see _far_rows
            y, pred = (y[~far], pred[~far]) if not far.all() else (None, pred)
        if y is not None:
            resid = y.astype(np.float64) - pred
            scores = {"rmse": float(np.sqrt(np.mean(resid ** 2))),
                      "mae": float(np.mean(np.abs(resid))),
                      "r2": float(1 - np.sum(resid ** 2) / np.sum((y - y.mean()) ** 2))}
            tables.append(("Scores on this data", pd.DataFrame([scores])))
            figures.append(("Predicted against actual", plots.regression_plot(y, pred, "actual"),
                            "On the dotted diagonal when exact."))
            figures.append(("Residuals", plots.regression_plot(y, pred, "residuals"),
                            "Residuals against predictions: no pattern when the model fits."))
        step()
        dense = _plot_rows(dense, None, far)[0]  # (y: already left out)
        if dense is not None and names:
            chosen = choose_features(model, dense, names, features)
            figures.append(("Predictive uncertainty",
                            plots.uncertainty_plot(model, dense, y, names, chosen),
                            "Predictive mean and ± 2 standard deviations along one feature, "
                            "other features held at their mean."))
    step()
    if getattr(est, "history_", None) is not None:
        label = "misclassified samples" if type(est).__name__ == "Perceptron" else "objective"
        figures.append(("Optimiser trace", plots.trace_plot(est.history_, label),
                        f"{label.capitalize()} per iteration of the fit."))
    step()
    tables.insert(0, ("Parameters", parameter_table(model, names)))
    if sparse:
        notes.append("Sparse data: decision-region and uncertainty plots are not drawn.")
    figures = sorted((f for f in figures if f[1] is not None), key=lambda f: _ORDER.index(f[0]))
    page = render_page(title or f"problin report: {type(est).__name__}", meta, tables,
                       figures, notes)
    step()
    return page


build_report.n_steps = 5  # type: ignore[attr-defined]  # sections, for the CLI's progress bar


def write_report(path: str | os.PathLike[str], model: Any, X: Any, y: Any = None,
                 **kwargs: Any) -> str | os.PathLike[str]:
    """Write :func:`build_report` to ``path`` (UTF-8)."""
    page = build_report(model, X, y, **kwargs)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(page)
    return path
