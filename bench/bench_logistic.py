"""Benchmark: unpenalised binary logistic regression, problin vs. reference libraries.

Every library fits the same synthetic dense data in one process; for each we
report the median wall time of ``--repeats`` fits, the mean log-loss of the
fitted coefficients (computed here, identically for all), its relative
difference to problin's, and the peak extra memory of one more, untimed fit.

    python bench/bench_logistic.py                       # N=1e6, D=50, 3 repeats
    python bench/bench_logistic.py --n 20000 --d 10 --repeats 1
    python bench/bench_logistic.py --only problin,glum --json results.json

Reference libraries are optional (``pip install -e ".[bench]"``); one that
cannot be imported is skipped with a note.
"""
import argparse
import importlib
import json
import os
import sys
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import (environment_report, make_logistic_data, mean_log_loss,  # noqa: E402
                     peak_memory, timed)

TOL = 1e-8


# Each fit function returns (intercept, coef of shape (D,), iterations) and
# does, inside the timed region, everything the user would need to call to get
# the same result, e.g. add_constant for statsmodels.

def fit_problin(X, y):
    from problin import LogisticRegression
    # alpha=0: maximum likelihood; covariance_ is computed inside fit().
    m = LogisticRegression(alpha=0.0, solver="newton", tol=TOL).fit(X, y)
    return m.intercept_[0], m.coef_[0], m.n_iter_


def _sklearn_unpenalised():
    """sklearn >= 1.8 deprecates ``penalty``; ``C=np.inf`` is the spelling there."""
    import sklearn
    major, minor = (int(v) for v in sklearn.__version__.split(".")[:2])
    return {"C": np.inf} if (major, minor) >= (1, 8) else {"penalty": None}


def _fit_sklearn(X, y, **kwargs):
    from sklearn.linear_model import LogisticRegression
    m = LogisticRegression(**_sklearn_unpenalised(), tol=TOL, **kwargs).fit(X, y)
    return m.intercept_[0], m.coef_[0], int(np.max(m.n_iter_))


def fit_sklearn_lbfgs(X, y):
    return _fit_sklearn(X, y, solver="lbfgs", max_iter=10000)


def fit_sklearn_newton_cholesky(X, y):
    return _fit_sklearn(X, y, solver="newton-cholesky")


def fit_statsmodels(X, y):
    import statsmodels.api as sm
    res = sm.Logit(y, sm.add_constant(X, has_constant="add")).fit(method="newton", disp=0)
    res.bse  # noqa: B018 -- standard errors are computed lazily; include them like problin
    return res.params[0], res.params[1:], res.mle_retvals["iterations"]


def fit_glum(X, y):
    from glum import GeneralizedLinearRegressor
    # irls-ls is what solver="auto" picks for alpha=0; glum's default
    # gradient_tol of 1e-4 stops visibly short of the optimum, 1e-8 does not.
    m = GeneralizedLinearRegressor(family="binomial", alpha=0, solver="irls-ls",
                                   gradient_tol=TOL).fit(X, y)
    return m.intercept_, m.coef_, m.n_iter_


@dataclass
class Contender:
    key: str          # what --only selects (the library name also works)
    library: str      # importable module, checked before running
    config: str       # shown in the table
    inference: bool   # are standard errors computed inside the timed fit?
    fit: Callable


CONTENDERS = [
    Contender("problin", "problin", "LogisticRegression(alpha=0), newton", True, fit_problin),
    Contender("sklearn-lbfgs", "sklearn", "LogisticRegression(C=inf, lbfgs)", False,
              fit_sklearn_lbfgs),
    Contender("sklearn-newton-cholesky", "sklearn", "LogisticRegression(C=inf, newton-cholesky)",
              False, fit_sklearn_newton_cholesky),
    Contender("statsmodels", "statsmodels", "Logit(add_constant(X)).fit(newton) + bse", True,
              fit_statsmodels),
    Contender("glum", "glum", "GLR(binomial, alpha=0, irls-ls)", False, fit_glum),
]


def select(only):
    if not only:
        return CONTENDERS
    wanted = {w.strip() for w in only.split(",") if w.strip()}
    unknown = wanted - {c.key for c in CONTENDERS} - {c.library for c in CONTENDERS}
    if unknown:
        sys.exit(f"--only: unknown name(s) {sorted(unknown)}; choose from "
                 f"{[c.key for c in CONTENDERS]} or a library name")
    return [c for c in CONTENDERS if c.key in wanted or c.library in wanted]


def version_of(module):
    return getattr(importlib.import_module(module), "__version__", "?")


