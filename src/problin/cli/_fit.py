"""``problin fit``: the model's parameters from the command line, the fit, the model file."""
import contextlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import click
import numpy as np
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import (
    InvalidParameterError,
    StrOptions,
    validate_parameter_constraints,
)

from ..io import save
from ..io.dask_readers import DEFAULT_BLOCKSIZE, read_dask
from ..io.readers import read_data
from ..model_selection import CLASSIFIERS, GLM_REGRESSORS, REGRESSORS, is_continuous_target
from ..report.evaluation import fit_keywords
from ..report.tables import final_estimator, format_table, parameter_table
from ..glm.regression import GLMRegressor
from . import _formula
from ._common import echo, echo_warnings, require_dask, spinner
from ._glm_columns import (
    EXTRA_KEY,
    check_apart_from_target,
    check_model_takes,
    chosen_columns,
    fit_column_options,
    lazy_columns,
    read_with_columns,
)
from ._options import MODELS, data_command, engine_options, model_listing, model_path
from ._refit_options import RefitRequest, refit_options
from ._suggest import Choice, did_you_mean, one_line

__all__ = ["fit", "configure", "check_target", "scaling_note"]


def _parse_value(text: str) -> Any:
    lowered = {"true": True, "false": False, "none": None, "null": None}
    if text.lower() in lowered:
        return lowered[text.lower()]
    try:
        return json.loads(text)
    except ValueError:
        return text


def configure(name: str, alpha: float | None, settings: Sequence[str],
              link: str | None = None) -> Any:
    """The estimator for a model name with the command line's parameters (``--alpha``,
    ``--link``, ``-p NAME=VALUE``), each checked against the model's parameter
    constraints: an unknown name or a value the model refuses is a usage error naming the
    closest valid one."""
    est = final_estimator(MODELS[name]())  # fit uses the model itself, on the data as read
    params = est.get_params(deep=False)
    chosen: dict[str, Any] = {} if alpha is None else {"alpha": alpha}
    if link is not None:
        chosen["link"] = link
    for item in settings:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected NAME=VALUE, got {item!r}",
                                     param_hint="'--set' / '-p'")
        chosen[key.strip()] = _parse_value(text.strip())
    unknown = sorted(set(chosen) - set(params))
    if unknown:
        named = ", ".join(f"{key!r}{did_you_mean(key, params)}" for key in unknown)
        raise click.UsageError(f"model {name!r} ({type(est).__name__}) has no parameter "
                               f"{named}; its parameters: {', '.join(sorted(params))}")
    constraints = getattr(est, "_parameter_constraints", {})
    for key, value in chosen.items():
        if key not in constraints:
            continue
        try:
            validate_parameter_constraints({key: constraints[key]}, {key: value},
                                           type(est).__name__)
        except InvalidParameterError as exc:
            options = [o for c in constraints[key] if isinstance(c, StrOptions)
                       for o in c.options]
            hint = did_you_mean(value, options) if isinstance(value, str) else ""
            flag = "--alpha" if key == "alpha" and alpha is not None else \
                "--link" if key == "link" and link is not None else f"-p {key}"
            raise click.UsageError(f"{flag}: {one_line(str(exc)).rstrip('.')}{hint}") from None
    est.set_params(**chosen)
    if isinstance(est, GLMRegressor):  # a link the family does not define: before reading
        try:
            est._make_family()
        except ValueError as exc:
            raise click.UsageError(f"model {name!r}: {one_line(str(exc))}") from None
    return est


def _with_scaler(est: Any, standardize: bool, sparse: bool) -> Any:
    """``est``, after a ``StandardScaler`` with ``--standardize`` (sparse: not centred)."""
    if not standardize:
        return est
    if sparse:
        return make_pipeline(StandardScaler(with_mean=False), est)
    return make_pipeline(StandardScaler(), est).set_output(transform="pandas")


def scaling_note(model: Any) -> str | None:
    """What the coefficients of a model behind a ``StandardScaler`` are per, or None."""
    steps = getattr(model, "steps", None)
    scaler = steps[0][1] if steps else None
    if not isinstance(scaler, StandardScaler) or not scaler.with_std:
        return None
    where = ("the intercept is at the feature means" if scaler.with_mean else
             "scaled, not centred: the intercept is at zero")
    return (f"features standardised (--standardize): coefficients are per standard "
            f"deviation of each feature; {where}")


