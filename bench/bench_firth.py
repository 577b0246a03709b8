"""Firth's penalised logistic regression (issue 35): its cost against problin's own
maximum-likelihood fit, and against the Python package ``firthlogist``.

Rows (medians of ``--repeats`` fits, the two fits of a row interleaved a, b, a, b, ...
in one process, so that the load of a shared machine falls on both alike):

* ``firth / ml``, N = 1,000,000, D = 50 (``--quick``: 100,000 x 20, below the row
  sketch's size, so the small-data path): target <= 3. At 1e6 x 50 the Newton engine
  takes float32 Newton steps from the sketch's warm start, every pass forming the Gram
  that Firth's ``log |I|`` reads, the first two points' penalty gradient lagged (the
  sketch's): five fused passes as ML's, and three leverage passes besides;
* ``problin / firthlogist``, N = 1,000, D = 10: target <= 0.1, with the estimates
  equal (1e-6: firthlogist stops on its own tolerance, 1e-4 on the step).

firthlogist 0.5.0 declares Python < 3.11 and calls scikit-learn's removed
``BaseEstimator._validate_data``: install it with ``pip install --ignore-requires-python
firthlogist tabulate``; the one-line shim below gives it ``validate_data`` back.

    python bench/bench_firth.py [--quick] [--repeats 3]
"""
import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import make_logistic_data  # noqa: E402

from problin import LogisticRegression  # noqa: E402


def _time(fit):
    start = time.perf_counter()
    model = fit()
    return time.perf_counter() - start, model


def _interleaved(fit_a, fit_b, repeats):
    a, b, models = [], [], None
    for _ in range(repeats):
        ta, ma = _time(fit_a)
        tb, mb = _time(fit_b)
        a.append(ta)
        b.append(tb)
        models = (ma, mb)
    return a, b, models


def _row(name, a, b, target, note=""):
    ratio = statistics.median(a) / statistics.median(b)
    spread = f"{min(a):.3f}-{max(a):.3f} / {min(b):.3f}-{max(b):.3f}"
    ok = "ok" if ratio <= target else "MISSED"
    print(f"{name:34s} {statistics.median(a):8.3f} s {statistics.median(b):8.3f} s "
          f"ratio {ratio:6.2f} (target <= {target}) {ok}  [{spread}] {note}")
    return ratio <= target


def firth_vs_ml(n, d, repeats):
    X, y, _, _ = make_logistic_data(n, d)
    firth, ml, (mf, mm) = _interleaved(
        lambda: LogisticRegression(penalty="firth").fit(X, y),
        lambda: LogisticRegression(alpha=0).fit(X, y), repeats)
    gap = float(np.abs(mf.coef_ - mm.coef_).max())  # Firth's shrinkage: O(1/n)
    # (the load average: on a shared machine the spread says more than the medians)
    return _row(f"firth / ml  {n:,} x {d}", firth, ml, 3.0,
                f"iterations {mf.n_iter_} vs {mm.n_iter_}, max |firth - ml| {gap:.1e}, "
                f"load {os.getloadavg()[0]:.1f}")


def firth_vs_firthlogist(repeats):
    try:
        from firthlogist import FirthLogisticRegression
        from sklearn.utils.validation import validate_data
    except ImportError as exc:
        print(f"problin / firthlogist: skipped ({exc})")
        return True
    # firthlogist 0.5.0 predates scikit-learn 1.6's validate_data function.
    FirthLogisticRegression._validate_data = (
        lambda self, *args, **kwargs: validate_data(self, *args, **kwargs))
    X, y, _, _ = make_logistic_data(1000, 10)
    ours, theirs, (mo, mt) = _interleaved(
        lambda: LogisticRegression(penalty="firth").fit(X, y),
        lambda: FirthLogisticRegression(skip_pvals=True, skip_ci=True).fit(X, y), repeats)
    gap = max(abs(float(mo.intercept_[0]) - float(mt.intercept_)),
              float(np.abs(mo.coef_.ravel() - mt.coef_).max()))
    same = gap < 1e-6
    ok = _row("problin / firthlogist  1,000 x 10", ours, theirs, 0.1,
              f"max |difference| {gap:.1e}{'' if same else ' NOT EQUAL'}")
    return ok and same


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100,000 x 20, not 1e6 x 50")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    n, d = (100_000, 20) if args.quick else (1_000_000, 50)
    ok = firth_vs_firthlogist(max(args.repeats, 5))
    ok = firth_vs_ml(n, d, args.repeats) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
