"""The data source: where a fit's rows are, as a type chosen once from the input.

The estimators read their rows through one interface, :class:`~problin._source.base.DataSource`,
whatever holds them: numpy or scipy.sparse in memory
(:class:`~problin._source.memory.InMemory`, whose classifier rows are a row-blocked
``Design``, the whole-matrix ``SmallDenseDesign`` of small dense data, or sparse
rows that L-BFGS reads in raw units) or the row chunks of a Dask collection
(:class:`~problin._source.distributed.OnDask`, whose every pass is a distributed
reduction). :func:`data_source` is the one place that looks at the input to choose;
nothing above it tests for Dask or for a kind of design.
"""
from .._core.types import MatrixLike
from .._dask.chunks import is_dask
from .base import ClassifierDesign, ClassifierRows, DataSource
from .distributed import OnDask, regression_chunks
from .memory import InMemory

__all__ = ["ClassifierDesign", "ClassifierRows", "DataSource", "data_source",
           "regression_chunks"]


def data_source(X: MatrixLike) -> DataSource:
    """The source of the rows ``X``: a Dask collection's chunks, or rows in memory."""
    return OnDask(X) if is_dask(X) else InMemory(X)
