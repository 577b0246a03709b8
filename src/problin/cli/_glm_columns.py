"""``--offset COL``, ``--exposure COL``, ``--trials COL``: columns of the data file that are
a GLM regressor's per-row fit arguments, not features.

They are read with the features (a missing value in them counts as one in a feature:
the row is refused, or dropped with ``--drop-missing``), left out of the encoding, and
passed to ``fit(X, y, offset=, exposure=, trials=)``; with ``--engine dask`` they are
lazy columns of the same partitions as the features (:func:`lazy_columns`). The model
file records which
columns they were (``extra["fit_columns"]``), so that ``problin predict`` and
``problin report`` read the new file's offset and exposure from the columns of the same
names; ``trials`` is the binomial's fit argument only (predictions are probabilities).
"""
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import click
import numpy as np
import pandas as pd

from ..glm.regression import GLMRegressor
from ..io._table import check_missing, encode_table
from ..io.errors import ColumnNotFoundError, DataFileError
from ..io.readers import Dataset, _read_csv, _read_parquet, detect_format
from ..report.tables import final_estimator
from ._rows import kept_formula_rows

__all__ = ["FIT_COLUMNS", "EXTRA_KEY", "fit_column_options", "chosen_columns",
           "check_model_takes", "check_apart_from_target", "lazy_columns",
           "read_with_columns", "saved_columns"]

FIT_COLUMNS = ("offset", "exposure", "trials")
PREDICT_COLUMNS = ("offset", "exposure")  # what predictions take (trials only fit)
EXTRA_KEY = "fit_columns"  # the model file's record of them (``ModelFile.extra``)

_F = TypeVar("_F", bound=Callable[..., Any])


def fit_column_options(func: _F) -> _F:
    """``--offset``, ``--exposure`` and ``--trials`` (``problin fit``)."""
    func = click.option("--trials", default=None, metavar="COL",
                        help="Binomial: the column of trials; the target is the successes "
                             "out of them.")(func)
    func = click.option("--exposure", default=None, metavar="COL",
                        help="GLM regressors with the log link: the column of positive "
                             "exposures (time at risk, population); log(exposure) joins "
                             "the offset. predict reads the same column.")(func)
    return click.option("--offset", default=None, metavar="COL",
                        help="GLM regressors: the column of a known term of the linear "
                             "predictor (not a feature). predict reads the same "
                             "column.")(func)


def chosen_columns(offset: str | None, exposure: str | None,
                   trials: str | None) -> dict[str, str]:
    """``{argument: column}`` of the options given; a column named twice is a usage error."""
    chosen = {k: v for k, v in (("offset", offset), ("exposure", exposure),
                                ("trials", trials)) if v is not None}
    if len(set(chosen.values())) < len(chosen):
        raise click.UsageError("--offset, --exposure and --trials must name different "
                               "columns")
    return chosen


def check_model_takes(model_name: str, est: Any, columns: Mapping[str, str]) -> None:
    """A usage error, before the data are read, when the model's ``fit`` has no such
    argument (``--offset`` of an LDA), for ``--trials`` of a family other than the
    binomial and for ``--exposure`` with a link other than the log."""
    model = final_estimator(est)
    accepted = inspect.signature(model.fit).parameters
    family = model._make_family() if isinstance(model, GLMRegressor) else None
    for argument in columns:
        refused = argument not in accepted or family is not None and (
            argument == "trials" and not family.distribution.has_trials
            or argument == "exposure" and family.link_function.name != "log")
        if refused:
            takers = "binomial (or glm -p family=binomial)" if argument == "trials" else \
                "the GLM regressors with the log link (poisson, negative-binomial, ...)" \
                if argument == "exposure" else \
                "the GLM regressors (poisson, negative-binomial, gamma, ...)"
            raise click.UsageError(f"--{argument}: model {model_name!r} ({model!r}) takes no "
                                   f"{argument}; {argument} is for {takers}")


