"""Data readers for the command line: CSV, Parquet, LibSVM/SVMlight and ``.npz``.

:func:`read_data` returns a :class:`Dataset` of float64 features, the target and the
*encoding* that turned the file's columns into features (stored in model files and applied
again at predict time, see :mod:`problin.io._table`).

Formats (chosen by extension, or ``format=``):

- ``csv`` (``.csv``, ``.tsv``, ``.txt``, ``.data``): the delimiter (``, ; tab |``) is sniffed
  from the first 64 KiB; the first row is a header unless it looks like data (all of its
  fields are numbers), or as forced by ``header=``. Without a header the columns are named
  ``x0, x1, ...``. String columns are one-hot encoded; a text column most of whose
  values are numbers is an error naming the non-numeric cells, unless named in
  ``categorical`` (see :mod:`problin.io._table`).
- ``parquet`` (``.parquet``, ``.pq``): read by pyarrow (the ``parquet`` extra);
  string/categorical columns encoded.
- ``libsvm`` (``.svm``, ``.libsvm``, ``.svmlight``): sparse CSR features named ``f0, f1, ...``
  (the file's indices, zero- or one-based as detected at fit time); the label is the target,
  named ``label``; integral labels become integers. The width is ``n_features`` when given
  (at predict time: the model's); else the largest index, which must be plausible: at
  most ``max(2**20, number of values in the file)`` (a feature index with no value
  anywhere is a feature the fit knows nothing of), checked before anything per feature
  is built.
- ``npz`` (``.npz``): arrays ``X`` (2-D numeric), the target array (``y`` by default, or the
  name given as ``target``) and optionally ``feature_names`` (strings); read with
  ``allow_pickle=False``, so object arrays are refused.

Missing (or infinite) values raise :class:`DataFileError` naming the columns and counts
unless ``drop_missing=True``; every parsing failure is a :class:`DataFileError`.
"""
import csv
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from .._optional import import_optional
from ._csv_header import check_unique_names, first_record
from ._table import check_missing, encode_table
from .errors import ColumnNotFoundError, DataFileError

__all__ = ["Dataset", "read_data", "detect_format", "FORMATS"]

FORMATS = ("csv", "parquet", "libsvm", "npz")
_EXTENSIONS = {".csv": "csv", ".tsv": "csv", ".txt": "csv", ".data": "csv",
               ".parquet": "parquet", ".pq": "parquet", ".svm": "libsvm",
               ".libsvm": "libsvm", ".svmlight": "libsvm", ".npz": "npz"}
_SAMPLE_BYTES = 64 * 1024
_MIN_FEATURE_LIMIT = 2 ** 20  # LibSVM: as many features as the default hashing trick


@dataclass
class Dataset:
    """Features, target and encoding read from one file.

    Attributes
    ----------
    X : DataFrame (dense, float64, columns named) or scipy.sparse CSR matrix
    y : ndarray or None
    feature_names : list of str
    target : str or None
    encoding : dict
    n_dropped : int
        Rows dropped for missing values (``drop_missing=True``).
    """

    X: Any
    y: Any
    feature_names: list
    target: object
    encoding: dict
    n_dropped: int = 0


def detect_format(path: str | os.PathLike[str], format: str | None = None) -> str:
    """The reader format of ``path``: ``format`` if given, else from the file extension."""
    if format is not None:
        if format not in FORMATS:
            raise ValueError(f"unknown data format {format!r}; choose from {list(FORMATS)}")
        return format
    ext = os.path.splitext(os.fspath(path))[1].lower()
    if ext not in _EXTENSIONS:
        raise DataFileError(f"{path}: cannot tell the format from the extension {ext!r}; use "
                            f"one of {sorted(_EXTENSIONS)} or give the format ({list(FORMATS)})")
    return _EXTENSIONS[ext]


