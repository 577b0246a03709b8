"""Helpers shared by the problin benchmarks: data, loss, timing and memory.

Kept free of any library under test so that every library is measured by
the same code.
"""
import gc
import platform
import statistics
import sys
import time
import tracemalloc
import warnings

import numpy as np
from scipy.special import log_expit

MB = 1024.0 ** 2


def make_logistic_data(n, d, *, rho=0.3, coef_scale=0.3, intercept=0.5, seed=0):
    """Dense, correlated, *non-separable* binary data for logistic regression.

    Features are standard normal with equicorrelation ``rho`` (one shared
    factor), true weights ~ N(0, coef_scale^2), and labels are drawn from the
    true model, so the classes overlap and the MLE is finite.
    """
    rng = np.random.default_rng(seed)
    # Built in place: at N=1e6, D=50 every temporary copy of X costs 400 MB.
    X = rng.standard_normal((n, d))
    X *= np.sqrt(1.0 - rho)
    X += np.sqrt(rho) * rng.standard_normal((n, 1))
    beta = rng.normal(0.0, coef_scale, size=d)
    eta = X @ beta + intercept
    y = (rng.random(n) < np.exp(log_expit(eta))).astype(np.float64)
    return X, y, beta, intercept


def mean_log_loss(X, y, coef, intercept):
    """Mean negative log-likelihood, ``-log sigmoid(+-eta)``, stable for any eta."""
    eta = X @ np.asarray(coef, dtype=np.float64).ravel() + float(intercept)
    return float(-np.mean(log_expit(np.where(y > 0, eta, -eta))))


def _rss_reset():
    """Reset the kernel's peak-RSS mark; return the current RSS in bytes, or None.

    Linux only (writing 5 to /proc/self/clear_refs resets VmHWM); elsewhere the
    RSS column is simply left empty.
    """
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return _proc_status("VmRSS")
    except OSError:
        return None


def _proc_status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return None


def timed(fn, repeats):
    """Run ``fn()`` ``repeats`` times; return (median seconds, last result, warnings)."""
    times, result = [], None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(repeats):
            gc.collect()
            t0 = time.perf_counter()
            result = fn()
            times.append(time.perf_counter() - t0)
    msgs = sorted({f"{w.category.__name__}: {str(w.message)[:60]}" for w in caught})
    return statistics.median(times), result, msgs


def peak_memory(fn):
    """Peak *extra* memory of one untimed ``fn()`` call, in MB: (tracemalloc, RSS).

    tracemalloc sees every allocation made through Python's and NumPy's
    allocators (NumPy reports its data buffers to it), but not private C/C++
    or BLAS buffers; the RSS high-water mark sees everything the process
    touches, but also the allocator's slack. Both are relative to the state
    just before the call, so the input data are not counted.
    """
    gc.collect()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rss0 = _rss_reset()
        tracemalloc.start()
        try:
            fn()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        rss_peak = _proc_status("VmHWM") if rss0 is not None else None
    rss = (rss_peak - rss0) / MB if rss0 is not None else float("nan")
    return peak / MB, rss


def environment_report():
    """A few lines about the interpreter and the BLAS/OpenMP thread pools."""
    lines = [f"python {sys.version.split()[0]} on {platform.platform()}, "
             f"numpy {np.__version__}"]
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return lines + ["threadpoolctl not installed: thread pools unknown"]
    for pool in threadpool_info():
        lines.append(f"  {pool.get('user_api')}/{pool.get('internal_api')} "
                     f"{pool.get('version')} num_threads={pool.get('num_threads')} "
                     f"({pool.get('filepath')})")
    return lines
