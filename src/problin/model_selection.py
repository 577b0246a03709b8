"""Cross-validated comparison of problin models (the engine of ``problin compare``)."""
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler, StandardScaler

from .bayesian import BayesianLogisticRegression
from .discriminant import (
    FisherDiscriminant,
    LeastSquaresClassifier,
    LinearDiscriminantAnalysis,
    Perceptron,
    QuadraticDiscriminantAnalysis,
)
from .exceptions import ProblinWarning, warn_at_caller
from . import glm
from .glm import LogisticRegression, OrdinalRegression, ProbitRegression
from .linear_model import BayesianLinearRegression, LinearRegression, LMSRegressor
from .metrics import brier_score, class_columns, expected_calibration_error
from .naive_bayes import BernoulliNB, GaussianNB, MultinomialNB

__all__ = ["CLASSIFIERS", "ORDERED", "compare_classifiers", "applicable_classifiers",
           "REGRESSORS",
           "GLM_REGRESSORS", "compare_regressors",
           "is_continuous_target"]

# Short lowercase names, as the command line spells them.
CLASSIFIERS = {
    "logistic": lambda: LogisticRegression(),
    "logistic-l2": lambda: LogisticRegression(alpha=1.0),
    "probit": lambda: ProbitRegression(),
    "probit-l2": lambda: ProbitRegression(alpha=1.0),
    # cumulative logit (proportional odds) over the classes in sorted order; --link probit...
    "ordinal": lambda: OrdinalRegression(),
    # Laplace posterior, alpha by the evidence framework (MacKay); moderated predictive
    "bayes-logistic": lambda: BayesianLogisticRegression(alpha=None),
    "fisher": lambda: FisherDiscriminant(),
    "least-squares": lambda: LeastSquaresClassifier(),
    "perceptron": lambda: Perceptron(random_state=0),
    "lda": lambda: LinearDiscriminantAnalysis(),
    "qda": lambda: QuadraticDiscriminantAnalysis(reg_covar=1e-6),
    "gaussian-nb": lambda: GaussianNB(),
    "bernoulli-nb": lambda: BernoulliNB(),  # present = above the (standardised) mean
    # Counts must be non-negative: rescale the standardised features to [0, 1].
    "multinomial-nb": lambda: make_pipeline(MinMaxScaler(clip=True), MultinomialNB()),
}

#: The classifiers of ordered classes (in the order of their sorted labels): three or more.
ORDERED = frozenset({"ordinal"})


def _log_loss(model: Any, X: Any, y: np.ndarray) -> float:
    """Mean negative log-probability of the true class, from ``predict_log_proba``;
    NaN for a model that gives no probabilities (least squares, the perceptron)."""
    if not hasattr(model, "predict_log_proba"):
        return np.nan
    log_p = model.predict_log_proba(X)
    cols = class_columns(y, model.classes_)
    return -float(np.mean(log_p[np.arange(len(y)), cols]))


