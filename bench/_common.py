"""Helpers shared by the problin benchmarks: data, losses, timing and memory.

Kept free of any library under test so that every library is measured by the
same code. The harness that runs a workload is in ``_harness.py``.
"""
import gc
import platform
import statistics
import sys
import time
import tracemalloc
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.special import log_expit, log_ndtr, log_softmax, ndtr, softmax

MB = 1024.0 ** 2
LOSS_RTOL = 1e-9      # problin must reach every reference's loss within this (relative)
MEMORY_TARGET = 1.3   # problin's peak extra memory must be <= this x the size of X
# ... for X of at least this many MB: below it fixed buffers (the interpreter's and BLAS's
# workspaces, the small fits' kept Hessian buffers) dominate and the ratio says nothing.
MEMORY_MIN_MB = 2.0
SLOW_S = 30.0         # a reference slower than this gets --repeats-slow timed fits


# ------------------------------------------------------------------ data
def _dense_features(rng, n, d, rho):
    # Built in place: at N=1e6, D=50 every temporary copy of X costs 400 MB.
    X = rng.standard_normal((n, d))
    X *= np.sqrt(1.0 - rho)
    X += np.sqrt(rho) * rng.standard_normal((n, 1))
    return X


def make_logistic_data(n, d, *, rho=0.3, coef_scale=0.3, intercept=0.5, seed=0):
    """Dense, correlated, *non-separable* binary data: features standard normal with
    equicorrelation ``rho`` (one shared factor), weights ~ N(0, coef_scale^2), labels
    drawn from the logistic model, so the classes overlap and the MLE is finite."""
    rng = np.random.default_rng(seed)
    X = _dense_features(rng, n, d, rho)
    beta = rng.normal(0.0, coef_scale, size=d)
    eta = X @ beta + intercept
    y = (rng.random(n) < np.exp(log_expit(eta))).astype(np.float64)
    return X, y, beta, intercept


def make_probit_data(n, d, *, rho=0.3, coef_scale=0.3, intercept=0.3, seed=0):
    """As :func:`make_logistic_data`, labels from ``Phi(intercept + X w)``."""
    rng = np.random.default_rng(seed)
    X = _dense_features(rng, n, d, rho)
    beta = rng.normal(0.0, coef_scale, size=d)
    y = (rng.random(n) < ndtr(X @ beta + intercept)).astype(np.float64)
    return X, y, beta, intercept


def make_softmax_data(n, d, k, *, rho=0.3, coef_scale=0.3, seed=0):
    """Dense features as above; class logits ``X @ W``, W ~ N(0, coef_scale^2) (D x K);
    integer labels 0..K-1 drawn from the softmax. Returns X, y, W^T (K x D)."""
    rng = np.random.default_rng(seed)
    X = _dense_features(rng, n, d, rho)
    W = rng.normal(0.0, coef_scale, size=(d, k))
    cdf = np.cumsum(softmax(X @ W, axis=1), axis=1)
    y = np.minimum((cdf < rng.random((n, 1))).sum(axis=1), k - 1).astype(np.int64)
    return X, y, W.T.copy()


def make_sparse_data(n, d, *, nnz=60, zipf=1.0, informative=0.02, eta_sd=1.5,
                     intercept=-0.5, seed=0):
    """CSR float64, like word counts: each row draws words from a Zipf-like column
    popularity (``p_j ~ 1/rank^zipf``, ranks shuffled over the columns) so that rows
    hold ~``nnz`` distinct columns; values ``log1p(count)``. A fraction
    ``informative`` of the columns has N(0, 1) weights (scaled so that the linear
    predictor has sd ``eta_sd``); labels from the logistic model."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, d + 1) ** zipf
    p = p[rng.permutation(d)] / p.sum()
    lo, hi = float(nnz), 50.0 * nnz        # draws per row giving nnz distinct columns
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if np.sum(-np.expm1(mid * np.log1p(-p))) < nnz else (lo, mid)
    lengths = rng.poisson(lo, size=n)
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    cols = np.searchsorted(np.cumsum(p), rng.random(indptr[-1]) * p.sum()).astype(np.int32)
    X = sp.csr_matrix((np.ones(cols.size), np.minimum(cols, d - 1), indptr), shape=(n, d))
    X.sum_duplicates()
    np.log1p(X.data, out=X.data)
    w = np.zeros(d)
    idx = rng.choice(d, size=max(1, int(informative * d)), replace=False)
    w[idx] = rng.standard_normal(idx.size)
    w *= eta_sd / np.std(X @ w)
    y = (rng.random(n) < np.exp(log_expit(X @ w + intercept))).astype(np.float64)
    return X, y, w, intercept


def nbytes(X):
    """Memory held by X: the array, or a sparse matrix's data + indices + indptr."""
    if sp.issparse(X):
        return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    return X.nbytes


