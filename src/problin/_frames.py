"""Categorical columns of a DataFrame as named 0/1 indicators, in Python as on the command line.

A column is categorical by its type: text columns (``str`` values in an ``object`` column,
pandas' string dtypes, Arrow strings) and pandas ``category`` columns are; numeric and
boolean ones are not, and neither is an ``object`` column whose values are all numbers
(``int``, ``float``, ``Decimal``, ``Fraction``, numpy numbers, booleans as 0/1): it is
converted to float64 (``float(value)``: a ``Decimal`` or ``Fraction`` becomes the nearest
float), as one indicator per distinct number would be silently wrong. Dates, times and
durations (datetime64, timedelta64, period and Arrow temporal dtypes, or ``object``
columns of ``datetime.date``/``datetime``/``time``/``timedelta`` values) are refused with
the advice to convert them to numbers (e.g. days since a reference date); so are ``object``
columns that mix numbers and text, or hold values that are neither (the message names
the column and the types found). A categorical column with levels ``c_0 < c_1 < ...``
(sorted as text; a pandas ``category`` column's in its declared order, as patsy takes
them, those that occur) becomes one indicator per level after the first, named
``column=level``: the first level is the reference (all zeros), the treatment coding of
statsmodels/patsy (Greene, *Econometric Analysis*, 8th ed., §6.2), so that a model with
an intercept stays identified. A level not seen when the encoding was learnt is an error
naming the column and the levels (reading it as the reference would be silently wrong).

The encoding is a JSON-able list of column records, the ``columns`` of the command line's
table encoding (:mod:`problin.io._table`) and of an estimator's ``input_encoding_``::

    [{"name": "height", "kind": "numeric"},
     {"name": "colour", "kind": "categorical", "categories": ["blue", "green", "red"]}]

:func:`encode_frame` is what every estimator's input validation calls first: a polars
DataFrame (or a pyarrow Table, or another frame with the dataframe interchange protocol)
is read as the equivalent pandas DataFrame; a DataFrame with two columns of the same name
is refused; one with categorical columns is encoded (the encoding learnt at fit and kept
as ``input_encoding_``, applied again at predict), one with ``object`` columns of numbers
converted; anything else passes through untouched.
"""
import datetime
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["is_categorical", "as_text", "learn_columns", "apply_columns", "encode_frame",
           "as_pandas", "check_unique_names", "check_frame", "numeric_input", "numeric_columns",
           "as_float64", "type_error", "is_plain_dtype", "ENCODING_ATTRIBUTE"]

ENCODING_ATTRIBUTE = "input_encoding_"  # the fitted estimator's encoding of its input
_AS_TEXT = "to text (X[{name!r}].astype(str))"  # how to make a column categories, in Python

# Values of an object column that are instants or durations (datetime.datetime and
# pd.Timestamp are dates, pd.Timedelta a timedelta).
_TIME_TYPES = (datetime.date, datetime.time, datetime.timedelta, np.datetime64,
               np.timedelta64, pd.Period)
_TEXT, _NUMBER, _TIME, _OTHER = "text", "number", "time", "other"
_INFERRED = {"string": _TEXT, "floating": _NUMBER, "integer": _NUMBER, "decimal": _NUMBER,
             "mixed-integer-float": _NUMBER, "boolean": _NUMBER, "empty": ""}


@lru_cache(maxsize=256)
def _value_kind(kind: type) -> str:
    """What a value of type ``kind`` is: text, a real number (bools and numpy's included;
    Decimal is not a numbers.Real but converts exactly as float does), a time, or other
    (complex numbers, bytes, lists, ...)."""
    if issubclass(kind, str):
        return _TEXT
    if issubclass(kind, (Real, Decimal, np.bool_)):
        return _NUMBER
    return _TIME if issubclass(kind, _TIME_TYPES) else _OTHER


