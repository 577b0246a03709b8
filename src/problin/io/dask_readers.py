"""Lazy (out-of-core) reading of Parquet and CSV data for fits on Dask.

:func:`read_dask` returns the features and the target of a file, or of a directory of
files, as Dask arrays with known row chunks: the row blocks of the row-block principle
(docs/design.md). Nothing is read until an estimator reduces the chunks, and then one chunk
at a time per worker thread, so memory is bounded by the partition size, not the data size.

Why arrays built chunk by chunk rather than ``dask.dataframe.read_parquet``: the estimators
need known chunk sizes (``to_dask_array(lengths=True)`` costs a pass over all the data),
and a Parquet file's metadata already holds the row count of every row group. A partition
here is a run of whole row groups of one file (up to ``blocksize`` bytes uncompressed), so
the lengths are free. The features and the target of a partition come from one read
task (one file open and decode), which a fit that reduces ``X`` and ``y`` together runs
once a pass. A Newton fit reads every partition
once a pass, and here a partition costs pyarrow's decoding and one conversion to float64,
without ``dask.dataframe``'s per-partition pandas work: the fits on
``dd.read_parquet(...).to_dask_array(lengths=True)``, which run that work again on every
pass, are several times slower and warn so (``PerformanceWarning``, naming this reader
and ``dask.persist``; ``bench/_inputs_parquet.py``). This is the reader of
``problin fit --engine dask`` too. CSV is split by bytes with
``dask.dataframe.read_csv``; its lengths cost one pass, which also checks the data.

The columns are encoded by the in-memory rules (:mod:`problin.io._table`), so a model
fitted here has the same features, names and model-file encoding as one fitted on the
whole file in memory, and ``problin predict`` reads new data with either reader:

- numeric and boolean columns: one float64 feature each;
- Parquet decimal columns: one float64 feature each, converted as the in-memory encoding
  converts numbers (:func:`problin._frames.as_float64`);
- Parquet date, time, timestamp and duration columns, and those of neither numbers nor
  text (binary, lists, structs, ...): refused before anything is read, with the
  in-memory reader's message, unless named in ``categorical``. Parquet columns are
  classified by their Arrow type, as the in-memory reader classifies them by their
  values: the ``meta`` of a lazy frame has no values (an empty ``object`` column could
  be decimals, dates, bytes or text);
- string and categorical columns, and those named in ``categorical`` (read as text from
  CSV): encoded (treatment coding, first category the reference level), with the
  categories found by one extra pass over those columns only (for Parquet only they are
  read); their distinct values must fit in memory;
- CSV text columns that look numeric (most values numbers: typos) are refused as by the
  in-memory reader, in that pass; so is a column typed numeric from the first 64 KiB that
  holds text further on, with the offending values and data rows;
- missing or infinite values raise :class:`~problin.io.errors.DataFileError` naming the
  columns and the partition, when the partition is read (during the fit for Parquet,
  during :func:`read_dask` for CSV), unless ``drop_missing=True``, which drops those rows
  at the cost of a first pass to count them.

Dask (the ``dask`` extra) and, for Parquet, pyarrow (the ``parquet`` extra) are optional
dependencies, imported only when this reader is used; without them it raises
:class:`~problin.exceptions.MissingDependencyError` naming the extra.
"""
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd

from .._frames import as_float64, type_error
from .._optional import import_optional
from ._dask_csv import CsvSource, first_line, gather_text_cells, text_cells
from ._table import (
    _apply,
    _as_text,
    _is_categorical,
    check_missing,
    looks_numeric,
    mixed_column_message,
)
from .errors import ColumnNotFoundError, DataFileError
from .readers import detect_format

__all__ = ["DaskDataset", "read_dask", "DEFAULT_BLOCKSIZE"]

DEFAULT_BLOCKSIZE = 32 * 2 ** 20  # bytes per partition: two threads stay well under 1 GB


@dataclass
class DaskDataset:
    """Lazy features and target of a file or directory (see :func:`read_dask`).

    Attributes
    ----------
    X : dask.array.Array of float64, shape (n_rows, n_features), one column chunk
    y : dask.array.Array, chunked like the rows of ``X``
    feature_names : list of str
    target : str
    encoding : dict
        The same ``{"format": "table", ...}`` encoding as the in-memory reader's.
    n_dropped : int
        Rows dropped for missing values (``drop_missing=True``).
    fit_columns : dict of str to dask.array.Array
        The ``fit_columns`` asked for, by name, each chunked like the rows of ``X``.
    """

    X: Any
    y: Any
    feature_names: list
    target: str
    encoding: dict
    n_dropped: int = 0
    fit_columns: dict = field(default_factory=dict)


