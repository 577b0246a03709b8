"""Benchmark: L2-penalised binary logistic regression on sparse (CSR) text-like data.

problin and scikit-learn (lbfgs) fit the same CSR matrix (N=200,000 x D=50,000,
~60 non-zeros per row, Zipf-like column popularity, log1p(count) values) with
alpha=1 (sklearn's C = 1/alpha). Both minimise

    sum_i log-loss_i + alpha/2 |w|^2        (intercept unpenalised)

so the table compares that penalised objective (``objective``, ``rel_obj_diff``)
and prints the plain mean log-loss too; see ``_harness.py`` for the rest.

    python bench/bench_sparse.py                 # N=200,000, D=50,000, nnz=60, alpha=1
    python bench/bench_sparse.py --quick         # N=4,000, D=3,000, nnz=20
    python bench/bench_sparse.py --alpha 0.1 --only problin,sklearn
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import logit_loss, make_sparse_data
from _harness import Contender, Workload, main
from bench_logistic import TOL


def fit_problin(X, y, args):
    from problin import LogisticRegression
    m = LogisticRegression(alpha=args.alpha).fit(X, y)
    return m.intercept_, m.coef_, m.n_iter_, getattr(m, "covariance_", None) is not None


def fit_sklearn(X, y, args):
    from sklearn.linear_model import LogisticRegression
    # sklearn minimises 1/2 |w|^2 + C sum_i log-loss_i: C = 1/alpha is the same optimum.
    m = LogisticRegression(C=1.0 / args.alpha, solver="lbfgs", tol=TOL,
                           max_iter=10000).fit(X, y)
    return m.intercept_, m.coef_, int(np.max(m.n_iter_))


CONTENDERS = [
    # inference: problin reports whether it computed covariance_ (it skips it for wide models).
    Contender("problin", "problin", "LogisticRegression(alpha=alpha) on CSR (defaults otherwise)",
              True, fit_problin),
    Contender("sklearn-lbfgs", "sklearn",
              "LogisticRegression(C=1/alpha, lbfgs, tol=1e-8, max_iter=10000) on CSR", False,
              fit_sklearn, target=0.5),
]


def make_data(args):
    if not args.alpha > 0:
        sys.exit("--alpha must be > 0 (sklearn's C = 1/alpha)")
    X, y, w, b0 = make_sparse_data(args.n, args.d, nnz=args.nnz, seed=args.seed)
    per_row = np.diff(X.indptr)
    used = np.count_nonzero(np.bincount(X.indices, minlength=args.d))
    return X, y, (f"N={args.n:,} D={args.d:,} CSR float64 seed={args.seed}, alpha={args.alpha:g}, "
                  f"non-zeros/row mean {per_row.mean():.1f} (min {per_row.min()}, max "
                  f"{per_row.max()}), {used:,} columns used, P(y=1)={y.mean():.3f}, "
                  f"log-loss of the true model {logit_loss(X, y, [b0], [w]):.6f}")


WORKLOAD = Workload(name="sparse", title="sparse binary logit, L2-penalised",
                    contenders=CONTENDERS, make_data=make_data, loss=logit_loss,
                    full={"n": 200_000, "d": 50_000, "nnz": 60, "alpha": 1.0},
                    quick={"n": 4_000, "d": 3_000, "nnz": 20, "alpha": 1.0}, penalised=True)

if __name__ == "__main__":
    main(WORKLOAD)
