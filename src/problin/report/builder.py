"""Build the HTML report of a fitted model on a dataset (``problin report``)."""
import copy
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import is_classifier

from .._core.validation import MAX_MAGNITUDE, extreme_entries, within_magnitude
from .._frames import ENCODING_ATTRIBUTE, apply_columns
from ..formula import Formula
from ..plot import default_features
from ..plot._data import Columns  # the report's data, named, checked once for all plots
from .evaluation import PREDICT_ARGUMENTS, in_sample, out_of_sample
from .html import render_page
from .numbers import glm_statistics, model_statistics, rounded_table
from .scores import fitted_family, scores_table
from .sections import FigureEntry, classifier_diagnostics, model_figures, regression_diagnostics
from .tables import describe_model, final_estimator, parameter_table

__all__ = ["build_report", "write_report", "choose_features"]

# Plots in the order a reader wants them: the model's picture first, diagnostics after.
_ORDER = ["Decision regions", "Class probabilities", "Cumulative probabilities",
          "Class probability stack", "Uncertainty", "Predictive uncertainty",
          "Coefficients", "Calibration", "ROC", "Confusion matrix", "Predicted against actual",
          "Residuals", "Optimiser trace", "MCMC trace"]


def choose_features(model: Any, X: Any, names: Sequence[str],
                    requested: Sequence[str] | None = None) -> list[int]:
    """Indices of the (at most two) features to plot: the ``requested`` names, else the
    continuous features with the largest ``|coef| * sd`` (never a 0/1 indicator; see
    :func:`problin.plot.default_features`); empty when no feature qualifies."""
    if requested:
        unknown = [f for f in requested if f not in names]
        if unknown:
            raise ValueError(f"unknown features {unknown} for the plots; the model's features "
                             f"are {list(names)[:20]}")
        return [list(names).index(f) for f in requested][:2]
    cols = X if isinstance(X, Columns) else Columns(np.asarray(X, dtype=np.float64), names)
    return default_features(model, cols)


def _far_rows(X: Any, names: Sequence[str],
              classifier: bool) -> tuple[np.ndarray | None, str | None]:
    """``(mask, note)``: the rows holding feature values beyond ``MAX_MAGNITUDE`` (1e144)
    and a note naming them, or ``(None, None)``. Classifiers score such rows (their
    probabilities are computed by per-row scaling), but no model can be refitted on them
    and a plot axis spanning them would reach the end of the float range, so the
    cross-validation and the plots leave them out; a regressor's predictions there are
    themselves near or beyond that end (a residual squared overflows), so its scores
    leave them out too."""
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
                  + ("scored by the fitted model but left out of the out-of-sample refits "
                     "and the plots." if classifier else "left out of the scores and plots."))


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


def _evaluate(model: Any, X: Any, y: np.ndarray, far: np.ndarray | None,
              classes: list[Any] | None, cv: float | None, notes: list[str],
              arguments: Mapping[str, np.ndarray] | None = None
              ) -> tuple[tuple[str, pd.DataFrame, str], list[FigureEntry]]:
    """The scores table (out of sample and in sample) and the diagnostic plots, drawn
    from the out-of-sample predictions when there are any."""
    est = final_estimator(model)
    family = fitted_family(est)
    fit_rows = np.arange(len(y)) if far is None else np.flatnonzero(~far)
    ins = in_sample(model, X, np.arange(len(y)) if classes is not None else fit_rows,
                    arguments)
    if ins.proba is not None:
        _require_finite(est, ins.proba, "probabilities", far)
    oos = None
    if cv and fit_rows.size:
        oos, more = out_of_sample(model, X, y, fit_rows, cv, classes is not None,
                                  arguments=arguments)
        notes += more
    preds = [p for p in (oos, ins) if p is not None]
    if arguments and "trials" in arguments:  # successes: scored as proportions, as predicted
        y = y / arguments["trials"]
    table = rounded_table(scores_table(preds, y, classes, family), digits=3)
    # The folds used (fewer than cv where the rarest class has fewer rows), as labelled.
    how = oos.label.removeprefix("out of sample: ") if oos is not None else ""
    heading = (f"Scores: out of sample ({how}) and in sample" if oos is not None
               and cv else "Scores: in sample")
    caption = ("In sample: the fitted model scored on these rows, optimistic when it was "
               "fitted on them." + (f" Out of sample: {how} on these rows, "
                                    f"{type(est).__name__} with the same parameters refitted "
                                    "without the rows it predicts." if oos is not None and cv
                                    else ""))
    diag = oos or ins
    figures = (classifier_diagnostics(model, X, y, classes, diag) if classes is not None
               else regression_diagnostics(y, diag, family))
    return (heading, table, caption), figures


