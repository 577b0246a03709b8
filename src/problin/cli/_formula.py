"""``problin fit DATA --formula "y ~ a + C(b)"``: reading raw columns for a model formula.

A formula model is fitted on the file's raw columns (the formula does the encoding, see
:mod:`problin.formula`), and its model file records the encoding ``{"format": "formula",
"formula": ..., "target": ..., "variables": [...]}`` so that ``problin predict`` reads the
raw columns again and lets the stored formula encode them.
"""
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import click
import numpy as np
import pandas as pd

from .._formula_columns import formula_columns
from ..formula import Formula
from ..io import save
from ..io._table import check_missing
from ..io.errors import ColumnNotFoundError, DataFileError
from ..io.readers import _read_csv, _read_parquet, detect_format
from ..report.tables import format_table, parameter_table
from ._common import echo, echo_warnings, spinner
from ._refit_options import RefitRequest
from ._rows import kept_formula_rows
from ._suggest import one_line

__all__ = ["FORMULA_FORMAT", "check_formula_options", "fit_formula", "formula_rows",
           "is_formula_model", "parameters_of", "printed_summary", "read_frame"]

FORMULA_FORMAT = "formula"


def is_formula_model(encoding: dict[str, Any] | None, model: Any = None) -> bool:
    """Whether a model file holds a formula model: its encoding says so (``problin fit
    --formula``), or its model is a :class:`~problin.Formula` (saved from Python, with no
    encoding), which reads raw columns too."""
    return (encoding or {}).get("format") == FORMULA_FORMAT or isinstance(model, Formula)


def read_frame(path: str, data_format: str | None, header: bool | None,
               text: Iterable[str] = ()) -> pd.DataFrame:
    """The raw columns of a CSV or Parquet file (no encoding); the CSV columns named in
    ``text`` read as text."""
    fmt = detect_format(path, data_format)
    if fmt not in ("csv", "parquet"):
        raise DataFileError(f"{path}: a formula reads named columns: CSV or Parquet data, "
                            f"not {fmt}")
    frame = _read_csv(path, header, text) if fmt == "csv" else _read_parquet(path)
    if frame.shape[0] == 0:
        raise DataFileError(f"{path}: no data rows")
    return frame


def _variables(formula: Formula, frame: pd.DataFrame, path: str) -> list[str]:
    """The columns the formula reads (those inside stateful transforms too: see
    :mod:`problin._formula_columns`), so that only their missing values count; a
    missing one is a usage error naming close matches."""
    needed = formula_columns(formula._parse())
    try:
        Formula._check_columns(frame, needed, f"{path}: formula {formula.formula!r}")
    except ValueError as exc:
        raise ColumnNotFoundError(str(exc)) from None
    return [str(c) for c in frame.columns if c in needed]


def check_formula_options(formula: str | None, target: str | None, standardize: bool,
                          categorical: Sequence[str], engine: str) -> None:
    """``problin fit`` takes --target or --formula; the formula does the encoding."""
    if formula is None:
        raise click.UsageError("Missing option '--target' / '-t' (or give --formula).")
    if target is not None or standardize or categorical or engine != "memory":
        raise click.UsageError("--formula names the target and encodes the columns: drop "
                               "--target, --standardize, --categorical and --engine")


def select_rows(frame: pd.DataFrame, variables: Sequence[str], path: str,
                drop_missing: bool) -> tuple[pd.DataFrame, int]:
    """The formula's columns with the rows holding missing values dropped or refused."""
    return check_missing(frame[list(variables)], path, drop_missing)


