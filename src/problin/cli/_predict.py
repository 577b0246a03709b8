"""``problin predict``, ``problin summary`` and ``problin report``: using a saved model."""
import contextlib
import inspect
import os
from collections.abc import Iterator
from typing import Any

import click
import numpy as np
import pandas as pd
from sklearn.base import is_classifier

from .._optional import import_optional
from ..exceptions import MissingDependencyError
from ..glm import NegativeBinomialRegression
from ..formula import Formula
from ..glm.regression import GLMRegressor
from ..io import ModelFileError, read_model_file
from ..io.readers import read_data
from ..report.tables import describe_model, final_estimator, format_table, parameter_table
from . import _formula
from ._common import command_errors, debug_option, echo, echo_warnings, progress
from ._fit import scaling_note
from ._glm_columns import EXTRA_KEY, read_with_columns, saved_columns
from ._options import data_command, out_path
from ._refit_options import RefitRequest, refit_options
from ._rows import ROW, kept_rows
from ._suggest import did_you_mean

__all__ = ["predict", "summary", "report"]


def _predictions(model: Any, X: Any, proba: bool,
                 values: dict[str, np.ndarray] | None = None) -> pd.DataFrame:
    """A DataFrame of predictions (and probabilities or predictive std); ``values``: the
    rows' offset and exposure, for a GLM regressor fitted with them."""
    est = final_estimator(model)
    if is_classifier(est):
        frame = pd.DataFrame({"predicted": model.predict(X)})
        if proba:
            if not hasattr(model, "predict_proba"):
                raise click.UsageError(f"{type(est).__name__} gives no probabilities; "
                                       "drop --proba")
            p = model.predict_proba(X)
            for k, c in enumerate(est.classes_):
                frame[f"p_{c}"] = p[:, k]
        return frame
    if proba:
        if "return_std" not in inspect.signature(est.predict).parameters:
            raise click.UsageError(f"{type(est).__name__} gives no predictive distribution; "
                                   "drop --proba")
        mean, std = model.predict(X, return_std=True)
        return pd.DataFrame({"predicted": mean, "std": std})
    return pd.DataFrame({"predicted": model.predict(X, **(values or {}))})


@contextlib.contextmanager
def _using(model_file: str) -> Iterator[None]:
    """Run code that uses a loaded model; a failure that is not about the data becomes a
    :class:`ModelFileError` naming the file, printed in one line by the command's error
    handling (the traceback, chained, with --debug).

    ``problin.load`` refuses state that cannot predict, but it does not run ``summary()``
    or the report (their cost is not one row's): an edited file may still lack what only
    they read, and the AttributeError would otherwise end the command in a traceback.
    ValueErrors (bad data: wrong width, an unseen level), OS errors (a closed pipe) and
    click's own errors pass through as they are."""
    try:
        yield
    except (ValueError, OSError, MemoryError, click.ClickException, MissingDependencyError):
        raise
    except Exception as exc:
        raise ModelFileError(f"{model_file}: the model fails ({type(exc).__name__}: {exc}); "
                             "the file may be damaged or edited") from exc


@click.command()
@click.argument("model_file", type=click.Path(exists=True, dir_okay=False))
@click.argument("data", type=click.Path(exists=True, dir_okay=False))
@click.option("--proba", is_flag=True, help="Add class probabilities (classifiers) or the "
              "predictive standard deviation (Bayesian regression).")
@click.option("--out", "-o", type=click.Path(dir_okay=False), default=None, callback=out_path,
              help="Write predictions here (.csv or .parquet) [default: CSV to stdout].")
