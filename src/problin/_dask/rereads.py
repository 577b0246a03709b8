"""Dask arrays that read their files again on every pass of a fit.

A Dask array made by ``dask.dataframe.read_parquet(...).to_dask_array(lengths=True)``
(or ``read_csv``, ``read_orc``, ...) and not persisted holds, in its graph, the tasks that
read and convert the file: every ``compute`` runs them again. A Newton fit is one pass a
step, so the file is read and converted by ``dask.dataframe`` six to ten times; measured on
a 1 GB Parquet file (4e6 x 30), that route cost 2-5x the fit on ``problin.io.read_dask``'s
arrays of the same file (97 s against 45 s on a loaded two-core machine, 58-64 s against
12 s in issue 33), which read whole row groups with pyarrow and convert them to float64
once a chunk, without pandas' per-column takes (``bench/_inputs_parquet.py``); persisted
first, the same route took half the time of ``read_dask``'s (one read, then passes in
memory).

The fit cannot read the file another way (the graph's tasks are ``dask.dataframe``'s
internals: its filters, index and dtypes would have to be re-derived), and persisting the
array silently would break the bound on memory that out-of-core data rely on (a chunk per
worker thread): so the multi-pass fits say so once, before their passes, with both
remedies (:class:`~problin.exceptions.PerformanceWarning`).

The readers are recognised by the module of the functions their tasks call
(:data:`_READER_MODULES`), walking the tasks of the graph (fused tasks hold their subgraph
as an argument). What is not recognised (a future Dask's layout) gives no warning: a
warning missed costs time, never an error.
"""
import functools
from collections.abc import Iterable
from typing import Any

from ..exceptions import PerformanceWarning, warn_at_caller

__all__ = ["file_reader", "warn_if_rereads"]

# Where dask.dataframe's file readers live: their tasks call functions (or instances of
# classes) defined in these modules. (``dask.dataframe.io.io`` also holds ``from_pandas``,
# whose partitions are in memory: only its Parquet readers are files.)
_READER_MODULES = {
    "dask.dataframe.io.parquet": "read_parquet",
    "dask.dataframe.io.csv": "read_csv",
    "dask.bytes": "read_csv",  # (byte ranges of text files: read_csv, read_table, read_fwf)
    "dask.dataframe.io.orc": "read_orc",
    "dask.dataframe.io.json": "read_json",
    "dask.dataframe.io.hdf": "read_hdf",
    "dask.dataframe.io.sql": "read_sql",
}
_PARQUET_IO = ("dask.dataframe.dask_expr.io", "Parquet")  # read_parquet(filesystem="arrow")

# Containers nested deeper, or longer, than these are data, not graph structure.
_DEPTH, _WIDTH = 6, 256


def _reader_of(func: Any) -> str | None:
    """The ``dask.dataframe`` reader that a task's callable belongs to, if any."""
    while isinstance(func, functools.partial):
        func = func.func
    module = getattr(func, "__module__", None) or type(func).__module__ or ""
    if not isinstance(module, str):
        return None
    name = getattr(func, "__qualname__", None) or type(func).__qualname__
    if module.startswith(_PARQUET_IO[0]) and _PARQUET_IO[1] in str(name):
        return "read_parquet"
    for prefix, reader in _READER_MODULES.items():
        if module == prefix or module.startswith(prefix + "."):
            return reader
    return None


def _search(node: Any, depth: int = 0) -> str | None:
    """The first file reader called by ``node`` (a task, a subgraph, their arguments)."""
    from dask._task_spec import DataNode, Task
    if depth > _DEPTH:
        return None
    if isinstance(node, Task):
        found = _reader_of(node.func)
        if found is not None:
            return found
        children: Iterable[Any] = (*node.args, *node.kwargs.values())
    elif isinstance(node, DataNode):
        children = (node.value,)
    elif isinstance(node, dict) and len(node) <= _WIDTH:
        children = node.values()
    elif isinstance(node, (list, tuple)) and len(node) <= _WIDTH:
        children = node
    else:
        return None
    for child in children:
        found = _search(child, depth + 1)
        if found is not None:
            return found
    return None


def file_reader(*arrays: Any) -> str | None:
    """The ``dask.dataframe`` reader (``"read_parquet"``, ``"read_csv"``, ...) whose tasks
    the graph of one of ``arrays`` (Dask collections or ``None``) still holds, i.e. that
    every pass over them runs again; ``None`` if none (numpy or persisted chunks,
    problin's own readers, a graph this Dask lays out otherwise)."""
    try:
        for a in arrays:
            if a is None or not hasattr(a, "__dask_graph__"):
                continue
            for task in dict(a.__dask_graph__()).values():
                found = _search(task)
                if found is not None:
                    return found
    except Exception:  # a graph laid out otherwise: no verdict (the module docstring)
        return None
    return None


def warn_if_rereads(estimator: str, *arrays: Any) -> None:
    """Warn (:class:`~problin.exceptions.PerformanceWarning`) when ``arrays``, the rows of
    a fit of ``estimator`` that makes a pass an iteration, read their files again on
    every pass."""
    reader = file_reader(*arrays)
    if reader is None:
        return
    faster = (", or read the file with problin.io.read_dask(path, target), which reads "
              "Parquet row groups directly (2-5x faster, measured) with memory bounded "
              "by a partition") if reader == "read_parquet" else ""
    warn_at_caller(
        f"{estimator} makes a pass over the data an iteration, and its Dask arrays read "
        f"their files again with dask.dataframe.{reader} on every pass: persist them first "
        f"(X, y = dask.persist(X, y): one read, if they fit in memory){faster}",
        PerformanceWarning)
