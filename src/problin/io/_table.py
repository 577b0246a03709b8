"""Turning a table of raw columns into numeric features, and back again at predict time.

The *encoding* is a JSON-able dict, stored in model files, so that ``predict`` rebuilds
exactly the features the model was fitted on::

    {"format": "table", "target": "sex",
     "columns": [{"name": "height", "kind": "numeric"},
                 {"name": "colour", "kind": "categorical",
                  "categories": ["blue", "green", "red"]}]}

Numeric (and boolean) columns become one float64 feature each. A categorical (string,
object or pandas categorical) column with categories ``c_0 < c_1 < ...`` (sorted as text)
becomes one 0/1 feature per category after the first, named ``column=category``: the
first category is the reference level (all zeros), as in statsmodels/patsy treatment
coding, so a model with an intercept stays identified. A category not seen at fit time
is an error (it would otherwise silently be read as the reference level).

A column is categorical by its type: text columns are, numeric and boolean ones are
not, and ``categorical=[...]`` (``--categorical``) makes any column categorical (a CSV
reader then reads its cells as text, so the categories are the file's text). Where the
types are inferred from text (CSV), a text column *most* of whose values are numbers is
taken for a numeric column with typos and refused (:func:`check_mixed_columns`): more
than half of its non-missing cells parse as numbers (as :func:`pandas.to_numeric` parses
them) and the others do not. The error names the column, its first non-numeric values and
their data rows (counted from 1, the header line not counted). So is a text column most of
whose values are numbers written with a decimal comma ("1,5"; '.' is the decimal mark here):
read as text, every distinct number would become a category.
"""
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._frames import apply_columns, learn_columns
from .._frames import as_text as _as_text  # noqa: F401 (the Dask readers' import)
from .._frames import is_categorical as _is_categorical
from .._frames import is_plain_dtype as _plain
from .errors import ColumnNotFoundError, DataFileError

__all__ = ["encode_table", "check_missing", "check_mixed_columns", "non_numbers",
           "mixed_column_message"]

_SHOWN = 5  # offending values quoted in a message


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def check_missing(frame: pd.DataFrame, source: str, drop_missing: bool) -> tuple[pd.DataFrame, int]:
    """Rows with a missing (or infinite) value: an error naming the columns and counts, or
    (``drop_missing``) the frame without them. Returns ``(frame, n_dropped)``."""
    # (numpy over the whole frame: column by column costs ~0.5 ms a column in pandas)
    bad = frame.isna().to_numpy(dtype=bool, copy=True)  # (a view may be read-only)
    numeric = [j for j, dtype in enumerate(frame.dtypes)
               if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)]
    if numeric:
        bad[:, numeric] |= ~np.isfinite(frame.iloc[:, numeric].to_numpy(dtype=np.float64,
                                                                         na_value=np.nan))
    per_column = bad.sum(axis=0)
    if not per_column.any():
        return frame, 0
    rows = np.asarray(bad.any(axis=1), dtype=bool)
    if drop_missing:
        kept = frame.loc[~rows].reset_index(drop=True)
        if kept.empty:
            raise DataFileError(f"{source}: every row has a missing value; nothing left to use")
        return kept, int(rows.sum())
    counts = {name: n for name, n in zip(frame.columns, per_column, strict=True) if n}
    listing = ", ".join(f"{name} ({_plural(int(n), 'row')})" for name, n in counts.items())
    raise DataFileError(f"{source}: missing or infinite values in {_plural(len(counts), 'column')}"
                        f": {listing}; fix the data or drop those {_plural(int(rows.sum()), 'row')}"
                        " with --drop-missing (drop_missing=True)")


def non_numbers(series: pd.Series) -> tuple[int, np.ndarray, np.ndarray]:
    """``(n_numbers, positions, values)``: how many non-missing cells of ``series`` parse
    as numbers, and the positions and values of those that do not."""
    present = series.notna().to_numpy()
    parsed = pd.to_numeric(series.astype(object), errors="coerce").to_numpy(dtype=float)
    bad = present & np.isnan(parsed)
    positions = np.flatnonzero(bad)
    return int(present.sum() - positions.size), positions, series.to_numpy()[positions]


