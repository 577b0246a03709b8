"""Benchmark: average slopes of every variable against the fit's own time (issue 34).

The target: ``slopes(X)`` for all 50 variables of a 1,000,000 x 50 logistic fit in at
most 2x the fit's time (one pass over the data for the predictions and the Jacobian):
a plain column's slope is ``avg(mu'(eta)) w_j``, every variable's from the same two sums. The
fit and the slopes are timed interleaved in one process (fit, slopes, fit, slopes, ...),
median of the repeats, and statsmodels' ``get_margeff`` (per design column, analytic)
beside them for scale. The elasticities ``slopes(X, slope="eyex")`` are timed beside them
(every variable's from one ``X^T diag(s a') X~`` per block), and the comparisons
``comparisons(X)`` (every variable's centred change by 1; a logit's ``sigma(eta + a) -
sigma(eta - a) = sinh a / (cosh eta + cosh a)`` from one evaluation per row, shared by
every variable). A formula model's slopes
re-encode the data per variable and are not timed here.

    python bench/bench_effects.py                # N=1e6, D=50, 3 repeats
    python bench/bench_effects.py --quick        # N=100,000, D=20
    python bench/bench_effects.py --sparse       # CSR 200,000 x 2,000, 0.5 % stored

``--sparse``: a logistic fit on CSR data (its covariance on request), then every
variable's slopes, elasticities, 20 variables' comparisons and the average prediction on
the same CSR matrix (sparse row blocks, no dense copy), timed against the fit, with the
peak of traced memory against the dense copy's size.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import make_logistic_data


def _time(func):
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def sparse(n: int, d: int, repeats: int) -> None:
    """Slopes, elasticities, comparisons and predictions on CSR data."""
    import tracemalloc

    import numpy as np
    import scipy.sparse as sp

    from problin import LogisticRegression
    rng = np.random.default_rng(0)
    X = sp.random(n, d, density=0.005, random_state=rng, format="csr")
    y = rng.random(n) < 1 / (1 + np.exp(-(X @ rng.normal(0.0, 0.5, d))))
    times: dict[str, list[float]] = {}
    box: dict = {}
    for _ in range(repeats):
        times.setdefault("fit", []).append(
            _time(lambda: box.__setitem__("m", LogisticRegression().fit(X, y))))
        times.setdefault("covariance", []).append(
            _time(lambda: box["m"].compute_covariance(X, y)))
        for label, call in (("slopes (all)", lambda: box["m"].slopes(X)),
                            ("eyex (all)", lambda: box["m"].slopes(X, slope="eyex")),
                            ("comparisons (20)", lambda: box["m"].comparisons(
                                X, variables=list(range(20)))),
                            ("predictions", lambda: box["m"].predictions(X))):
            times.setdefault(label, []).append(_time(call))
    fit = statistics.median(times["fit"])
    print(f"CSR N={n:,} D={d:,} ({X.nnz:,} stored): fit {fit:.2f} s")
    for label, values in times.items():
        print(f"  {label:18s} {statistics.median(values):6.2f} s "
              f"[{min(values):.2f}, {max(values):.2f}]  {statistics.median(values) / fit:.2f}x "
              "the fit")
    tracemalloc.start()
    box["m"].slopes(X, slope="eyex")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"  eyex traced peak {peak / 2**20:.0f} MiB; a dense copy {n * d * 8 / 2**20:,.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--statsmodels", action="store_true",
                        help="also time statsmodels' Logit(...).get_margeff()")
    parser.add_argument("--sparse", action="store_true",
                        help="CSR data: 200,000 x 2,000 (--quick: 50,000 x 500)")
    args = parser.parse_args()
    if args.sparse:
        sparse(*((50_000, 500) if args.quick else (200_000, 2_000)), args.repeats)
        return
    if args.quick:
        args.n, args.d = 100_000, 20
    from problin import LogisticRegression
    X, y = make_logistic_data(args.n, args.d)[:2]
    fits, slopes, elastic, changes, margeff = [], [], [], [], []
    for _ in range(args.repeats):
        box = {}
        fits.append(_time(lambda: box.setdefault("m", LogisticRegression().fit(X, y))))
        slopes.append(_time(lambda: box["m"].slopes(X)))
        elastic.append(_time(lambda: box["m"].slopes(X, slope="eyex")))
        changes.append(_time(lambda: box["m"].comparisons(X)))
        if args.statsmodels:
            import statsmodels.api as sm
            res = sm.Logit(y, sm.add_constant(X)).fit(disp=0)
            margeff.append(_time(lambda: res.get_margeff().margeff_se))
    fit, slope = statistics.median(fits), statistics.median(slopes)
    print(f"N={args.n:,} D={args.d}: fit {fit:.2f} s [{min(fits):.2f}, {max(fits):.2f}], "
          f"slopes {slope:.2f} s [{min(slopes):.2f}, {max(slopes):.2f}]: "
          f"{slope / fit:.2f}x the fit (target <= 2)")
    eyex = statistics.median(elastic)
    print(f"elasticities (eyex) {eyex:.2f} s [{min(elastic):.2f}, {max(elastic):.2f}]: "
          f"{eyex / fit:.2f}x the fit")
    change = statistics.median(changes)
    print(f"comparisons (change=1) {change:.2f} s [{min(changes):.2f}, {max(changes):.2f}]: "
          f"{change / fit:.2f}x the fit")
    if margeff:
        print(f"statsmodels get_margeff (per column, analytic): "
              f"{statistics.median(margeff):.2f} s")


if __name__ == "__main__":
    main()
