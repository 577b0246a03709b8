"""Benchmark: ordinal (cumulative-link logit) regression.

1. N=100,000, D=20, K=5: problin ``OrdinalRegression()`` against statsmodels
   ``OrderedModel(distr="logit")`` fitted by its default BFGS and by
   ``method="newton"`` (both with standard errors); target: problin at least 20x faster
   than each, the same log-likelihood to 1e-8 (relative).
2. N=1,000,000, D=50, K=5: ``OrdinalRegression()`` against ``LogisticRegression()`` on
   the binary split ``y >= 2`` of the same rows (both with covariance); target: within
   2x of the binary fit.

Fits are interleaved in one process (a, b, a, c, ...), medians of the repeats, with the
spread (min-max) printed: the machine may be shared.

    python bench/bench_ordinal.py            # full sizes, 3 repeats
    python bench/bench_ordinal.py --quick    # N=5,000 / 100,000: a smoke run
"""
import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import environment_report  # noqa: E402

CUTS = [-1.5, -0.5, 0.5, 1.5]  # K = 5 classes


def make_data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X *= np.sqrt(0.7)
    X += np.sqrt(0.3) * rng.standard_normal((n, 1))
    beta = rng.normal(0.0, 0.3, size=d)
    y = np.digitize(X @ beta + rng.logistic(size=n), CUTS)
    return X, y


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def fit_problin(X, y):
    from problin import OrdinalRegression
    m = OrdinalRegression().fit(X, y)
    return m.log_likelihood_, m.n_iter_


def fit_statsmodels(X, y, method):
    from statsmodels.miscmodels.ordinal_model import OrderedModel
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = OrderedModel(y, X, distr="logit").fit(method=method, disp=False)
    res.bse  # noqa: B018 -- standard errors, as problin's fit computes them
    return res.llf, res.mle_retvals.get("iterations")


def fit_binary(X, y):
    from problin import LogisticRegression
    m = LogisticRegression().fit(X, (y >= 2).astype(np.float64))
    return m.log_likelihood_, m.n_iter_


def spread(ts):
    return f"median {statistics.median(ts):.3f} s (min {min(ts):.3f}, max {max(ts):.3f}, n={len(ts)})"


def versus_statsmodels(n, d, repeats, sm_repeats):
    X, y = make_data(n, d)
    print(f"\n1. N={n:,} D={d} K=5 (logit): problin vs statsmodels OrderedModel")
    times = {"problin": [], "bfgs": [], "newton": []}
    llf = {}
    fit_problin(X[:2000], y[:2000])  # (imports, first-call costs)
    for r in range(max(repeats, sm_repeats)):
        if r < repeats:
            t, (llf["problin"], it) = timed(lambda: fit_problin(X, y))
            times["problin"].append(t)
        for method in ("bfgs", "newton"):
            if r < sm_repeats:
                t, (llf[method], _) = timed(lambda: fit_statsmodels(X, y, method))
                times[method].append(t)
                if r < repeats:
                    t, _ = timed(lambda: fit_problin(X, y))
                    times["problin"].append(t)
    p = statistics.median(times["problin"])
    print(f"   problin OrdinalRegression(): {spread(times['problin'])}, llf {llf['problin']:.10f}")
    rows = []
    for method in ("bfgs", "newton"):
        ref = statistics.median(times[method])
        rel = abs(llf[method] - llf["problin"]) / abs(llf["problin"])
        ratio = ref / p
        rows.append((method, ratio, rel))
        print(f"   statsmodels fit(method={method!r}): {spread(times[method])}, "
              f"llf {llf[method]:.10f} (relative difference {rel:.1e}); problin "
              f"{ratio:.0f}x faster (target >= 20x: {'met' if ratio >= 20 else 'NOT met'})")
    return rows


def versus_binary(n, d, repeats):
    X, y = make_data(n, d, seed=1)
    print(f"\n2. N={n:,} D={d} K=5: OrdinalRegression vs LogisticRegression on y >= 2")
    fit_problin(X[:2000], y[:2000])
    fit_binary(X[:2000], y[:2000])
    ordinal, binary, ratios = [], [], []
    for _ in range(repeats):
        a, (_, it_o) = timed(lambda: fit_problin(X, y))
        b, (_, it_b) = timed(lambda: fit_binary(X, y))
        ordinal.append(a)
        binary.append(b)
        ratios.append(a / b)
    ratio = statistics.median(ratios)
    print(f"   OrdinalRegression ({it_o} Newton iterations): {spread(ordinal)}")
    print(f"   LogisticRegression ({it_b} Newton iterations): {spread(binary)}")
    print(f"   ratio (paired, median of {repeats}): {ratio:.2f} (min {min(ratios):.2f}, max "
          f"{max(ratios):.2f}); target <= 2: {'met' if ratio <= 2 else 'NOT met'}")
    return ratio


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sm-repeats", type=int, default=1,
                        help="statsmodels fits per method (each takes minutes at full size)")
    args = parser.parse_args()
    print("\n".join(environment_report()))
    if args.quick:
        versus_statsmodels(5_000, 5, args.repeats, 1)
        versus_binary(100_000, 10, args.repeats)
    else:
        versus_statsmodels(100_000, 20, args.repeats, args.sm_repeats)
        versus_binary(1_000_000, 50, args.repeats)


if __name__ == "__main__":
    main()
