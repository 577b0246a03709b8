"""Benchmark: logistic regression at the sizes users fit most, and on well-conditioned data.

Most fits are small (cross-validation, grid searches, ``problin compare`` fits each model
five times per dataset), so per-fit overhead matters as much as throughput; and the
million-row workload of ``bench_logistic.py`` has correlated features, where Newton's
lead over first-order methods is largest. The workloads here:

    small-binary    binary,  N=1,000,     D=10
    small-softmax   softmax, N=5,000,     D=10, K=10
    medium-binary   binary,  N=20,000,    D=30
    independent     binary,  N=1,000,000, D=50, independent features (rho = 0)

Every one compares problin (``covariance_`` included) with scikit-learn's lbfgs at its
default tolerance (1e-4) and at 1e-8, and with statsmodels (+ standard errors), on the
same data in one process; the target is problin <= 0.7 x each. ``independent`` also
prints the floor of the method: problin's Newton iterations x one fused pass over X
(``eta = X theta`` and ``X^T g``) plus one double-precision Hessian ``X^T W X``.

    python bench/bench_small.py                      # every workload
    python bench/bench_small.py small-binary --repeats 15
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_logistic
import bench_softmax
from _common import logit_loss, make_logistic_data, make_softmax_data, softmax_loss
from _harness import Contender, Workload, parse_args, run_workload, show
from bench_logistic import sklearn_unpenalised

TARGET = 0.7
REPEATS = 7  # small fits are noisy: the median of more of them


def _sklearn_default(X, y, args):
    """scikit-learn as a user calls it: lbfgs, tol=1e-4, max_iter=100 (a ConvergenceWarning
    where that is short is part of what a user gets)."""
    from sklearn.linear_model import LogisticRegression
    m = LogisticRegression(**sklearn_unpenalised()).fit(X, y)
    return m.intercept_, m.coef_, int(np.max(m.n_iter_))


def _contenders(module, sklearn_key="sklearn-lbfgs"):
    """problin, scikit-learn lbfgs (default tol and 1e-8) and statsmodels, targets 0.7."""
    by_key = {c.key: c for c in module.CONTENDERS}
    tight = by_key[sklearn_key]
    return [by_key["problin"],
            Contender("sklearn-lbfgs-default", "sklearn",
                      "LogisticRegression(C=inf) at its defaults (lbfgs, tol=1e-4, max_iter=100)",
                      False, _sklearn_default, target=TARGET),
            Contender(tight.key, tight.library, tight.config, False, tight.fit, target=TARGET),
            Contender("statsmodels", "statsmodels", by_key["statsmodels"].config, True,
                      by_key["statsmodels"].fit, target=TARGET)]


def _binary_data(rho):
    def make(args):
        X, y, _, _ = make_logistic_data(args.n, args.d, rho=rho, seed=args.seed)
        return X, y, (f"N={args.n:,} D={args.d} dense float64, equicorrelation {rho}, "
                      f"seed={args.seed}, P(y=1)={y.mean():.3f}")
    return make


def _softmax_data(args):
    X, y, _ = make_softmax_data(args.n, args.d, args.k, seed=args.seed)
    return X, y, f"N={args.n:,} D={args.d} K={args.k} dense float64, seed={args.seed}"


BINARY = _contenders(bench_logistic)
WORKLOADS = {
    "small-binary": Workload("small-binary", "binary logit, small", BINARY,
                             _binary_data(0.3), logit_loss, full={"n": 1_000, "d": 10},
                             quick={"n": 1_000, "d": 10}),
    "small-softmax": Workload("small-softmax", "softmax logit, small",
                              _contenders(bench_softmax), _softmax_data, softmax_loss,
                              full={"n": 5_000, "d": 10, "k": 10},
                              quick={"n": 5_000, "d": 10, "k": 10}),
    "medium-binary": Workload("medium-binary", "binary logit, medium", BINARY,
                              _binary_data(0.3), logit_loss, full={"n": 20_000, "d": 30},
                              quick={"n": 20_000, "d": 30}),
    "independent": Workload("independent", "binary logit, independent features", BINARY,
                            _binary_data(0.0), logit_loss, full={"n": 1_000_000, "d": 50},
                            quick={"n": 100_000, "d": 20}),
}


def floor_seconds(args, n_iter, repeats=5):
    """Newton's floor on this data: ``n_iter`` fused passes plus one double Hessian, timed
    with problin's own row-block kernels (the best it has for each)."""
    from problin._core.model.design import Design
    X, y, _, _ = make_logistic_data(args.n, args.d, rho=0.0, seed=args.seed)
    design = Design(X, True)
    theta, g, w = np.zeros(args.d + 1), y - 0.5, np.full(args.n, 0.25)

    def best(fn):
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return min(times)

    t_pass = best(lambda: design.rmatvec(g + 0.0 * design.matvec(theta)))
    t_hess = best(lambda: design.gram(w))
    return n_iter * t_pass + t_hess, t_pass, t_hess


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    names = [a for a in argv if a in WORKLOADS] or list(WORKLOADS)
    rest = [a for a in argv if a not in WORKLOADS]
    if not any(a.startswith("--repeats") for a in rest):
        rest += ["--repeats", str(REPEATS)]
    for i, name in enumerate(names):
        w = WORKLOADS[name]
        args = parse_args(w, rest, strict=False)
        res = run_workload(w, args, print_env=i == 0)
        show(res, args)
        if name == "independent":
            t = res["table"]
            p = t[t["key"] == "problin"].iloc[0]
            floor, t_pass, t_hess = floor_seconds(args, int(p["n_iter"]))
            print(f"  floor: {int(p['n_iter'])} Newton iterations x {t_pass * 1e3:.1f} ms per "
                  f"fused pass + {t_hess * 1e3:.1f} ms for the double Hessian = "
                  f"{floor:.3f} s; problin {p['time_s']:.3f} s = {p['time_s'] / floor:.2f} x "
                  "the floor (target <= 1.5)")


if __name__ == "__main__":
    main()
