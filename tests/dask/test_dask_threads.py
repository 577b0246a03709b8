"""BLAS threads inside problin's Dask tasks: one per task, the scheduler's threads being
the parallelism (issue 33: an LDA of 4e6 x 30 took 7 s on the threaded scheduler with
OpenBLAS's two threads a task, 0.7 s with one).

Each test runs under two BLAS threads (``threadpool_limits(2)``), so that a task left
at the process's setting would report 2: the probes read ``threadpool_info()`` inside
the task, as threadpoolctl reports it there.
"""
import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

pytest.importorskip("dask.array")
import dask  # noqa: E402
import dask.array as da  # noqa: E402

from problin import LinearDiscriminantAnalysis  # noqa: E402
from problin._core import blocks  # noqa: E402
from problin._dask import reductions  # noqa: E402
from problin._dask.lazy import lazy_rows  # noqa: E402


def _blas_threads() -> int:
    return max(lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas")


if not any(lib["user_api"] == "blas" for lib in threadpool_info()):
    pytest.skip("threadpoolctl finds no BLAS library to read", allow_module_level=True)


def _data(n: int = 4000, d: int = 5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.standard_normal((n, d)), np.arange(n) % 3


@pytest.fixture(params=["threads", "distributed-threads"])
def scheduler(request):
    """The threaded scheduler, and a distributed cluster whose worker runs its tasks in
    threads of this process (a worker process started by a nanny is already given
    OPENBLAS_NUM_THREADS=1 by dask's own settings)."""
    if request.param == "threads":
        with dask.config.set(scheduler="threads", num_workers=2):
            yield
        return
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        yield


def test_one_pass_fit_runs_blas_on_one_thread_a_task(scheduler, monkeypatch):
    seen: list[int] = []
    in_memory = reductions.class_stats

    def probe(*args, **kwargs):  # the chunk's in-memory statistics, inside problin's task
        seen.append(_blas_threads())
        return in_memory(*args, **kwargs)

    monkeypatch.setattr(reductions, "class_stats", probe)
    X, y = _data()
    with threadpool_limits(limits=2, user_api="blas"):
        fitted = LinearDiscriminantAnalysis().fit(da.from_array(X, chunks=500),
                                                  da.from_array(y, chunks=500))
        assert _blas_threads() == 2  # restored once the last task left
    assert len(seen) == 8 and max(seen) == 1
    np.testing.assert_allclose(fitted.means_, [X[y == k].mean(axis=0) for k in range(3)],
                               rtol=1e-12, atol=1e-14)


class _Probe:
    """An estimator-like object whose 'prediction' is the BLAS threads its task saw."""
    n_features_in_ = 5

    def threads(self, X: np.ndarray) -> np.ndarray:
        return np.full(X.shape[0], float(_blas_threads()))


def test_lazy_predictions_run_blas_on_one_thread_a_task(scheduler):
    X, _ = _data(2000)
    with threadpool_limits(limits=2, user_api="blas"):
        seen = lazy_rows(_Probe(), "threads", da.from_array(X, chunks=500)).compute()
        assert _blas_threads() == 2
    np.testing.assert_array_equal(seen, np.ones(2000))


def test_one_blas_thread_restores_when_the_last_thread_leaves():
    """BLAS's setting is the process's: entered by two threads at once, it stays at one
    thread until both have left (a save-and-restore per thread left it at 2 while the
    second still ran, then at 1 for good)."""
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def a() -> None:
        with blocks.one_blas_thread():
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def b() -> None:
        a_in.wait(5)
        with blocks.one_blas_thread():
            b_in.set()
            a_out.wait(5)
            seen["b after a left"] = _blas_threads()

    with threadpool_limits(limits=2, user_api="blas"):
        threads = [threading.Thread(target=f) for f in (a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        seen["after both"] = _blas_threads()
    assert seen == {"b after a left": 1, "after both": 2}