def _plot_data(model: Any, X: Any, dense: np.ndarray | None, y: np.ndarray | None,
               far: np.ndarray | None, names: list[str]) -> tuple[Columns | None, Any]:
    """The rows the model plots show (all but the ``far`` ones), in the form the model
    takes (a DataFrame when it was fitted on one), and their targets."""
    if dense is None or not names:
        return None, y
    keep = slice(None) if far is None else ~far
    rows, t = dense[keep], (None if y is None else y[keep])
    if len(rows) == 0:
        return None, t
    framed = hasattr(model, "feature_names_in_")
    return Columns(pd.DataFrame(rows, columns=names) if framed else rows, names), t


def _feature_names(model: Any, X: Any, given: Sequence[str] | None) -> list[str]:
    """``given``, else ``X``'s columns, else the names the model was fitted with (so that
    the plots' grids reach a model fitted on a DataFrame by its column names), else
    ``x0, x1, ...``."""
    fitted = getattr(model, "feature_names_in_", None)
    for names in (given, getattr(X, "columns", None), fitted):
        if names is not None and len(names) == X.shape[1]:
            return [str(n) for n in names]
    return [f"x{j}" for j in range(X.shape[1])]


def _formula_design(model: Formula, data: Any, y: Any) -> tuple[Any, pd.DataFrame, Any,
                                                                  list[str]]:
    """The estimator a formula fitted, the design of ``data`` that it reads, the response
    (``y``, else the formula's left-hand side read from ``data``, else None: no scores)
    and the report's note on them. Refits (cross-validation) refit the estimator on the
    design's rows: the encoding (levels, a transform's state) is the fitted formula's."""
    design = model.transform(data)
    if y is None:
        try:
            y = model.response(data)
        except ValueError:  # (the data hold no response: the report has no scores)
            y = None
    return model.estimator_, design, y, [
        f"Formula {model.formula!r}: the plots, the parameters and the refits of "
        f"{type(model.estimator_).__name__} are in the formula's columns; the refits "
        "keep the fitted encoding (levels, transform state)."]