def looks_numeric(n_numbers: int, n_text: int) -> bool:
    """A text column with typos rather than a text column: most of its values are numbers."""
    return n_text > 0 and n_numbers > n_text


def mixed_column_message(source: str, name: str, n_numbers: int, n_text: int,
                         rows: Sequence[int] | np.ndarray, values: Sequence[Any] | np.ndarray,
                         fitted: bool = False) -> str:
    """One line: a numeric column holds text at 1-based data ``rows`` (the first few)."""
    shown = ", ".join(f"{str(v)!r} (row {r})" for r, v in zip(rows[:_SHOWN], values[:_SHOWN]))
    more = f" and {n_text - _SHOWN} more" if n_text > _SHOWN else ""
    if fitted:
        return (f"{source}: column {name!r} was numeric at fit time but holds text here: "
                f"{shown}{more} (data rows counted from 1, the header not counted)")
    return (f"{source}: column {name!r} looks numeric ({n_numbers} of {n_numbers + n_text} "
            f"values are numbers) but holds text: {shown}{more} (data rows counted from 1, "
            "the header not counted); correct those cells, or empty them and use "
            f"--drop-missing, or treat the column as categories with --categorical {name} "
            f"(categorical=[{name!r}])")


def check_mixed_columns(frame: pd.DataFrame, source: str, categorical: Iterable[str] = ()) -> None:
    """Refuse a text column that looks numeric (see the module docstring), or whose values
    are mostly numbers written with a decimal comma, unless it is named in
    ``categorical``. Row numbers are positions in ``frame`` plus one."""
    for name, dtype in zip(frame.columns, frame.dtypes, strict=True):
        if name in categorical or _plain(dtype):
            continue
        s = frame[name]
        if not _is_categorical(s):
            continue
        n_numbers, positions, values = non_numbers(s)
        if looks_numeric(n_numbers, positions.size):
            raise DataFileError(mixed_column_message(source, name, n_numbers, positions.size,
                                                     positions + 1, values))
        _check_decimal_commas(s, source, name, n_numbers)


def _check_decimal_commas(series: pd.Series, source: str, name: str, n_numbers: int) -> None:
    """Refuse a text column most of whose values are numbers with a decimal comma ("1,5"):
    read as text it would become one category per distinct number."""
    text = series.dropna().astype(str).str.strip()
    comma = text.str.fullmatch(r"[+-]?\d*,\d+(?:[eE][+-]?\d+)?").to_numpy(dtype=bool)
    if not comma.any() or 2 * (int(comma.sum()) + n_numbers) <= text.size:
        return
    rows = np.flatnonzero(series.notna().to_numpy())[comma][:_SHOWN] + 1
    shown = ", ".join(f"{v!r} (row {r})" for r, v in zip(rows, text.to_numpy()[comma]))
    raise DataFileError(f"{source}: column {name!r} holds numbers written with a decimal "
                        f"comma: {shown} (data rows counted from 1); problin reads '.' as the "
                        "decimal mark: write the numbers with '.', or treat the column as "
                        f"categories with --categorical {name} (categorical=[{name!r}])")


def _check_numeric_columns(frame: pd.DataFrame, columns: list[dict[str, Any]], source: str) -> None:
    """At predict time: a column numeric at fit time must hold numbers only."""
    dtypes = frame.dtypes
    for col in columns:
        if col["kind"] != "numeric" or _plain(dtypes[col["name"]]):
            continue
        s = frame[col["name"]]
        if _is_categorical(s):
            n_numbers, positions, values = non_numbers(s)
            raise DataFileError(mixed_column_message(source, col["name"], n_numbers,
                                                     positions.size, positions + 1, values,
                                                     fitted=True))