def _object_kinds(series: pd.Series) -> dict[str, list[str]]:
    """The kinds of an object column's non-missing values, each with its type names."""
    # pandas' inference (in C) settles the common columns without a type per value
    inferred = pd.api.types.infer_dtype(series, skipna=True)
    if inferred in _INFERRED:
        found = _INFERRED[inferred]
        return {found: ["str" if found == _TEXT else inferred]} if found else {}
    kinds: dict[str, list[str]] = {}
    for kind in set(map(type, series[_present(series)].to_numpy())):
        kinds.setdefault(_value_kind(kind), []).append(kind.__name__)
    return kinds


def _present(series: pd.Series, name: Any = None, source: str = "X",
             error: type[ValueError] = ValueError) -> np.ndarray:
    """``series.notna()`` as booleans, or ``error`` naming the column where it holds a
    signalling NaN: pandas' isna compares a Decimal with itself, which raises
    decimal.InvalidOperation for Decimal("sNaN") (a quiet NaN is a missing value)."""
    try:
        return series.notna().to_numpy()
    except InvalidOperation:
        raise error(f"{source}: column {str(series.name if name is None else name)!r} holds "
                    "a signalling NaN (Decimal('sNaN')), which is neither a number nor a "
                    "missing value: replace it by a number, or by None for a missing value"
                    ) from None


def _missing(frame: pd.DataFrame, source: str = "X") -> pd.DataFrame:
    """``frame.isna()``, a signalling NaN an error naming its column (:func:`_present`)."""
    try:
        return frame.isna()
    except InvalidOperation:
        for label in frame.columns:
            _present(frame[label], label, source)
        raise  # (not reached: one of the columns raised)


def is_categorical(series: pd.Series) -> bool:
    """Whether a column is encoded as categories: text and ``category`` columns are.

    An ``object`` column is text unless it holds numbers or booleans only (a column of
    booleans with missing values, as pandas reads True, blank, False, is boolean: its
    blanks are missing values, not a level of their own), dates or times, or a mix; an
    empty one (a Dask frame's meta) counts as text."""
    dtype = series.dtype
    if dtype == object:
        kinds = _object_kinds(series)
        return not kinds or set(kinds) == {_TEXT}
    return isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_string_dtype(dtype)


def as_text(series: pd.Series) -> pd.Series:
    """A column's values as text (levels are compared and sorted as text)."""
    return series.astype(object).map(str)


def learn_columns(frame: pd.DataFrame, categorical: Iterable[str] = (), source: str = "X",
                  error: type[ValueError] = ValueError,
                  as_categories: str = _AS_TEXT
                  ) -> list[dict[str, Any]]:
    """The encoding of ``frame``'s columns; ``categorical`` names columns that are
    categorical whatever their type. Dates and times are refused (``error``; the message
    says how to make them categories: ``as_categories``) unless named there: as
    categories each distinct instant would be a level of its own. So are columns of
    neither numbers nor text (:func:`_numbers` says why)."""
    chosen = set(categorical)
    columns: list[dict[str, Any]] = []
    for name, dtype in frame.dtypes.items():
        if name not in chosen and is_plain_dtype(dtype):  # (no Series per column: wide files)
            columns.append({"name": str(name), "kind": "numeric"})
            continue
        s = frame[name]
        if name in chosen or is_categorical(s):
            columns.append({"name": str(name), "kind": "categorical",
                            "categories": _levels(s)})
            continue
        _numbers(s, str(name), source, error, as_categories)  # (refuses what is not numbers)
        columns.append({"name": str(name), "kind": "numeric"})
    return columns


def _is_time(series: pd.Series) -> bool:
    dtype = series.dtype
    if isinstance(dtype, pd.ArrowDtype):
        import pyarrow as pa  # (an Arrow dtype means pyarrow is there)
        return bool(pa.types.is_temporal(dtype.pyarrow_dtype))
    return bool(pd.api.types.is_datetime64_any_dtype(dtype) or
                pd.api.types.is_timedelta64_dtype(dtype) or isinstance(dtype, pd.PeriodDtype))


def is_plain_dtype(dtype: Any) -> bool:
    """A (real) numeric or boolean dtype: its values are numbers as they are."""
    types = pd.api.types
    return bool(dtype != object and (types.is_bool_dtype(dtype) or (
        types.is_numeric_dtype(dtype) and not types.is_complex_dtype(dtype))))


