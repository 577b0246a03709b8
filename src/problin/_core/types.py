"""Type aliases of problin's annotations (for mypy; no behaviour)."""
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray

__all__ = ["FloatArray", "Matrix", "MatrixLike"]

#: A float64 numpy array.
FloatArray: TypeAlias = NDArray[np.float64]

#: A numpy array or a scipy.sparse matrix (scipy ships no type information, so
#: mypy sees the sparse classes as ``Any``).
Matrix: TypeAlias = Any

#: Input rows ``X`` of the estimators: array-like (numpy, nested lists, pandas), a
#: scipy.sparse matrix or a Dask array/DataFrame. Neither scipy nor Dask ships type
#: information, so this is ``Any``; it names what is accepted.
MatrixLike: TypeAlias = Any
