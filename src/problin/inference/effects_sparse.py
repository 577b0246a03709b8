"""Rows of a scipy.sparse matrix as the interpretation methods read a data frame.

A model fitted on CSR/CSC data (each column a plain numeric variable) gets its average
predictions, slopes and comparisons on the same sparse data: :class:`SparseRows` offers
the few frame operations that :mod:`problin.inference.effects` and
:mod:`problin.inference.effects_spec` use (row blocks by ``iloc``, one column as a
Series, a column set to a value in a block's copy, column ranges and representative
values), always on the sparse matrix: no ``n x d`` dense array is formed. A row block
stays sparse through the design (``X w`` and ``X^T G`` are sparse products); the only
dense arrays are single columns (n values), a block's replaced column, and a grid's rows.
"""
from collections.abc import Sequence
from typing import Any, overload

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import NDArray

__all__ = ["Rows", "SparseRows"]

FloatArray = NDArray[np.float64]


class SparseRows:
    """The rows of a CSR matrix, its columns named (``names``)."""

    def __init__(self, matrix: Any, names: Sequence[str]) -> None:
        self.matrix = sp.csr_matrix(matrix, dtype=np.float64)
        if not self.matrix.has_canonical_format:  # (repeated entries summed, on a copy)
            self.matrix = self.matrix.copy()
            self.matrix.sum_duplicates()
        self.columns = pd.Index([str(n) for n in names])
        if len(self.columns) != self.matrix.shape[1]:
            raise ValueError(f"{self.matrix.shape[1]} columns, {len(self.columns)} names")
        self._position = {name: j for j, name in enumerate(self.columns)}
        self._csc: Any = None  # (a column-major copy for column reads, built once)

    def __len__(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def index(self) -> pd.RangeIndex:
        return pd.RangeIndex(len(self))

    @property
    def dtypes(self) -> pd.Series:
        return pd.Series([np.dtype(np.float64)] * len(self.columns), index=self.columns)

    @property
    def iloc(self) -> "_Positions":
        return _Positions(self)

    def take(self, rows: Any) -> "SparseRows":
        """The rows at ``rows`` (a slice or positions; all of them in order: these)."""
        if isinstance(rows, np.ndarray) and rows.ndim == 1 and len(rows) == len(self) and \
                np.array_equal(rows, np.arange(len(self))):
            return self
        out = SparseRows.__new__(SparseRows)
        out.matrix, out.columns, out._position, out._csc = (
            self.matrix[rows], self.columns, self._position, None)
        return out

    def copy(self, deep: bool = True) -> "SparseRows":
        """A copy whose columns can be replaced (``__setitem__`` rebinds the matrix, it
        never writes into it: a shallow copy is safe)."""
        return self.take(slice(None))

    def position(self, name: str) -> int:
        try:
            return self._position[name]
        except KeyError:
            raise KeyError(name) from None

    def column(self, name: str) -> FloatArray:
        """One column, dense (n values)."""
        j = self.position(name)
        if self._csc is None and len(self) > 8192:  # (the whole data: read by column)
            self._csc = self.matrix.tocsc()
        source = self.matrix if self._csc is None else self._csc
        return np.asarray(source[:, [j]].toarray(), dtype=np.float64).ravel()

    @overload
    def __getitem__(self, key: str) -> pd.Series: ...

    @overload
    def __getitem__(self, key: list[str]) -> pd.DataFrame: ...

    def __getitem__(self, key: str | list[str]) -> pd.Series | pd.DataFrame:
        if isinstance(key, str):
            return pd.Series(self.column(key), name=key)
        return pd.DataFrame({name: self.column(name) for name in key})

    def __setitem__(self, name: str, values: Any) -> None:
        """Column ``name`` set to ``values`` (a block's counterfactual copy: the column
        becomes dense, n values, the others stay as they are)."""
        j = self.position(name)
        v = np.asarray(values, dtype=np.float64).ravel()
        n = len(self)
        keep = np.ones(self.matrix.shape[1])
        keep[j] = 0.0
        rest = sp.csr_matrix(self.matrix @ sp.diags(keep))
        column = sp.csr_matrix((v, (np.arange(n), np.full(n, j))), shape=self.matrix.shape)
        self.matrix = (rest + column).tocsr()
        self._csc = None

    @staticmethod
    def stack(blocks: Sequence["SparseRows"]) -> "SparseRows":
        """The rows of ``blocks`` one after another."""
        out = blocks[0].take(slice(0, 0))
        out.matrix = sp.vstack([b.matrix for b in blocks], format="csr")
        return out

    def spreads(self, names: Sequence[str]) -> dict[str, float]:
        """Each column's range (max - min, the implicit zeros included)."""
        cols = [self.position(n) for n in names]
        M = self.matrix
        width = M.shape[1]
        hi, lo = np.full(width, -np.inf), np.full(width, np.inf)
        stored = np.zeros(width, dtype=np.int64)
        # (in place over the stored values, a chunk at a time: scipy's max(axis=0) copies
        # the matrix, and ufunc.at its int32 indices)
        for at in range(0, M.nnz, 1 << 16):
            where, values = M.indices[at:at + (1 << 16)], M.data[at:at + (1 << 16)]
            np.maximum.at(hi, where, values)
            np.minimum.at(lo, where, values)
            stored += np.bincount(where, minlength=width)
        if len(self) > 0:  # (a column with fewer stored values than rows holds a zero)
            some_zero = stored < len(self)
            hi[some_zero] = np.maximum(hi[some_zero], 0.0)
            lo[some_zero] = np.minimum(lo[some_zero], 0.0)
        return dict(zip(names, (hi - lo)[cols].tolist()))

    def typical(self, name: str, how: str) -> float:
        """A column's mean or median, the implicit zeros included (the median as
        ``np.median`` of the dense column: the middle order statistic, or the mean of
        the two middle ones)."""
        j = self.position(name)
        if self._csc is None:
            self._csc = self.matrix.tocsc()
        values = self._csc.data[self._csc.indptr[j]:self._csc.indptr[j + 1]]
        n = len(self)
        if how == "mean":
            return float(values.sum() / n)
        v = np.sort(values[values != 0])
        negative = int(np.searchsorted(v, 0.0))
        zeros = n - len(v)

        def order(k: int) -> float:  # the k-th smallest of the column
            if k < negative:
                return float(v[k])
            return 0.0 if k < negative + zeros else float(v[k - zeros])
        return (order((n - 1) // 2) + order(n // 2)) / 2.0


class _Positions:
    """``rows.iloc[...]``: rows by position."""

    def __init__(self, rows: SparseRows) -> None:
        self.rows = rows

    def __getitem__(self, rows: Any) -> SparseRows:
        return self.rows.take(rows)


#: The rows the interpretation methods average over: a frame, or a sparse matrix's rows.
Rows = pd.DataFrame | SparseRows