@data_command
def predict(model_file: str, data: str, proba: bool, out: str | None, data_format: str | None,
            drop_missing: bool, header: bool | None, categorical: tuple[str, ...],
            n_features: int | None, debug: bool) -> None:
    """Predict DATA with a saved model; the target column, if present, is ignored.

    The data is encoded exactly as at fit time (same columns, same categories: an
    unseen category is an error). Output: a column 'predicted', with --proba one
    column p_<class> per class (or 'std' for Bayesian regression). With
    --drop-missing a first column 'row' gives each prediction's data row in DATA
    (1 = the first row after the header), so that the output aligns with the input.
    A GLM regressor fitted with --offset or --exposure reads the new rows' offset
    and exposure from the columns of the same names.

    \b
    Examples:
      problin predict sex.problin new.csv --proba
      problin predict sex.problin new.parquet --out predictions.csv
      problin predict sex.problin gaps.csv --drop-missing
    """
    bundle = read_model_file(model_file)
    rows: np.ndarray | None
    columns = saved_columns(bundle.extra)
    values: dict[str, np.ndarray] = {}
    if _formula.is_formula_model(bundle.encoding, bundle.model):  # raw columns, the formula encodes
        X, dropped, rows = _formula.formula_rows(bundle, data, data_format, header,
                                                 drop_missing, list(columns.values()))
        values = {k: X[c].to_numpy(dtype=np.float64) for k, c in columns.items()}
    elif columns:
        ds, values, rows = read_with_columns(
            data, columns, data_format=data_format, encoding=bundle.encoding,
            drop_missing=drop_missing, header=header, categorical=categorical,
            ignore_target=True)
        X, dropped = ds.X, ds.n_dropped
    else:
        ds = read_data(data, format=data_format, encoding=bundle.encoding,
                       drop_missing=drop_missing, header=header,
                       categorical=list(categorical), n_features=n_features,
                       ignore_target=True)  # (a file of rows to score: blank targets)
        X, dropped = ds.X, ds.n_dropped
        rows = kept_rows(data, data_format, bundle.encoding or {}, header, categorical,
                         X.shape[0], dropped) if drop_missing else None
    with echo_warnings(), _using(model_file):
        frame = _predictions(bundle.model, X, proba, values)
    if drop_missing:
        frame.insert(0, ROW, np.asarray(rows))
    if dropped:
        echo(f"{dropped} rows with missing values dropped", err=True)
    if out is None:
        echo(frame.to_csv(index=False), nl=False)
    elif os.path.splitext(out)[1].lower() in (".parquet", ".pq"):
        import_optional("pyarrow.parquet", "parquet", "writing Parquet")
        frame.to_parquet(out, index=False)
    else:
        frame.to_csv(out, index=False)
    if out is not None:
        echo(f"{len(frame)} predictions written to {out}", err=True)


@click.command()
@click.argument("model_file", type=click.Path(exists=True, dir_okay=False))
@debug_option
@command_errors
def summary(model_file: str, debug: bool) -> None:
    """Describe a saved model: its parameters, data encoding and fitted values.

    \b
    Example:
      problin summary sex.problin
    """
    bundle = read_model_file(model_file)
    fitted_with = [(f"{k} column", v) for k, v in
                   ((bundle.extra or {}).get(EXTRA_KEY) or {}).items()]
    with _using(model_file):
        lines = describe_model(bundle.model, bundle, fitted_with)
        note = scaling_note(bundle.model)
        model = _formula.parameters_of(bundle.model)  # a formula's estimator
        est = final_estimator(model)
        if isinstance(est, NegativeBinomialRegression):  # (not in the GLM header)
            se = f" (std. error {est.alpha_se_:.4g})" if np.isfinite(est.alpha_se_) else \
                " (fixed)"
            lines.append(f"NB alpha:   {est.alpha_:.6g}{se}")
        if isinstance(bundle.model, Formula):  # its summary_text, naming the response
            table = _formula.printed_summary(bundle.model, bundle.feature_names)
        elif isinstance(est, GLMRegressor):  # statsmodels' GLM header above the table
            table = str(est.summary_text())
        else:
            table = format_table(parameter_table(model, bundle.feature_names))
    for line in lines:
        echo(line)
    if note:
        echo(f"scaling:    {note}")
    echo()
    echo(table)


def _plot_features(features: str | None, names: list[str]) -> list[str] | None:
    """``--features A,B``: at most two of the model's features (a usage error naming the
    closest feature otherwise)."""
    if not features:
        return None
    chosen = [f.strip() for f in features.split(",") if f.strip()]
    unknown = [f for f in chosen if f not in names]
    if unknown:
        named = ", ".join(f"{f!r}{did_you_mean(f, names)}" for f in unknown)
        shown = ", ".join(names[:20]) + (" ..." if len(names) > 20 else "")
        raise click.BadParameter(f"the model has no feature {named}; its features: {shown}",
                                 param_hint="--features")
    if len(chosen) > 2:
        raise click.BadParameter(f"at most two features, got {len(chosen)}",
                                 param_hint="--features")
    return chosen


