"""The report's figures: diagnostics of the predictions (out of sample where possible)
and pictures of the model (problin.plot displays on the report's Axes).

Each figure is ``(heading, data URI, caption, rows of the page's grid it spans)``. A
model plot that does not apply to a model (no posterior, no interval) is left out; one
that refuses the data is left out with a note saying why.
"""
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from ..plot import (
    ActivationUncertaintyDisplay,
    CoefficientDisplay,
    DecisionRegionsDisplay,
    OptimiserTraceDisplay,
    OrdinalProbabilityDisplay,
    PredictiveBandDisplay,
    ReliabilityDisplay,
    RocDisplay,
)
from ..bayesian import BayesianOrdinalRegression
from ..glm import OrdinalRegression
from ..plot._data import Columns  # the report's data, named, checked once for all plots
from ..plot.roc import class_scores
from ..plot.uncertainty import activation_std
from . import plots
from .evaluation import Predictions
from .scores import DevianceFamily, deviance_residuals
from .tables import final_estimator, parameter_table

__all__ = ["FigureEntry", "classifier_diagnostics", "regression_diagnostics", "model_figures"]

# (heading, data URI or None, caption, rows of the page's grid it spans)
FigureEntry = tuple[str, str | None, str, int]
_MAX_COEFFICIENTS = 60  # a taller coefficient plot is unreadable on a page
# Models whose classes are ordered: their probabilities are drawn cumulated and stacked.
_ORDERED = (OrdinalRegression, BayesianOrdinalRegression)


def classifier_diagnostics(model: Any, X: Any, y: np.ndarray, classes: Sequence[Any],
                           p: Predictions) -> list[FigureEntry]:
    """Confusion matrix, ROC curves and reliability diagram of the predictions ``p``."""
    t, how = y[p.rows], p.label
    out: list[FigureEntry] = [(
        "Confusion matrix", plots.confusion_plot(classes, t, p.pred, how),
        f"Counts of true (rows) against predicted (columns) classes; {how}.", 1)]
    scores = p.proba
    if scores is None and hasattr(model, "decision_function"):
        scores, how = class_scores(model, X)[p.rows], "in sample: the fitted model"
        if not np.all(np.isfinite(scores)):  # rows far out score +-inf (their limit): a
            scores = rankdata(scores, axis=0)  # ROC reads only the order, which ranks keep
    if scores is not None and np.unique(t).size > 1:
        out.append(("ROC", plots.drawn(lambda ax: RocDisplay.from_predictions(
            t, scores, classes=classes, ax=ax), how),
            f"True against false positive rate over all thresholds; {how}.", 1))
    if p.proba is not None:
        proba = p.proba
        out.append(("Calibration", plots.drawn(lambda ax: ReliabilityDisplay.from_predictions(
            t, proba, classes=classes, n_bins=10, ax=ax), p.label),
            ("Observed frequency against mean predicted probability in 10 equal-width bins "
             f"(on the diagonal when calibrated); bars: predictions per bin; {p.label}."), 1))
    return out


def regression_diagnostics(y: np.ndarray, p: Predictions,
                           family: DevianceFamily | None = None) -> list[FigureEntry]:
    """Predicted against actual values and residuals of the predictions ``p``: raw
    residuals, or with a GLM regressor's ``family`` its deviance residuals, whose spread
    does not grow with the mean when the family's variance function is right."""
    t = y[p.rows]
    out: list[FigureEntry] = [(
        "Predicted against actual", plots.regression_plot(t, p.pred, "actual", p.label),
        f"On the dotted diagonal when exact; {p.label}.", 1)]
    if family is None:
        out.append(("Residuals", plots.regression_plot(t, p.pred, "residuals", p.label),
                    f"Residuals against predictions: no pattern when the model fits; "
                    f"{p.label}.", 1))
        return out
    residuals = deviance_residuals(family, t, p.pred)
    out.append(("Residuals", plots.regression_plot(t, p.pred, "deviance residuals", p.label,
                                                   residuals),
                "Deviance residuals sign(y − μ)·√d(y, μ) against the fitted means: centred "
                "on zero with an even spread when the family and link fit (about ±2 for "
                f"a dispersion of 1; discrete counts show as bands); {p.label}.", 1))
    return out