def _apply(frame: pd.DataFrame, columns: list[dict[str, Any]],
           source: str) -> tuple[pd.DataFrame, list[str]]:
    dtypes = frame.dtypes
    for col in columns:
        if col["kind"] != "numeric" or _plain(dtypes[col["name"]]):
            continue
        s = frame[col["name"]]
        if _is_categorical(s):
            # rows are those of this frame (a partition, maybe)
            _check_numeric_columns(s.reset_index(drop=True).to_frame(), [col], source)
    X, names = apply_columns(frame, columns, source, DataFileError)
    return X.reset_index(drop=True), names


def encode_table(frame: pd.DataFrame, source: str, *, target: str | None = None,
                 encoding: dict[str, Any] | None = None, drop_missing: bool = False,
                 require_target: bool = False, categorical: Iterable[str] = (),
                 inferred: bool = False, ignore_target: bool = False
                 ) -> tuple[pd.DataFrame, np.ndarray | None, list[str], dict[str, Any], int]:
    """Split a raw DataFrame into features and target and encode the features.

    Parameters
    ----------
    frame : DataFrame
        Raw columns as read from the file.
    source : str
        The file name, for messages.
    target : str, optional
        Name of the target column; defaults to the encoding's target.
    encoding : dict, optional
        An encoding learnt before (at fit time); ``None`` learns one from ``frame``.
    drop_missing : bool
        Drop rows with missing values instead of raising.
    require_target : bool
        Whether the target column must be present.
    categorical : collection of str
        Columns to encode as categories whatever their type (when learning an encoding).
    inferred : bool
        The column types were inferred from text (CSV): refuse text columns that look
        numeric (:func:`check_mixed_columns`) when learning an encoding.
    ignore_target : bool
        With an ``encoding``: do not read the target column, even where present (its
        values, blank or not, then neither drop rows nor count as missing).

    Returns
    -------
    X : DataFrame of float64 features, y : ndarray or None, names : list of str,
    encoding : dict, n_dropped : int
    """
    if target is None and encoding is not None:
        target = encoding.get("target")
    has_target = target is not None and target in frame.columns and \
        not (ignore_target and encoding is not None)
    if target is not None and not has_target and (require_target or encoding is None):
        raise ColumnNotFoundError(f"{source}: no column named {target!r}; columns are "
                                  f"{list(map(str, frame.columns))}")
    if encoding is None:
        used = [c for c in frame.columns if c != target]
        if not used:
            raise DataFileError(f"{source}: no feature columns besides the target {target!r}")
    else:
        used = [c["name"] for c in encoding["columns"]]
        missing = [name for name in used if name not in frame.columns]
        if missing:
            raise DataFileError(f"{source}: columns the model was fitted on are missing: "
                                f"{missing}; the data has {list(map(str, frame.columns))}")
    if has_target and target is not None:  # (has_target implies a target)
        used.append(target)
    # Before rows are dropped, so that messages give the file's data rows.
    if encoding is None and inferred:
        check_mixed_columns(frame[used].reset_index(drop=True), source, categorical)
    elif encoding is not None:
        _check_numeric_columns(frame.reset_index(drop=True), encoding["columns"], source)
    frame, dropped = check_missing(frame[used], source, drop_missing)
    if encoding is None:
        columns = learn_columns(frame.drop(columns=[target]) if has_target else frame, categorical,
                                source, DataFileError,
                                "name it in --categorical {name} (categorical=[{name!r}])")
        encoding = {"format": "table", "target": target, "columns": columns}
    X, names = _apply(frame, encoding["columns"], source)
    y = frame[target].to_numpy() if has_target else None
    if y is not None and dropped and y.dtype.kind == "f" and np.all(y == np.round(y)):
        y = y.astype(np.int64)  # an integer column read as float only because of the NaN
    if y is not None and y.dtype == object and all(isinstance(v, str) for v in y):
        y = y.astype(object)
    return X, y, names, encoding, dropped
