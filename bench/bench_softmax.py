"""Benchmark: unpenalised multinomial (softmax) logistic regression, K=10 classes.

problin, scikit-learn (lbfgs, multinomial) and statsmodels (MNLogit, Newton) fit
the same dense data (N=300,000, D=50) in one process; see ``_harness.py`` for
what is timed, compared and measured.

    python bench/bench_softmax.py                # N=300,000, D=50, K=10, 3 repeats
    python bench/bench_softmax.py --quick        # N=5,000, D=10, K=10
    python bench/bench_softmax.py --only problin,sklearn --repeats-slow 2

statsmodels' MNLogit can take minutes at full size: a reference whose first
(untimed) fit takes over 30 s is timed over ``--repeats-slow`` fits (default 1),
marked ``*`` in the ``reps`` column.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import make_softmax_data, softmax_loss
from _harness import Contender, Workload, main
from bench_logistic import TOL, sklearn_unpenalised


def _by_label(classes, b, W, k):
    """Rows of (b, W) placed at their integer label 0..K-1 (absent classes: zeros)."""
    idx = np.asarray(classes).astype(int)
    b_full, W_full = np.zeros(k), np.zeros((k, W.shape[1]))
    b_full[idx], W_full[idx] = b, W
    return b_full, W_full


# Each fit returns (intercepts (K,), coef (K, D), iterations); the loss uses all K
# rows with log_softmax, so contrasts to the first class (problin at alpha=0,
# statsmodels) and sklearn's symmetric parametrisation are compared alike.

def fit_problin(X, y, args):
    from problin import LogisticRegression
    m = LogisticRegression().fit(X, y)
    return (*_by_label(m.classes_, m.intercept_, m.coef_, args.k), m.n_iter_,
            getattr(m, "covariance_", None) is not None)


def fit_sklearn(X, y, args):
    from sklearn.linear_model import LogisticRegression
    # lbfgs fits the multinomial model for K > 2 (sklearn >= 1.5's default,
    # the only choice since 1.8 removed multi_class).
    m = LogisticRegression(**sklearn_unpenalised(), solver="lbfgs", tol=TOL,
                           max_iter=10000).fit(X, y)
    return (*_by_label(m.classes_, m.intercept_, m.coef_, args.k), int(np.max(m.n_iter_)))


def fit_statsmodels(X, y, args):
    import statsmodels.api as sm
    res = sm.MNLogit(y, sm.add_constant(X, has_constant="add")).fit(method="newton", disp=0)
    res.bse  # noqa: B018 -- like problin, include the standard errors (cheap after Newton)
    params = np.asarray(res.params)          # (D + 1, K - 1): contrasts to the first class
    b = np.r_[0.0, params[0]]
    W = np.vstack([np.zeros(params.shape[0] - 1), params[1:].T])
    return b, W, res.mle_retvals["iterations"]


CONTENDERS = [
    Contender("problin", "problin",
              "LogisticRegression() on K classes (defaults: alpha=0, tol=1e-8)", True, fit_problin),
    Contender("sklearn-lbfgs", "sklearn",
              "LogisticRegression(C=inf, lbfgs, tol=1e-8, max_iter=10000), multinomial", False,
              fit_sklearn, target=0.3),
    Contender("statsmodels", "statsmodels",
              "MNLogit(y, add_constant(X)).fit(newton, disp=0) + bse", True, fit_statsmodels,
              target=0.02),
]


def make_data(args):
    X, y, W = make_softmax_data(args.n, args.d, args.k, seed=args.seed)
    freq = np.bincount(y, minlength=args.k) / args.n
    true = softmax_loss(X, y, np.zeros(args.k), W)
    return X, y, (f"N={args.n:,} D={args.d} K={args.k} dense float64 seed={args.seed}, class "
                  f"freq {freq.min():.3f}..{freq.max():.3f}, log-loss of the true model {true:.6f}")


WORKLOAD = Workload(name="softmax", title="softmax logit, alpha=0",
                    contenders=CONTENDERS, make_data=make_data, loss=softmax_loss,
                    full={"n": 300_000, "d": 50, "k": 10}, quick={"n": 5_000, "d": 10, "k": 10})

if __name__ == "__main__":
    main(WORKLOAD)
