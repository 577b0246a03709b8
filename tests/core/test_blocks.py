"""Row blocks: iter_blocks / map_reduce over numpy, scipy.sparse and pandas inputs."""
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from problin._core import blocks
from problin._core.blocks import block_rows, iter_blocks, map_reduce


def _dense(Xb):
    return Xb.toarray() if sp.issparse(Xb) else np.asarray(Xb)


def _make(kind, n=1000, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.6] = 0.0
    if kind == "numpy":
        return X, X
    if kind == "csr":
        return sp.csr_matrix(X), X
    if kind == "frame":
        return pd.DataFrame(X, columns=[f"c{j}" for j in range(d)]), X
    raise AssertionError(kind)


KINDS = ["numpy", "csr", "frame"]


# ---------------------------------------------------------------- block_rows

def test_block_rows_bounds():
    assert block_rows(1) == blocks._MAX_ROWS
    assert block_rows(0) == blocks._MAX_ROWS  # zero width is treated as one column
    assert block_rows(10**7) == blocks._MIN_ROWS
    assert block_rows(10, 8) == (1 << 20) // 80
    assert block_rows(10, 4) == (1 << 20) // 40
    assert block_rows(10, 8, target_bytes=8000) == blocks._MIN_ROWS
    for d in [1, 2, 3, 17, 100, 1000, 5000, 10**5]:
        for itemsize in (4, 8):
            r = block_rows(d, itemsize)
            assert isinstance(r, int)
            assert blocks._MIN_ROWS <= r <= blocks._MAX_ROWS
    # Monotone: wider rows, fewer of them per block.
    widths = [1, 10, 100, 1000, 10000]
    rows = [block_rows(w) for w in widths]
    assert rows == sorted(rows, reverse=True)


# ---------------------------------------------------------------- iter_blocks

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("rows", [None, 1, 7, 999, 1000, 1001, 5000])
def test_blocks_cover_all_rows_once_in_order(kind, rows):
    X, Xd = _make(kind)
    n = Xd.shape[0]
    v = np.arange(n, dtype=np.float64)
    w = pd.Series(np.arange(n) * 2.0) if kind == "frame" else np.arange(n) * 2.0
    seen = []
    expected_rows = int(rows) if rows else blocks._default_rows(X)
    prev_stop = 0
    pieces = []
    for start, stop, Xb, vb, nb, wb in iter_blocks(X, v, None, w, rows=rows):
        assert start == prev_stop
        assert 0 <= start < stop <= n
        assert stop - start <= expected_rows
        if stop < n:
            assert stop - start == expected_rows
        assert Xb.shape == (stop - start, Xd.shape[1])
        assert nb is None
        assert isinstance(vb, np.ndarray) and isinstance(wb, np.ndarray)
        np.testing.assert_array_equal(vb, v[start:stop])
        np.testing.assert_array_equal(wb, np.arange(start, stop) * 2.0)
        if kind == "frame":
            assert isinstance(Xb, np.ndarray)  # kernels get plain arrays
        if kind == "csr":
            assert sp.issparse(Xb)
        pieces.append(_dense(Xb))
        seen.extend(range(start, stop))
        prev_stop = stop
    assert prev_stop == n
    assert seen == list(range(n))
    np.testing.assert_array_equal(np.vstack(pieces), Xd)


def test_default_rows_use_cache_sized_blocks():
    X = np.zeros((70000, 2))
    got = [(a, b) for a, b, _ in iter_blocks(X)]
    assert got == [(0, 65536), (65536, 70000)]
    X32 = np.zeros((3000, 1000), dtype=np.float32)
    assert [b - a for a, b, _ in iter_blocks(X32)][0] == block_rows(1000, 4)
    wide = np.zeros((600, 10000))
    assert [b - a for a, b, _ in iter_blocks(wide)] == [256, 256, 88]


def test_sparse_blocks_are_sized_by_stored_entries():
    n, d = 200000, 1000
    rng = np.random.default_rng(0)
    X = sp.csr_matrix((np.ones(n), rng.integers(0, d, n), np.arange(n + 1)), shape=(n, d))
    first = next(iter_blocks(X))
    # ~1 stored entry per row: far more rows than a dense 1000-wide block.
    assert first[1] - first[0] > block_rows(1000)


def test_one_dimensional_x_and_empty_input():
    x = np.arange(10.0)
    out = list(iter_blocks(x, rows=4))
    assert [(a, b) for a, b, _ in out] == [(0, 4), (4, 8), (8, 10)]
    np.testing.assert_array_equal(np.concatenate([b for *_, b in out]), x)
    assert list(iter_blocks(np.empty((0, 3)), np.empty(0), rows=5)) == []


@pytest.mark.parametrize("kind", KINDS)
def test_mismatched_lengths_raise(kind):
    X, _ = _make(kind, n=50)
    with pytest.raises(ValueError, match="aligned"):
        list(iter_blocks(X, np.zeros(49)))
    with pytest.raises(ValueError, match="50 rows vs 51"):
        list(iter_blocks(X, np.zeros(50), None, np.zeros(51)))
    with pytest.raises(ValueError):
        map_reduce(lambda Xb, v: v.sum(), X, np.zeros(10))