def _numbers(series: pd.Series, name: str, source: str, error: type[ValueError],
             as_categories: str | None = _AS_TEXT,
             fitted: bool = False) -> np.ndarray:
    """A numeric column's values as float64 (missing values NaN), or ``error`` naming the
    column where it holds dates or times, text, a mix, or values that are not real
    numbers. ``fitted``: the column was numeric when the encoding was learnt;
    ``as_categories``: how to make it categories (None: numbers only)."""
    dtype = series.dtype
    if is_plain_dtype(dtype):
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    if _is_time(series):
        kinds = {_TIME: [str(dtype)]}
    else:  # (a category, string or complex column where the model had numbers, ...)
        kinds = _object_kinds(series if dtype == object else series.astype(object))
    if set(kinds) <= {_NUMBER}:
        present = _present(series, name, source, error)
        out = np.full(present.size, np.nan)
        try:
            out[present] = np.fromiter(map(float, series.to_numpy()[present]), np.float64,
                                       int(present.sum()))
        except (OverflowError, ValueError) as exc:  # 10**400, Decimal("sNaN")
            raise error(f"{source}: column {name!r} holds a number that is not a float64 "
                        f"({exc})") from None
        return out
    raise _not_numbers(kinds, name, source, error, as_categories, fitted)


def _not_numbers(kinds: dict[str, list[str]], name: str, source: str, error: type[ValueError],
                 as_categories: str | None, fitted: bool) -> ValueError:
    """The error for a column of ``kinds`` (other than numbers) where numbers are needed."""
    found = ", ".join(sorted(t for types in kinds.values() for t in types))
    what, how = "values that are neither all numbers nor all text", "e.g. with pandas.to_numeric"
    if set(kinds) == {_TIME}:
        what, how = "dates or times", "e.g. days since a reference date"
    elif set(kinds) == {_TEXT}:
        what = "text"
    if fitted:
        return error(f"{source}: column {name!r} holds {what} ({found}), but the model was "
                     f"fitted on numbers in it: convert it to numbers ({how})")
    return error(f"{source}: column {name!r} holds {what} ({found}): convert it to numbers "
                 f"first ({how})" + ("" if as_categories is None else
                                      f", or {as_categories.format(name=name)} to treat it "
                                      "as categories"))


def type_error(name: str, found: str, time: bool, source: str,
               error: type[ValueError] = ValueError, as_categories: str = _AS_TEXT
               ) -> ValueError:
    """The error :func:`learn_columns` raises for a column ``name`` of values of the type
    ``found`` (e.g. ``date``, ``datetime64[us]``, ``binary``): dates or times (``time``)
    or neither numbers nor text, for a reader that knows a column's type before reading
    its values (the Dask reader, from a Parquet schema)."""
    return _not_numbers({_TIME if time else _OTHER: [found]}, name, source, error,
                        as_categories, False)


def as_float64(series: pd.Series, name: str, source: str,
               error: type[ValueError] = ValueError) -> np.ndarray:
    """A column of numbers (e.g. an ``object`` column of ``Decimal``) as float64 by the
    rules of the in-memory encoding (``float(value)``, missing values NaN), or ``error``
    naming the column where it holds anything else."""
    return _numbers(series, name, source, error, None)


def _levels(series: pd.Series) -> list[str]:
    """The levels of a categorical column as text: a pandas ``category`` column's in its
    declared order (the first is the reference), others sorted; only those present."""
    present = set(as_text(series.dropna()))
    if isinstance(series.dtype, pd.CategoricalDtype):
        declared = [str(c) for c in series.cat.categories]
        return [c for i, c in enumerate(declared) if c in present and c not in declared[:i]]
    return sorted(present)


