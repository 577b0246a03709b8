"""``problin fit``, ``problin predict`` and ``problin summary``: parsing and printing only."""
import contextlib
import inspect
import json
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import click
import numpy as np
import pandas as pd
from sklearn.base import is_classifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ..io import read_model_file, save
from ..io.dask_readers import DEFAULT_BLOCKSIZE, read_dask
from ..io.readers import FORMATS, read_data
from ..model_selection import CLASSIFIERS, REGRESSORS, is_continuous_target
from ..report.tables import (
    describe_model,
    final_estimator,
    format_table,
    parameter_table,
)
from . import _formula
from ._common import (
    command_errors,
    debug_option,
    echo_warnings,
    progress,
    require_dask,
    spinner,
)

__all__ = ["fit", "predict", "summary", "report", "data_options", "data_command", "MODELS",
           "engine_options"]

MODELS = {**CLASSIFIERS, **REGRESSORS}  # the single source of model names

_F = TypeVar("_F", bound=Callable[..., Any])


def _model_listing() -> str:
    """One line per model name for ``problin fit --help``."""
    lines = ["\b", "Models (classifiers, then regressors):"]
    for name, make in MODELS.items():
        est = final_estimator(make())
        kind = "classifier" if name in CLASSIFIERS else "regressor"
        lines.append(f"  {name:<15} {kind:<11} {est!r}")
    return "\n".join(lines)


def data_options(func: _F) -> _F:
    """Options shared by every subcommand that reads a data file."""
    func = click.option("--n-features", type=click.IntRange(min=1), default=None,
                        metavar="N",
                        help="LibSVM: the number of features (needed at fit time when an "
                             "index exceeds max(2**20, number of values in the file)) "
                             "[default: the largest index; predict: the model's].")(func)
    func = click.option("--categorical", "categorical", multiple=True, metavar="COL",
                        help="Encode column COL as categories even if its values are "
                             "numbers (repeatable). Without it, a CSV column of numbers "
                             "with a few text cells is an error naming them.")(func)
    func = click.option("--header/--no-header", default=None,
                        help="CSV: the first row is (not) a header [default: detect].")(func)
    func = click.option("--drop-missing", is_flag=True,
                        help="Drop rows with missing values instead of stopping.")(func)
    return click.option("--format", "data_format", type=click.Choice(FORMATS), default=None,
                        help="Data format [default: from the file extension: .csv/.tsv/.txt, "
                             ".parquet/.pq, .svm/.libsvm/.svmlight, .npz].")(func)


def data_command(func: _F) -> _F:
    """The data options, ``--debug`` and the error handling of a command reading data."""
    return data_options(debug_option(command_errors(func)))


def _parse_value(text: str) -> Any:
    lowered = {"true": True, "false": False, "none": None, "null": None}
    if text.lower() in lowered:
        return lowered[text.lower()]
    try:
        return json.loads(text)
    except ValueError:
        return text


def _configure(name: str, alpha: float | None, settings: Sequence[str], standardize: bool,
               sparse: bool) -> Any:
    """The estimator for a model name with the command line's parameters."""
    est = final_estimator(MODELS[name]())  # fit uses the model itself, on the data as read
    params = est.get_params(deep=False)
    chosen = {} if alpha is None else {"alpha": alpha}
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected NAME=VALUE, got {item!r}", param_hint="--set")
        chosen[key.strip()] = _parse_value(value.strip())
    unknown = sorted(set(chosen) - set(params))
    if unknown:
        raise click.UsageError(f"model {name!r} ({type(est).__name__}) has no parameter "
                               f"{', '.join(map(repr, unknown))}; its parameters: "
                               f"{', '.join(sorted(params))}")
    est.set_params(**chosen)
    if not standardize:
        return est
    if sparse:
        return make_pipeline(StandardScaler(with_mean=False), est)
    return make_pipeline(StandardScaler(), est).set_output(transform="pandas")


def _check_target(name: str, y: Any, target: str) -> None:
    if name in CLASSIFIERS and is_continuous_target(y):
        raise ValueError(f"target {target!r} looks continuous ({np.unique(y).size} distinct "
                         f"values): choose a regressor ({', '.join(REGRESSORS)})")
    if name in REGRESSORS and np.asarray(y).dtype.kind not in "biuf":
        raise ValueError(f"target {target!r} is not numeric: choose a classifier "
                         f"({', '.join(CLASSIFIERS)})")