def read_dask(path: str | os.PathLike[str], target: str, *, format: str | None = None,
              blocksize: Any = DEFAULT_BLOCKSIZE, columns: Sequence[str] | None = None,
              drop_missing: bool = False, header: bool | None = None,
              categorical: Sequence[str] | None = None,
              fit_columns: Sequence[str] = ()) -> DaskDataset:
    """Read a Parquet or CSV file, or a directory of them, lazily for a Dask fit.

    Parameters
    ----------
    path : str or path-like
        A file, or a directory whose files (names not starting with ``.`` or ``_``)
        all have one format, e.g. a Parquet dataset written in pieces.
    target : str
        Name of the target column.
    format : {"csv", "parquet"}, optional
        Defaults to the one implied by the file extensions.
    blocksize : int
        Bytes per partition (uncompressed for Parquet; a partition holds whole row
        groups, so a row group larger than this is one partition).
    columns : list of str, optional
        Feature columns to use [default: every column but the target].
    drop_missing : bool, default False
        Drop rows with missing values instead of raising.
    header : bool, optional
        CSV only: force or deny a header row [default: detect, as the in-memory reader].
    categorical : list of str, optional
        Columns to encode as categories even if their values are numbers (read as text
        from CSV), as :func:`~problin.io.readers.read_data`'s ``categorical``.
    fit_columns : list of str, optional
        Columns read beside the features, not as features, each as it is stored (a GLM
        regressor's offset, exposure or trials: ``DaskDataset.fit_columns``); a missing
        value in one counts as one in a feature.

    Returns
    -------
    DaskDataset

    Raises
    ------
    DataFileError
        A missing path, an unreadable or empty file, another format, no feature
        columns; :class:`~problin.io.errors.ColumnNotFoundError` for an absent column.

    Examples
    --------
    >>> import os, tempfile
    >>> import pandas as pd
    >>> from problin import LinearDiscriminantAnalysis
    >>> from problin.io import read_dask
    >>> path = os.path.join(tempfile.mkdtemp(), "pets.parquet")
    >>> pd.DataFrame({"weight": [3.5, 20.0, 4.0, 30.0, 28.0, 6.0],
    ...               "kind": ["cat", "dog", "cat", "dog", "cat", "dog"],
    ...               "big": [0, 1, 0, 1, 1, 0]}).to_parquet(path)
    >>> data = read_dask(path, "big")
    >>> data.feature_names, data.X.chunks
    (['weight', 'kind=dog'], ((6,), (2,)))
    >>> LinearDiscriminantAnalysis().fit(data.X, data.y).predict([[25.0, 1.0]])
    array([1])
    """
    import_optional("dask.array", "dask", "problin.io.read_dask")
    path = os.fspath(path)
    files, fmt = _list_files(path, format)
    files = [os.path.abspath(f) for f in files]  # workers of a cluster have their own cwd
    forced = [categorical] if isinstance(categorical, str) else list(categorical or ())
    source: _ParquetSource | CsvSource
    if fmt == "parquet":
        source = _ParquetSource(path, files, blocksize)
    else:
        source = CsvSource(path, files, blocksize, header, forced)
    names = source.column_names
    if target not in names:
        raise ColumnNotFoundError(f"{path}: no column named {target!r}; columns are {names}")
    if any(c not in names for c in forced):
        raise ColumnNotFoundError(f"{path}: categorical columns "
                                  f"{[c for c in forced if c not in names]} are not in the "
                                  f"data; columns are {names}")
    named = list(fit_columns)
    used = [c for c in names if c != target and c not in named] if columns is None \
        else list(columns)
    absent = [c for c in used + named if c not in names]
    if absent:
        raise ColumnNotFoundError(f"{path}: no columns named {absent}; columns are {names}")
    if not used or target in used:
        raise DataFileError(f"{path}: no feature columns besides the target {target!r}"
                            if not used else f"{path}: the target {target!r} is not a feature")
    if set(named) & set(used + [target]):
        raise DataFileError(f"{path}: the columns {sorted(set(named) & set(used + [target]))} "
                            "cannot be both features (or the target) and read beside them")
    refused = source.refused if isinstance(source, _ParquetSource) else {}
    for c in used:
        if c in refused and c not in forced:  # (as categories each instant is a level)
            raise type_error(c, *refused[c], path, DataFileError,
                             "name it in --categorical {name} (categorical=[{name!r}])")
    meta = source.meta
    texts = [c for c in used if _is_categorical(meta[c]) or c in forced]
    categories: dict[str, list[Any]]
    lengths, n_dropped, categories = source.lengths, 0, {}
    if texts or drop_missing or lengths is None:  # always for CSV (lengths None)
        lengths, n_dropped, categories = _survey(source, used + [target] + named, texts,
                                                 drop_missing,
                                                 [c for c in used + [target] if c not in forced
                                                  and _is_categorical(meta[c])]
                                                 if fmt == "csv" else [])
    if sum(lengths) == 0:
        raise DataFileError(f"{path}: no data rows")
    encoding: dict[str, Any] = {
        "format": "table", "target": target,
        "columns": [{"name": c, "kind": "categorical", "categories": categories[c]}
                    if c in texts else {"name": c, "kind": "numeric"} for c in used]}
    _, feature_names = _apply(meta[used].iloc[:0], encoding["columns"], path)
    every = used + [target] + named if drop_missing else None
    # One read task per partition for X, y and the fit columns: the same columns, so
    # the same task key (pure), which a fit reducing them together runs once (separate
    # reads of y cost a second file open and decode per partition on every pass).
    read = used + [target] + named
    X = _lazy(source, lengths, read,
              _Features(encoding["columns"], every or used, path, drop_missing),
              (len(feature_names),), np.float64)
    y_dtype = meta[target].to_numpy().dtype
    y = _lazy(source, lengths, read,
              _Target(target, every or [target], path, drop_missing, y_dtype), (), y_dtype)
    beside = {c: _lazy(source, lengths, read,
                       _Target(c, every or [c], path, drop_missing, meta[c].to_numpy().dtype),
                       (), meta[c].to_numpy().dtype) for c in named}
    return DaskDataset(X, y, feature_names, target, encoding, int(n_dropped), beside)