def saved_columns(extra: Mapping[str, Any] | None) -> dict[str, str]:
    """The offset and exposure columns a model file records (empty if none)."""
    saved = dict((extra or {}).get(EXTRA_KEY) or {})
    return {k: str(v) for k, v in saved.items() if k in PREDICT_COLUMNS}


def _check_present(frame: pd.DataFrame, path: str, columns: Sequence[str]) -> None:
    absent = [c for c in columns if c not in frame.columns]
    if absent:
        raise ColumnNotFoundError(f"{path}: no column named {absent[0]!r} (--offset, "
                                  f"--exposure or --trials); columns are "
                                  f"{list(map(str, frame.columns))}")


def _check_numeric(path: str, argument: str, column: str, dtype: Any) -> None:
    if not pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
        raise DataFileError(f"{path}: the {argument} column {column!r} is not numeric")


def _numeric(frame: pd.DataFrame, path: str, columns: Mapping[str, str]
             ) -> dict[str, np.ndarray]:
    out = {}
    for argument, column in columns.items():
        _check_numeric(path, argument, column, frame[column].dtype)
        out[argument] = frame[column].to_numpy(dtype=np.float64)
    return out


def check_apart_from_target(target: str | None, columns: Mapping[str, str]) -> None:
    """A usage error where the target is also one of the ``columns``."""
    if target is not None and target in columns.values():
        raise click.UsageError(f"the target {target!r} cannot also be the "
                               f"{next(k for k, v in columns.items() if v == target)} column")


def lazy_columns(fit_columns: Mapping[str, Any], path: str, columns: Mapping[str, str]
                 ) -> dict[str, Any]:
    """``{argument: lazy column}`` from the Dask reader's ``fit_columns`` (chunked as the
    features' rows), each checked numeric by its type, as in memory."""
    out = {}
    for argument, column in columns.items():
        _check_numeric(path, argument, column, fit_columns[column].dtype)
        out[argument] = fit_columns[column]
    return out


def read_with_columns(path: str, columns: Mapping[str, str], *, target: str | None = None,
                      data_format: str | None = None, encoding: dict[str, Any] | None = None,
                      drop_missing: bool = False, header: bool | None = None,
                      categorical: Sequence[str] = (), ignore_target: bool = False
                      ) -> tuple[Dataset, dict[str, np.ndarray], np.ndarray]:
    """The file's features and target as :func:`problin.io.readers.read_data` reads them,
    without ``columns`` (``{argument: column}``), whose values come back separately;
    and the 1-based data rows kept (``drop_missing``: rows with a missing value in a
    feature, the target or one of ``columns`` are dropped)."""
    fmt = detect_format(path, data_format)
    if fmt not in ("csv", "parquet"):
        raise DataFileError(f"{path}: --offset, --exposure and --trials name columns: CSV "
                            f"or Parquet data, not {fmt}")
    text = set(categorical) | {c["name"] for c in (encoding or {}).get("columns", [])
                               if c["kind"] == "categorical"}
    frame = _read_csv(path, header, text) if fmt == "csv" else _read_parquet(path)
    if frame.shape[0] == 0:
        raise DataFileError(f"{path}: no data rows")
    named = list(columns.values())
    _check_present(frame, path, named)
    check_apart_from_target(target, columns)
    if encoding is None:
        used = [c for c in frame.columns if c not in named]
    else:  # the model's columns only (and its target, where it is read)
        used = [c["name"] for c in encoding["columns"] if c["name"] in frame.columns]
        kept_target = encoding.get("target")
        if not ignore_target and kept_target is not None and kept_target in frame.columns:
            used.append(str(kept_target))
    rows = np.arange(1, frame.shape[0] + 1)
    checked, dropped = check_missing(frame[used + named], path, drop_missing)
    if dropped:
        rows = kept_formula_rows(frame, used + named, path)
    values = _numeric(checked, path, columns)
    X, y, names, enc, _ = encode_table(checked.drop(columns=named), path, target=target,
                                       encoding=encoding, require_target=encoding is None,
                                       categorical=categorical, inferred=fmt == "csv",
                                       ignore_target=ignore_target)
    return Dataset(X, y, names, enc["target"], enc, dropped), values, rows