def read_data(path: str | os.PathLike[str], target: str | None = None, *, format: str | None = None,
              encoding: dict[str, Any] | None = None, drop_missing: bool = False,
              header: bool | None = None, require_target: bool = False,
              categorical: Sequence[str] | None = None, n_features: int | None = None,
              ignore_target: bool = False) -> Dataset:
    """Read a data file into features and target.

    Parameters
    ----------
    path : str or path-like
    target : str, optional
        Name of the target column (default: the encoding's target, if any).
    format : {"csv", "parquet", "libsvm", "npz"}, optional
        Defaults to the one implied by the extension.
    encoding : dict, optional
        The encoding learnt at fit time (from a model file); ``None`` learns one.
    drop_missing : bool, default False
        Drop rows with missing values instead of raising.
    header : bool, optional
        CSV only: force (``True``) or deny (``False``) a header row; default: detect.
    require_target : bool, default False
        Raise if the target column is absent.
    ignore_target : bool, default False
        CSV and Parquet with an ``encoding``: leave the target column unread, also where
        the file has it (rows to predict whose target cells are blank), and give ``y``
        None.
    categorical : list of str, optional
        CSV and Parquet: columns to encode as categories even if their values are
        numbers (a CSV reader reads their cells as text). Without it, a CSV text column
        more than half of whose non-missing cells are numbers is an error. At predict
        time the encoding decides; a column named here must be categorical in it.
    n_features : int, optional
        LibSVM: the number of features (a larger index is an error); needed at fit time
        for indices beyond ``max(2**20, number of values in the file)``.

    Returns
    -------
    Dataset

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    DataFileError
        (a ``ValueError``) if the file cannot be parsed, has missing values, or does not
        match the encoding; :class:`ColumnNotFoundError` if a named column is absent.

    Examples
    --------
    >>> import os, tempfile
    >>> from problin.io.readers import read_data
    >>> path = os.path.join(tempfile.mkdtemp(), "pets.csv")
    >>> _ = open(path, "w").write("weight;kind;adopted\\n3.5;cat;yes\\n20;dog;no\\n4;cat;no\\n")
    >>> data = read_data(path, target="adopted")
    >>> data.feature_names, data.y.tolist()
    (['weight', 'kind=dog'], ['yes', 'no', 'no'])
    """
    path = os.fspath(path)
    fmt = detect_format(path, format)
    if encoding is not None:
        fitted = encoding.get("format", "table")
        if (fitted == "table") != (fmt in ("csv", "parquet")) or fitted not in ("table", fmt):
            kind = "table (CSV/Parquet)" if fitted == "table" else fitted
            raise DataFileError(f"{path}: the model was fitted on {kind} data, this file "
                                f"is {fmt}")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such data file: {path}")
    categorical = _check_options(path, fmt, encoding, categorical, n_features)
    if fmt == "libsvm":
        return _read_libsvm(path, target, encoding, require_target, n_features)
    if fmt == "npz":
        return _read_npz(path, target, encoding, drop_missing, require_target)
    text = set(categorical)
    if encoding is not None:  # read as at fit time: categories are the file's text
        text |= {c["name"] for c in encoding["columns"] if c["kind"] == "categorical"}
    frame = _read_csv(path, header, text) if fmt == "csv" else _read_parquet(path)
    absent = [c for c in categorical if c not in frame.columns]
    if absent:
        raise ColumnNotFoundError(f"{path}: categorical columns {absent} are not in the data; "
                                  f"columns are {list(map(str, frame.columns))}")
    if frame.shape[0] == 0:
        raise DataFileError(f"{path}: no data rows")
    X, y, names, enc, dropped = encode_table(frame, path, target=target, encoding=encoding,
                                             drop_missing=drop_missing,
                                             require_target=require_target,
                                             categorical=categorical, inferred=fmt == "csv",
                                             ignore_target=ignore_target)
    return Dataset(X, y, names, enc["target"], enc, dropped)


def _check_options(path: Any, fmt: str, encoding: dict[str, Any] | None,
                   categorical: Sequence[str] | str | None, n_features: int | None) -> list[str]:
    """Validate ``categorical`` and ``n_features`` for the format; the categorical names."""
    categorical = [categorical] if isinstance(categorical, str) else list(categorical or ())
    if categorical and fmt not in ("csv", "parquet"):
        raise DataFileError(f"{path}: categorical columns apply to CSV and Parquet data, "
                            f"not {fmt}")
    if encoding is not None and categorical:
        kinds = {c["name"]: c["kind"] for c in encoding.get("columns", [])}
        wrong = [c for c in categorical if kinds.get(c, "categorical") != "categorical"]
        if wrong:
            raise DataFileError(f"{path}: columns {wrong} were numeric when the model was "
                                "fitted; the model's encoding decides at predict time")
    if n_features is not None:
        if fmt != "libsvm":
            raise DataFileError(f"{path}: n_features applies to LibSVM data, not {fmt}")
        if isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)) \
                or n_features < 1:
            raise ValueError(f"n_features must be a positive integer, got {n_features!r}")
        fitted = (encoding or {}).get("n_features")
        if fitted is not None and fitted != n_features:
            raise DataFileError(f"{path}: n_features={n_features}, but the model was fitted "
                                f"on {fitted} features")
    return categorical


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def csv_dialect(path: Any, sample: str, truncated: bool, header: bool | None) -> tuple[str, bool]:
    """``(delimiter, header)`` of a CSV file from the text of its first bytes.

    The delimiter (``, ; tab |``) is sniffed from up to 50 lines; the first
    row is a header unless all of its fields are numbers (or ``header`` says).
    ``truncated``: the sample was cut, so its last line may be partial.
    """
    lines = [line for line in sample.splitlines() if line.strip()]
    if truncated and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut
    if not lines:
        raise DataFileError(f"{path}: the file is empty")
    try:
        delimiter = csv.Sniffer().sniff("\n".join(lines[:50]), delimiters=",;\t|").delimiter
    except csv.Error:
        delimiter = ","
    if header is None:
        first = next(csv.reader([lines[0]], delimiter=delimiter))
        header = not all(_is_number(f) for f in first if f.strip()) or len(lines) == 1
    return delimiter, header


