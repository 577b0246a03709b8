"""Wide dense data (issue 33): logistic regression with hundreds to a thousand columns.

problin's fit (the engine's wide path: truncated Newton on a sketch's rows for the warm
start, then on all rows, each conjugate-gradient iteration one fused Hessian-vector pass
over a float32 copy of X, preconditioned by a sketch's Hessian; no Hessian of all rows)
against scikit-learn's ``lbfgs`` at its default tolerance, unpenalised,
on the same dense correlated data (``make_logistic_data``); and problin's fit followed by
``covariance_`` (``compute_covariance(X, y)`` where the fit skipped the p x p information
matrix: one exact Hessian pass). Runs interleave problin and the reference.
"""
import time
import warnings

import numpy as np

from _common import make_logistic_data

TITLE = "Wide dense data: logistic regression, problin vs scikit-learn lbfgs (default tol)"

SIZES = [(200_000, 400), (200_000, 1_000)]
QUICK_SIZES = [(20_000, 200)]
FIT_TARGET = 0.7
COVARIANCE_TARGET = 1.5


def _sklearn_unpenalised():
    """sklearn >= 1.8 deprecates ``penalty``; ``C=np.inf`` is the spelling there."""
    import sklearn
    major, minor = (int(v) for v in sklearn.__version__.split(".")[:2])
    return {"C": np.inf} if (major, minor) >= (1, 8) else {"penalty": None}


def _fit_problin(X, y, covariance):
    from problin import LogisticRegression
    start = time.perf_counter()
    model = LogisticRegression().fit(X, y)
    if covariance:
        if model.covariance_ is None:
            model.compute_covariance(X, y)
        assert model.covariance_ is not None
    return time.perf_counter() - start


def _fit_sklearn(X, y):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        LogisticRegression(solver="lbfgs", **_sklearn_unpenalised()).fit(X, y)
    return time.perf_counter() - start


def measure(repeats: int, quick: bool) -> list[dict]:
    rows = []
    for n, d in QUICK_SIZES if quick else SIZES:
        X, y, _, _ = make_logistic_data(n, d)
        with warnings.catch_warnings():  # (imports and first-call costs)
            warnings.simplefilter("ignore")
            _fit_problin(X[:2000], y[:2000], False)
        fit, fit_cov, ref = [], [], []
        for _ in range(repeats):
            fit.append(_fit_problin(X, y, False))
            ref.append(_fit_sklearn(X, y))
            fit_cov.append(_fit_problin(X, y, True))
        reference = "scikit-learn LogisticRegression(C=inf, lbfgs, default tol 1e-4)"
        rows.append(dict(workload=f"logistic {n:,} x {d:,} dense: fit", problin=fit,
                         reference=reference, ref=ref, target=FIT_TARGET,
                         note="problin to tol 1e-8 (Newton decrement)"))
        rows.append(dict(workload=f"logistic {n:,} x {d:,} dense: fit + covariance_",
                         problin=fit_cov, reference=reference, ref=ref,
                         target=COVARIANCE_TARGET,
                         note="compute_covariance(X, y) where fit skipped it"))
        del X, y
    return rows


if __name__ == "__main__":
    import argparse
    import statistics
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--d", type=int, nargs="*", help="only these widths (n = 200,000)")
    args = parser.parse_args()
    if args.d:
        SIZES[:] = [(200_000, d) for d in args.d]
    print(TITLE)
    for row in measure(args.repeats, args.quick):
        ratio = statistics.median(row["problin"]) / statistics.median(row["ref"])
        spread = [p / r for p, r in zip(row["problin"], row["ref"])]
        print(f"{row['workload']:48s} problin {statistics.median(row['problin']):6.2f}s "
              f"ref {statistics.median(row['ref']):6.2f}s ratio {ratio:.2f} "
              f"(pairs {min(spread):.2f}-{max(spread):.2f}; target {row['target']})")
