"""Benchmark: wide and many-class softmax (issue 31, item 13) against scikit-learn's lbfgs.

Three workloads, problin and scikit-learn in one process, each fit repeated:

* ``sparse``: CSR 20,000 x 20,000, density 0.001 (~20 non-zeros a row, uniform
  values), K = 20 uniformly random labels (the issue's case);
* ``dense300`` / ``dense1000``: dense 20,000 x 50 (bench/_common's correlated
  features), K = 300 and K = 1,000 classes drawn from a softmax model.

scikit-learn runs ``LogisticRegression()`` at its defaults (C = 1, lbfgs, tol = 1e-4,
max_iter = 100; ``max_iter=1000`` where 100 stops it short). problin runs
``LogisticRegression(alpha=1)`` at its defaults (tol = 1e-8): the same penalised
objective ``sum_i log-loss_i + 1/2 |W|^2`` (intercepts free), compared at both
answers (``objective``; lower is better). ``--alpha0`` adds the unpenalised fits
(problin ``alpha=0``, scikit-learn ``C=inf``), whose data may have no finite optimum
(K (D + 1) parameters against n rows): reported, not a target.

    python bench/bench_softmax_wide.py                       # all three, 3 repeats
    python bench/bench_softmax_wide.py --only sparse --repeats 5 --alpha0
    python bench/bench_softmax_wide.py --quick               # small sizes
"""
import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.special import log_softmax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import environment_report, make_softmax_data

TARGET = 2.0  # problin's time must be at most this x scikit-learn's


def sparse_data(n, d, k, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.001, format="csr", random_state=seed)
    return X, rng.integers(0, k, n)


def dense_data(n, d, k, seed=0):
    X, y, _ = make_softmax_data(n, d, k, seed=seed)
    return X, y


WORKLOADS = {  # name: (make, full sizes, quick sizes)
    "sparse": (sparse_data, (20_000, 20_000, 20), (4_000, 4_000, 20)),
    "dense300": (dense_data, (20_000, 50, 300), (5_000, 20, 100)),
    "dense1000": (dense_data, (20_000, 50, 1000), (5_000, 20, 300)),
}


def objective(X, y, intercept, coef, alpha):
    """``sum_i -log softmax(x_i W^T + b)[y_i] + alpha/2 |W|^2`` over all K rows."""
    Z = np.asarray(X @ coef.T) + intercept
    loss = -log_softmax(Z, axis=1)[np.arange(len(y)), y].sum()
    return float(loss + 0.5 * alpha * np.sum(coef * coef))


def fit_problin(X, y, alpha):
    from problin import LogisticRegression
    m = LogisticRegression(alpha=alpha).fit(X, y)
    return m, m.n_iter_


def fit_sklearn(X, y, alpha):
    from sklearn.linear_model import LogisticRegression
    m = LogisticRegression() if alpha == 1.0 else \
        LogisticRegression(C=np.inf, max_iter=1000)
    m.fit(X, y)
    if alpha == 1.0 and np.max(m.n_iter_) >= m.max_iter:  # stopped short: let it finish
        m = LogisticRegression(max_iter=1000).fit(X, y)
    return m, int(np.max(m.n_iter_))


def run(name, args):
    make, full, quick = WORKLOADS[name]
    n, d, k = quick if args.quick else full
    X, y = make(n, d, k)
    kind = "CSR" if sp.issparse(X) else "dense"
    print(f"\n## {name}: N={n:,} D={d:,} K={k} {kind}, {np.unique(y).size} classes present")
    rows = []
    for alpha in ([1.0, 0.0] if args.alpha0 else [1.0]):
        for lib, fit in (("problin", fit_problin), ("sklearn", fit_sklearn)):
            times = []
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for _ in range(args.repeats):
                    t0 = time.perf_counter()
                    model, n_iter = fit(X, y, alpha)
                    times.append(time.perf_counter() - t0)
            obj = objective(X, y, model.intercept_, model.coef_, alpha)
            rows.append((alpha, lib, times, n_iter, obj))
            print(f"  alpha={alpha:g} {lib:8s} median {statistics.median(times):8.2f} s "
                  f"(min {min(times):.2f}, max {max(times):.2f}, {len(times)} fits)  "
                  f"iterations {n_iter:5d}  objective {obj:.6f}", flush=True)
    for alpha in sorted({r[0] for r in rows}, reverse=True):
        (_, _, tp, _, op), (_, _, ts, _, os_) = [r for r in rows if r[0] == alpha]
        ratio = statistics.median(tp) / statistics.median(ts)
        spread = (min(tp) / max(ts), max(tp) / min(ts))
        verdict = "" if alpha != 1.0 else \
            ("  PASS" if ratio <= TARGET and op <= os_ * (1 + 1e-9) else "  FAIL")
        print(f"  alpha={alpha:g}: problin/sklearn time {ratio:.2f} (spread {spread[0]:.2f}-"
              f"{spread[1]:.2f}), objective problin - sklearn {op - os_:+.3e}{verdict}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default=",".join(WORKLOADS), help="comma-separated workloads")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--alpha0", action="store_true", help="also the unpenalised fits")
    args = p.parse_args(argv)
    print("\n".join(environment_report()))
    for name in args.only.split(","):
        run(name, args)


if __name__ == "__main__":
    main()
