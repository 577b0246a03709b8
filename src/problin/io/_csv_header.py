"""The first record of a CSV file (its header, or its first row), read whole and bounded.

The delimiter is sniffed from the file's first 64 KiB (:func:`problin.io.readers.csv_dialect`),
but a header may be longer: its names were once checked for repeats from that cut sample
(a long header of distinct names was refused as repeating the cut last one), and pandas
renames repeated names (``a``, ``a.1``, ...) in time quadratic in the repeats before
problin could refuse them (a 2 MB header took more than 45 s, a 10 MB line more than 5
minutes). So the readers first read the first record here, whole, and

- refuse a first line longer than ``MAX_HEADER_BYTES`` (16 MiB) or of more than
  ``MAX_CSV_COLUMNS`` (100,000) fields, without reading further;
- refuse repeated column names (after stripping spaces, as the readers name columns) in
  one pass over a set, before pandas sees the file.

A record ends at the first line end (``\n`` or ``\r``) outside double quotes (a quoted
name may hold a newline; a quote inside a quoted field is written twice, which keeps the
count even), found in 64 KiB blocks by the parity of the quotes before each line end. Reading and
splitting it costs time linear in its length: well under a second at the caps.
"""
import csv
from collections.abc import Iterable
from typing import Any, NoReturn

import numpy as np

from .errors import DataFileError

__all__ = ["MAX_CSV_COLUMNS", "MAX_HEADER_BYTES", "first_record", "check_unique_names"]

MAX_CSV_COLUMNS = 100_000
MAX_HEADER_BYTES = 16 * 2 ** 20
_BLOCK = 64 * 1024
_QUOTE, _NEWLINE, _RETURN = ord('"'), ord("\n"), ord("\r")


def _record_bytes(path: Any) -> bytes:
    """The bytes of the first record, without its line end (all of a file of one line)."""
    out = bytearray()
    quoted = False  # inside quotes at the start of the block
    with open(path, "rb") as fh:
        while True:
            block = fh.read(_BLOCK)
            if not block:
                return bytes(out)
            a = np.frombuffer(block, dtype=np.uint8)
            inside = (np.cumsum(a == _QUOTE) + quoted) % 2 == 1  # after each byte
            ends = np.flatnonzero(((a == _NEWLINE) | (a == _RETURN)) & ~inside)
            if ends.size:
                out += block[:int(ends[0])]
                return bytes(out)
            out += block
            quoted = bool(inside[-1])
            if len(out) > MAX_HEADER_BYTES:
                _too_long(path)


def first_record(path: Any, delimiter: str) -> tuple[list[str], int]:
    """The fields of the first record of a CSV file (a UTF-8 BOM dropped) and its length
    in bytes with a line end; a :class:`DataFileError` beyond the caps."""
    raw = _record_bytes(path)
    if len(raw) > MAX_HEADER_BYTES:
        _too_long(path)
    sep = delimiter.encode()
    if b'"' not in raw and raw.count(sep) >= MAX_CSV_COLUMNS:  # exact without quotes
        _too_many(path, raw.count(sep) + 1)
    fields = _fields(path, raw, delimiter)
    if len(fields) > MAX_CSV_COLUMNS:
        _too_many(path, len(fields))
    return fields, len(raw) + 1


def _fields(path: Any, raw: bytes, delimiter: str) -> list[str]:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataFileError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start} of "
                            "the first line)") from None
    try:
        return next(csv.reader([text], delimiter=delimiter, skipinitialspace=True), [])
    except csv.Error as exc:
        raise DataFileError(f"{path}: cannot parse the first line as CSV with delimiter "
                            f"{delimiter!r} ({exc})") from None


def _too_long(path: Any) -> NoReturn:
    raise DataFileError(f"{path}: the first line is longer than {MAX_HEADER_BYTES // 2 ** 20} "
                        "MiB: more than a CSV header problin reads (is this a CSV file?)")


def _too_many(path: Any, n: int) -> NoReturn:
    raise DataFileError(f"{path}: the first line has {n} columns, more than the "
                        f"{MAX_CSV_COLUMNS} problin reads from a CSV file (wide data: LibSVM "
                        "for sparse, Parquet or .npz for dense)")


def check_unique_names(path: Any, names: Iterable[str]) -> None:
    """Refuse a file whose columns share a name: which one a formula, ``--target`` or
    ``--features`` meant would be a guess."""
    seen: set[str] = set()
    repeated: dict[str, None] = {}
    for name in names:
        if name in seen:
            repeated[name] = None
        seen.add(name)
    if repeated:
        raise DataFileError(f"{path}: more than one column is named {list(repeated)[:10]}: give "
                            "each column its own name")
