"""Out-of-sample predictions for the report's scores and diagnostic plots: the model
refitted by k-fold cross-validation (or on one held-out split) on the report's rows.

A model's scores on the rows it was fitted on are optimistic; the report therefore
scores the same model specification on rows each refit did not see, and marks the
scores of the fitted model itself as in-sample.
"""
import warnings
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import KFold, StratifiedKFold, train_test_split

from .tables import final_estimator

__all__ = ["Predictions", "in_sample", "out_of_sample", "describe", "PREDICT_ARGUMENTS"]

# Per-row arguments of a GLM regressor's fit that its predictions take too; the others
# (trials) are the fit's only.
PREDICT_ARGUMENTS = ("offset", "exposure")
RowArguments = Mapping[str, np.ndarray]

# Exceptions of a refit that mean "this specification cannot be fitted on that part of
# the rows" (one class left, too few rows, a singular system): reported, not raised.
_REFIT_ERRORS = (ValueError, np.linalg.LinAlgError, ArithmeticError)


@dataclass(frozen=True)
class Predictions:
    """Predictions for the rows ``rows`` of the data: ``pred`` always; ``proba`` and
    ``log_proba`` (columns in the order of the model's classes) for classifiers that have
    them. ``label`` says how they were made (the scores table's row name)."""

    label: str
    rows: np.ndarray
    pred: np.ndarray
    proba: np.ndarray | None = None
    log_proba: np.ndarray | None = None


def describe(cv: int | float) -> str:
    """How ``cv`` evaluates, for headings: ``"5-fold cross-validation"``, ``"held-out 20 %"``."""
    return f"{cv}-fold cross-validation" if isinstance(cv, int) else \
        f"a held-out {cv:.0%} of the rows"


def in_sample(model: Any, X: Any, rows: np.ndarray,
              arguments: RowArguments | None = None) -> Predictions:
    """The fitted model's predictions for ``rows`` of ``X`` (``arguments``: per-row fit
    arguments of all of ``X``'s rows, such as a GLM's offset and exposure)."""
    Xr = X if len(rows) == X.shape[0] else _take(X, rows)
    return Predictions("in sample: the fitted model", rows,
                       *_predict(model, Xr, _predict_arguments(arguments, rows)))


def _rows_of(arguments: RowArguments | None, rows: np.ndarray) -> dict[str, np.ndarray]:
    return {k: np.asarray(v)[rows] for k, v in (arguments or {}).items()}


def _predict_arguments(arguments: RowArguments | None, rows: np.ndarray
                       ) -> dict[str, np.ndarray]:
    """The arguments of ``predict`` among the fit's, for ``rows``."""
    return {k: v for k, v in _rows_of(arguments, rows).items() if k in PREDICT_ARGUMENTS}