def engine_options(func: _F) -> _F:
    """``--engine`` and the options of the Dask engine (``--blocksize``, ``--scheduler``)."""
    func = click.option("--scheduler", default=None, metavar="ADDRESS",
                        help="--engine dask: run on the dask.distributed scheduler at ADDRESS "
                             "(e.g. tcp://10.0.0.5:8786; its workers must see DATA) "
                             "[default: threads in this process].")(func)
    func = click.option("--blocksize", default=None, metavar="SIZE",
                        help="--engine dask: bytes per partition, e.g. 16MiB (Parquet: whole "
                             f"row groups) [default: {DEFAULT_BLOCKSIZE // 2 ** 20}MiB].")(func)
    return click.option("--engine", type=click.Choice(["memory", "dask"]), default="memory",
                        show_default=True,
                        help="memory: read DATA whole. dask: read it lazily and fit "
                             "partition by partition, in bounded memory (CSV or Parquet; "
                             "DATA may be a directory of such files).")(func)


@contextlib.contextmanager
def _dask_scheduler(address: str | None) -> Iterator[None]:
    """Threads in this process, or a ``dask.distributed`` Client connected to ``address``."""
    import dask
    if address is None:
        with dask.config.set(scheduler="threads"):
            yield
        return
    try:
        from dask.distributed import Client
    except ImportError:
        raise click.UsageError("--scheduler needs dask.distributed: pip install distributed"
                               ) from None
    try:
        client = Client(address, timeout="10s")
    except (OSError, ValueError) as exc:  # unreachable address (timeouts are OSErrors too)
        raise OSError(f"cannot connect to the Dask scheduler at {address}: {exc}") from None
    with client:
        yield


def _read_lazily(data: str, target: str, data_format: str | None, drop_missing: bool,
                 header: bool | None, blocksize: Any, categorical: Sequence[str],
                 n_features: int | None) -> tuple[Any, np.ndarray]:
    """The Dask engine's reader, and what ``_check_target`` needs of the lazy target: its
    distinct values (one pass over that column) for float labels, else only its dtype."""
    from dask.utils import parse_bytes
    if n_features is not None:
        raise click.UsageError("--n-features applies to LibSVM data, which --engine dask "
                               "does not read")
    try:
        size = DEFAULT_BLOCKSIZE if blocksize is None else parse_bytes(blocksize)
    except (ValueError, TypeError):
        raise click.BadParameter(f"not a size: {blocksize!r} (e.g. 16MiB)",
                                 param_hint="--blocksize") from None
    if data_format not in (None, "csv", "parquet"):
        raise click.UsageError(f"--engine dask reads CSV and Parquet, not {data_format}")
    ds = read_dask(data, target, format=data_format, blocksize=size,
                   drop_missing=drop_missing, header=header, categorical=list(categorical))
    if ds.y.dtype.kind == "f":
        import dask.array as da
        return ds, da.unique(ds.y).compute()
    return ds, np.empty(0, dtype=ds.y.dtype)


@click.command(epilog=_model_listing())
@click.argument("data", type=click.Path(exists=True))
@click.option("--target", "-t", default=None, help="Name of the target column.")
@click.option("--model", "-m", "model_name", required=True, type=click.Choice(list(MODELS)),
              metavar="NAME", help="Model to fit (see the list below).")
@click.option("--formula", "-f", default=None, metavar="'Y ~ TERMS'",
              help="Fit a model formula instead of --target and every column, e.g. "
                   "'admit ~ gre + gpa + C(rank)' (C(x): categories, a:b, a*b, np.log(x), "
                   "- 1 drops the intercept).")
@click.option("--alpha", type=float, default=None,
              help="Prior precision (L2 penalty) of models with an alpha parameter.")
@click.option("--set", "-p", "settings", multiple=True, metavar="NAME=VALUE",
              help="Any model parameter, e.g. -p solver=lbfgs -p max_iter=50 (repeatable).")
@click.option("--standardize", is_flag=True,
              help="Standardise the features first (the model file keeps the scaler).")
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False),
              help="Model file to write (e.g. model.problin).")
