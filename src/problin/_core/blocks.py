"""Row blocks: every data pass in problin is a sum over blocks of rows.

A block is a contiguous slice of rows small enough to stay in cache while a
kernel works on it, so that per-block temporaries (a weighted copy of the
block, say) never grow with the number of rows. The same ``map_reduce`` runs
over numpy arrays, scipy.sparse matrices and pandas DataFrames; the
distributed engines later plug in their own block iterators.
"""
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, Protocol

import numpy as np
import scipy.sparse as sp
from threadpoolctl import ThreadpoolController

from .types import Matrix

__all__ = ["block_rows", "iter_blocks", "map_reduce", "reduce_row_ranges", "map_rows",
           "n_workers", "small_blas", "serial_blocks"]

# Target bytes of one block: half of a typical per-core L2 cache (1-2 MiB),
# leaving room for the block's weighted copy and the D x D accumulator.
_BLOCK_BYTES = 1 << 20
_MIN_ROWS = 256
_MAX_ROWS = 65536


def block_rows(n_columns: float, itemsize: int = 8, *, target_bytes: int = _BLOCK_BYTES) -> int:
    """Number of rows per block so that one block holds ~``target_bytes``."""
    rows = target_bytes // max(1, int(n_columns) * int(itemsize))
    return int(min(_MAX_ROWS, max(_MIN_ROWS, rows)))


def _n_rows(a: Any) -> int:
    return a.shape[0]


def _row_slice(a: Any, start: int, stop: int) -> Any:
    if hasattr(a, "iloc"):  # pandas: hand kernels plain arrays
        return a.iloc[start:stop].to_numpy()
    if sp.issparse(a):
        return a[start:stop]
    return a[start:stop]


def _default_rows(X: Matrix) -> int:
    if sp.issparse(X):
        # Sparse blocks are sized by their stored entries, not their width.
        density = X.nnz / max(1, X.shape[0] * X.shape[1])
        return block_rows(max(1.0, density * X.shape[1]), 12)
    itemsize = getattr(getattr(X, "dtype", None), "itemsize", 8)
    n_columns = X.shape[1] if len(X.shape) > 1 else 1
    return block_rows(n_columns, itemsize)


def iter_blocks(X: Any, *arrays: Any, rows: int | None = None, start: int = 0,
                stop: int | None = None) -> Iterator[tuple[Any, ...]]:
    """Yield ``(start, stop, X_block, *array_blocks)`` over aligned row blocks.

    ``X`` may be a numpy array, a scipy.sparse matrix (CSR slices cheaply) or a
    pandas DataFrame; ``arrays`` are aligned per-row arrays (or ``None``).
    ``start``/``stop`` restrict the pass to a range of rows.
    """
    n = _n_rows(X)
    for a in arrays:
        if a is not None and _n_rows(a) != n:
            raise ValueError(f"row blocks need aligned inputs: {n} rows vs {_n_rows(a)}")
    rows = int(rows) if rows else _default_rows(X)
    end = n if stop is None else min(n, stop)
    for lo in range(start, end, rows):
        start, stop = lo, min(end, lo + rows)
        parts = [None if a is None else _row_slice(a, start, stop) for a in arrays]
        yield (start, stop, _row_slice(X, start, stop), *parts)


def _add(total: Any, part: Any) -> Any:
    if total is None:
        return part
    if isinstance(part, tuple):
        return tuple(_add(t, p) for t, p in zip(total, part))
    if isinstance(total, np.ndarray) and total.flags.writeable:
        total += part
        return total
    return total + part


def map_reduce(func: Callable[..., Any], X: Any, *arrays: Any, rows: int | None = None) -> Any:
    """``sum(func(X_block, *array_blocks) for each block)``.

    ``func`` may return a scalar, an array or a tuple of those; tuples are
    summed element by element. Array results are accumulated in place.
    """
    total = None
    for _, _, *parts in iter_blocks(X, *arrays, rows=rows):
        part = func(*parts)
        if isinstance(part, np.ndarray):
            part = part.copy() if total is None else part
        elif isinstance(part, tuple):
            part = tuple(p.copy() if isinstance(p, np.ndarray) and total is None else p
                         for p in part)
        total = _add(total, part)
    return total