def fit_keywords(model: Any, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` as keywords of ``model.fit`` (a Pipeline's: ``<last step>__name``)."""
    steps = getattr(model, "steps", None)
    if not steps:
        return dict(arguments)
    return {f"{steps[-1][0]}__{k}": v for k, v in arguments.items()}


def out_of_sample(model: Any, X: Any, y: np.ndarray, rows: np.ndarray, cv: int | float,
                  classifier: bool, random_state: int = 0,
                  arguments: RowArguments | None = None
                  ) -> tuple[Predictions | None, list[str]]:
    """Predictions for ``rows`` of ``(X, y)`` by refits of ``clone(model)`` that did not
    see them: ``cv``-fold cross-validation (stratified for a classifier) or, for a float,
    one split holding out that fraction. Returns ``(None, [why])`` when the rows are too
    few or a refit fails; notes list the warnings the refits raised. ``arguments``:
    per-row fit arguments (a GLM's offset, exposure, trials), split with the rows."""
    splits, why = _splits(y[rows], cv, classifier, random_state)
    if splits is None:
        return None, [why]
    est = final_estimator(model)
    classes = getattr(est, "classes_", None)
    parts: list[tuple[np.ndarray, Any, Any, Any]] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            for train, test in splits:
                fold = _quiet(clone(model))
                fold.fit(_take(X, rows[train]), y[rows[train]],
                         **fit_keywords(fold, _rows_of(arguments, rows[train])))
                pred, proba, logp = _predict(fold, _take(X, rows[test]),
                                             _predict_arguments(arguments, rows[test]))
                parts.append((rows[test], pred, _align(proba, fold, classes),
                              _align(logp, fold, classes, fill=-np.inf)))
        except _REFIT_ERRORS as exc:
            why = (f"Out-of-sample scores are missing: refitting {type(est).__name__} on "
                   f"part of the rows failed ({exc}).")
            return None, [why]
    order = np.concatenate([p[0] for p in parts])
    joined = [None if parts[0][i] is None else np.concatenate([p[i] for p in parts])
              for i in (1, 2, 3)]
    assert joined[0] is not None  # every model predicts
    # (k-fold with k = min(cv, the rarest class's rows): the label says the k used)
    how = describe(len(splits) if isinstance(cv, int) else cv)
    preds = Predictions(f"out of sample: {how}", order, joined[0], *joined[1:])
    return preds, _warning_notes(caught, len(parts))


def _splits(y: np.ndarray, cv: int | float, classifier: bool,
            seed: int) -> tuple[list[tuple[np.ndarray, np.ndarray]] | None, str]:
    n = len(y)
    idx = np.arange(n)
    smallest = int(np.unique(y, return_counts=True)[1].min()) if classifier and n else n
    if isinstance(cv, float):
        if not 0 < cv < 1:
            raise ValueError(f"a held-out fraction must be in (0, 1), got {cv}")
        if smallest < 2 or n * cv < 2:
            return None, "Too few rows to hold some out: the scores are in sample only."
        train, test = train_test_split(idx, test_size=cv, random_state=seed,
                                       stratify=y if classifier else None)
        return [(train, test)], ""
    k = min(cv, smallest)
    if k < 2:
        return None, ("Too few rows" + (" of the rarest class" if classifier else "")
                      + " to cross-validate: the scores are in sample only.")
    folds = (StratifiedKFold if classifier else KFold)(k, shuffle=True, random_state=seed)
    return list(folds.split(idx, y)), ""


def _quiet(model: Any) -> Any:
    """No progress bars from the refits (MCMC's)."""
    if hasattr(model, "steps"):
        name, step = model.steps[-1]
        if "progress" in step.get_params(deep=False):
            model.set_params(**{f"{name}__progress": False})
    elif "progress" in model.get_params(deep=False):
        model.set_params(progress=False)
    return model


def _take(X: Any, rows: np.ndarray) -> Any:
    """Rows of a DataFrame, array or sparse matrix."""
    return X.iloc[rows] if hasattr(X, "iloc") else X[rows]


def _predict(model: Any, X: Any, arguments: Mapping[str, np.ndarray] | None = None
             ) -> tuple[np.ndarray, Any, Any]:
    pred = np.asarray(model.predict(X, **(arguments or {})))
    proba = model.predict_proba(X) if hasattr(model, "predict_proba") else None
    logp = None
    if proba is not None and hasattr(model, "predict_log_proba"):
        with np.errstate(over="ignore", divide="ignore"):  # rows far from the data
            logp = model.predict_log_proba(X)
    return pred, proba, logp


def _align(values: Any, fold: Any, classes: Any, fill: float = 0.0) -> Any:
    """A fold's per-class columns in the order of the full model's classes (a class the
    fold did not see gets ``fill``)."""
    if values is None or classes is None:
        return values
    seen = list(final_estimator(fold).classes_)
    if seen == list(classes):
        return np.asarray(values, dtype=np.float64)
    out = np.full((len(values), len(classes)), fill)
    for k, c in enumerate(seen):
        out[:, list(classes).index(c)] = np.asarray(values)[:, k]
    return out


def _warning_notes(caught: list[warnings.WarningMessage], refits: int) -> list[str]:
    """One note per kind of warning the refits raised, with how many there were."""
    kinds = Counter(w.category.__name__ for w in caught)
    first: dict[str, str] = {}
    for w in caught:
        first.setdefault(w.category.__name__, str(w.message))
    return [f"The {refits} out-of-sample refit{'s' * (refits != 1)} warned "
            f"{count}× {name}: {_shorten(first[name])}" for name, count in kinds.items()]


def _shorten(text: str, most: int = 200) -> str:
    return text if len(text) <= most else text[:most - 1].rstrip() + "…"
