"""The data source is chosen once from the input (problin._source.data_source): the
chunks' passes of a Dask array equal the in-memory ones, and what rows in chunks cannot
do is refused with the caller's message."""
import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from problin._source import data_source  # noqa: E402


def test_chunk_passes_equal_the_rows_in_memory():
    rng = np.random.default_rng(0)
    X = rng.normal(3.0, 2.0, (101, 3))
    stats = data_source(da.from_array(X, chunks=(17, 3))).column_stats()
    np.testing.assert_allclose(stats.counts, [101.0])
    np.testing.assert_allclose(stats.means[0], X.mean(axis=0), rtol=1e-13)
    in_memory = data_source(X).column_stats()
    np.testing.assert_allclose(in_memory.means[0], X.mean(axis=0), rtol=1e-13)
    # reduce: the chunk function on Dask rows, the in-memory function on rows at hand
    assert data_source(X).reduce(lambda X: "chunks", lambda X: X.shape) == (101, 3)
    assert data_source(da.from_array(X)).reduce(lambda X: "chunks", lambda X: 0) == "chunks"


def test_rows_in_chunks_refuse_what_needs_them_in_memory():
    X = np.ones((4, 2))
    data_source(X).require_in_memory("never raised")
    with pytest.raises(TypeError, match="needs the rows"):
        data_source(da.from_array(X)).require_in_memory("needs the rows", TypeError)
