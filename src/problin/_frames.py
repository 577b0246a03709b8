"""Categorical columns of a DataFrame as named 0/1 indicators, in Python as on the command line.

A column is categorical by its type: string, object and pandas ``category`` columns are;
numeric and boolean ones are not. A categorical column with levels ``c_0 < c_1 < ...``
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

:func:`encode_frame` is what every estimator's input validation calls first: a DataFrame
with categorical columns is encoded (the encoding learnt at fit and kept as
``input_encoding_``, applied again at predict); anything else passes through untouched.
"""
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["is_categorical", "as_text", "learn_columns", "apply_columns", "encode_frame",
           "ENCODING_ATTRIBUTE"]

ENCODING_ATTRIBUTE = "input_encoding_"  # the fitted estimator's encoding of its input


def is_categorical(series: pd.Series) -> bool:
    """Whether a column is encoded as categories (anything neither numeric nor boolean).

    A column of booleans with missing values (pandas reads True, blank, False as
    objects) is boolean: its blanks are missing values, not a level of their own."""
    if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        return False
    if series.dtype == object:
        values = series.dropna()
        return not (len(values) and all(isinstance(v, (bool, np.bool_)) for v in values))
    return True


def as_text(series: pd.Series) -> pd.Series:
    """A column's values as text (levels are compared and sorted as text)."""
    return series.astype(object).map(str)


def learn_columns(frame: pd.DataFrame, categorical: Iterable[str] = (), source: str = "X",
                  error: type[ValueError] = ValueError,
                  as_categories: str = "to text (X[{name!r}].astype(str))"
                  ) -> list[dict[str, Any]]:
    """The encoding of ``frame``'s columns; ``categorical`` names columns that are
    categorical whatever their type. Dates and times are refused (``error``; the message
    says how to make them categories: ``as_categories``) unless named there: as
    categories each distinct instant would be a level of its own."""
    chosen = set(categorical)
    columns: list[dict[str, Any]] = []
    for name in frame.columns:
        s = frame[name]
        if name not in chosen and _is_time(s):
            raise error(f"{source}: column {name!r} holds dates or times ({s.dtype}): convert "
                        "it to numbers first (e.g. days since a reference date), or "
                        f"{as_categories.format(name=str(name))} to treat it as categories")
        if is_categorical(s) or name in chosen:
            columns.append({"name": str(name), "kind": "categorical",
                            "categories": _levels(s)})
        else:
            columns.append({"name": str(name), "kind": "numeric"})
    return columns


def _is_time(series: pd.Series) -> bool:
    dtype = series.dtype
    return bool(pd.api.types.is_datetime64_any_dtype(dtype) or
                pd.api.types.is_timedelta64_dtype(dtype) or isinstance(dtype, pd.PeriodDtype))


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
    blocks, names = [], []
    for col in columns:
        s = frame[by_text[col["name"]]]
        if col["kind"] == "numeric":
            blocks.append(s.to_numpy(dtype=np.float64)[:, None])
            names.append(col["name"])
            continue
        cats = list(col["categories"])
        text = as_text(s)
        unseen = sorted(set(text) - set(cats))
        if unseen:
            raise error(f"{source}: column {col['name']!r} has categories not seen when the "
                        f"model was fitted: {unseen[:5]}; known: {cats[:10]}")
        codes = pd.Categorical(text, categories=cats).codes
        blocks.append((codes[:, None] == np.arange(1, len(cats))[None, :]).astype(np.float64))
        names.extend(f"{col['name']}={c}" for c in cats[1:])
    X = np.hstack(blocks) if blocks else np.empty((len(frame), 0))
    return pd.DataFrame(X, columns=names, index=frame.index), names


def encode_frame(estimator: Any, X: Any, reset: bool) -> Any:
    """``X`` with its categorical columns encoded, for an estimator's input validation.

    Parameters
    ----------
    estimator : estimator
        Keeps the encoding as ``input_encoding_`` (learnt where ``reset``; a refit on
        numeric data removes it).
    X : any
        A pandas DataFrame with string, object or ``category`` columns is encoded (see
        the module docstring); anything else is returned as it is.
    reset : bool
        Learn the encoding (fit) or apply the one learnt (predict, later ``partial_fit``).

    Returns
    -------
    X, or a float64 DataFrame of named features.
    """
    if not isinstance(X, pd.DataFrame):
        return X
    encoding: dict[str, Any] | None
    if reset:
        if not any(is_categorical(X[name]) for name in X.columns):
            estimator.__dict__.pop(ENCODING_ATTRIBUTE, None)
            return X
        if X.isna().to_numpy().any():
            bad = [str(c) for c in X.columns if X[c].isna().any()]
            raise ValueError(f"X has missing values in the columns {bad[:10]}")
        encoding = {"columns": learn_columns(X)}
        setattr(estimator, ENCODING_ATTRIBUTE, encoding)
    else:
        encoding = getattr(estimator, ENCODING_ATTRIBUTE, None)
        if encoding is None:
            return X
    return apply_columns(X, encoding["columns"], "X")[0]