@engine_options
@data_command
def fit(data: str, target: str | None, model_name: str, formula: str | None,
        alpha: float | None, settings: tuple[str, ...], standardize: bool, out: str,
        engine: str, blocksize: str, scheduler: str | None,
        data_format: str | None, drop_missing: bool, header: bool | None,
        categorical: tuple[str, ...], n_features: int | None, debug: bool) -> None:
    """Fit a model to DATA, print its parameters and save it to a model file.

    Prints the model's summary() (coefficients, standard errors, z, p-values and
    intervals) when it has one, else its fitted parameters. String columns are
    one-hot encoded (the first category is the reference level); the encoding is
    saved with the model so that predict applies the same one.

    With --engine dask the file (or directory of files) is read lazily and the
    model fitted partition by partition, so data larger than memory fits; the
    model file is the same as after an in-memory fit.

    \b
    Examples:
      problin fit heights.csv --target sex --model logistic --out sex.problin
      problin fit train.parquet -t y -m logistic --alpha 1.0 -p solver=lbfgs -o m.problin
      problin fit big_dataset/ -t y -m lda --engine dask --blocksize 16MiB -o m.problin
      problin fit admit.csv -m logistic -f "admit ~ gre + gpa + C(rank)" -o m.problin
    """
    if formula is not None or target is None:
        _formula.check_formula_options(formula, target, standardize, categorical, engine)
        est = _configure(model_name, alpha, settings, False, False)
        return _formula.fit_formula(data, str(formula), model_name, est, out, data_format,
                           drop_missing, header, _check_target)
    if engine == "memory":
        if blocksize is not None or scheduler is not None:
            raise click.UsageError("--blocksize and --scheduler apply to --engine dask")
        if os.path.isdir(data):
            raise click.UsageError(f"{data} is a directory: read a directory of Parquet or "
                                   "CSV files with --engine dask")
        _fit(data, target, model_name, alpha, settings, standardize, out, data_format,
             drop_missing, header, categorical, n_features)
        return
    if standardize:
        raise click.UsageError("--standardize needs the data in memory; drop it with "
                               "--engine dask (or scale the columns beforehand)")
    require_dask()
    with _dask_scheduler(scheduler):
        _fit(data, target, model_name, alpha, settings, False, out, data_format,
             drop_missing, header, categorical, n_features, blocksize=blocksize, lazy=True)


def _fit(data: str, target: str, model_name: str, alpha: float | None, settings: Sequence[str],
         standardize: bool, out: str, data_format: str | None, drop_missing: bool,
         header: bool | None, categorical: Sequence[str], n_features: int | None,
         blocksize: Any = None, lazy: bool = False) -> None:
    """Read, fit, save and print (``lazy``: on Dask arrays, see :func:`_read_lazily`)."""
    if lazy:
        ds, labels = _read_lazily(data, target, data_format, drop_missing, header, blocksize,
                                  categorical, n_features)
    else:
        ds = read_data(data, target, format=data_format, drop_missing=drop_missing,
                       header=header, require_target=True, categorical=list(categorical),
                       n_features=n_features)
        labels = ds.y
    _check_target(model_name, labels, ds.target)
    model = _configure(model_name, alpha, settings, standardize, not hasattr(ds.X, "columns"))
    n, d = ds.X.shape
    with echo_warnings(), spinner(f"fitting {model_name} on {n} rows"):
        model.fit(ds.X, ds.y)
    if lazy:  # as a fit on a DataFrame records them: predict then reads DataFrames quietly
        model.feature_names_in_ = np.asarray(ds.feature_names, dtype=object)
    save(model, out, feature_names=ds.feature_names, encoding=ds.encoding, target=ds.target,
         extra={"model_name": model_name, "n_samples": int(n)})
    dropped = f", {ds.n_dropped} rows with missing values dropped" if ds.n_dropped else ""
    click.echo(f"{model_name}: {type(final_estimator(model)).__name__} fitted on {n} rows, "
               f"{d} feature{'s' * (d != 1)}, target {ds.target!r}{dropped}")
    click.echo(format_table(parameter_table(model, ds.feature_names)))
    click.echo(f"\nmodel saved to {out}")