def check_target(name: str, y: Any, target: str) -> None:
    """A classifier needs class labels, a regressor numbers (a data error otherwise)."""
    if name in CLASSIFIERS and is_continuous_target(y):
        raise ValueError(f"target {target!r} looks continuous ({np.unique(y).size} distinct "
                         f"values): choose a regressor ({', '.join(REGRESSORS)})")
    if (name in REGRESSORS or name in GLM_REGRESSORS) and np.asarray(y).dtype.kind not in "biuf":
        raise ValueError(f"target {target!r} is not numeric: choose a classifier "
                         f"({', '.join(CLASSIFIERS)})")


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
        raise click.UsageError("--scheduler needs dask.distributed: "
                               "pip install 'problin[dask]'") from None
    try:
        client = Client(address, timeout="10s")
    except (OSError, ValueError) as exc:  # unreachable address (timeouts are OSErrors too)
        raise OSError(f"cannot connect to the Dask scheduler at {address}: {exc}") from None
    with client:
        yield


def _read_lazily(data: str, target: str, data_format: str | None, drop_missing: bool,
                 header: bool | None, blocksize: Any, categorical: Sequence[str],
                 n_features: int | None, columns: Mapping[str, str]
                 ) -> tuple[Any, np.ndarray]:
    """The Dask engine's reader, and what ``check_target`` needs of the lazy target: its
    distinct values (one pass over that column) for float labels, else only its dtype.
    ``columns``: the fit arguments' columns, read beside the features (not as ones)."""
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
    check_apart_from_target(target, columns)
    ds = read_dask(data, target, format=data_format, blocksize=size,
                   drop_missing=drop_missing, header=header, categorical=list(categorical),
                   fit_columns=list(columns.values()))
    if ds.y.dtype.kind == "f":
        import dask.array as da
        return ds, da.unique(ds.y).compute()
    return ds, np.empty(0, dtype=ds.y.dtype)


@click.command(epilog=model_listing())
@click.argument("data", type=click.Path(exists=True))
@click.option("--target", "-t", default=None, help="Name of the target column.")
@click.option("--model", "-m", "model_name", required=True, type=Choice(list(MODELS)),
              metavar="NAME", help="Model to fit (see the list below).")
@click.option("--formula", "-f", default=None, metavar="'Y ~ TERMS'",
              help="Fit a model formula instead of --target and every column, e.g. "
                   "'admit ~ gre + gpa + C(rank)' (C(x): categories, a:b, a*b, np.log(x), "
                   "- 1 drops the intercept).")
@click.option("--alpha", type=float, default=None,
              help="Prior precision (L2 penalty) of models with an alpha parameter.")
@click.option("--link", default=None, metavar="LINK",
              help="The link of ordinal and GLM models, e.g. -m ordinal --link probit "
                   "(logit, probit, cloglog, loglog, cauchit).")
@click.option("--set", "-p", "settings", multiple=True, metavar="NAME=VALUE",
              help="Any model parameter, e.g. -p solver=lbfgs -p max_iter=50 (repeatable).")
@click.option("--standardize", is_flag=True,
              help="Standardise the features first (the model file keeps the scaler); the "
                   "coefficients are then per standard deviation of each feature.")
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False),
              callback=model_path, help="Model file to write (e.g. model.problin); a "
              "symlink's target is written, a directory, device or FIFO refused.")
