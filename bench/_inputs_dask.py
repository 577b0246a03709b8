"""Dask one-pass models against the same fit in memory (issue 33: BLAS threads in Dask tasks).

LDA, QDA, GaussianNB and least squares (LinearRegression) on a Dask array of N x 30
(4,000,000 rows in 16 chunks of 250,000; 200,000 rows in 4 chunks with ``quick``), each against problin's fit of the same rows as a numpy array, interleaved
(Dask, numpy, Dask, ...):

* an in-memory Dask array on the threaded scheduler (2 threads) and on a ``LocalCluster`` of
  2 worker processes x 1 thread (the chunks persisted on the workers first): target 1.5 x
  the numpy fit;
* a Parquet-backed Dask array (the file written once, one row group a chunk), read by
  :func:`problin.io.read_dask` (the CLI's reader) inside every fit, against reading the same
  columns with pandas and fitting the numpy array: target 1.5 x.

Labels: 3 classes drawn from a softmax model (``_common.make_softmax_data``); the least
squares target is a linear function of X plus unit noise.
"""
import os
import statistics
import sys
import tempfile
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import make_softmax_data  # noqa: E402

TITLE = "Dask one-pass models: in-memory and Parquet-backed Dask arrays vs numpy in memory"

D = 30
TARGET = 1.5


def _models():
    from problin import (
        GaussianNB,
        LinearDiscriminantAnalysis,
        LinearRegression,
        QuadraticDiscriminantAnalysis,
    )
    return (("LDA", LinearDiscriminantAnalysis, "label"),
            ("QDA", QuadraticDiscriminantAnalysis, "label"),
            ("GaussianNB", GaussianNB, "label"),
            ("least squares (LinearRegression)", LinearRegression, "target"))


def _data(n):
    X, labels, _ = make_softmax_data(n, D, 3, seed=0)
    rng = np.random.default_rng(1)
    target = X @ rng.normal(0.0, 1.0, D) + 0.5 + rng.standard_normal(n)
    return X, {"label": labels, "target": target}


def _seconds(fit):
    t0 = time.perf_counter()
    fit()
    return time.perf_counter() - t0


def _interleaved(repeats, dask_fit, ref_fit, warm):
    """Times of ``dask_fit`` and ``ref_fit``, alternating; with ``warm``, after one untimed
    call of each (imports, the workers' first tasks: the first model of each setting)."""
    if warm:
        dask_fit(), ref_fit()
    ours, ref = [], []
    for _ in range(repeats):
        ours.append(_seconds(dask_fit))
        ref.append(_seconds(ref_fit))
    return ours, ref


def _write_parquet(path, X, ys, chunk):
    import pyarrow as pa
    import pyarrow.parquet as pq
    columns = {f"x{j}": X[:, j] for j in range(D)}
    columns.update(ys)
    pq.write_table(pa.table(columns), path, row_group_size=chunk)


def _in_memory_rows(repeats, where, X, ys, Xd, yds, note=""):
    rows = []
    for i, (name, model, y) in enumerate(_models()):
        ours, ref = _interleaved(repeats, lambda: model().fit(Xd, yds[y]),
                                 lambda: model().fit(X, ys[y]), warm=i == 0)
        rows.append(dict(workload=f"{name}, {X.shape[0]:,} x {D}, in-memory Dask array, "
                         f"{where}", problin=ours, reference="problin on the numpy array",
                         ref=ref, target=TARGET, note=note))
    return rows


def _placement(client, Xp):
    """Where the scheduler put the persisted chunks of X: each chunk's task runs where the
    chunk is, so 9 + 7 chunks take 9/8 of the time of 8 + 8."""
    held = sorted(sum(1 for key in keys if key[0] == Xp.name)
                  for keys in client.has_what().values())
    return "X chunks per worker: " + " + ".join(map(str, held))


def _parquet_rows(repeats, where, path):
    import pandas as pd

    from problin.io import read_dask
    features = [f"x{j}" for j in range(D)]
    rows = []
    for i, (name, model, y) in enumerate(_models()):
        def on_dask():
            data = read_dask(path, y, columns=features)
            model().fit(data.X, data.y)

        def in_memory():
            frame = pd.read_parquet(path, columns=features + [y])
            model().fit(frame[features].to_numpy(), frame[y].to_numpy())

        ours, ref = _interleaved(repeats, on_dask, in_memory, warm=i == 0)
        rows.append(dict(workload=f"{name}, Parquet-backed Dask array (problin.io.read_dask), "
                         f"{where}", problin=ours,
                         reference="pandas.read_parquet, then problin on the numpy array",
                         ref=ref, target=TARGET, note="both times include reading the file"))
    return rows


def measure(repeats: int, quick: bool) -> list[dict]:
    import dask
    import dask.array as da
    from distributed import Client, LocalCluster, wait

    warnings.simplefilter("ignore")
    n = 200_000 if quick else 4_000_000
    chunk = n // (4 if quick else 16)  # (a smoke run: fewer tasks)
    X, ys = _data(n)
    Xd = da.from_array(X, chunks=(chunk, D))
    yds = {k: da.from_array(v, chunks=chunk) for k, v in ys.items()}
    rows = []
    with dask.config.set(scheduler="threads", num_workers=2):
        rows += _in_memory_rows(repeats, "threaded scheduler (2 threads)", X, ys, Xd, yds)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "inputs.parquet")
        _write_parquet(path, X, ys, chunk)
        with dask.config.set(scheduler="threads", num_workers=2):
            rows += _parquet_rows(repeats, "threaded scheduler", path)
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            Xp, *yps = dask.persist(Xd, *yds.values())
            wait([Xp, *yps])
            rows += _in_memory_rows(repeats, "LocalCluster 2 processes x 1 thread", X, ys,
                                    Xp, dict(zip(yds, yps)), _placement(client, Xp))
            del Xp, yps
            rows += _parquet_rows(repeats, "LocalCluster 2 x 1", path)
    return rows


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    for row in measure(3, quick):  # (printed at the end: bench_inputs.py prints tables)
        ratio = statistics.median(row["problin"]) / statistics.median(row["ref"])
        print(f"{row['workload']:90s} {statistics.median(row['problin']):7.3f} s "
              f"{statistics.median(row['ref']):7.3f} s  {ratio:5.2f} (<= {row['target']}) "
              f"{'PASS' if ratio <= row['target'] else 'FAIL'}")
