"""Cross-validated comparison of problin models (the engine of ``problin compare``)."""
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from .exceptions import ProblinWarning
from .glm import LogisticRegression, ProbitRegression

__all__ = ["CLASSIFIERS", "compare_classifiers"]

# Short lowercase names, as the command line spells them.
CLASSIFIERS = {
    "logistic": lambda: LogisticRegression(),
    "logistic-l2": lambda: LogisticRegression(alpha=1.0),
    "probit": lambda: ProbitRegression(),
    "probit-l2": lambda: ProbitRegression(alpha=1.0),
}


def _log_loss(model, X, y):
    """Mean negative log-probability of the true class, from ``predict_log_proba``."""
    log_p = model.predict_log_proba(X)
    cols = np.searchsorted(model.classes_, y)
    return -float(np.mean(log_p[np.arange(len(y)), cols]))


def compare_classifiers(X, y, models=None, *, cv=5, random_state=0, progress=None):
    """Cross-validate classifiers on standardised features.

    Returns a DataFrame with one row per model: mean accuracy and log-loss
    over the folds, mean fit time in milliseconds, and the problin warnings
    raised during the fits (e.g. separation), sorted by log-loss.
    """
    models = list(CLASSIFIERS) if models is None else list(models)
    unknown = [m for m in models if m not in CLASSIFIERS]
    if unknown:
        raise ValueError(f"unknown models {unknown}; choose from {sorted(CLASSIFIERS)}")
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    folds = list(StratifiedKFold(cv, shuffle=True, random_state=random_state).split(X, y))
    rows = []
    for name in models:
        acc, loss, times, notes = [], [], [], set()
        for train, test in folds:
            model = make_pipeline(StandardScaler(), CLASSIFIERS[name]())
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ProblinWarning)
                start = time.perf_counter()
                model.fit(X[train], y[train])
                times.append(time.perf_counter() - start)
            notes.update(w.category.__name__ for w in caught
                         if issubclass(w.category, ProblinWarning))
            acc.append(float(np.mean(model.predict(X[test]) == y[test])))
            loss.append(_log_loss(model, X[test], y[test]))
            if progress is not None:
                progress()
        rows.append({"model": name, "accuracy": np.mean(acc), "log_loss": np.mean(loss),
                     "fit_ms": 1e3 * np.mean(times), "warnings": ", ".join(sorted(notes))})
    return pd.DataFrame(rows).sort_values("log_loss", kind="stable").reset_index(drop=True)