def _read_csv(path: Any, header: bool | None, text: Iterable[str] = ()) -> pd.DataFrame:
    """A CSV file as a DataFrame; the columns named in ``text`` read as text."""
    with open(path, "rb") as fh:
        raw = fh.read(_SAMPLE_BYTES)
    if b"\0" in raw:
        raise DataFileError(f"{path}: not a text file (contains NUL bytes)")
    try:
        sample = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if len(raw) < _SAMPLE_BYTES or exc.start < len(raw) - 4:  # not a cut multi-byte char
            raise DataFileError(f"{path}: not UTF-8 text ({exc.reason} at byte "
                                f"{exc.start})") from None
        sample = raw[:exc.start].decode("utf-8-sig")
    delimiter, header = csv_dialect(path, sample, len(sample) == _SAMPLE_BYTES, header)
    # The first record whole (the sample may cut it), bounded, its names checked before
    # pandas renames repeated ones in quadratic time (see problin.io._csv_header).
    fields, _ = first_record(path, delimiter)
    names = _column_names(fields, header)
    if header:
        check_unique_names(path, names)
    options: dict[str, Any] = {"sep": delimiter, "header": 0 if header else None,
               "skipinitialspace": True,
               "encoding": "utf-8-sig"}
    try:
        dtype = {j: str for j, name in enumerate(names) if name in text} if text else None
        frame = pd.read_csv(path, dtype=dtype, **options)
    except Exception as exc:  # pandas' parser errors have no common base class
        raise DataFileError(f"{path}: cannot parse as CSV with delimiter {delimiter!r} "
                            f"({type(exc).__name__}: {exc})") from None
    frame.columns = _column_names(frame.columns, header)
    check_unique_names(path, frame.columns)
    return frame


def _column_names(columns: Sequence[Any], header: bool) -> list[str]:
    return [str(c).strip() for c in columns] if header else \
        [f"x{j}" for j in range(len(columns))]


def _read_parquet(path: Any) -> pd.DataFrame:
    import_optional("pyarrow.parquet", "parquet", "reading Parquet")
    try:
        frame = pd.read_parquet(path, engine="pyarrow")
    except ImportError:
        raise
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ...
        raise DataFileError(f"{path}: cannot read as Parquet "
                            f"({type(exc).__name__}: {exc})") from None
    frame.columns = [str(c) for c in frame.columns]
    check_unique_names(path, frame.columns)
    return frame


def _features_frame(path: Any, X: np.ndarray, names: list[str] | None,
                    encoding: dict[str, Any] | None) -> list[str]:
    n = X.shape[1]
    if encoding is not None and encoding.get("n_features") not in (None, n):
        raise DataFileError(f"{path}: {n} features, but the model was fitted on "
                            f"{encoding['n_features']}")
    if names is not None and len(names) != n:
        raise DataFileError(f"{path}: {n} features, but the model was fitted on {len(names)}")
    return names if names is not None else [f"x{j}" for j in range(n)]