def _timed_fit(model: Any, X: Any, y: Any, times: list[float], notes: set[str]) -> None:
    """Fit ``model``, appending its wall time to ``times`` and the names of the problin
    warnings it raised to the set ``notes``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ProblinWarning)
        start = time.perf_counter()
        model.fit(X, y)
        times.append(time.perf_counter() - start)
    notes.update(w.category.__name__ for w in caught if issubclass(w.category, ProblinWarning))


def applicable_classifiers(y: ArrayLike,
                           models: Sequence[str] | None = None) -> tuple[list[str], list[str]]:
    """Split classifier names into those that can fit target ``y`` and those that cannot:
    binary-only models (scikit-learn tag ``multi_class`` False, e.g. probit) for K > 2
    classes, models of ordered classes (:data:`ORDERED`) for K = 2 (where they are the
    binary logistic or probit model). Returns ``(applicable, left_out)``."""
    models = list(CLASSIFIERS) if models is None else list(models)
    if np.unique(np.asarray(y)).size <= 2:
        return [m for m in models if m not in ORDERED], [m for m in models if m in ORDERED]

    def multiclass(name: str) -> bool:
        model = CLASSIFIERS[name]()
        model = model[-1] if hasattr(model, "steps") else model
        return model.__sklearn_tags__().classifier_tags.multi_class

    ok = [m for m in models if multiclass(m)]
    return ok, [m for m in models if m not in ok]


def _with_scores(row: dict[str, Any], scores: dict[str, list[float]],
                 spread: bool) -> dict[str, Any]:
    """``row`` with the mean of each score over the folds (and ``<score>_sd``, their
    standard deviation with ``ddof=1``, if ``spread``)."""
    for name, values in scores.items():
        row[name] = np.mean(values)
        if spread:
            row[f"{name}_sd"] = np.std(values, ddof=1) if len(values) > 1 else np.nan
    return row


def compare_classifiers(X: Any, y: ArrayLike, models: Sequence[str] | None = None, *, cv: int = 5,
                        random_state: int | None = 0,
                        progress: Callable[[], Any] | None = None,
                        spread: bool = False) -> pd.DataFrame:
    """Cross-validate classifiers on standardised features.

    Returns a DataFrame with one row per model: mean accuracy, log-loss, Brier
    score (:func:`problin.metrics.brier_score`, scikit-learn's) and expected
    calibration error (top-class confidence, 10 bins) over the folds (with
    ``spread``, each followed by ``<score>_sd``, its standard deviation over the
    folds), mean fit time in milliseconds, and the problin warnings raised
    during the fits (e.g. separation), sorted by log-loss (NaN, for models
    without probabilities, last). ``random_state`` fixes the random assignment of rows to folds.
    ``models=None``: every classifier that can fit ``y`` (:func:`applicable_classifiers`).
    """
    if models is None:  # every model that can fit y (binary-only ones not for K > 2)
        models = applicable_classifiers(y)[0]
    models = list(models)
    unknown = [m for m in models if m not in CLASSIFIERS]
    if unknown:
        raise ValueError(f"unknown models {unknown}; choose from {sorted(CLASSIFIERS)}")
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    labels, counts = np.unique(y, return_counts=True)
    if np.any(counts < 2):  # held out once, it is never trained on: no column to score it
        raise ValueError(f"classes {labels[counts < 2].tolist()[:10]} have a single row: "
                         "cross-validation needs at least two rows of every class (one to "
                         "train on, one to test); drop those rows or merge the classes")
    if np.any(counts < cv):  # (scikit-learn's own warning names neither class nor cure)
        warn_at_caller(f"classes {labels[counts < cv].tolist()[:10]} have fewer rows than the "
                       f"{cv} folds: some test folds hold none of them; use fewer folds for "
                       "scores of every class in every fold", ProblinWarning)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "The least populated class", UserWarning)
        folds = list(StratifiedKFold(cv, shuffle=True, random_state=random_state).split(X, y))
    rows = []
    for name in models:
        times: list[float] = []
        notes: set[str] = set()
        acc, loss, brier, ece = [], [], [], []
        for train, test in folds:
            model = make_pipeline(StandardScaler(), CLASSIFIERS[name]())
            _timed_fit(model, X[train], y[train], times, notes)
            acc.append(float(np.mean(model.predict(X[test]) == y[test])))
            loss.append(_log_loss(model, X[test], y[test]))
            proba = model.predict_proba(X[test]) if hasattr(model, "predict_proba") else None
            brier.append(np.nan if proba is None else
                         brier_score(proba, y[test], model.classes_))
            ece.append(np.nan if proba is None else
                       expected_calibration_error(proba, y[test], model.classes_))
            if progress is not None:
                progress()
        rows.append({**_with_scores({"model": name}, {"accuracy": acc, "log_loss": loss,
                                                       "brier": brier, "ece": ece}, spread),
                     "fit_ms": 1e3 * np.mean(times), "warnings": ", ".join(sorted(notes))})
    return pd.DataFrame(rows).sort_values("log_loss", kind="stable").reset_index(drop=True)


# ------------------------------------------------------------------ regression
REGRESSORS = {
    "linear": lambda: LinearRegression(),
    "ridge": lambda: LinearRegression(alpha=1.0),
    "lasso": lambda: LinearRegression(alpha=1.0, q=1.0),
    "bayes-linear": lambda: BayesianLinearRegression(),
    "lms": lambda: LMSRegressor(random_state=0),
}
# GLM regressors of counts, rates, sizes and proportions (-p link=..., -p power=...;
# ``glm``: any family by -p family=...; NB's alpha by maximum likelihood). Apart from
# REGRESSORS, which take any real target and which ``problin compare`` runs by default:
# these need theirs in the family's range, and are compared when named.
GLM_REGRESSORS = {
    "poisson": lambda: glm.PoissonRegression(),
    "negative-binomial": lambda: glm.NegativeBinomialRegression(),
    "gamma": lambda: glm.GammaRegression(),
    "inverse-gaussian": lambda: glm.InverseGaussianRegression(),
    "tweedie": lambda: glm.TweedieRegression(),
    "binomial": lambda: glm.BinomialRegression(),
    "glm": lambda: glm.GLM(),
}


def is_continuous_target(y: np.ndarray) -> bool:
    """Whether ``y`` is a regression target: floats with a value that is not a whole
    number (which scikit-learn calls continuous, not class labels), or with more than 20
    distinct values. Integers and whole-number floats with few values are class labels."""
    y = np.asarray(y)
    if y.dtype.kind != "f":
        return False
    values = np.unique(y[np.isfinite(y)])
    return values.size > 20 or bool(np.any(values != np.round(values)))


def _predictive(model: Any, X_train: Any, y_train: np.ndarray,
                X: Any) -> tuple[np.ndarray, np.ndarray]:
    """Predictive mean and standard deviation: the model's own (``return_std``) or,
    for models without one, Gaussian with the maximum-likelihood noise of the fit."""
    if hasattr(model[-1], "sample_posterior"):  # predict(X, return_std=True)
        return model.predict(X, return_std=True)
    noise = np.sqrt(np.mean((model.predict(X_train) - y_train) ** 2))
    return model.predict(X), np.full(len(X), max(noise, np.finfo(np.float64).tiny))


def _glm_log_density(model: Any, X: Any, y: np.ndarray) -> np.ndarray:
    """Per-row log-likelihood of ``y`` under a fitted GLM regressor (the last step of
    ``model``): its family at the fitted mean, dispersion ``scale_`` (and, for the
    negative binomial, ``alpha_``), with every normalising constant."""
    est = model[-1]
    family = est.get_family()  # the fitted family (NB: at alpha_)
    mu = np.asarray(model.predict(X), dtype=np.float64)
    return np.asarray(family.distribution.log_likelihood(y, mu, 1.0, float(est.scale_)))


def _full_fit_aic(name: str, X: np.ndarray, y: np.ndarray) -> float:
    """AIC of the model fitted on every row (NaN where the model has none: a penalised
    or Bayesian fit)."""
    model = make_pipeline(StandardScaler(), _REGISTRY[name]())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ProblinWarning)
        model.fit(X, y)
    aic = getattr(model[-1], "aic_", np.nan)
    return float(aic) if isinstance(aic, (int, float, np.floating)) else np.nan


def compare_regressors(X: Any, y: ArrayLike, models: Sequence[str] | None = None, *, cv: int = 5,
                       random_state: int | None = 0,
                       progress: Callable[[], Any] | None = None,
                       spread: bool = False) -> pd.DataFrame:
    """Cross-validate regressors on standardised features (shuffled K-fold).

    Returns a DataFrame with one row per model: root mean squared error, mean
    negative log predictive density ``nlpd`` (Gaussian; a GLM regressor's own
    distribution at its fitted mean and dispersion: the Poisson or negative binomial
    probabilities of counts, the Gamma density, ...), R^2 over the folds (with
    ``spread``, each followed by ``<score>_sd``, its standard deviation over the
    folds), mean fit time in milliseconds and the problin warnings raised, sorted
    by nlpd. ``random_state`` fixes the random assignment of rows to folds.

    When a GLM regressor (:data:`GLM_REGRESSORS`) is among ``models``, two more
    columns: ``d2``, the held-out fraction of deviance explained in the model's own
    family (its ``score``; R^2 for the Gaussian models), and ``aic`` of the model
    fitted on every row (NaN where none is defined: penalised and Bayesian fits).
    The nlpd of counts under a Gaussian model is a density, not a probability: it
    ranks the Gaussian models among themselves, not against the count models.
    """
    models = list(REGRESSORS) if models is None else list(models)
    unknown = [m for m in models if m not in _REGISTRY]
    if unknown:
        raise ValueError(f"unknown models {unknown}; choose from {sorted(_REGISTRY)}")
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    folds = list(KFold(cv, shuffle=True, random_state=random_state).split(X))
    glm = any(name in GLM_REGRESSORS for name in models)
    rows = []
    for name in models:
        times: list[float] = []
        notes: set[str] = set()
        scores: dict[str, list[float]] = {"rmse": [], "nlpd": [], "r2": []}
        if glm:
            scores["d2"] = []
        for train, test in folds:
            model = make_pipeline(StandardScaler(), _REGISTRY[name]())
            _timed_fit(model, X[train], y[train], times, notes)
            if name in GLM_REGRESSORS:
                mean = np.asarray(model.predict(X[test]), dtype=np.float64)
                nlpd = -float(np.mean(_glm_log_density(model, X[test], y[test])))
            else:
                mean, std = _predictive(model, X[train], y[train], X[test])
                nlpd = float(np.mean(0.5 * np.log(2 * np.pi * std ** 2)
                                     + 0.5 * ((y[test] - mean) / std) ** 2))
            resid = y[test] - mean
            scores["rmse"].append(float(np.sqrt(np.mean(resid ** 2))))
            scores["nlpd"].append(nlpd)
            r2 = 1.0 - float(np.sum(resid ** 2) / np.sum((y[test] - y[test].mean()) ** 2))
            scores["r2"].append(r2)
            if glm:
                scores["d2"].append(float(model.score(X[test], y[test]))
                                    if name in GLM_REGRESSORS else r2)
            if progress is not None:
                progress()
        row = _with_scores({"model": name}, scores, spread)
        if glm:
            row["aic"] = _full_fit_aic(name, X, y)
        rows.append({**row, "fit_ms": 1e3 * np.mean(times),
                     "warnings": ", ".join(sorted(notes))})
    return pd.DataFrame(rows).sort_values("nlpd", kind="stable").reset_index(drop=True)


_REGISTRY = {**REGRESSORS, **GLM_REGRESSORS}
