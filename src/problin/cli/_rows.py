"""The input rows that ``problin predict --drop-missing`` kept: its ``row`` column.

``row`` is the data row of the input file, counted from 1 (the first row after a CSV
header), as the readers' messages count rows; a prediction is matched to its input row
by it whether or not rows were dropped. The readers return the kept rows only; when some
were dropped the rows kept are found by running the readers' own missing-value check
(:func:`problin.io._table.check_missing`) over the same columns once more, carrying the
row numbers (a second read of the file, only then).
"""
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..io._table import check_missing
from ..io.readers import _read_csv, _read_parquet, detect_format

__all__ = ["ROW", "kept_rows"]

ROW = "row"
_MARK = "\0row"


def _kept(frame: pd.DataFrame, source: str) -> np.ndarray:
    marked = frame.assign(**{_MARK: np.arange(1, frame.shape[0] + 1)})
    kept, _ = check_missing(marked, source, True)
    return kept[_MARK].to_numpy()


def kept_rows(data: str, data_format: str | None, encoding: dict[str, Any],
              header: bool | None, categorical: Sequence[str], n_rows: int,
              n_dropped: int) -> np.ndarray:
    """The 1-based data rows of ``data`` that a read with ``drop_missing=True`` and the
    model's ``encoding`` kept (``n_rows`` of them, ``n_dropped`` dropped)."""
    if not n_dropped:
        return np.arange(1, n_rows + 1)
    fmt = detect_format(data, data_format)
    target = encoding.get("target")
    if fmt == "npz":  # as problin.io.readers._read_npz: every feature and the target
        with np.load(data, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
        frame = pd.DataFrame(arrays["X"].astype(np.float64))
        y = arrays.get(target or "y")
        if y is not None:
            frame["\0target"] = y.astype(object) if y.dtype.kind == "U" else y
    else:  # a table: the model's columns (predict reads no target)
        text = set(categorical) | {c["name"] for c in encoding["columns"]
                                   if c["kind"] == "categorical"}
        raw = _read_csv(data, header, text) if fmt == "csv" else _read_parquet(data)
        frame = raw[[c["name"] for c in encoding["columns"]]]
    rows = _kept(frame, data)
    if rows.size != n_rows:  # the two reads disagree: never guess an alignment
        raise ValueError(f"{data}: cannot tell which rows were kept ({rows.size}, not "
                         f"{n_rows}); the file changed while it was read?")
    return rows


def kept_formula_rows(frame: pd.DataFrame, variables: Sequence[str],
                      source: str) -> np.ndarray:
    """The 1-based rows of a formula model's raw columns without a missing value."""
    return _kept(frame[list(variables)], source)