def _read_npz(path: Any, target: str | None, encoding: dict[str, Any] | None, drop_missing: bool,
              require_target: bool) -> Dataset:
    target = target or (encoding or {}).get("target") or "y"
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except Exception as exc:  # zipfile, pickle refusal, format errors
        raise DataFileError(f"{path}: cannot read as .npz with allow_pickle=False "
                            f"({type(exc).__name__}: {exc})") from None
    if "X" not in arrays:
        raise DataFileError(f"{path}: no array named 'X' (the features); arrays are "
                            f"{sorted(arrays)}")
    X = arrays["X"]
    if X.ndim != 2 or X.dtype.kind not in "biuf":
        raise DataFileError(f"{path}: 'X' must be a 2-D numeric array, got {X.ndim}-D {X.dtype}")
    names = arrays.get("feature_names")
    if names is not None:
        if names.dtype.kind != "U" or names.shape != (X.shape[1],):
            raise DataFileError(f"{path}: 'feature_names' must be {X.shape[1]} strings")
        names = [str(v) for v in names]
    elif encoding is not None and encoding.get("feature_names"):
        names = list(encoding["feature_names"])  # the names of the arrays at fit time
    names = _features_frame(path, X, names, encoding)
    y = arrays.get(target)
    if y is None and (require_target or target != "y"):
        raise ColumnNotFoundError(f"{path}: no array named {target!r}; arrays are "
                                  f"{sorted(arrays)}")
    if y is not None and (y.ndim != 1 or y.shape[0] != X.shape[0]):
        raise DataFileError(f"{path}: target {target!r} must be 1-D with {X.shape[0]} "
                            f"entries, got shape {y.shape}")
    frame = pd.DataFrame(X.astype(np.float64), columns=names)
    if y is not None:
        frame["\0target"] = y.astype(object) if y.dtype.kind == "U" else y
    frame, dropped = check_missing(frame, path, drop_missing)
    y = frame.pop("\0target").to_numpy() if y is not None else None
    enc = {"format": "npz", "target": target, "n_features": X.shape[1], "feature_names": names}
    return Dataset(frame, y, names, target, enc, dropped)


def _read_libsvm(path: Any, target: str | None, encoding: dict[str, Any] | None,
                 require_target: bool, n_features: int | None = None) -> Dataset:
    if target not in (None, "label"):
        raise ColumnNotFoundError(f"{path}: a LibSVM file has one target, named 'label', "
                                  f"not {target!r}")
    enc = dict(encoding or {"format": "libsvm", "target": "label"})
    n_features = enc.get("n_features", n_features)
    zero_based = enc.get("zero_based")
    try:
        if zero_based is None:  # learn it: one-based unless index 0 occurs
            try:
                X, y = load_svmlight_file(path, zero_based=False, n_features=n_features)
                zero_based = False
            except ValueError as exc:
                if "index 0" not in str(exc).lower() and "invalid index" not in str(exc).lower():
                    raise
                X, y = load_svmlight_file(path, zero_based=True, n_features=n_features)
                zero_based = True
        else:
            X, y = load_svmlight_file(path, zero_based=bool(zero_based),
                                      n_features=n_features)
    except Exception as exc:  # sklearn's parser raises ValueError, UnicodeError, ...
        raise DataFileError(f"{path}: cannot read as LibSVM/SVMlight "
                            f"({type(exc).__name__}: {exc})") from None
    if X.shape[0] == 0:
        raise DataFileError(f"{path}: no data rows")
    # The CSR arrays cost what the file holds; the width is only the largest index. Check
    # it before anything is built per feature (names, and the model's coefficients).
    limit = max(_MIN_FEATURE_LIMIT, X.nnz)
    if n_features is None and X.shape[1] > limit:
        largest = X.shape[1] - (1 if zero_based else 0)
        raise DataFileError(f"{path}: feature index {largest} is implausibly large for a file "
                            f"of {X.nnz} values (more than {limit} features); if the data "
                            "really has that many features, give their number: --n-features "
                            "N (n_features=N)")
    if n_features is not None and X.shape[1] != n_features:
        raise DataFileError(f"{path}: {X.shape[1]} features, but the model was fitted on "
                            f"{n_features}")
    if not (np.all(np.isfinite(X.data)) and np.all(np.isfinite(y))):
        raise DataFileError(f"{path}: non-finite values (nan or inf) in the data")
    if np.all(y == np.round(y)) and np.all(np.abs(y) < 2 ** 53):
        y = y.astype(np.int64)
    enc.update(format="libsvm", target="label", zero_based=zero_based, n_features=X.shape[1])
    names = [f"f{j + (0 if zero_based else 1)}" for j in range(X.shape[1])]
    return Dataset(sp.csr_matrix(X, dtype=np.float64), y, names, "label", enc, 0)