_MIN_BLOCKS_PER_WORKER = 4
_CONTROLLER = None  # inspecting the loaded BLAS libraries costs ms: do it once


def n_workers() -> int:
    """Cores available to this process (threads for block-parallel passes)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _controller() -> ThreadpoolController:
    global _CONTROLLER
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


# BLAS's thread count is one setting of the whole process (OpenBLAS's pthreads build, MKL,
# BLIS), while one_blas_thread is entered by many threads at once (the threaded Dask
# scheduler's tasks, the block threads' passes, fits in user threads). A save-and-restore
# per entry breaks there: A saves 2 and sets 1, B saves 1, A restores 2 while B runs (B's
# BLAS oversubscribes), B restores 1 (the process stays on one thread for good). So the
# threads inside are counted: the first to enter saves the setting and sets one thread,
# the last to leave restores it. A thread's nested entries are counted in that thread
# only (no lock). OpenBLAS built on OpenMP keeps the setting per thread (OpenMP's): each
# thread sets and restores its own.
class _Library(Protocol):
    """What one_blas_thread asks of a threadpoolctl library controller."""
    user_api: str
    internal_api: str

    def get_num_threads(self) -> int | None: ...

    def set_num_threads(self, num_threads: int) -> Any: ...


_BLAS_LOCK = threading.Lock()
_BLAS_THREADS_INSIDE = 0
_BLAS_SAVED: list[tuple[_Library, int]] = []  # (library, its threads) to restore
_BLAS_LIBRARIES: tuple[list[_Library], list[_Library]] | None = None


def _per_thread(lib: _Library) -> bool:
    return getattr(lib, "threading_layer", None) == "openmp" and lib.internal_api == "openblas"


def _set_threads(lib: _Library, threads: int) -> None:
    """The library's own set call. threadpoolctl >= 3.8 lets one Python thread (the
    first to set, while it lives) set OpenBLAS's threads and silently ignores the
    others: after a Dask task had set them, the main thread's one_blas_thread was a
    no-op (and a task's, after the main thread's). The count above orders the calls."""
    getattr(lib, "_real_set_num_threads", lib.set_num_threads)(threads)


def _limit(libraries: list[_Library]) -> list[tuple[_Library, int]]:
    """Set ``libraries`` to one thread; ``(library, threads before)`` of those changed."""
    saved = []
    for lib in libraries:
        threads = lib.get_num_threads()
        if threads is not None and threads != 1:
            _set_threads(lib, 1)
            saved.append((lib, threads))
    return saved


def _restore(saved: list[tuple[_Library, int]]) -> None:
    for lib, threads in saved:
        _set_threads(lib, threads)


def _blas_libraries() -> tuple[list[_Library], list[_Library]]:
    """The loaded BLAS libraries whose setting is ``(the process's, per thread)``."""
    global _BLAS_LIBRARIES
    if _BLAS_LIBRARIES is None:
        blas = [lib for lib in _controller().lib_controllers if lib.user_api == "blas"]
        _BLAS_LIBRARIES = ([lib for lib in blas if not _per_thread(lib)],
                           [lib for lib in blas if _per_thread(lib)])
    return _BLAS_LIBRARIES


def _enter_one_blas_thread() -> None:
    global _BLAS_THREADS_INSIDE, _BLAS_SAVED
    shared, own = _blas_libraries()
    _LOCAL.blas_saved = _limit(own)
    with _BLAS_LOCK:
        if _BLAS_THREADS_INSIDE == 0:
            _BLAS_SAVED = _limit(shared)
        _BLAS_THREADS_INSIDE += 1


def _leave_one_blas_thread() -> None:
    global _BLAS_THREADS_INSIDE, _BLAS_SAVED
    _restore(_LOCAL.blas_saved)
    with _BLAS_LOCK:
        _BLAS_THREADS_INSIDE -= 1
        if _BLAS_THREADS_INSIDE == 0:
            _restore(_BLAS_SAVED)
            _BLAS_SAVED = []


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS (and the LAPACK it carries) on one thread inside the block, as
    threadpoolctl's ``limit(limits=1, user_api="blas")``, by each library's own
    get and set calls (~1 us each): ``limit`` re-reads every loaded library's whole
    state first, 10-100 us a time, called several times per small fit. Safe to enter
    from many threads at once: the setting is restored when the last one leaves (other
    threads' BLAS calls meanwhile also run on one thread: the setting is the process's)."""
    depth = getattr(_LOCAL, "blas_depth", 0)
    if depth == 0:
        _enter_one_blas_thread()
    _LOCAL.blas_depth = depth + 1
    try:
        yield
    finally:
        _LOCAL.blas_depth = depth
        if depth == 0:
            _leave_one_blas_thread()


def _forget_blas_threads() -> None:
    """In a forked child only the forking thread exists: the threads that were inside
    one_blas_thread will never leave, so the count is this thread's alone (and the
    lock, perhaps held by another thread at the fork, is new)."""
    global _BLAS_LOCK, _BLAS_THREADS_INSIDE, _BLAS_SAVED
    _BLAS_LOCK = threading.Lock()
    inside = 1 if getattr(_LOCAL, "blas_depth", 0) else 0
    if _BLAS_THREADS_INSIDE and not inside:
        _restore(_BLAS_SAVED)
        _BLAS_SAVED = []
    _BLAS_THREADS_INSIDE = inside


# Matrices up to this order are factored with single-threaded BLAS.
_SMALL_ORDER = 1000
# Below this order BLAS runs on one thread anyway (OpenBLAS splits only larger
# problems): no limit is set (a few us each time). One exception found: potri's
# lauum wakes its threads at any order (see linalg.Cholesky.inverse, which
# avoids it there).
_TINY_ORDER = 64


def small_blas(order: int) -> AbstractContextManager[Any]:
    """Context for LAPACK work on an ``order x order`` matrix (p x p Hessians).

    Up to ``_SMALL_ORDER`` it runs on one BLAS thread: a 500 x 500 Cholesky
    takes ~2 ms on one core, while multithreaded BLAS synchronises its
    threads dozens of times per factorisation, and on a machine whose cores
    are busy with other work each barrier can wait a whole time slice
    (measured: 1.4 ms single-threaded, up to 600 ms with two threads on a
    loaded two-core machine).
    """
    if order > _SMALL_ORDER or order < _TINY_ORDER:
        return nullcontext()
    return one_blas_thread()


_LOCAL = threading.local()

# The block threads, made on first use and kept (starting threads per pass would cost
# more than small passes take). The pool belongs to the process that made it: a
# forked child inherits the executor's bookkeeping but none of its threads, and work
# queued there waited forever (fit, fork, fit in the child: a hang -- os.fork,
# multiprocessing's fork pools, joblib's multiprocessing backend, preforking
# servers). The child forgets the pool at the fork, and the pid check covers a fork
# that bypasses the at-fork hooks.
_POOL: ThreadPoolExecutor | None = None
_POOL_PID = 0
_POOL_LOCK = threading.Lock()  # two threads starting their first pass make one pool


def _forget_pool() -> None:
    """In a forked child: the parent's pool has no threads here (and its lock may
    have been held by another thread of the parent at the fork)."""
    global _POOL, _POOL_LOCK
    _POOL = None
    _POOL_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):  # (POSIX)
    os.register_at_fork(after_in_child=_forget_pool)
    os.register_at_fork(after_in_child=_forget_blas_threads)


def _pool(workers: int) -> ThreadPoolExecutor:
    """This process's block threads, at least ``workers`` of them."""
    global _POOL, _POOL_PID
    with _POOL_LOCK:
        pid = os.getpid()
        if _POOL is None or _POOL_PID != pid or _POOL._max_workers < workers:
            # (a smaller pool of this process is dropped: its idle threads exit
            # when it is collected)
            _POOL = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="problin-block")
            _POOL_PID = pid
        return _POOL


