"""Measured backing for the cost model (docs/cost_model.md): passes and time per pass on Dask.

    python bench/bench_dask_cost.py                  # N = 1e6, 4e6, 1e7 rows x 20
    python bench/bench_dask_cost.py --sizes 200000 --quick

For each model, on a ``dask.distributed`` LocalCluster (2 worker processes x 1
thread, data generated on the workers and persisted): the fit's wall time, the
number of distributed passes over the data (counted: every pass problin makes
on Dask goes through ``dask_blocks.reduce_chunks`` or the online chain), time
per pass, rows per second, and the bytes the reduction brings to the client
(per-chunk result size x number of chunks, from the result's own size).
"""
import argparse
import sys
import time
import warnings

import numpy as np


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1000000,4000000,10000000")
    p.add_argument("--d", type=int, default=20)
    p.add_argument("--chunk", type=int, default=500_000)
    p.add_argument("--quick", action="store_true", help="N = 200,000, chunks of 50,000")
    args = p.parse_args(argv)
    if args.quick:
        args.sizes, args.chunk = "200000", 50_000
    args.sizes = [int(s) for s in args.sizes.split(",")]
    return args


def make_data(n, d, chunk, seed=0):
    import dask.array as da
    from distributed import wait
    rng = da.random.default_rng(seed)
    X = rng.standard_normal((n, d), chunks=(chunk, d))
    beta = np.random.default_rng(seed).normal(0.0, 0.3, d)
    eta = X @ beta + 0.3
    y_bin = (rng.random(n, chunks=chunk) < 1.0 / (1.0 + da.exp(-eta))).astype(np.float64)
    y_reg = eta + rng.standard_normal(n, chunks=chunk)
    y_k = da.floor(da.clip(eta + 1.5 + 0.5 * rng.standard_normal(n, chunks=chunk), 0, 4.99))
    out = [a.persist() for a in (X, y_bin, y_reg, y_k.astype(np.int64))]
    wait(out)
    return out


class PassCounter:
    """Counts problin's distributed passes and the bytes their results bring back."""

    def __init__(self):
        import problin._dask.chunks as blocks
        self.blocks, self.original = blocks, blocks.reduce_chunks
        self.passes, self.result_bytes = 0, 0

        def counting(func, X, *args, **kwargs):
            self.passes += 1
            out = self.original(func, X, *args, **kwargs)
            self.result_bytes += _nbytes(out) * len(X.chunks[0])
            return out

        blocks.reduce_chunks = counting
        # modules that imported the name directly see the counter too
        for name in list(sys.modules):
            mod = sys.modules[name]
            if name.startswith("problin") and getattr(mod, "reduce_chunks", None) is \
                    self.original:
                mod.reduce_chunks = counting

    def reset(self):
        self.passes, self.result_bytes = 0, 0


def _nbytes(obj):
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, (tuple, list)):
        return sum(_nbytes(o) for o in obj)
    if hasattr(obj, "__dict__"):
        return sum(_nbytes(v) for v in vars(obj).values())
    return 8 if isinstance(obj, (int, float, np.number)) else 0


def models():
    import problin as pl
    return [
        ("LinearRegression", lambda: pl.LinearRegression(), "reg"),
        ("BayesianLinearRegression", lambda: pl.BayesianLinearRegression(), "reg"),
        ("LinearDiscriminantAnalysis", lambda: pl.LinearDiscriminantAnalysis(), "k"),
        ("QuadraticDiscriminantAnalysis", lambda: pl.QuadraticDiscriminantAnalysis(), "k"),
        ("GaussianNB", lambda: pl.GaussianNB(), "k"),
        ("LogisticRegression (binary)", lambda: pl.LogisticRegression(), "bin"),
        ("ProbitRegression", lambda: pl.ProbitRegression(), "bin"),
        ("LogisticRegression (K=5)", lambda: pl.LogisticRegression(), "k"),
        ("BayesianLogisticRegression laplace",
         lambda: pl.BayesianLogisticRegression(inference="laplace", alpha=1.0, progress=False), "bin"),
        ("BayesianLogisticRegression variational",
         lambda: pl.BayesianLogisticRegression(inference="variational", alpha=1.0, progress=False), "bin"),
        ("LMSRegressor (1 epoch)", lambda: pl.LMSRegressor(max_iter=1, shuffle=False), "reg"),
    ]


def main(argv=None):
    args = parse_args(argv)
    from distributed import Client, LocalCluster
    warnings.simplefilter("ignore")
    rows = []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster):
        counter = PassCounter()
        for n in args.sizes:
            X, y_bin, y_reg, y_k = make_data(n, args.d, args.chunk)
            targets = {"bin": y_bin, "reg": y_reg, "k": y_k}
            for name, make, kind in models():
                counter.reset()
                t0 = time.perf_counter()
                try:
                    make().fit(X, targets[kind])
                    seconds, note = time.perf_counter() - t0, ""
                except Exception as exc:  # the table says so; the run goes on
                    seconds, note = float("nan"), repr(exc)[:80]
                rows.append((name, n, seconds, counter.passes, counter.result_bytes, note))
                per = seconds / max(counter.passes, 1)
                print(f"{name:40s} N={n:>11,} {seconds:8.2f} s  passes {counter.passes:3d}  "
                      f"{per:7.3f} s/pass  {n / per / 1e6:7.1f} M rows/s/pass  "
                      f"{counter.result_bytes / 1024:9.1f} KiB to client  {note}", flush=True)
            del X, y_bin, y_reg, y_k
    return rows


if __name__ == "__main__":
    main()