@click.command()
@click.argument("model_file", type=click.Path(exists=True, dir_okay=False))
@click.argument("data", type=click.Path(exists=True, dir_okay=False))
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False), callback=out_path,
              help="HTML file to write.")
@click.option("--features", default=None, metavar="A,B",
              help="Two features for the decision-region and uncertainty plots "
                   "[default: the two with the largest standardised coefficients].")
@click.option("--title", default=None, help="Page title.")
@click.option("--cv", "cv", default="5", show_default=True, metavar="K|FRACTION|none",
              help="Out-of-sample scores: K-fold cross-validation (an integer >= 2), a "
                   "held-out fraction of the rows (0 < f < 1), or 'none' (in sample only).")
@refit_options
@data_command
def report(model_file: str, data: str, out: str, features: str | None, title: str | None,
           cv: str, ci: str, pvalues: str, data_format: str | None, drop_missing: bool,
           header: bool | None, categorical: tuple[str, ...], n_features: int | None,
           debug: bool) -> None:
    """Write a self-contained HTML report of a saved model evaluated on DATA.

    Parameter table and scores; for classifiers the confusion matrix, ROC and
    calibration curves, decision regions with probability contours; for regression
    predicted-against-actual and residuals (GLM regressors: the GLM statistics,
    deviance and D², deviance residuals; the offset, exposure and trials columns
    of the fit read from DATA); predictive uncertainty of Bayesian models and the
    optimiser's trace. Images are embedded: the file needs no
    network access to view.

    --ci profile and --pvalues lr refit the model on DATA, which must then be the
    training rows.

    \b
    Example:
      problin report sex.problin heights.csv --out report.html
    """
    from ..report import build_report  # on first use: loads matplotlib (0.5 s a command)
    evaluation = _cv_option(cv)
    bundle = read_model_file(model_file)
    request = RefitRequest(ci, pvalues)
    request.check("memory", bundle.model)
    columns = dict((bundle.extra or {}).get(EXTRA_KEY) or {})  # offset, exposure, trials
    values: dict[str, np.ndarray] = {}
    if _formula.is_formula_model(bundle.encoding, bundle.model):  # raw columns: the formula
        # encodes them, and the report reads the response from them (build_report)
        X, _, _ = _formula.formula_rows(bundle, data, data_format, header, drop_missing,
                                        also=list(columns.values()), response=True)
        values = {k: X[v].to_numpy() for k, v in columns.items()}
        y, names = None, [str(f) for f in bundle.feature_names or []]
    elif columns:
        ds, values, _ = read_with_columns(data, columns, data_format=data_format,
                                          encoding=bundle.encoding, drop_missing=drop_missing,
                                          header=header, categorical=categorical)
        X, y, names = ds.X, ds.y, [str(f) for f in ds.feature_names]
    else:
        ds = read_data(data, format=data_format, encoding=bundle.encoding,
                       drop_missing=drop_missing, header=header, categorical=list(categorical),
                       n_features=n_features)
        X, y, names = ds.X, ds.y, [str(f) for f in ds.feature_names]
    chosen = _plot_features(features, names)
    with echo_warnings(), progress("report", build_report.n_steps) as step, \
            _using(model_file):
        page = build_report(bundle.model, X, y, feature_names=names, bundle=bundle,
                            features=chosen, title=title, source=data, progress=step,
                            cv=evaluation, fit_arguments=values,
                            summary=request.keywords())
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(page)
    echo(f"report written to {out} ({len(page) / 1024:.0f} KiB)")


def _cv_option(text: str) -> float | None:
    """``--cv``: folds (int >= 2), a held-out fraction in (0, 1), or None for 'none'."""
    if text.strip().lower() == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        raise click.BadParameter(f"expected an integer >= 2, a fraction in (0, 1) or 'none', "
                                 f"got {text!r}", param_hint="--cv") from None
    if value.is_integer() and value >= 2:
        return int(value)
    if 0 < value < 1:
        return value
    raise click.BadParameter(f"expected an integer >= 2, a fraction in (0, 1) or 'none', "
                             f"got {text!r}", param_hint="--cv")