def _list_files(path: str, format: str | None) -> tuple[list[str], str]:
    if os.path.isdir(path):
        files = sorted(os.path.join(path, f) for f in os.listdir(path)
                       if not f.startswith((".", "_"))
                       and os.path.isfile(os.path.join(path, f)))
        if not files:
            raise DataFileError(f"{path}: the directory holds no data files")
        formats = {detect_format(f, format) for f in files}
        if len(formats) > 1:
            raise DataFileError(f"{path}: the directory mixes formats {sorted(formats)}; "
                                "keep one format per directory")
        fmt = formats.pop()
    elif os.path.isfile(path):
        files, fmt = [path], detect_format(path, format)
    else:
        raise DataFileError(f"no such data file or directory: {path}")
    if fmt not in ("csv", "parquet"):
        raise DataFileError(f"{path}: the Dask engine reads CSV and Parquet, not {fmt}; "
                            "read it in memory (problin.io.readers.read_data)")
    return files, fmt


class _ParquetSource:
    """Partitions of whole row groups; their row counts come from the file metadata."""

    def __init__(self, path: str, files: list[str], blocksize: Any) -> None:
        self.pieces: list[tuple[str, tuple[int, ...]]] = []
        self.lengths: list[int] = []
        self.name, schema = path, cast(Any, None)  # the first file's schema
        pq = _parquet()
        for f in files:
            try:
                pf = pq.ParquetFile(f)
            except Exception as exc:  # ArrowInvalid, OSError, ...
                raise DataFileError(f"{f}: cannot read as Parquet "
                                    f"({type(exc).__name__}: {exc})") from None
            if schema is None:
                schema = pf.schema_arrow
            elif pf.schema_arrow.names != schema.names:
                raise DataFileError(f"{f}: columns {pf.schema_arrow.names} differ from "
                                    f"those of {files[0]}: {schema.names}")
            groups: list[int] = []
            rows, size = 0, 0
            for g in range(pf.metadata.num_row_groups):
                meta = pf.metadata.row_group(g)
                if groups and size + meta.total_byte_size > blocksize:
                    self._add(f, groups, rows)
                    groups, rows, size = [], 0, 0
                groups.append(g)
                rows += meta.num_rows
                size += meta.total_byte_size
            if groups:
                self._add(f, groups, rows)
        self.meta = schema.empty_table().to_pandas()
        self.meta.columns = [str(c) for c in self.meta.columns]
        self.column_names = list(self.meta.columns)
        # Classified by type (the module docstring): decimals arrive as float64
        # (_read_parquet_piece); the columns to refuse, with their type (dates and times
        # by the name of what the in-memory reader finds in them: datetime.date objects,
        # a datetime64 column, ...) and whether they are dates or times
        self.refused: dict[str, tuple[str, bool]] = {}
        types = _arrow_types()
        for field, name in zip(schema, self.column_names):
            kind, dtype = field.type, self.meta[name].dtype
            if types.is_decimal(kind):
                self.meta[name] = self.meta[name].astype(np.float64)
            elif types.is_temporal(kind):
                self.refused[name] = ("date" if types.is_date(kind) else
                                      "time" if types.is_time(kind) else
                                      str(kind) if dtype == object else str(dtype), True)
            elif dtype == object and not _text_or_null(types, kind):
                self.refused[name] = (str(kind), False)

    def _add(self, f: str, groups: list[int], rows: int) -> None:
        self.pieces.append((f, tuple(groups)))
        self.lengths.append(rows)

    def partitions(self, columns: Sequence[str]) -> list[Any]:
        import dask
        return [dask.delayed(_read_parquet_piece, pure=True)(piece, tuple(columns))
                for piece in self.pieces]


