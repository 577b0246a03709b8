"""Benchmark: ``partial_fit``'s stochastic Newton steps against the batch MLE.

A stream of N rows (default 1,000,000) in batches of 1,000 is fed to
``partial_fit`` of ``LogisticRegression`` (binary and softmax) and
``ProbitRegression``; the same rows are fitted at once by ``fit`` (Newton, maximum
likelihood). For every parameter it prints the z-score
``(streamed - MLE) / MLE standard error``; the target (issue 37, item 3) is
``|z| < 2`` for every parameter.

Speed: the stream runs the per-row loop compiled by numba where it is installed
(``problin[fast]``); the numpy loop that replaces it without numba is timed on the
first ``--python-rows`` rows of the same stream (default 20,000: it takes 0.1-0.6 ms
a row). Rows per second of both, and their ratio, are printed per model; the compiled
loop's one-off compilation (cached on disk) is excluded by a warm-up stream.

    python bench/bench_partial_fit.py                       # N = 1e6, all three models
    python bench/bench_partial_fit.py --d 50 --python-rows 1000   # 50 columns
    python bench/bench_partial_fit.py --n 100000 --models logit
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import make_logistic_data, make_probit_data, make_softmax_data  # noqa: E402

TARGET = 2.0


def _data(model, n, d, seed):
    if model == "softmax":
        return make_softmax_data(n, d, 3, seed=seed)[:2]
    make = make_probit_data if model == "probit" else make_logistic_data
    return make(n, d, seed=seed)[:2]


def _estimator(model):
    from problin import LogisticRegression, ProbitRegression
    return ProbitRegression() if model == "probit" else LogisticRegression()


def _streamed(model, X, y, batch, compiled=True):
    """The estimator after streaming all rows, and the seconds it took (``compiled``:
    False forces the numpy loop, as without numba)."""
    import problin._core.solvers.stochastic as stochastic

    loop = stochastic.compiled
    if not compiled:
        stochastic.compiled = lambda: None
    try:
        stream = _estimator(model)
        classes = np.unique(y)
        t0 = time.perf_counter()
        for lo in range(0, X.shape[0], batch):
            stream.partial_fit(X[lo:lo + batch], y[lo:lo + batch], classes=classes)
        return stream, time.perf_counter() - t0
    finally:
        stochastic.compiled = loop


def run(model, n, d, batch, seed, python_rows):
    X, y = _data(model, n, d, seed)
    # Columns in different units and far from zero: the result must not care.
    X = X * np.geomspace(1e-3, 1e3, d) + np.linspace(-50.0, 1e4, d)
    from problin._core.solvers.stochastic_rows import compiled

    fast = compiled() is not None
    if fast:
        _streamed(model, X[:2000], y[:2000], batch)  # (compiles, or loads the cache)
    stream, seconds = _streamed(model, X, y, batch)
    m = min(python_rows, n)
    _, python_seconds = _streamed(model, X[:m], y[:m], batch, compiled=False)
    speed = {"compiled" if fast else "numpy": n / seconds, "numpy loop": m / python_seconds}
    batch_fit = _estimator(model).fit(X, y)
    se = np.sqrt(np.diag(batch_fit.covariance_))
    first = 1 if model == "softmax" else 0  # (the reference class's zero block)
    sgd = np.column_stack([stream.intercept_, stream.coef_])[first:].ravel()
    ml = np.column_stack([batch_fit.intercept_, batch_fit.coef_])[first:].ravel()
    return (sgd - ml) / se, speed


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--d", type=int, default=5)
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--models", default="logit,probit,softmax")
    p.add_argument("--python-rows", type=int, default=20_000,
                   help="rows of the stream timed with the numpy loop")
    args = p.parse_args(argv)
    worst = 0.0
    print(f"N = {args.n:,} rows in batches of {args.batch:,}, D = {args.d}; "
          f"z = (streamed - MLE) / SE(MLE), target |z| < {TARGET}")
    for model in args.models.split(","):
        z, speed = run(model, args.n, args.d, args.batch, args.seed, args.python_rows)
        worst = max(worst, float(np.max(np.abs(z))))
        rates = "   ".join(f"{path}: {rate:,.0f} rows/s" for path, rate in speed.items())
        ratio = max(speed.values()) / min(speed.values())
        print(f"{model:8s} max |z| = {np.max(np.abs(z)):.3f}   z = {np.round(z, 3).tolist()}\n"
              f"{'':8s} {rates}   ({ratio:.0f}x)", flush=True)
    print(f"worst |z| = {worst:.3f}: {'met' if worst < TARGET else 'NOT met'}")
    return 0 if worst < TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
