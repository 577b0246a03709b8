"""Tables of fitted parameters, shared by ``problin fit``/``summary`` and the HTML report."""
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["final_estimator", "parameter_table", "format_table", "describe_model"]


def final_estimator(model: Any) -> Any:
    """The last step of a Pipeline, or the model itself."""
    return model[-1] if hasattr(model, "steps") else model


def _names(est: Any, n: int, feature_names: Sequence[str] | None) -> list[str]:
    names = getattr(est, "feature_names_in_", None)
    if names is not None and len(names) == n:
        return [str(v) for v in names]
    if feature_names is not None and len(feature_names) == n:
        return list(feature_names)
    return [f"x{j}" for j in range(n)]


def parameter_table(model: Any, feature_names: Sequence[str] | None = None,
                    **summary: Any) -> pd.DataFrame:
    """The model's parameters as a DataFrame indexed by parameter name.

    ``summary()`` for models that have it (GLMs: coefficients with standard errors, z,
    p-values and intervals); otherwise the fitted parameters: linear coefficients and
    intercepts (one column per class or output; Bayesian models add the posterior
    standard deviation), class priors and means (generative classifiers), or log
    feature probabilities (Bernoulli/multinomial naive Bayes).
    """
    est = final_estimator(model)
    table = _summary_or_none(est, summary)
    if table is not None:
        if getattr(est, "feature_names_in_", None) is None and feature_names is not None \
                and len(feature_names) == getattr(est, "n_features_in_", -1):
            # fitted on arrays (sparse data, or after a scaler): x0, x1, ... by their names
            renames = {f"x{j}": str(n) for j, n in enumerate(feature_names)}
            table = table.rename(index=renames, level=table.index.nlevels - 1
                                 if table.index.nlevels > 1 else None)
        return table
    classes = [str(c) for c in getattr(est, "classes_", [])]
    if hasattr(est, "coef_"):
        coef = np.atleast_2d(np.asarray(est.coef_, dtype=np.float64))
        intercept = np.broadcast_to(np.asarray(est.intercept_, dtype=np.float64),
                                    (coef.shape[0],))
        names = ["intercept"] + _names(est, coef.shape[1], feature_names)
        values = np.column_stack([intercept, coef]).T
        cols = classes if len(classes) == coef.shape[0] else (
            ["coef"] if coef.shape[0] == 1 else [f"output {k}" for k in range(coef.shape[0])])
        table = pd.DataFrame(values, index=pd.Index(names, name="parameter"), columns=cols)
        cov = getattr(est, "posterior_cov_", None)
        if cov is not None and coef.shape[0] == 1 and np.shape(cov) == (len(names),) * 2:
            table["posterior_std"] = np.sqrt(np.clip(np.diag(cov), 0.0, None))
        return table
    if hasattr(est, "means_"):
        means = np.asarray(est.means_, dtype=np.float64)
        rows = np.vstack([np.asarray(est.priors_, dtype=np.float64)[None, :], means.T])
        index = ["prior"] + [f"mean {n}" for n in _names(est, means.shape[1], feature_names)]
        return pd.DataFrame(rows, index=pd.Index(index, name="parameter"), columns=classes)
    if hasattr(est, "feature_log_prob_"):
        logp = np.asarray(est.feature_log_prob_, dtype=np.float64)
        rows = np.vstack([np.asarray(est.class_log_prior_)[None, :], logp.T])
        index = ["log prior"] + [f"log p({n})" for n in
                                 _names(est, logp.shape[1], feature_names)]
        return pd.DataFrame(rows, index=pd.Index(index, name="parameter"), columns=classes)
    return pd.DataFrame()


def _summary_or_none(est: Any, summary: dict[str, Any]) -> pd.DataFrame | None:
    """``est.summary(**summary)``, or None where the model has none or refuses one for
    this fit (``LinearRegression`` with ``alpha > 0`` or several outputs: a
    ``ValueError``); the refits ``summary`` asks for (``ci``, ``pvalues``) raise theirs."""
    if not hasattr(est, "summary"):
        return None
    try:
        table: pd.DataFrame = est.summary(**summary)
    except ValueError:
        if summary:
            raise
        return None
    return table


def format_table(table: pd.DataFrame, digits: int = 6) -> str:
    """An aligned plain-text rendering of a DataFrame (``-`` for missing values)."""
    if table.empty:
        return "(no parameters to show)"
    return table.to_string(na_rep="-", float_format=lambda v: f"{v:.{digits}g}")


def describe_model(model: Any, bundle: Any = None, extra: Iterable[tuple[str, Any]] = (),
                   fit_attributes: bool = True) -> list[str]:
    """Lines describing a model: its class, non-default parameters, target and data
    encoding; ``extra`` (label, value) pairs follow the model line; with
    ``fit_attributes``, the iterations, convergence and log evidence (the HTML report
    shows these among its fit statistics instead). Labels are aligned."""
    est = final_estimator(model)
    params = est.get_params(deep=False)
    defaults = type(est)().get_params(deep=False) if _default_constructible(est) else {}
    changed = {k: v for k, v in params.items() if k not in defaults or
               not _same(defaults[k], v)}
    steps = " -> ".join(type(s).__name__ for _, s in model.steps) if hasattr(model, "steps") \
        else type(model).__name__
    text = ", ".join(f"{k}={v!r}" for k, v in changed.items())
    rows = [("model", f"{steps}({text})"), *extra]
    if bundle is not None:
        if bundle.target is not None:
            rows.append(("target", bundle.target))
        if bundle.classes is not None:
            rows.append(("classes", ", ".join(map(str, bundle.classes))))
        if bundle.feature_names is not None:
            more = len(bundle.feature_names) - 12
            rows.append(("features", f"{len(bundle.feature_names)} ("
                         f"{', '.join(bundle.feature_names[:12])}"
                         f"{f', ... {more} more' if more > 0 else ''})"))
        enc = bundle.encoding or {}
        cats = [c["name"] for c in enc.get("columns", []) if c.get("kind") == "categorical"]
        if enc:
            kinds: dict[Any, str] = {"table": "CSV/Parquet columns",
                                     "libsvm": "LibSVM (sparse)", "npz": ".npz arrays"}
            rows.append(("encoding", kinds.get(enc.get("format"), str(enc.get("format")))
                         + (f"; one-hot encoded: {', '.join(cats)}" if cats else "")))
        rows.append(("problin", bundle.problin_version))
    for attr, label in (("n_iter_", "iterations"), ("converged_", "converged"),
                        ("log_evidence_", "log evidence")):
        if fit_attributes and hasattr(est, attr):
            rows.append((label, getattr(est, attr)))
    width = max(len(label) for label, _ in rows) + 2
    return [f"{label + ':':<{width}}{value}" for label, value in rows]


def _default_constructible(est: Any) -> bool:
    try:
        type(est)()
    except TypeError:
        return False
    return True


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(np.all(a == b)) and type(a) is type(b)
    except (TypeError, ValueError):
        return a is b