def model_figures(model: Any, cols: Columns | None, y: np.ndarray | None,
                  chosen: list[int], classifier: bool, names: list[str],
                  notes: list[str], parameters: pd.DataFrame | None = None
                  ) -> list[FigureEntry]:
    """Pictures of the fitted model: decision regions or the predictive band, the
    posterior uncertainty, the coefficients (those of ``parameters``, the report's
    parameter table, where given) and the traces."""
    out: list[FigureEntry] = []
    if cols is not None and chosen:
        out += _regions_and_bands(model, cols, y, chosen, classifier, notes)
    out += _coefficients(model, cols, names, notes, parameters)
    est = final_estimator(model)
    if getattr(est, "history_", None) is not None and np.size(est.history_) > 1:
        what = ("misclassified samples per epoch" if type(est).__name__ == "Perceptron" else
                "distance of the objective to its final value per iteration (log scale)")
        out.append(_optional("Optimiser trace", lambda ax: OptimiserTraceDisplay.from_estimator(
            model, ax=ax), f"The optimiser's record: {what}.", notes))
    if getattr(est, "samples_", None) is not None:
        shown = ["intercept"] * bool(getattr(est, "fit_intercept", True)) + \
            [names[j] for j in chosen]
        out.append(("MCMC trace", plots.mcmc_traces(model, shown or [0]),
                    ("Draws per chain after warm-up: chains overlapping like noise have "
                     "mixed (R-hat near 1)."), 1 + (len(shown) > 2)))
    return out


def _regions_and_bands(model: Any, cols: Columns, y: np.ndarray | None, chosen: list[int],
                       classifier: bool, notes: list[str]) -> list[FigureEntry]:
    held = "other features at their mean (continuous) or mode (discrete)"
    if not classifier:
        return [_optional("Predictive uncertainty", lambda ax: PredictiveBandDisplay
                          .from_estimator(model, cols, y, feature=chosen[0], ax=ax),
                          f"Predictive mean and band along one feature, {held}.", notes)]
    two = len(chosen) == 2
    out = [_optional("Decision regions" if two else "Class probabilities",
                     lambda ax: DecisionRegionsDisplay.from_estimator(
                         model, cols, y, features=chosen, ax=ax),
                     ("Regions of the predicted class and probability contours" if two else
                      "Probability of each class along the feature; ticks: the data")
                     + f", {held}; discrete features jittered.", notes)]
    if isinstance(final_estimator(model), _ORDERED):
        out += _ordered_classes(model, cols, chosen[0], held, notes)
    if activation_std(model, cols.as_input(cols.values[:1])) is not None:
        out.append(_optional("Uncertainty", lambda ax: ActivationUncertaintyDisplay
                             .from_estimator(model, cols, features=chosen, ax=ax),
                             f"Posterior standard deviation of the linear predictor, {held}.",
                             notes))
    return out


def _ordered_classes(model: Any, cols: Columns, feature: int, held: str,
                     notes: list[str]) -> list[FigureEntry]:
    """The cumulative probabilities and the stacked class probabilities of ordered
    classes along one feature."""
    return [_optional("Cumulative probabilities", lambda ax: OrdinalProbabilityDisplay
                      .from_estimator(model, cols, feature=feature, kind="cumulative", ax=ax),
                      "P(y ≤ k) for each cut between consecutive classes along one feature, "
                      f"{held}: under proportional odds, shifted copies of one curve.", notes),
            _optional("Class probability stack", lambda ax: OrdinalProbabilityDisplay
                      .from_estimator(model, cols, feature=feature, kind="stack", ax=ax),
                      f"The class probabilities stacked in their order, {held}.", notes)]


def _coefficients(model: Any, cols: Columns | None, names: list[str],
                  notes: list[str], parameters: pd.DataFrame | None) -> list[FigureEntry]:
    table = parameter_table(model, names) if parameters is None else parameters
    if isinstance(final_estimator(model), _ORDERED):  # the slopes; cut-points are no columns
        table = table[table.index.isin(names)]
    if not {"ci_low", "ci_high"} <= set(table.columns):
        return []
    n = int(np.sum([str(i[-1] if isinstance(i, tuple) else i) != "intercept"
                    for i in table.index]))
    if n > _MAX_COEFFICIENTS:
        notes.append(f"{n} coefficients: too many to plot; see the parameter table.")
        return []
    scaled = cols is not None and not hasattr(model, "steps")
    entry = _optional("Coefficients", lambda ax: CoefficientDisplay.from_summary(
        table, cols if scaled else None, ax=ax),
        "Estimates with their 95% intervals (from the parameter table), intercept left out"
        + ("; per standard deviation of each feature, so that features in different units "
           "compare." if scaled else "."), notes, height=1.4 + 0.24 * n)
    return [entry]


def _optional(heading: str, draw: Callable[[Any], Any], caption: str, notes: list[str],
              height: float = 4.0) -> FigureEntry:
    """``(heading, URI, caption, rows)``, ``rows`` of the page's grid for a figure
    ``height`` inches tall; the URI is None when the display does not apply to this model
    (a ``TypeError``: no posterior, no interval) or refuses these data (a ``ValueError``,
    whose reason goes to the notes)."""
    rows = min(3, max(1, round(height / 4.6)))
    try:
        return heading, plots.drawn(draw, height=height), caption, rows
    except TypeError:
        return heading, None, caption, rows
    except ValueError as exc:
        notes.append(f"{heading}: not drawn ({exc}).")
        return heading, None, caption, rows