def _parquet() -> Any:
    """``pyarrow.parquet`` (the ``parquet`` extra)."""
    return import_optional("pyarrow.parquet", "parquet", "reading Parquet")


def _arrow_types() -> Any:
    """``pyarrow.types`` (imported where ``pyarrow.parquet`` was)."""
    _parquet()
    import pyarrow.types
    return pyarrow.types


def _text_or_null(types: Any, kind: Any) -> bool:
    """An Arrow type whose pandas column is an ``object`` column of text (or of missing
    values only: refused as such when read), as opposed to bytes, lists or structs."""
    view = getattr(types, "is_string_view", None)  # (pyarrow >= 16)
    return bool(types.is_string(kind) or types.is_large_string(kind) or types.is_null(kind)
                or (view is not None and view(kind)))


def _read_parquet_piece(piece: Any, columns: Sequence[str]) -> pd.DataFrame:
    path, groups = piece
    pq = _parquet()  # on the worker
    try:
        table = pq.ParquetFile(path).read_row_groups(list(groups), columns=list(columns))
    except Exception as exc:
        raise DataFileError(f"{path}: cannot read row groups {list(groups)} "
                            f"({type(exc).__name__}: {exc})") from None
    frame = table.to_pandas()
    types = _arrow_types()
    for field in table.schema:  # Decimal objects, as the meta says: float64
        if types.is_decimal(field.type):
            frame[field.name] = as_float64(frame[field.name], field.name, path, DataFileError)
    return frame


def _where(source: str, k: int) -> str:
    return f"{source} (partition {k})"


def _checked(frame: pd.DataFrame, where: str, drop_missing: bool) -> pd.DataFrame:
    """:func:`check_missing` on one partition. Dropping may empty a partition, which is
    no error here (others may have rows): :func:`_survey` checks the total."""
    try:
        return check_missing(frame, where, drop_missing)[0]
    except DataFileError:
        if drop_missing:  # every row of this partition has a missing value
            return frame.iloc[:0]
        raise


def _survey_part(frame: pd.DataFrame, k: int, source: str, texts: Sequence[str], drop_missing: bool,
                 check: Sequence[str]) -> tuple[Any, ...]:
    """Rows before and after dropping missing values, the text values of ``texts``, and
    the counts of number cells of the text columns in ``check`` (``text_cells``)."""
    cells = text_cells(frame, check)
    kept = _checked(frame, _where(source, k), drop_missing)
    return len(frame), len(kept), {c: set(_as_text(kept[c])) for c in texts}, cells