def fit_formula(data: str, formula: str, model_name: str, estimator: Any, out: str,
                data_format: str | None, drop_missing: bool, header: bool | None,
                check_target: Callable[[str, Any, str], None],
                columns: Mapping[str, str] | None = None,
                request: RefitRequest = RefitRequest()) -> None:
    """Read ``data``, fit ``Formula(formula, estimator)``, save it to ``out`` and print it;
    ``columns``: ``{fit argument: column}`` (``--offset``, ``--exposure``, ``--trials``)."""
    columns = dict(columns or {})
    model = Formula(formula, estimator)
    try:
        model._parse()
    except ValueError as exc:  # formulaic's message, less its drawing of where it failed
        raise click.BadParameter(one_line(str(exc).split("\n\n")[0]),
                                 param_hint="'--formula' / '-f'") from None
    frame = read_frame(data, data_format, header)
    variables = _variables(model, frame, data)
    extra_columns = [c for c in columns.values() if c not in variables]
    try:
        Formula._check_columns(frame, extra_columns, f"{data}: --offset/--exposure/--trials")
    except ValueError as exc:
        raise ColumnNotFoundError(str(exc)) from None
    frame, dropped = select_rows(frame, variables + extra_columns, data, drop_missing)
    parsed = model._parse()
    if not hasattr(parsed, "lhs"):
        raise click.UsageError(f"--formula {formula!r} has no response: write it as "
                               "'y ~ a + b'")
    target = str(parsed.lhs)
    check_target(model_name, model._response(frame, parsed.lhs), target)
    n = frame.shape[0]
    with echo_warnings(), spinner(f"fitting {model_name} on {n} rows"):
        model.fit(frame, **columns)  # (a string names a column of frame)
    names = [c for c in model.design_columns_ if c != "Intercept"]
    encoding = {"format": FORMULA_FORMAT, "formula": formula, "target": target,
                "variables": [v for v in variables if v in set(model.feature_names_in_)]}
    extra: dict[str, Any] = {"model_name": model_name, "n_samples": int(n)}
    if columns:
        extra["fit_columns"] = columns  # (problin.cli._glm_columns.EXTRA_KEY)
    save(model, out, feature_names=names, encoding=encoding, target=target, extra=extra)
    more = f", {dropped} rows with missing values dropped" if dropped else ""
    echo(f"{model_name}: {type(model.estimator_).__name__} fitted on {n} rows by the "
         f"formula {formula!r}, {len(names)} column{'s' * (len(names) != 1)}{more}")
    with echo_warnings():
        echo(printed_summary(model, names, request.keywords(data=frame, **columns)))
    echo(f"\nmodel saved to {out}")


def printed_summary(model: Formula, names: Sequence[str] | None,
                    refits: Mapping[str, Any] | None = None) -> str:
    """What ``problin fit --formula`` and ``problin summary`` print of a formula model: its
    ``summary_text()`` (the header naming the dependent variable above the full term
    names) where the estimator has one and it exists for this fit, else the estimator's
    parameter table. ``refits``: ``summary_text``'s ``ci``, ``pvalues`` and training
    ``data`` (``--ci profile``, ``--pvalues lr``; their errors are raised)."""
    if hasattr(model, "summary_text"):  # (scikit-learn's available_if: the estimator's)
        try:
            return str(model.summary_text(**(refits or {})))
        except ValueError:  # (no summary for this fit: a ridge LinearRegression)
            if refits:
                raise
    return format_table(parameter_table(model.estimator_, names))


def formula_rows(bundle: Any, data: str, data_format: str | None, header: bool | None,
                 drop_missing: bool, also: Sequence[str] = (), response: bool = False
                 ) -> tuple[pd.DataFrame, int, np.ndarray]:
    """The rows of ``data`` that a saved formula model predicts (its raw columns and the
    columns ``also``: an offset, an exposure; with ``response``, the columns its
    response reads where the file has them all), how many were dropped, and the 1-based
    data rows kept."""
    # Categories fitted as text are read as text (a file of "1" and "2" only reads them
    # as integers, which are no fitted level).
    text = bundle.model._text_columns() if isinstance(bundle.model, Formula) else ()
    frame = read_frame(data, data_format, header, text)
    # (a Formula saved from Python has no encoding: the columns it reads are its own)
    variables = list((bundle.encoding or {}).get("variables") or [])
    if not variables and isinstance(bundle.model, Formula):
        variables = [str(v) for v in bundle.model.feature_names_in_]
    if response and isinstance(bundle.model, Formula):
        parsed = bundle.model._parse()
        read = formula_columns(parsed.lhs) if hasattr(parsed, "lhs") else set()
        if read and all(c in frame.columns for c in read):
            also = [*also, *sorted(str(c) for c in read)]
    variables += [c for c in also if c not in variables]
    absent = [v for v in variables if v not in frame.columns]
    try:
        Formula._check_columns(frame, absent, f"{data}: the model's formula")
    except ValueError as exc:
        raise ColumnNotFoundError(str(exc)) from None
    kept, dropped = select_rows(frame, variables, data, drop_missing)
    rows = kept_formula_rows(frame, variables, data) if dropped else \
        np.arange(1, frame.shape[0] + 1)
    return kept, dropped, rows


def parameters_of(model: Any) -> Any:
    """The estimator whose parameters ``problin summary`` shows."""
    return model.estimator_ if isinstance(model, Formula) else model

