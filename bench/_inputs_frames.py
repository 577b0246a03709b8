"""Numeric DataFrames against the array they hold (issue 33: DataFrames at array speed).

Logistic regression (``LogisticRegression()``, unpenalised, with ``covariance_``) on
N x 30 (1,000,000 rows; 100,000 with ``quick``, a smoke run whose times are mostly fixed
costs), the features of ``_common.make_logistic_data`` (equicorrelated, non-separable):

* a pandas DataFrame as pandas builds it (``pd.DataFrame(X)``: a copy, column-major, what
  ``read_csv`` and ``read_parquet`` give), one that wraps the C array (``copy=False``:
  row-major) and the F-ordered numpy array, each against the C-ordered array: target 1.15;
* ``predict_proba`` on the column-major DataFrame against the C array: target 1.15;
* ``LinearRegression`` (least-squares moments, read in place) and
  ``LinearDiscriminantAnalysis`` (class statistics: a column-major block's rows are
  gathered by class column by column into a column-major buffer, as a C block's are
  gathered by rows) on the column-major DataFrame against the C array: target 1.15 (the
  issue's, for every estimator);
* problin on the column-major DataFrame against scikit-learn's ``LogisticRegression(solver=
  "lbfgs", max_iter=1000)`` (its defaults otherwise, as the issue measured it) on the same
  DataFrame: target 1.0.

Each repeat times every input once in turn (C array, then the others), so problin and its
reference alternate; every fit runs once untimed first.
"""
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import make_logistic_data  # noqa: E402

TITLE = "Numeric DataFrames (C and F order) vs the C-ordered array they hold"

D = 30
TARGET = 1.15


def _seconds(call):
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0


def measure(repeats: int, quick: bool) -> list[dict]:
    import pandas as pd
    from sklearn.linear_model import LogisticRegression as SkLogistic

    from problin import LinearDiscriminantAnalysis, LinearRegression, LogisticRegression

    warnings.simplefilter("ignore")
    n = 100_000 if quick else 1_000_000
    X, y, _, _ = make_logistic_data(n, D, seed=0)
    target = X @ np.linspace(-1.0, 1.0, D) + np.random.default_rng(1).standard_normal(n)
    names = [f"x{j}" for j in range(D)]
    inputs = {"C array": X,
              "DataFrame, column-major (pd.DataFrame(X))": pd.DataFrame(X, columns=names),
              "DataFrame, row-major (copy=False of the C array)":
                  pd.DataFrame(X, columns=names, copy=False),
              "F-ordered numpy array": np.asfortranarray(X)}
    frame = inputs["DataFrame, column-major (pd.DataFrame(X))"]
    assert np.asarray(frame).flags.f_contiguous
    assert np.asarray(inputs["DataFrame, row-major (copy=False of the C array)"]
                      ).flags.c_contiguous
    model = LogisticRegression().fit(X, y)
    # (workload, problin's call, its reference's call, reference, target, note)
    cases = [(f"logistic {n:,} x {D}, {kind}", (lambda A=A: LogisticRegression().fit(A, y)),
              (lambda: LogisticRegression().fit(X, y)), "problin on the C array", TARGET, "")
             for kind, A in inputs.items() if kind != "C array"]
    cases += [
        (f"logistic predict_proba {n:,} x {D}, DataFrame (column-major)",
         lambda: model.predict_proba(frame), lambda: model.predict_proba(X),
         "problin on the C array", TARGET, ""),
        (f"LinearDiscriminantAnalysis {n:,} x {D}, DataFrame (column-major)",
         lambda: LinearDiscriminantAnalysis().fit(frame, y),
         lambda: LinearDiscriminantAnalysis().fit(X, y), "problin on the C array", TARGET,
         "a one-pass fit: column-major rows gathered by class column by column"),
        (f"LinearRegression {n:,} x {D}, DataFrame (column-major)",
         lambda: LinearRegression().fit(frame, target),
         lambda: LinearRegression().fit(X, target), "problin on the C array", TARGET, ""),
        (f"logistic {n:,} x {D}, DataFrame (column-major)",
         lambda: LogisticRegression().fit(frame, y),
         lambda: SkLogistic(solver="lbfgs", max_iter=1000).fit(frame, y),
         "scikit-learn LogisticRegression(lbfgs) on the DataFrame", 1.0,
         "scikit-learn's defaults (C=1, tol=1e-4) save max_iter=1000"),
    ]
    for _, mine, ref, *_ in cases:  # (untimed: imports, first allocations)
        mine()
        ref()
    times = [([], []) for _ in cases]
    for _ in range(repeats):
        for (_, mine, ref, *_), (mine_s, ref_s) in zip(cases, times):
            ref_s.append(_seconds(ref))
            mine_s.append(_seconds(mine))
    return [{"workload": workload, "problin": mine_s, "reference": reference, "ref": ref_s,
             "target": limit, "note": note}
            for (workload, _, _, reference, limit, note), (mine_s, ref_s) in zip(cases, times)]


if __name__ == "__main__":
    import statistics
    quick = "--quick" in sys.argv
    for row in measure(3, quick):
        ratio = statistics.median(row["problin"]) / statistics.median(row["ref"])
        spread = [round(a / b, 2) for a, b in zip(row["problin"], row["ref"])]
        print(f"{row['workload']:66s} {statistics.median(row['problin']):7.3f} s "
              f"{statistics.median(row['ref']):7.3f} s  {ratio:5.2f} (<= {row['target']}) "
              f"{'PASS' if ratio <= row['target'] else 'FAIL'}  per repeat {spread}")