def build_report(model: Any, X: Any, y: Any = None, *, feature_names: Sequence[str] | None = None,
                 bundle: Any = None, features: Sequence[str] | None = None,
                 title: str | None = None, source: str | None = None,
                 progress: Callable[[], Any] | None = None, cv: float | None = 5,
                 fit_arguments: Mapping[str, Any] | None = None,
                 summary: Mapping[str, str] | None = None) -> str:
    """The HTML report of a fitted model evaluated on ``X`` (and ``y`` when given).

    Parameters
    ----------
    model : fitted estimator, Pipeline or Formula
        A :class:`~problin.Formula` is reported in its design's columns: its estimator
        on the design of ``X`` (the raw columns), ``y`` read from ``X`` if not given.
    X : DataFrame, ndarray or scipy.sparse matrix
    y : array-like, optional
        Targets: scores, ROC, calibration and confusion matrix need them.
    feature_names : list of str, optional
    bundle : problin.io.ModelFile, optional
        Metadata to describe (target, classes, encoding, version).
    features : list of str, optional
        Up to two features for the decision-region and uncertainty plots (default:
        continuous features, see :func:`choose_features`).
    title, source : str, optional
        Page title and the data's name.
    progress : callable, optional
        Called once per finished section (for a progress bar); see ``n_steps``.
    cv : int, float or None, default=5
        How the out-of-sample scores are made: an int, that many folds of
        cross-validation on ``(X, y)`` (the model refitted on each training part); a
        float in (0, 1), one refit holding out that fraction of the rows; None or 0,
        none (in-sample scores only).
    fit_arguments : dict of array-like, optional
        Per-row arguments of the model's ``fit`` (a GLM regressor's ``offset``,
        ``exposure``, ``trials``), one value per row of ``X``: the refits take them
        all, the predictions the offset and the exposure.
    summary : dict, optional
        ``summary()``'s ``ci`` and ``pvalues`` for the parameter table (a GLM's
        ``{"ci": "profile", "pvalues": "lr"}``): refitted on ``X, y``, which must then be
        the training rows.

    Returns
    -------
    str
        A self-contained HTML page.
    """
    step = progress or (lambda: None)
    described, notes = model, list[str]()
    if isinstance(model, Formula):  # the report works in the formula's design columns
        model, X, y, notes = _formula_design(model, X, y)
        feature_names = list(X.columns)
    encoding = getattr(model, ENCODING_ATTRIBUTE, None)
    if encoding is not None and hasattr(X, "columns"):
        # A model fitted on a DataFrame with text or category columns encodes them
        # itself; the report works in its features (the indicators, named), read as
        # they are by a copy of the model without the encoding.
        X = apply_columns(X, encoding["columns"], "X")[0]
        model = copy.copy(model)
        del model.__dict__[ENCODING_ATTRIBUTE]
    est = final_estimator(model)
    names = _feature_names(model, X, feature_names)
    fitted = getattr(model, "feature_names_in_", None)
    if fitted is not None and not sp.issparse(X) and not hasattr(X, "columns") \
            and np.shape(X)[1:] == (len(fitted),):
        X = pd.DataFrame(X, columns=fitted)  # as the model was fitted
    sparse = sp.issparse(X)
    dense = None if sparse else np.asarray(X, dtype=np.float64)
    classifier = is_classifier(est)
    far, far_note = _far_rows(X if sparse else dense, names, classifier)
    arguments = {k: np.asarray(v, dtype=np.float64) for k, v in (fit_arguments or {}).items()}
    if not classifier:
        pred = np.asarray(model.predict(X, **{k: v for k, v in arguments.items()
                                              if k in PREDICT_ARGUMENTS}))
        _require_finite(est, pred if far is None else pred[~far], "predictions", None)
    step()
    d = X.shape[1]
    meta = describe_model(described, bundle, [(
        "data", f"{source or 'given arrays'}: {X.shape[0]} rows, {d} feature{'s' * (d != 1)}"
        + ("" if y is not None else " (no target column: no scores)"))], fit_attributes=False)
    tables: list[tuple[str, pd.DataFrame, str]] = []
    figures: list[FigureEntry] = []
    notes += [] if far_note is None else [far_note]
    classes = list(est.classes_) if classifier else None
    if y is not None:
        y = np.asarray(y)
        if classes is not None and not np.isin(y, np.asarray(classes)).all():
            notes.append("Some target values are not among the model's classes: scores skipped.")
            y = None
        elif not classifier and far is not None and far.all():
            y = None
    if y is not None:
        entry, diagnostics = _evaluate(model, X, y, far, classes, cv, notes, arguments)
        tables.append(entry)
        figures += diagnostics
    step()
    params, caption = _parameters(model, X, y, names, summary, arguments)
    cols, y_plot = _plot_data(model, X, dense, y, far, names)
    chosen = choose_features(model, cols, names, features) if cols is not None else []
    if cols is not None and not chosen:
        notes.append("No continuous feature to draw the model over (only indicators or "
                     "constants): name two with features=.")
    figures += model_figures(model, cols, y_plot, chosen, classifier, names, notes, params)
    step()
    tables.insert(0, ("Parameters", params, caption))
    step()
    if sparse:
        notes.append("Sparse data: decision-region and uncertainty plots are not drawn.")
    figures = sorted((f for f in figures if f[1] is not None), key=lambda f: _ORDER.index(f[0]))
    family = fitted_family(est)
    stats = model_statistics(est) if family is None else \
        glm_statistics(est, family.distribution.name, family.link_function.name)
    page = render_page(title or f"problin report: {type(est).__name__}", meta, tables,
                       figures, notes, stats=stats)
    step()
    return page


build_report.n_steps = 5  # type: ignore[attr-defined]  # sections, for the CLI's progress bar


def _parameters(model: Any, X: Any, y: Any, names: list[str],
                summary: Mapping[str, str] | None, arguments: Mapping[str, Any]
                ) -> tuple[pd.DataFrame, str]:
    """The parameter table and its caption; with ``summary`` (``ci``, ``pvalues``) its
    intervals and p-values refitted on ``X, y`` (a scaler's output for a Pipeline)."""
    if not summary:
        return parameter_table(model, names), "As fitted, on the training data."
    steps = getattr(model, "steps", None)
    rows = steps[0][1].transform(X) if steps else X
    table = parameter_table(model, names, **summary, X=rows, y=y, **arguments)
    notes = [str(table.attrs[k]) for k in ("ci_note", "pvalue_note") if k in table.attrs]
    return table, " ".join(["As fitted; refitted on these rows, which are taken to be the "
                            "training rows.", *notes])


def write_report(path: str | os.PathLike[str], model: Any, X: Any, y: Any = None,
                 **kwargs: Any) -> str | os.PathLike[str]:
    """Write :func:`build_report` to ``path`` (UTF-8)."""
    page = build_report(model, X, y, **kwargs)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(page)
    return path
