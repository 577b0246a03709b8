"""Benchmark: the sequential learners' epoch time, problin against scikit-learn.

The perceptron and LMS update their weights after every row; an epoch is a loop of
dependent steps. problin runs it compiled where numba is installed (``problin[fast]``,
``problin._core.sequential``), else in numpy formulations. Same data, one process, a
fixed number of epochs (no early stop) so that time per epoch is compared:

    perceptron, 2 classes   problin.Perceptron  vs sklearn.linear_model.Perceptron
    perceptron, 3 classes   (problin: the multiclass perceptron; scikit-learn: one
                            against the rest, K binary perceptrons)
    LMS                     problin.LMSRegressor vs SGDRegressor(penalty=None)

Target: problin <= 3 x scikit-learn's time per epoch.

    python bench/bench_sequential.py                  # N=6,366 (the heights data), D=12
    python bench/bench_sequential.py --n 100000 --d 50
"""
import argparse
import statistics
import time
import warnings

import numpy as np

TARGET = 3.0


def _per_epoch(make, X, y, repeats):
    make().fit(X, y)  # warm-up (and numba's load of its cached kernels)
    times = []
    for _ in range(repeats):
        est = make()
        t0 = time.perf_counter()
        est.fit(X, y)
        times.append((time.perf_counter() - t0) / est.n_iter_)
    return statistics.median(times)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=6366)
    p.add_argument("--d", type=int, default=12)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--repeats", type=int, default=7)
    args = p.parse_args(argv)
    from sklearn.linear_model import Perceptron as SkPerceptron
    from sklearn.linear_model import SGDRegressor

    from problin import LMSRegressor, Perceptron
    from problin._core.sequential import compiled

    rng = np.random.default_rng(0)
    X = rng.standard_normal((args.n, args.d))
    score = X[:, 0] + 0.8 * rng.standard_normal(args.n)
    y2 = (score > 0).astype(int)
    y3 = np.digitize(score, [-0.5, 0.5])
    yr = X @ rng.standard_normal(args.d) + rng.standard_normal(args.n)
    E = args.epochs
    cases = [
        ("perceptron, 2 classes", y2, lambda: Perceptron(max_iter=E, tol=None, random_state=0),
         lambda: SkPerceptron(max_iter=E, tol=None, random_state=0)),
        ("perceptron, 3 classes", y3, lambda: Perceptron(max_iter=E, tol=None, random_state=0),
         lambda: SkPerceptron(max_iter=E, tol=None, random_state=0)),
        ("LMS", yr, lambda: LMSRegressor(max_iter=E, tol=0.0, random_state=0),
         lambda: SGDRegressor(max_iter=E, tol=None, penalty=None, random_state=0)),
    ]
    print(f"N={args.n:,} D={args.d}, {E} epochs per fit, median of {args.repeats}; "
          f"problin loops {'compiled (numba)' if compiled() else 'in numpy (no numba)'}")
    print(f"{'workload':24s} {'problin ms/epoch':>17s} {'sklearn ms/epoch':>17s} "
          f"{'problin/sklearn':>16s} {'target':>7s}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fixed epochs: the convergence warnings are expected
        for name, y, ours, theirs in cases:
            a = _per_epoch(ours, X, y, args.repeats)
            b = _per_epoch(theirs, X, y, args.repeats)
            verdict = "PASS" if a / b <= TARGET else "FAIL"
            print(f"{name:24s} {a * 1e3:17.3f} {b * 1e3:17.3f} {a / b:16.2f} "
                  f"{'<=' + format(TARGET, 'g'):>7s} {verdict}")


if __name__ == "__main__":
    main()
