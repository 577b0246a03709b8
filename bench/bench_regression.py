"""Benchmark: linear and Bayesian linear regression, problin vs. scikit-learn.

Three fits on the same dense data (N=1e6, D=50, correlated features), each
against its scikit-learn counterpart, in one process:

    problin LinearRegression()                vs  sklearn LinearRegression()       target <= 0.3
    problin LinearRegression(alpha=1)         vs  sklearn Ridge(alpha=1)           target <= 0.5
    problin BayesianLinearRegression()        vs  sklearn BayesianRidge()          target <= 0.2

Times are medians of ``--repeats`` fits, problin's and the reference's
interleaved so that both see the same load on a shared machine; ``max_coef_diff`` is the largest
absolute difference of the coefficients and intercept; ``mem/X`` is problin's
peak extra memory (max of tracemalloc and RSS) over the size of X (target <= 0.3).

    python bench/bench_regression.py             # N=1e6, D=50, 3 repeats
    python bench/bench_regression.py --quick     # N=20,000, D=10
"""
import argparse
import os
import sys

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import _dense_features, environment_report, nbytes, peak_memory, timed

MEMORY_TARGET = 0.3


def make_regression_data(n, d, *, rho=0.3, noise=1.0, intercept=2.0, seed=0):
    """Dense equicorrelated features (as the classification benchmarks), targets
    ``X w + intercept + N(0, noise^2)`` with ``w ~ N(0, 1)``."""
    rng = np.random.default_rng(seed)
    X = _dense_features(rng, n, d, rho)
    t = X @ rng.normal(size=d) + intercept + noise * rng.normal(size=n)
    return X, t


def workloads():
    from sklearn import linear_model as sk

    import problin
    return [
        ("least squares", lambda: problin.LinearRegression(), lambda: sk.LinearRegression(),
         0.3),
        ("ridge alpha=1", lambda: problin.LinearRegression(alpha=1.0),
         lambda: sk.Ridge(alpha=1.0), 0.5),
        ("bayesian evidence", lambda: problin.BayesianLinearRegression(),
         lambda: sk.BayesianRidge(), 0.2),
    ]


def run(args):
    X, t = make_regression_data(args.n, args.d, seed=args.seed)
    print(f"data: N={args.n:,} D={args.d} dense float64 ({nbytes(X) / 2**20:.1f} MB), "
          f"seed={args.seed}; medians of {args.repeats} fits")
    rows = []
    for name, ours, theirs, target in workloads():
        if args.only and not any(key in name for key in args.only.split(",")):
            continue
        fit_ours = lambda: ours().fit(X, t)      # noqa: E731
        fit_ref = lambda: theirs().fit(X, t)     # noqa: E731
        # Interleaved (ours, theirs, ours, ...): on a shared machine both see the same load.
        mine_t, ref_t = [], []
        for _ in range(args.repeats):
            mine_t.append(timed(fit_ours, 1)[0])
            ref_t.append(timed(fit_ref, 1)[0])
        mine_s, ref_s = float(np.median(mine_t)), float(np.median(ref_t))
        mine, ref = fit_ours(), fit_ref()
        tm, rss, _ = peak_memory(fit_ours)
        diff = max(float(np.max(np.abs(mine.coef_ - ref.coef_))),
                   abs(float(mine.intercept_ - ref.intercept_)))
        ratio, mem = mine_s / ref_s, max(tm, rss) * 2**20 / nbytes(X)
        rows.append({"workload": name, "problin_s": mine_s, "sklearn_s": ref_s,
                     "ratio": ratio, "target": f"<={target}",
                     "time": "PASS" if ratio <= target else "FAIL",
                     "max_coef_diff": diff, "mem/X": mem,
                     "memory": "PASS" if mem <= MEMORY_TARGET else "FAIL"})
        print(f"  {name}: problin {mine_s:.3f} s, sklearn {ref_s:.3f} s", flush=True)
    table = pd.DataFrame(rows)
    print(table.to_string(index=False, formatters={
        "problin_s": "{:.3f}".format, "sklearn_s": "{:.3f}".format, "ratio": "{:.3f}".format,
        "max_coef_diff": "{:.1e}".format, "mem/X": "{:.3f}".format}))
    print("  every reference runs with its defaults (BayesianRidge: hyperpriors 1e-6, "
          "tol=1e-3); max_coef_diff over coef_ and intercept_")
    return table


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="N=20,000, D=10")
    p.add_argument("--n", type=int, default=None)
    p.add_argument("--d", type=int, default=None)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only", default="", help="comma-separated words: run the workloads "
                   "whose name contains one (e.g. ridge)")
    args = p.parse_args(argv)
    args.n = args.n or (20_000 if args.quick else 1_000_000)
    args.d = args.d or (10 if args.quick else 50)
    print("\n".join(environment_report()))
    run(args)
    if args.n < 1_000_000:
        print("  (the targets are for N=1e6, D=50: on small data fixed costs dominate both)")


if __name__ == "__main__":
    main()