def _survey(source: Any, every: Sequence[str], texts: Sequence[str], drop_missing: bool,
            check: Sequence[str]) -> tuple[list[int], int, dict[str, list[Any]]]:
    """One pass: partition lengths (after dropping), rows dropped, sorted categories;
    a text column of ``check`` that looks numeric is refused."""
    import dask
    columns = every if drop_missing or source.lengths is None else texts
    parts = source.partitions(columns)
    tasks = [dask.delayed(_survey_part, pure=True)(p, k, source.name, texts, drop_missing,
                                                   check)
             for k, p in enumerate(parts)]
    try:
        results = dask.compute(*tasks)
    except DataFileError:
        raise
    except Exception as exc:  # CSV dtype mismatches, unreadable blocks
        if isinstance(source, CsvSource):  # text beyond the sample in a numeric column?
            try:
                source.refuse_text_in_numbers(every)
            except DataFileError:
                raise
            except Exception:  # the diagnosis failed too: report the first error
                pass
        raise DataFileError(f"{source.name}: cannot read the data "
                            f"({type(exc).__name__}: {first_line(exc)})") from None
    found = gather_text_cells([cells for _, _, _, cells in results], check)
    for name, (n_numbers, n_text, rows, values) in found.items():
        if looks_numeric(n_numbers, n_text):
            raise DataFileError(mixed_column_message(source.name, name, n_numbers, n_text,
                                                     rows, values))
    lengths = [kept for _, kept, _, _ in results]
    dropped = sum(n for n, _, _, _ in results) - sum(lengths)
    if drop_missing and not sum(lengths) and dropped:
        raise DataFileError(f"{source.name}: every row has a missing value; "
                            "nothing left to use")
    categories = {c: sorted(set().union(*(cats[c] for _, _, cats, _ in results)))
                  for c in texts}
    return lengths, dropped, categories


class _Features:
    """Partition -> float64 feature rows, by the in-memory encoder (picklable)."""

    def __init__(self, columns: list[dict[str, Any]], used: Sequence[str], source: str,
                 drop_missing: bool) -> None:
        self.columns, self.used, self.source = columns, used, source
        self.drop_missing = drop_missing
        self.numeric = (used == [c["name"] for c in columns]
                        and all(c["kind"] == "numeric" for c in columns))

    def __call__(self, frame: pd.DataFrame, k: int) -> np.ndarray:
        where, frame = _where(self.source, k), frame[self.used]
        if self.numeric and not any(_is_categorical(frame[c]) for c in self.used):
            # All numeric (the common case): what _apply computes, with one copy instead
            # of three, and check_missing's passes only if a value is missing: this
            # conversion runs on every chunk in every pass of a fit.
            X = frame.to_numpy(dtype=np.float64, na_value=np.nan)
            if np.isfinite(X).all():
                return X
        frame = _checked(frame, where, self.drop_missing)
        features, _ = _apply(frame, self.columns, where)
        return features.to_numpy(dtype=np.float64)


class _Target:
    """Partition -> target values (rows with missing values dropped as for the features).

    An integer Parquet column with nulls arrives as floats; once they are dropped the
    values are the column's integers again (as the in-memory reader makes them)."""

    def __init__(self, target: str, used: Sequence[str], source: str, drop_missing: bool,
                 dtype: Any) -> None:
        self.target, self.used, self.source = target, used, source
        self.drop_missing, self.dtype = drop_missing, dtype

    def __call__(self, frame: pd.DataFrame, k: int) -> np.ndarray:
        frame = _checked(frame[self.used], _where(self.source, k), self.drop_missing)
        y = frame[self.target].to_numpy()
        if y.dtype.kind == "f" and self.dtype.kind in "iu":
            y = y.astype(self.dtype)
        return y


def _lazy(source: Any, lengths: Sequence[int], columns: Sequence[str],
          convert: Callable[[pd.DataFrame, int], np.ndarray], tail: tuple[int, ...],
          dtype: Any) -> Any:
    """A Dask array of ``convert(partition_k, k)`` with the known row ``lengths``."""
    import dask
    import dask.array as da
    parts = source.partitions(columns)
    chunks = [da.from_delayed(dask.delayed(convert, pure=True)(p, k), shape=(n,) + tail,
                              dtype=dtype)
              for k, (p, n) in enumerate(zip(parts, lengths))]
    return da.concatenate(chunks, axis=0)
