"""The CSV side of the Dask reader (:mod:`problin.io.dask_readers`).

``dask.dataframe.read_csv`` splits the files into byte ranges and types the columns from
the first 64 KiB. Text further on in a column typed numeric then fails that partition;
:meth:`CsvSource.refuse_text_in_numbers` reads the columns again as text to report the
offending values and their rows, in the in-memory reader's words.
"""
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pandas as pd

from .._optional import import_optional
from ._csv_header import check_unique_names, first_record
from ._table import looks_numeric, mixed_column_message, non_numbers
from .errors import DataFileError
from .readers import csv_dialect

__all__ = ["CsvSource", "first_line", "text_cells", "gather_text_cells"]

_SAMPLE_BYTES = 64 * 1024
_SHOWN = 5


class CsvSource:
    """Byte ranges split by ``dask.dataframe.read_csv``; lengths need a pass."""

    lengths = None

    def __init__(self, path: str, files: list[str], blocksize: Any, header: bool | None,
                 text: Iterable[str] = ()) -> None:
        self.name, self.files = path, files
        delimiter, self.header = _sniff_csv(files[0], header)
        # the header whole, bounded and its names distinct, before Dask's pandas reads it
        # (problin.io._csv_header); Dask's dtype sample must hold it and some rows
        fields, size = first_record(files[0], delimiter)
        if self.header:
            check_unique_names(path, self._names(fields))
        self.options = {"sep": delimiter, "header": 0 if self.header else None,
                        "skipinitialspace": True, "blocksize": blocksize,
                        "encoding": "utf-8-sig", "sample": size + _SAMPLE_BYTES}
        self.frame = self._read(lambda names: {})
        if set(text) & set(self.frame.columns):  # read those columns as text
            self.frame = self._read(lambda names: {raw: str for raw, name in names.items()
                                                   if name in text})
        self.meta = self.frame._meta
        self.column_names = list(self.meta.columns)

    def _read(self, dtypes: Callable[[dict[Any, str]], dict[Any, Any]] | None) -> Any:
        """The lazy frame, with ``dtypes(raw name -> name)`` for the dtype of columns."""
        dd = import_optional("dask.dataframe", "dask", "problin.io.read_dask")
        try:
            frame = dd.read_csv(self.files, **self.options)
            if dtypes:
                raw = list(frame.columns)
                dtype = dtypes(dict(zip(raw, self._names(raw))))
                if dtype:
                    frame = dd.read_csv(self.files, dtype=dtype, **self.options)
        except Exception as exc:  # pandas' parser errors have no common base class
            raise DataFileError(f"{self.name}: cannot parse as CSV with delimiter "
                                f"{self.options['sep']!r} ({type(exc).__name__}: "
                                f"{first_line(exc)})") from None
        frame.columns = self._names(frame.columns)
        return frame

    def _names(self, raw: Sequence[Any]) -> list[str]:
        return [str(c).strip() for c in raw] if self.header else \
            [f"x{j}" for j in range(len(raw))]

    def partitions(self, columns: Sequence[str]) -> list[Any]:
        return list(self.frame[list(columns)].to_delayed())

    def refuse_text_in_numbers(self, columns: Sequence[str]) -> None:
        """After a partition failed to parse: find text in the columns typed numeric from
        the file's first rows (reading them as text, one more pass) and raise on it."""
        import dask
        numeric = [c for c in columns if self.meta[c].dtype.kind in "iuf"]
        frame = self._read(lambda names: {raw: str for raw, name in names.items()
                                          if name in numeric})
        parts = list(frame[numeric].to_delayed())
        tasks = [dask.delayed(text_cells, pure=True)(p, numeric) for p in parts]
        found = gather_text_cells(dask.compute(*tasks), numeric)
        for name, (n_numbers, n_text, rows, values) in found.items():
            if n_text and looks_numeric(n_numbers, n_text):
                raise DataFileError(mixed_column_message(self.name, name, n_numbers, n_text,
                                                         rows, values))
            if n_text:
                raise DataFileError(
                    f"{self.name}: column {name!r} holds numbers in its first rows but is "
                    f"mostly text ({n_text} of {n_numbers + n_text} values, e.g. "
                    f"{str(values[0])!r} in data row {rows[0]}): read it as categories with "
                    f"--categorical {name} (categorical=[{name!r}])")


def first_line(exc: BaseException) -> str:
    return str(exc).strip().split("\n", 1)[0]


def text_cells(frame: pd.DataFrame, columns: Sequence[str]) -> tuple[int, dict[str, Any]]:
    """Rows, and per column: numbers, non-numbers and the first few of those (rows 0-based)."""
    out = {}
    for c in columns:
        n_numbers, positions, values = non_numbers(frame[c])
        out[c] = (n_numbers, positions.size, positions[:_SHOWN], values[:_SHOWN])
    return len(frame), out


def gather_text_cells(results: Iterable[tuple[int, dict[str, Any]]],
                      columns: Sequence[str]) -> dict[str, Any]:
    """Per column, over partitions: numbers, non-numbers, first rows (1-based) and values."""
    found: dict[str, Any] = {c: (0, 0, [], []) for c in columns}
    offset = 0
    for n_rows, cells in results:
        for c in columns:
            n_numbers, n_text, positions, values = cells[c]
            numbers, text, rows, seen = found[c]
            found[c] = (numbers + n_numbers, text + n_text,
                        rows + [offset + int(p) + 1 for p in positions], seen + list(values))
        offset += n_rows
    return found


def _sniff_csv(path: str, header: bool | None) -> tuple[str, bool]:
    """Delimiter and header of a CSV file, by the in-memory reader's rules."""
    with open(path, "rb") as fh:
        raw = fh.read(_SAMPLE_BYTES)
    if b"\0" in raw:
        raise DataFileError(f"{path}: not a text file (contains NUL bytes)")
    sample = raw.decode("utf-8-sig", errors="ignore")
    return csv_dialect(path, sample, len(raw) == _SAMPLE_BYTES, header)