# ---------------------------------------------- losses (stable, same for all)
def logit_loss(X, y, b, W):
    """Mean ``-log sigmoid(+-eta)`` of binary labels 0/1; W is (1, D)."""
    eta = X @ W[0] + b[0]
    return float(-np.mean(log_expit(np.where(y > 0, eta, -eta))))


def probit_loss(X, y, b, W):
    """Mean ``-log Phi(+-eta)`` of binary labels 0/1; W is (1, D)."""
    eta = X @ W[0] + b[0]
    return float(-np.mean(log_ndtr(np.where(y > 0, eta, -eta))))


def softmax_loss(X, y, b, W):
    """Mean ``-log_softmax(X W^T + b)[y]`` over all K rows (W is K x D), so any
    parametrisation (contrasts with a zero row, or symmetric) gives the same value."""
    Z = np.asarray(X @ W.T) + b
    return float(-np.mean(log_softmax(Z, axis=1)[np.arange(len(y)), y]))


def mean_log_loss(X, y, coef, intercept):
    return logit_loss(X, y, np.atleast_1d(intercept), np.atleast_2d(coef))


# ----------------------------------------------------------- timing, memory
def _rss_reset():
    """Reset the kernel's peak-RSS mark (Linux: 5 > /proc/self/clear_refs) and
    return the current RSS in bytes; None where unsupported (RSS left NaN)."""
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


def timed(fn, repeats, repeats_slow=None, first_s=None, slow_s=SLOW_S):
    """Median wall time of ``repeats`` calls of ``fn()``; with ``repeats_slow``, only
    that many when a call (or the untimed ``first_s``) took over ``slow_s`` seconds.
    Returns (median seconds, last result, warning messages, number timed)."""
    times, result = [], None
    slow = repeats_slow is not None and first_s is not None and first_s > slow_s
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        while len(times) < (min(repeats, repeats_slow) if slow else repeats):
            gc.collect()
            t0 = time.perf_counter()
            result = fn()
            times.append(time.perf_counter() - t0)
            slow = slow or (repeats_slow is not None and times[-1] > slow_s)
    msgs = sorted({f"{w.category.__name__}: {str(w.message)[:70]}" for w in caught})
    return statistics.median(times), result, msgs, len(times)


def peak_memory(fn):
    """Peak *extra* memory of one untimed ``fn()`` call, in MB, relative to just before
    it (the data are not counted), and its wall time: (tracemalloc, RSS, seconds).

    tracemalloc sees Python's and NumPy's allocations but not private C/C++/BLAS
    buffers; the RSS high-water mark (VmHWM) sees everything, allocator slack too."""
    gc.collect()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rss0 = _rss_reset()
        tracemalloc.start()
        t0 = time.perf_counter()
        try:
            fn()
            seconds = time.perf_counter() - t0
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        rss_peak = _proc_status("VmHWM") if rss0 is not None else None
    rss = (rss_peak - rss0) / MB if rss0 is not None else float("nan")
    return peak / MB, rss, seconds


def environment_report():
    """A few lines about the interpreter and the BLAS/OpenMP thread pools."""
    lines = [f"python {sys.version.split()[0]} on {platform.platform()}, numpy {np.__version__}"]
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return lines + ["threadpoolctl not installed: thread pools unknown"]
    for pool in threadpool_info():
        lines.append(f"  {pool.get('user_api')}/{pool.get('internal_api')} "
                     f"{pool.get('version')} num_threads={pool.get('num_threads')} "
                     f"({pool.get('filepath')})")
    return lines