def run(args):
    t_start = time.perf_counter()
    # Import every library first, so the thread-pool report below also lists
    # the pools they load (e.g. scikit-learn's OpenMP runtime).
    contenders, versions, skipped = [], {}, []
    for c in select(args.only):
        try:
            versions[c.key] = version_of(c.library)
            contenders.append(c)
        except ImportError as exc:
            skipped.append(f"{c.key}: skipped, cannot import {c.library} ({exc})")
    print("== environment ==")
    print("\n".join(environment_report()))
    X, y, beta, b0 = make_logistic_data(args.n, args.d, seed=args.seed)
    print(f"\n== data == N={args.n:,} D={args.d} float64 seed={args.seed}: "
          f"{X.nbytes / 2**20:,.0f} MB, P(y=1)={y.mean():.3f}, "
          f"log-loss of the true model {mean_log_loss(X, y, beta, b0):.6f}\n")
    for s in skipped:
        print(s)

    rows = []
    for c in contenders:
        version = versions[c.key]
        print(f"-- {c.key} ({c.library} {version}) ...", end=" ", flush=True)
        seconds, (b, w, n_iter), notes = timed(lambda: c.fit(X, y), args.repeats)
        mem_tm, mem_rss = peak_memory(lambda: c.fit(X, y)) if args.memory else (np.nan, np.nan)
        print(f"{seconds:.2f} s", flush=True)
        rows.append({"key": c.key, "version": version, "config": c.config,
                     "inference": "yes" if c.inference else "no", "time_s": seconds,
                     "n_iter": int(n_iter), "log_loss": mean_log_loss(X, y, w, b),
                     "peak_tracemalloc_MB": mem_tm, "peak_rss_MB": mem_rss,
                     "notes": "; ".join(notes), "_theta": np.r_[b, w]})

    table = pd.DataFrame(rows)
    ref = table[table["key"] == "problin"]
    if len(table) and len(ref):
        ref = ref.iloc[0]
        table["rel_logloss_diff"] = (table["log_loss"] - ref["log_loss"]) / ref["log_loss"]
        table["max_abs_coef_diff"] = [float(np.max(np.abs(t - ref["_theta"])))
                                      for t in table["_theta"]]
        # problin / reference: below 1 means problin is faster.
        table["problin/ref_time"] = ref["time_s"] / table["time_s"]
    total = time.perf_counter() - t_start
    return table.drop(columns="_theta", errors="ignore"), skipped, total


def show(table):
    cols = ["key", "version", "inference", "time_s", "problin/ref_time", "n_iter", "log_loss",
            "rel_logloss_diff", "max_abs_coef_diff", "peak_tracemalloc_MB", "peak_rss_MB"]
    cols = [c for c in cols if c in table]
    fmt = {"time_s": "{:.3f}".format, "problin/ref_time": "{:.3f}".format,
           "log_loss": "{:.10f}".format, "rel_logloss_diff": "{:+.2e}".format,
           "max_abs_coef_diff": "{:.1e}".format, "peak_tracemalloc_MB": "{:,.0f}".format,
           "peak_rss_MB": "{:,.0f}".format}
    print(table[cols].to_string(index=False, formatters=fmt))
    for _, r in table.iterrows():
        print(f"  {r['key']}: {r['config']}" + (f"  [warnings: {r['notes']}]" if r["notes"] else ""))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1_000_000, help="rows (default 1e6)")
    p.add_argument("--d", type=int, default=50, help="features (default 50)")
    p.add_argument("--repeats", type=int, default=3, help="timed fits per library; median")
    p.add_argument("--only", default="", help="comma list, e.g. problin,sklearn,glum")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-memory", dest="memory", action="store_false",
                   help="skip the extra, untimed fit that measures peak memory")
    p.add_argument("--json", metavar="PATH", help="also save the results as JSON")
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error("--repeats must be >= 1")

    table, skipped, total = run(args)
    print(f"\n== results == median of {args.repeats} fit(s); memory = peak extra MB "
          "of one untimed fit (tracemalloc / RSS high-water mark)")
    if len(table):
        show(table)
    for s in skipped:
        print("  " + s)
    print(f"\ntotal wall time {total:.1f} s (data, all fits and memory runs)")
    if args.json:
        out = {"n": args.n, "d": args.d, "repeats": args.repeats, "seed": args.seed,
               "environment": environment_report(), "skipped": skipped,
               "total_seconds": total,
               "results": json.loads(table.to_json(orient="records"))}
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
        print(f"saved {args.json}")


if __name__ == "__main__":
    main()
