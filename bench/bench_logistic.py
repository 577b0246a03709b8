"""Benchmark: unpenalised binary logistic regression, problin vs. reference libraries.

Every library fits the same synthetic dense data (N=1e6, D=50) in one process;
see ``_harness.py`` for what is timed, compared and measured.

    python bench/bench_logistic.py                       # N=1e6, D=50, 3 repeats
    python bench/bench_logistic.py --quick               # N=20,000, D=10
    python bench/bench_logistic.py --only problin,glum --json results.json

Reference libraries are optional (``pip install -e ".[bench]"``); one that
cannot be imported is skipped with a note.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import logit_loss, make_logistic_data, mean_log_loss
from _harness import Contender, Workload, main

TOL = 1e-8


# Each fit function returns (intercepts (1,), coef (1, D), iterations) and does,
# inside the timed region, everything the user would need to call to get the
# same result, e.g. add_constant and the standard errors for statsmodels.

def fit_problin(X, y, args):
    from problin import LogisticRegression
    # Defaults: alpha=0 (maximum likelihood), tol=1e-8; covariance_ is
    # computed inside fit().
    m = LogisticRegression().fit(X, y)
    return m.intercept_, m.coef_, m.n_iter_, getattr(m, "covariance_", None) is not None


def sklearn_unpenalised():
    """sklearn >= 1.8 deprecates ``penalty``; ``C=np.inf`` is the spelling there."""
    import sklearn
    major, minor = (int(v) for v in sklearn.__version__.split(".")[:2])
    return {"C": np.inf} if (major, minor) >= (1, 8) else {"penalty": None}


def _fit_sklearn(X, y, **kwargs):
    from sklearn.linear_model import LogisticRegression
    m = LogisticRegression(**sklearn_unpenalised(), tol=TOL, **kwargs).fit(X, y)
    return m.intercept_, m.coef_, int(np.max(m.n_iter_))


def fit_sklearn_lbfgs(X, y, args):
    return _fit_sklearn(X, y, solver="lbfgs", max_iter=10000)


def fit_sklearn_newton_cholesky(X, y, args):
    return _fit_sklearn(X, y, solver="newton-cholesky")


def fit_statsmodels(X, y, args):
    import statsmodels.api as sm
    res = sm.Logit(y, sm.add_constant(X, has_constant="add")).fit(method="newton", disp=0)
    res.bse  # noqa: B018 -- standard errors are computed lazily; include them like problin
    return res.params[:1], res.params[1:], res.mle_retvals["iterations"]


def fit_glum(X, y, args):
    from glum import GeneralizedLinearRegressor
    # irls-ls is what solver="auto" picks for alpha=0; glum's default
    # gradient_tol of 1e-4 stops visibly short of the optimum, 1e-8 does not.
    m = GeneralizedLinearRegressor(family="binomial", alpha=0, solver="irls-ls",
                                   gradient_tol=TOL).fit(X, y)
    return m.intercept_, m.coef_, m.n_iter_


CONTENDERS = [
    Contender("problin", "problin", "LogisticRegression() (defaults: alpha=0, tol=1e-8)", True,
              fit_problin),
    Contender("sklearn-lbfgs", "sklearn", "LogisticRegression(C=inf, lbfgs, tol=1e-8)", False,
              fit_sklearn_lbfgs, target=0.5),
    Contender("sklearn-newton-cholesky", "sklearn",
              "LogisticRegression(C=inf, newton-cholesky, tol=1e-8) (no target)", False,
              fit_sklearn_newton_cholesky),
    Contender("statsmodels", "statsmodels", "Logit(add_constant(X)).fit(newton) + bse", True,
              fit_statsmodels, target=0.1),
    Contender("glum", "glum", "GLR(binomial, alpha=0, irls-ls, gradient_tol=1e-8)", False,
              fit_glum, target=0.25),
]


def make_data(args):
    X, y, beta, b0 = make_logistic_data(args.n, args.d, seed=args.seed)
    return X, y, (f"N={args.n:,} D={args.d} dense float64 seed={args.seed}, P(y=1)={y.mean():.3f}, "
                  f"log-loss of the true model {mean_log_loss(X, y, beta, b0):.6f}")


WORKLOAD = Workload(name="logistic", title="binary logit, alpha=0, with covariance",
                    contenders=CONTENDERS, make_data=make_data, loss=logit_loss,
                    full={"n": 1_000_000, "d": 50}, quick={"n": 20_000, "d": 10})

if __name__ == "__main__":
    main(WORKLOAD)
