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
"""
import numpy as np
import pandas as pd

from .errors import ColumnNotFoundError, DataFileError

__all__ = ["encode_table", "check_missing"]


def _plural(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"


def check_missing(frame, source, drop_missing):
    """Rows with a missing (or infinite) value: an error naming the columns and counts, or
    (``drop_missing``) the frame without them. Returns ``(frame, n_dropped)``."""
    bad = frame.isna()
    numeric = frame.select_dtypes(include=["number"])
    if numeric.shape[1]:
        bad[numeric.columns] |= ~np.isfinite(numeric.to_numpy(dtype=np.float64, na_value=np.nan))
    counts = bad.sum()
    counts = counts[counts > 0]
    if counts.empty:
        return frame, 0
    rows = bad.any(axis=1)
    if drop_missing:
        kept = frame.loc[~rows].reset_index(drop=True)
        if kept.empty:
            raise DataFileError(f"{source}: every row has a missing value; nothing left to use")
        return kept, int(rows.sum())
    listing = ", ".join(f"{name} ({_plural(int(n), 'row')})" for name, n in counts.items())
    raise DataFileError(f"{source}: missing or infinite values in {_plural(len(counts), 'column')}"
                        f": {listing}; fix the data or drop those {_plural(int(rows.sum()), 'row')}"
                        " with --drop-missing (drop_missing=True)")


def _is_categorical(series):
    return not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series))


def _as_text(series):
    return series.astype(object).map(str)


def _learn(frame):
    columns = []
    for name in frame.columns:
        s = frame[name]
        if _is_categorical(s):
            columns.append({"name": str(name), "kind": "categorical",
                            "categories": sorted(set(_as_text(s)))})
        else:
            columns.append({"name": str(name), "kind": "numeric"})
    return columns


def _apply(frame, columns, source):
    blocks, names = [], []
    for col in columns:
        s = frame[col["name"]]
        if col["kind"] == "numeric":
            if _is_categorical(s):
                raise DataFileError(f"{source}: column {col['name']!r} was numeric at fit time "
                                    f"but holds text here (e.g. {_as_text(s).iloc[0]!r})")
            blocks.append(s.to_numpy(dtype=np.float64)[:, None])
            names.append(col["name"])
            continue
        cats = col["categories"]
        text = _as_text(s)
        unseen = sorted(set(text) - set(cats))
        if unseen:
            raise DataFileError(f"{source}: column {col['name']!r} has categories not seen when "
                                f"the model was fitted: {unseen[:5]}; known: {cats[:10]}")
        codes = pd.Categorical(text, categories=cats).codes
        blocks.append((codes[:, None] == np.arange(1, len(cats))[None, :]).astype(np.float64))
        names.extend(f"{col['name']}={c}" for c in cats[1:])
    X = np.hstack(blocks) if blocks else np.empty((len(frame), 0))
    return pd.DataFrame(X, columns=names), names


def encode_table(frame, source, *, target=None, encoding=None, drop_missing=False,
                 require_target=False):
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

    Returns
    -------
    X : DataFrame of float64 features, y : ndarray or None, names : list of str,
    encoding : dict, n_dropped : int
    """
    if target is None and encoding is not None:
        target = encoding.get("target")
    has_target = target is not None and target in frame.columns
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
    if has_target:
        used.append(target)
    frame, dropped = check_missing(frame[used], source, drop_missing)
    if encoding is None:
        columns = _learn(frame.drop(columns=[target]) if has_target else frame)
        encoding = {"format": "table", "target": target, "columns": columns}
    X, names = _apply(frame, encoding["columns"], source)
    y = frame[target].to_numpy() if has_target else None
    if y is not None and dropped and y.dtype.kind == "f" and np.all(y == np.round(y)):
        y = y.astype(np.int64)  # an integer column read as float only because of the NaN
    if y is not None and y.dtype == object and all(isinstance(v, str) for v in y):
        y = y.astype(object)
    return X, y, names, encoding, dropped