def test_mismatch_raises_before_anything_is_yielded():
    gen = iter_blocks(np.zeros((10, 2)), np.zeros(9), rows=2)
    with pytest.raises(ValueError):
        next(gen)


# ---------------------------------------------------------------- map_reduce

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("rows", [None, 3, 64, 1000])
def test_map_reduce_scalars_arrays_tuples(kind, rows):
    X, Xd = _make(kind, n=500, d=4, seed=1)
    rng = np.random.default_rng(2)
    v = rng.normal(size=500)
    w = rng.random(500)

    def dense(Xb):
        return _dense(Xb)

    total = map_reduce(lambda Xb, vb: float(vb.sum()), X, v, rows=rows)
    assert total == pytest.approx(v.sum(), rel=1e-12)

    colsum = map_reduce(lambda Xb: dense(Xb).sum(axis=0), X, rows=rows)
    np.testing.assert_allclose(colsum, Xd.sum(axis=0), rtol=1e-12, atol=1e-12)

    gram = map_reduce(lambda Xb, wb: dense(Xb).T @ (wb[:, None] * dense(Xb)), X, w, rows=rows)
    np.testing.assert_allclose(gram, Xd.T @ (w[:, None] * Xd), rtol=1e-12, atol=1e-12)

    def several(Xb, vb, wb):
        D = dense(Xb)
        return float(wb @ vb), D.T @ vb, (D * wb[:, None]).sum(axis=0), np.int64(len(vb))

    s, a, b, count = map_reduce(several, X, v, w, rows=rows)
    assert s == pytest.approx(w @ v, rel=1e-12)
    np.testing.assert_allclose(a, Xd.T @ v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b, (Xd * w[:, None]).sum(axis=0), rtol=1e-12, atol=1e-12)
    assert count == 500


def test_map_reduce_single_block_and_nested_tuple():
    X = np.arange(12.0).reshape(6, 2)
    out = map_reduce(lambda Xb: (Xb.sum(), (Xb[:, 0].sum(), Xb[:, 1].copy())), X, rows=100)
    assert out[0] == X.sum()
    assert out[1][0] == X[:, 0].sum()
    np.testing.assert_array_equal(out[1][1], X[:, 1])


def test_map_reduce_never_writes_into_inputs_or_returned_buffers():
    X = np.arange(20.0).reshape(10, 2)
    X0 = X.copy()
    # func returns a view into X itself: accumulating in place must not touch X.
    total = map_reduce(lambda Xb: Xb[0], X, rows=2)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(total, X[::2].sum(axis=0))
    # A buffer the caller reuses across blocks.
    buf = np.zeros(2)

    def into_buffer(Xb):
        np.sum(Xb, axis=0, out=buf)
        return buf

    total = map_reduce(into_buffer, X, rows=3)
    np.testing.assert_array_equal(total, X.sum(axis=0))
    assert total is not buf
    # Tuples of views as well.
    t = map_reduce(lambda Xb: (Xb[0], Xb[-1]), X, rows=5)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(t[0], X[0] + X[5])
    np.testing.assert_array_equal(t[1], X[4] + X[9])


def test_map_reduce_read_only_result_arrays():
    X = np.arange(8.0).reshape(4, 2)

    def readonly(Xb):
        out = Xb.sum(axis=0)
        out.flags.writeable = False
        return out

    np.testing.assert_array_equal(map_reduce(readonly, X, rows=1), X.sum(axis=0))


def test_map_reduce_passes_none_arrays_through():
    X = np.ones((9, 2))
    calls = []

    def f(Xb, a, b):
        calls.append((a, b is None))
        return Xb.shape[0]

    assert map_reduce(f, X, None, np.arange(9.0), rows=4) == 9
    assert [c[0] for c in calls] == [None, None, None]


def test_map_reduce_sparse_results():
    X = sp.random(300, 6, density=0.3, format="csr", random_state=3)
    G = map_reduce(lambda Xb: Xb.T @ Xb, X, rows=50)
    np.testing.assert_allclose(_dense(G), (X.T @ X).toarray(), rtol=1e-12, atol=1e-14)


def _blas_threads():
    from threadpoolctl import threadpool_info
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_one_blas_thread_sets_one_thread_and_restores_even_after_an_error():
    from threadpoolctl import threadpool_limits
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        assert before and all(n == 2 for n in before)
        with blocks.one_blas_thread():
            assert all(n == 1 for n in _blas_threads())
            with blocks.small_blas(100):  # nested: restores to the outer one
                assert all(n == 1 for n in _blas_threads())
            assert all(n == 1 for n in _blas_threads())
        assert _blas_threads() == before
        with pytest.raises(RuntimeError), blocks.one_blas_thread():
            raise RuntimeError("inside")
        assert _blas_threads() == before
        with blocks.small_blas(10):  # tiny orders set no limit
            assert _blas_threads() == before