@refit_options
@fit_column_options
@engine_options
@data_command
def fit(data: str, target: str | None, model_name: str, formula: str | None,
        alpha: float | None, link: str | None, settings: tuple[str, ...], standardize: bool,
        out: str, ci: str, pvalues: str, offset: str | None, exposure: str | None,
        trials: str | None,
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

    GLM regressors (poisson, negative-binomial, gamma, inverse-gaussian, tweedie,
    binomial, glm) take -p link=..., tweedie -p power=..., glm -p family=...;
    --offset, --exposure and --trials name columns that are not features.

    \b
    Examples:
      problin fit heights.csv --target sex --model logistic --out sex.problin
      problin fit train.parquet -t y -m logistic --alpha 1.0 -p solver=lbfgs -o m.problin
      problin fit big_dataset/ -t y -m lda --engine dask --blocksize 16MiB -o m.problin
      problin fit admit.csv -m logistic -f "admit ~ gre + gpa + C(rank)" -o m.problin
      problin fit claims.csv -t n -m poisson --exposure years -o claims.problin
      problin fit survey.csv -t rating -m ordinal --link probit -o rating.problin
      problin fit sex2.csv -t case -m logistic -p penalty=firth --ci profile --pvalues lr -o m.problin
    """
    columns = chosen_columns(offset, exposure, trials)
    request = RefitRequest(ci, pvalues)
    if formula is not None or target is None:
        _formula.check_formula_options(formula, target, standardize, categorical, engine)
        est = configure(model_name, alpha, settings, link)
        check_model_takes(model_name, est, columns)
        request.check(engine, est)
        return _formula.fit_formula(data, str(formula), model_name, est, out, data_format,
                                    drop_missing, header, check_target, columns, request)
    est = configure(model_name, alpha, settings, link)  # before reading: a typo fails at once
    check_model_takes(model_name, est, columns)
    request.check(engine, est)
    if engine == "memory":
        if blocksize is not None or scheduler is not None:
            raise click.UsageError("--blocksize and --scheduler apply to --engine dask")
        if os.path.isdir(data):
            raise click.UsageError(f"{data} is a directory: read a directory of Parquet or "
                                   "CSV files with --engine dask")
        _fit(data, target, model_name, est, standardize, out, data_format, drop_missing,
             header, categorical, n_features, columns=columns, request=request)
        return
    if standardize:
        raise click.UsageError("--standardize needs the data in memory; drop it with "
                               "--engine dask (or scale the columns beforehand)")
    require_dask()
    with _dask_scheduler(scheduler):
        _fit(data, target, model_name, est, False, out, data_format, drop_missing, header,
             categorical, n_features, blocksize=blocksize, lazy=True, columns=columns)


def _fit(data: str, target: str, model_name: str, est: Any, standardize: bool, out: str,
         data_format: str | None, drop_missing: bool, header: bool | None,
         categorical: Sequence[str], n_features: int | None, blocksize: Any = None,
         lazy: bool = False, columns: dict[str, str] | None = None,
         request: RefitRequest = RefitRequest()) -> None:
    """Read, fit, save and print (``lazy``: on Dask arrays, see :func:`_read_lazily`;
    ``columns``: the fit arguments read from columns, see :mod:`._glm_columns`;
    ``request``: the printed summary's refitted intervals and p-values)."""
    values: dict[str, Any] = {}
    ds: Any  # (a Dataset, or the Dask engine's lazy one)
    if lazy:  # (the fit arguments' columns lazy too, from the features' partitions)
        ds, labels = _read_lazily(data, target, data_format, drop_missing, header, blocksize,
                                  categorical, n_features, columns or {})
        values = lazy_columns(ds.fit_columns, data, columns or {})
    elif columns:
        if n_features is not None:
            raise click.UsageError("--n-features applies to LibSVM data, which --offset, "
                                   "--exposure and --trials do not read")
        ds, values, _ = read_with_columns(data, columns, target=target,
                                          data_format=data_format, drop_missing=drop_missing,
                                          header=header, categorical=categorical)
        labels = ds.y
    else:
        ds = read_data(data, target, format=data_format, drop_missing=drop_missing,
                       header=header, require_target=True, categorical=list(categorical),
                       n_features=n_features)
        labels = ds.y
    check_target(model_name, labels, ds.target)
    model = _with_scaler(est, standardize, not hasattr(ds.X, "columns"))
    n, d = ds.X.shape
    with echo_warnings(), spinner(f"fitting {model_name} on {n} rows"):
        model.fit(ds.X, ds.y, **fit_keywords(model, values))
    if lazy:  # as a fit on a DataFrame records them: predict then reads DataFrames quietly
        model.feature_names_in_ = np.asarray(ds.feature_names, dtype=object)
    extra: dict[str, Any] = {"model_name": model_name, "n_samples": int(n)}
    if columns:
        extra[EXTRA_KEY] = dict(columns)
    save(model, out, feature_names=ds.feature_names, encoding=ds.encoding, target=ds.target,
         extra=extra)
    dropped = f", {ds.n_dropped} rows with missing values dropped" if ds.n_dropped else ""
    echo(f"{model_name}: {type(final_estimator(model)).__name__} fitted on {n} rows, "
         f"{d} feature{'s' * (d != 1)}, target {ds.target!r}{dropped}")
    note = scaling_note(model)
    if note:
        echo(note)
    steps = getattr(model, "steps", None)  # (the final estimator's rows: scaled)
    X = steps[0][1].transform(ds.X) if steps else ds.X
    with echo_warnings():
        table = parameter_table(model, ds.feature_names,
                                **request.keywords(X=X, y=ds.y, **values))
    echo(format_table(table))
    for note in request.notes(table):
        echo(note)
    echo(f"\nmodel saved to {out}")