@contextmanager
def serial_blocks() -> Iterator[None]:
    """Block passes in this thread run on one thread (no worker threads), and BLAS
    on one thread (:func:`one_blas_thread`).

    For the tasks of a parallel engine (a Dask chunk task): the engine already
    keeps every core busy with other chunks (one task per worker thread), and two
    levels of threads would only compete for them (measured: 4 threads on 2
    cores). BLAS's own threads were such a second level: an LDA on an in-memory
    Dask array of 4e6 x 30 took 7 s on the threaded scheduler with OpenBLAS's
    default threads, 0.7 s with one.
    """
    before = getattr(_LOCAL, "serial", False)
    _LOCAL.serial = True
    try:
        with one_blas_thread():
            yield
    finally:
        _LOCAL.serial = before


def reduce_row_ranges(func: Callable[[int, int], Any], n_rows: int, rows: int,
                      workers: int | None = None) -> Any:
    """``sum(func(lo, hi))`` over contiguous row ranges, one per worker thread.

    BLAS kernels on one block (a few thousand rows) barely use a second core,
    so the rows are split into as many contiguous ranges as there are cores
    and each thread runs ``func`` over its range with single-threaded BLAS
    (numpy releases the GIL inside its kernels). Range boundaries fall on
    block boundaries and depend only on the data size and the core count, so
    a pass is deterministic on a given machine.
    """
    if workers is None:
        workers = 1 if getattr(_LOCAL, "serial", False) else n_workers()
    workers = int(workers)
    n_blocks = -(-n_rows // rows) if n_rows else 0
    workers = max(1, min(workers, n_blocks // _MIN_BLOCKS_PER_WORKER))
    if workers == 1:
        return func(0, n_rows)
    cuts = [(n_blocks * i // workers) * rows for i in range(workers)] + [n_rows]
    pool = _pool(workers)
    with one_blas_thread():
        parts = list(pool.map(lambda i: func(cuts[i], cuts[i + 1]), range(workers)))
    total = None
    for part in parts:
        total = _add(total, part)
    return total


# Element-wise row kernels (a family's derivatives: a dozen ufuncs per row)
# run on chunks this long, so that their temporaries stay in cache.
ELEMENTWISE_ROWS = 16384


def map_rows(func: Callable[[int, int], Sequence[Any]], n_rows: int, outputs: Sequence[np.ndarray],
             rows: int = ELEMENTWISE_ROWS) -> float:
    """Run an element-wise kernel over row chunks in parallel threads.

    ``func(lo, hi)`` returns ``(scalar, a_1, ..., a_k)`` for rows ``lo:hi``;
    each ``a_j`` is written into ``outputs[j][lo:hi]`` and the scalars are
    summed (in a fixed order, so the result is deterministic). numpy's ufuncs
    release the GIL, so the chunks of the two ranges run on two cores, and
    each chunk's temporaries stay in cache instead of streaming n-vectors
    through memory once per ufunc.
    """
    def over_range(lo: int, hi: int) -> float:
        total = 0.0
        for start in range(lo, hi, rows):
            stop = min(hi, start + rows)
            scalar, *parts = func(start, stop)
            total += scalar
            for out, part in zip(outputs, parts):
                out[start:stop] = part
        return total

    return reduce_row_ranges(over_range, n_rows, rows) if n_rows else 0.0


class OneThreadBLAS:
    """An objective whose methods run with single-threaded BLAS: the sketch's, whose
    products (a single range of ~20k rows) run on the calling thread between the
    passes over all rows. A multithreaded BLAS call there leaves OpenBLAS's threads
    spinning after it returns (for up to ~0.1 s), competing with the next pass's
    block threads: measured ~30 % slower passes on a 2-core machine (95-125 ms
    instead of 70-80 on Dask; 85-88 ms instead of 63 in memory)."""

    def __init__(self, objective: Any) -> None:
        self._objective = objective

    def __getattr__(self, name: str) -> Any:
        if name == "_objective":  # (not set yet: a copy being built)
            raise AttributeError(name)
        found = getattr(self._objective, name)
        if not callable(found):
            return found

        def one_thread(*args: Any, **kwargs: Any) -> Any:
            with one_blas_thread():
                return found(*args, **kwargs)

        return one_thread