def apply_columns(frame: pd.DataFrame, columns: list[dict[str, Any]], source: str = "X",
                  error: type[ValueError] = ValueError) -> tuple[pd.DataFrame, list[str]]:
    """The float64 features of ``frame`` under the encoding ``columns``, and their names.

    Raises ``error`` (a ValueError) naming the column and the levels where a categorical
    column holds a level the encoding does not know, and where a column is missing.
    """
    # The encoding names columns as text (a model file holds text): a frame's columns
    # are found by theirs, also where they are integers (pandas' default labels).
    by_text: dict[str, Any] = {}
    for label in frame.columns:
        if by_text.setdefault(str(label), label) is not label:
            raise error(f"{source}: the columns {by_text[str(label)]!r} and {label!r} have "
                        "the same name as text; rename one of them")
    missing = [c["name"] for c in columns if c["name"] not in by_text]
    if missing:
        raise error(f"{source}: columns the model was fitted on are missing: {missing}; the "
                    f"data has {list(map(str, frame.columns))}")
    dtypes = frame.dtypes
    widths = [1 if c["kind"] == "numeric" else len(c["categories"]) - 1 for c in columns]
    starts = np.concatenate([[0], np.cumsum(widths, dtype=np.int64)]).astype(int)
    X = np.empty((len(frame), int(starts[-1])))
    names: list[str] = []
    plain: list[tuple[int, Any]] = []  # (output column, label): taken in one block
    for col, at in zip(columns, starts[:-1], strict=False):
        label = by_text[col["name"]]
        if col["kind"] == "numeric":
            names.append(col["name"])
            if is_plain_dtype(dtypes[label]):
                plain.append((int(at), label))
            else:
                X[:, at] = _numbers(frame[label], col["name"], source, error, fitted=True)
            continue
        cats = list(col["categories"])
        text = as_text(frame[label])
        unseen = sorted(set(text) - set(cats))
        if unseen:
            raise error(f"{source}: column {col['name']!r} has categories not seen when the "
                        f"model was fitted: {unseen[:5]}; known: {cats[:10]}")
        codes = pd.Categorical(text, categories=cats).codes
        X[:, at:at + len(cats) - 1] = codes[:, None] == np.arange(1, len(cats))[None, :]
        names.extend(f"{col['name']}={c}" for c in cats[1:])
    if plain:
        at, labels = zip(*plain, strict=True)
        X[:, list(at)] = frame[list(labels)].to_numpy(dtype=np.float64, na_value=np.nan)
    return pd.DataFrame(X, columns=names, index=frame.index), names


def as_pandas(X: Any) -> Any:
    """``X`` as a pandas DataFrame where it is another library's data frame: a polars
    DataFrame or a pyarrow Table (by ``to_pandas()``), or any other object with the
    dataframe interchange protocol (``__dataframe__``) save Dask's, whose frames the
    estimators read in chunks; anything else as it is. polars and pyarrow are not
    dependencies: they are recognised by the name of their module, never imported."""
    if isinstance(X, pd.DataFrame):
        return X
    kind = type(X)
    library, name = kind.__module__.partition(".")[0], kind.__name__
    if library == "polars" and name == "LazyFrame":
        raise TypeError("X is a polars LazyFrame: collect() it into a DataFrame first")
    if (library, name) in (("polars", "DataFrame"), ("pyarrow", "Table"),
                           ("pyarrow", "RecordBatch")):
        try:
            return X.to_pandas()
        except ImportError as exc:  # polars converts through pyarrow
            raise ImportError(f"reading a {library} {name} needs pyarrow ({exc}): install it "
                              "(pip install pyarrow), or pass X.to_pandas() or a numpy array"
                              ) from None
    if hasattr(kind, "__dataframe__") and library not in ("dask", "dask_expr"):
        return pd.api.interchange.from_dataframe(X)
    return X


def check_unique_names(frame: pd.DataFrame, source: str = "X",
                       error: type[ValueError] = ValueError) -> None:
    """Refuse a frame with two columns of the same name (``frame[name]`` would be a frame,
    and which column a feature name meant would be ambiguous)."""
    if frame.columns.is_unique:  # (cached by the Index, which a frame's slices share:
        return                   # duplicated() hashed the names again at every fit)
    repeated = frame.columns[frame.columns.duplicated()].unique()
    if len(repeated):
        raise error(f"{source}: more than one column is named {list(repeated)[:10]}: give "
                    "each column its own name")


def _numeric_dtypes(frame: pd.DataFrame) -> bool:
    """Whether every column has a (real) numeric or boolean dtype: nothing to convert."""
    return all(map(is_plain_dtype, set(frame.dtypes)))