def _predictions(model: Any, X: Any, proba: bool) -> pd.DataFrame:
    """A DataFrame of predictions (and probabilities or predictive std)."""
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
    return pd.DataFrame({"predicted": model.predict(X)})


@click.command()
@click.argument("model_file", type=click.Path(exists=True, dir_okay=False))
@click.argument("data", type=click.Path(exists=True, dir_okay=False))
@click.option("--proba", is_flag=True, help="Add class probabilities (classifiers) or the "
              "predictive standard deviation (Bayesian regression).")
@click.option("--out", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write predictions here (.csv or .parquet) [default: CSV to stdout].")
@data_command
def predict(model_file: str, data: str, proba: bool, out: str | None, data_format: str | None,
            drop_missing: bool, header: bool | None, categorical: tuple[str, ...],
            n_features: int | None, debug: bool) -> None:
    """Predict DATA with a saved model; the target column, if present, is ignored.

    The data is encoded exactly as at fit time (same columns, same categories: an
    unseen category is an error). Output: a column 'predicted', with --proba one
    column p_<class> per class (or 'std' for Bayesian regression).

    \b
    Examples:
      problin predict sex.problin new.csv --proba
      problin predict sex.problin new.parquet --out predictions.csv
    """
    bundle = read_model_file(model_file)
    if _formula.is_formula_model(bundle.encoding):  # the raw columns, encoded by the stored formula
        X, dropped = _formula.formula_rows(bundle, data, data_format, header, drop_missing)
    else:
        ds = read_data(data, format=data_format, encoding=bundle.encoding,
                       drop_missing=drop_missing, header=header,
                       categorical=list(categorical), n_features=n_features)
        X, dropped = ds.X, ds.n_dropped
    with echo_warnings():
        frame = _predictions(bundle.model, X, proba)
    if dropped:
        click.echo(f"{dropped} rows with missing values dropped", err=True)
    if out is None:
        click.echo(frame.to_csv(index=False), nl=False)
    elif os.path.splitext(out)[1].lower() in (".parquet", ".pq"):
        frame.to_parquet(out, index=False)
    else:
        frame.to_csv(out, index=False)
    if out is not None:
        click.echo(f"{len(frame)} predictions written to {out}", err=True)


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
    for line in describe_model(bundle.model, bundle):
        click.echo(line)
    click.echo()
    model = _formula.parameters_of(bundle.model)  # a formula's estimator
    click.echo(format_table(parameter_table(model, bundle.feature_names)))


@click.command()
@click.argument("model_file", type=click.Path(exists=True, dir_okay=False))
@click.argument("data", type=click.Path(exists=True, dir_okay=False))
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False),
              help="HTML file to write.")
@click.option("--features", default=None, metavar="A,B",
              help="Two features for the decision-region and uncertainty plots "
                   "[default: the two with the largest standardised coefficients].")
@click.option("--title", default=None, help="Page title.")
@data_command
def report(model_file: str, data: str, out: str, features: str | None, title: str | None,
           data_format: str | None, drop_missing: bool, header: bool | None,
           categorical: tuple[str, ...], n_features: int | None, debug: bool) -> None:
    """Write a self-contained HTML report of a saved model evaluated on DATA.

    Parameter table and scores; for classifiers the confusion matrix, ROC and
    calibration curves, decision regions with probability contours; for regression
    predicted-against-actual and residuals; predictive uncertainty of Bayesian
    models and the optimiser's trace. Images are embedded: the file needs no
    network access to view.

    \b
    Example:
      problin report sex.problin heights.csv --out report.html
    """
    from ..report import build_report  # on first use: loads matplotlib (0.5 s a command)
    bundle = read_model_file(model_file)
    _formula.check_reportable(bundle.encoding)
    ds = read_data(data, format=data_format, encoding=bundle.encoding, drop_missing=drop_missing,
                   header=header, categorical=list(categorical), n_features=n_features)
    chosen = [f.strip() for f in features.split(",") if f.strip()] if features else None
    with echo_warnings(), progress("report", build_report.n_steps) as step:
        page = build_report(bundle.model, ds.X, ds.y, feature_names=ds.feature_names,
                            bundle=bundle, features=chosen, title=title, source=data,
                            progress=step)
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(page)
    click.echo(f"report written to {out} ({len(page) / 1024:.0f} KiB)")
