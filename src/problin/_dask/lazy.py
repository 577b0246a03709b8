"""Dask input: predictions mapped lazily over the row chunks.

A prediction method decorated with :func:`lazy_on_dask` returns a lazy Dask
array for Dask input: each chunk runs the in-memory method on itself.
"""
import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from .._core.blocks import serial_blocks
from ..exceptions import warn_at_caller
from .chunks import _string_columns, as_dask_rows, is_dask

__all__ = [
    "lazy_on_dask",
    "lazy_rows",
]


_F = TypeVar("_F", bound=Callable[..., Any])


def _apply_rows(estimator: Any, method: str, tail: tuple[int, ...], dtype: Any, index: Any,
                kwargs: dict[str, Any], names: np.ndarray | None, block: Any,
                block_info: Any = None) -> np.ndarray:
    if block.shape[0] == 0:
        return np.empty((0,) + tail, dtype=dtype)
    rows = block
    if names is not None:  # the chunk of a DataFrame the estimator was fitted on
        block = pd.DataFrame(block, columns=names)
    try:
        # (one thread, as every problin task: chunks.in_task, which would hide
        # block_info from map_blocks)
        with serial_blocks():
            out = getattr(estimator, method)(block, **kwargs)
    except ValueError:
        missing = np.isnan(rows).any(axis=1) if rows.dtype.kind == "f" else None
        if missing is None or not missing.any() or not block_info:
            raise
        where = block_info[0]  # (the chunk and its rows, as the fits name them)
        k, lo = where["chunk-location"][0], where["array-location"][0][0]
        first = int(np.argmax(missing))
        if np.isnan(lo):  # rows of unknown count before this chunk: counted in the chunk
            raise ValueError(f"Input X contains NaN in chunk {k} (its row {first} of "
                             f"{rows.shape[0]}).") from None
        raise ValueError(f"Input X contains NaN in chunk {k} (row "
                         f"{lo + first}; the chunk holds rows {lo} to "
                         f"{lo + rows.shape[0] - 1}).") from None
    return out if index is None else out[index]


def lazy_rows(estimator: Any, method: str, X: Any, columns: int | None = None,
              dtype: Any = np.float64, index: Any = None,
              kwargs: dict[str, Any] | None = None) -> Any:
    """``estimator.method(X_k, **kwargs)[index]`` on every row chunk of a Dask ``X``, lazily.

    ``columns``: ``None`` for one value per row, else the number of output
    columns; ``index`` picks one output of a method that returns a tuple.
    ``kwargs``: the method's own keyword arguments, a dict (not this function's: a
    method's ``method=`` clashed with the name of the method called).
    """
    kwargs = {} if kwargs is None else kwargs
    names, fitted_names = _string_columns(X), getattr(estimator, "feature_names_in_", None)
    X = as_dask_rows(X, "X", known_rows=False)  # (chunk by chunk: no row counts needed)
    if X.shape[1] != estimator.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} features, but {type(estimator).__name__} is "
                         f"expecting {estimator.n_features_in_} features as input.")
    if names is not None and (fitted_names is None or list(names) != list(fitted_names)):
        raise ValueError("The feature names of the Dask DataFrame X differ from those seen "
                         f"in fit: {list(names)[:10]} vs "
                         f"{None if fitted_names is None else list(fitted_names)[:10]}")
    if names is None and fitted_names is not None:  # as scikit-learn says it, once
        warn_at_caller(f"X does not have valid feature names, but {type(estimator).__name__} "
                       "was fitted with feature names", UserWarning)
    dtype = np.dtype(dtype)
    tail = () if columns is None else (int(columns),)
    fn = functools.partial(_apply_rows, estimator, method, tail, dtype, index, kwargs,
                           fitted_names)
    meta = np.empty((0,) + tail, dtype=dtype)
    if columns is None:
        return X.map_blocks(fn, drop_axis=1, dtype=dtype, meta=meta)
    return X.map_blocks(fn, chunks=(X.chunks[0], tail), dtype=dtype, meta=meta)


def lazy_on_dask(columns: Callable[[Any], int | None] | None = None,
                 dtype: Callable[[Any], Any] | None = None,
                 in_memory_only: tuple[str, ...] = ()) -> Callable[[_F], _F]:
    """Decorator: a prediction method ``(self, X)`` returns a lazy Dask array for Dask ``X``.

    ``columns(self)`` gives the number of output columns (``None``: one value
    per row) and ``dtype(self)`` the output dtype (default float64). Other
    input goes to the method unchanged, to every chunk: arguments with one value
    per row (``in_memory_only``, e.g. ``offset``) are refused for Dask ``X`` when
    given, at the call (each chunk would get all the rows' values).
    """
    def wrap(method: _F) -> _F:
        @functools.wraps(method)  # keeps the method's name, docstring and signature
        def wrapper(self: Any, X: Any, *args: Any, **kwargs: Any) -> Any:
            if not is_dask(X):
                return method(self, X, *args, **kwargs)
            check_is_fitted(self)
            if args:  # further positional arguments go to the chunks by name
                names = list(inspect.signature(method).parameters)[2:]
                kwargs.update(zip(names, args))
            given = [name for name in in_memory_only if kwargs.get(name) is not None]
            if given:
                raise ValueError(f"{', '.join(given)} is not supported with Dask X (one value "
                                 f"per row): call {method.__name__} on in-memory rows, or "
                                 "add it to the linear predictor yourself "
                                 "(decision_function(X); a regressor's "
                                 "predict(X, linear=True))")
            return lazy_rows(self, method.__name__, X,
                             None if columns is None else columns(self),
                             np.float64 if dtype is None else dtype(self), kwargs=kwargs)
        return cast(_F, wrapper)
    return wrap
