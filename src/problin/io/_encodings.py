"""The data encoding stored in a model file, checked against the model before any use.

The encoding (:mod:`problin.io._table`, :mod:`problin.io.readers`) is metadata that
``problin predict`` applies to new data *before* the model sees it: a table encoding's
categorical column of ``k`` categories becomes ``k - 1`` indicator columns of every row.
Its sizes are claims of the file (re-signing an edited file is easy), and an encoding of
400,001 categories for a model of 2 features made a 0.9 MB file allocate 6 GiB at predict,
long before the model's own width check. So every size it declares is held, when the file
is read (and when it is written: :func:`problin.save` refuses what ``load`` would), to

- an absolute cap, before anything is counted or built: at most ``MAX_ENCODED_FEATURES``
  columns, categories and features (the widest model a file can hold:
  ``MAX_MODEL_BYTES`` of float64 coefficients, one per feature);
- what the model needs: the encoding's output width (numeric columns, categories after
  the first of each categorical column; ``n_features`` of LibSVM and ``.npz``
  encodings) equals the model's ``n_features_in_``, and the stored feature names count
  as many (``n_features_in_`` itself is bounded by the values the file stores,
  :mod:`problin.io._self_check`), so encoded data is never wider than the model;
- its structure: names and categories are text, categories distinct (``pd.Categorical``
  would raise on a repeat at predict), kinds ``numeric`` or ``categorical``.

A formula model's encoding (``"format": "formula"``) is the formula's own state, checked
by :mod:`problin.io._formula_state`; an encoding of another, unknown format is no
encoding problin applies (``read_data`` refuses to use it) and is left as stored.
"""
from collections.abc import Sequence
from typing import Any

__all__ = ["MAX_ENCODED_FEATURES", "encoding_problem"]

MAX_ENCODED_FEATURES = 2 ** 27  # 1 GiB (MAX_MODEL_BYTES) of float64 coefficients
_CHECKED = ("table", "npz", "libsvm")


def encoding_problem(encoding: Any, n_features: Any, feature_names: Sequence[Any] | None
                     ) -> str | None:
    """What is wrong with ``encoding`` for a model of ``n_features`` inputs (``None`` when
    unknown: an unfitted model) and the stored ``feature_names``, or ``None``."""
    if encoding is None:
        return None
    if not isinstance(encoding, dict):
        return "the encoding is not a JSON object"
    fmt = encoding.get("format", "table")  # (read_data's default: files of early versions)
    if fmt not in _CHECKED:
        return None
    if not isinstance(encoding.get("target"), (str, type(None))):
        return "the encoding's target is not a column name"
    if fmt == "table":
        width = _table_width(encoding.get("columns"))
    else:
        width = _declared_width(encoding, fmt)
    if isinstance(width, str):
        return width
    if n_features is not None and width != n_features:
        return (f"the {fmt} encoding gives {width} features, but the model takes "
                f"n_features_in_ = {n_features!r}")
    if feature_names is not None and len(feature_names) != width:
        return (f"the {fmt} encoding gives {width} features, but the file names "
                f"{len(feature_names)} features")
    return None


def _table_width(columns: Any) -> int | str:
    """The number of features a table encoding's ``columns`` make, or what is wrong."""
    if not isinstance(columns, list) or not columns:
        return "the table encoding's 'columns' is not a non-empty list"
    if len(columns) > MAX_ENCODED_FEATURES:
        return (f"the table encoding declares {len(columns)} columns, more than "
                f"{MAX_ENCODED_FEATURES}")
    width, names = 0, set()
    for j, col in enumerate(columns):
        if not (isinstance(col, dict) and isinstance(col.get("name"), str)):
            return f"column {j} of the table encoding has no name"
        name, kind = col["name"], col.get("kind")
        if name in names:
            return f"the table encoding names the column {name!r} twice"
        names.add(name)
        if kind == "numeric":
            width += 1
        elif kind == "categorical":
            cats = col.get("categories")
            if not isinstance(cats, list) or not cats:
                return f"the categories of column {name!r} are not a non-empty list"
            width += len(cats) - 1
            if width > MAX_ENCODED_FEATURES:  # before the categories are read one by one
                return (f"column {name!r} brings the table encoding to {width} features, "
                        f"more than {MAX_ENCODED_FEATURES}")
            if not all(isinstance(c, str) for c in cats) or len(set(cats)) != len(cats):
                return f"the categories of column {name!r} are not distinct pieces of text"
        else:
            return f"column {name!r} of the table encoding is of kind {kind!r}"
    return width


def _declared_width(encoding: dict[str, Any], fmt: str) -> int | str:
    """``n_features`` of a LibSVM or ``.npz`` encoding, or what is wrong with it."""
    n = encoding.get("n_features")
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_ENCODED_FEATURES:
        return (f"the {fmt} encoding's n_features is {str(n)[:40]!r}, not a number of "
                f"features up to {MAX_ENCODED_FEATURES}")
    names = encoding.get("feature_names")
    if fmt == "npz" and names is not None and not (
            isinstance(names, list) and len(names) == n and all(isinstance(v, str) for v in names)):
        return f"the npz encoding's feature_names are not {n} column names"
    if fmt == "libsvm" and not isinstance(encoding.get("zero_based"), (bool, type(None))):
        return "the libsvm encoding's zero_based is not true or false"
    return n