def _numeric_frame(frame: pd.DataFrame, fitted: bool,
                   as_categories: str | None = _AS_TEXT
                   ) -> pd.DataFrame:
    """A frame of numbers (object columns of numbers among them) as float64, its column
    labels kept; other columns are errors (:func:`_numbers`)."""
    values = [_numbers(frame[label], str(label), "X", ValueError, as_categories, fitted)
              for label in frame.columns]
    return pd.DataFrame(np.column_stack(values), columns=frame.columns, index=frame.index)


def check_frame(X: Any) -> Any:
    """``X`` as a pandas frame (:func:`as_pandas`) with unique column names, for a
    meta-estimator that hands it on to one that encodes it; anything else as it is."""
    X = as_pandas(X)
    if isinstance(X, pd.DataFrame):
        check_unique_names(X)
    return X


def numeric_input(X: Any) -> Any:
    """``X`` for an estimator of numbers only (the basis functions): a frame (of any
    library) with unique names whose ``object`` columns of numbers are float64; text,
    dates and mixed columns are errors naming the column. Anything else as it is."""
    X = check_frame(X)
    if isinstance(X, pd.DataFrame) and not _numeric_dtypes(X):
        return _numeric_frame(X, fitted=False, as_categories=None)
    return X


def numeric_columns(frame: Any, keep: Iterable[str] = (), source: str = "data") -> Any:
    """A frame for a formula: :func:`check_frame`'s, with its ``object`` columns of
    numbers as float64 (a formula would read them as categories); text and ``category``
    columns as they are, columns of dates or times or of mixed values errors naming
    them, save those named in ``keep`` (read as categories, e.g. inside ``C()``)."""
    frame = check_frame(frame)
    if not isinstance(frame, pd.DataFrame) or _numeric_dtypes(frame):
        return frame
    kept = set(keep)
    changed = {label: _numbers(frame[label], str(label), source, ValueError)
               for label in frame.columns if str(label) not in kept and
               not is_plain_dtype(frame[label].dtype) and not is_categorical(frame[label])}
    if changed:
        frame = frame.copy()
        for label, values in changed.items():
            frame[label] = values
    return frame


def encode_frame(estimator: Any, X: Any, reset: bool) -> Any:
    """``X`` with its categorical columns encoded, for an estimator's input validation.

    Parameters
    ----------
    estimator : estimator
        Keeps the encoding as ``input_encoding_`` (learnt where ``reset``; a refit on
        numeric data removes it).
    X : any
        A pandas DataFrame (or another library's, :func:`as_pandas`) with text or
        ``category`` columns is encoded, one with ``object`` columns of numbers converted
        to float64 (see the module docstring); anything else is returned as it is.
    reset : bool
        Learn the encoding (fit) or apply the one learnt (predict, later ``partial_fit``).

    Returns
    -------
    X, or a float64 DataFrame of named features.

    Raises
    ------
    ValueError
        Two columns of the same name; columns of dates or times, or of values neither
        all numbers nor all text; missing values in a frame with categorical columns.
    """
    X = check_frame(X)
    if not isinstance(X, pd.DataFrame):
        return X
    encoding: dict[str, Any] | None
    if reset:
        numeric = _numeric_dtypes(X)
        if numeric or not any(is_categorical(X[name]) for name in X.columns):
            estimator.__dict__.pop(ENCODING_ATTRIBUTE, None)
            return X if numeric else _numeric_frame(X, fitted=False)
        missing = _missing(X)
        if missing.to_numpy().any():
            bad = [str(c) for c in X.columns if missing[c].any()]
            raise ValueError(f"X has missing values in the columns {bad[:10]}")
        encoding = {"columns": learn_columns(X)}
        setattr(estimator, ENCODING_ATTRIBUTE, encoding)
    else:
        encoding = getattr(estimator, ENCODING_ATTRIBUTE, None)
        if encoding is None:
            return X if _numeric_dtypes(X) else _numeric_frame(X, fitted=True)
    return apply_columns(X, encoding["columns"], "X")[0]
