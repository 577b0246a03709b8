"""Benchmark: unpenalised binary probit regression, problin vs. statsmodels.

Both fit the same dense data (N=1e6, D=50, labels from Phi(0.3 + X w)) in one
process, with standard errors; see ``_harness.py`` for what is timed, compared
and measured.

    python bench/bench_probit.py                 # N=1e6, D=50, 3 repeats
    python bench/bench_probit.py --quick         # N=20,000, D=10
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import make_probit_data, probit_loss
from _harness import Contender, Workload, main


def fit_problin(X, y, args):
    from problin import ProbitRegression
    # Defaults: alpha=0, tol=1e-8; covariance_ is computed inside fit().
    m = ProbitRegression().fit(X, y)
    return m.intercept_, m.coef_, m.n_iter_, getattr(m, "covariance_", None) is not None


def fit_statsmodels(X, y, args):
    import statsmodels.api as sm
    res = sm.Probit(y, sm.add_constant(X, has_constant="add")).fit(method="newton", disp=0)
    res.bse  # noqa: B018 -- standard errors are computed lazily; include them like problin
    return res.params[:1], res.params[1:], res.mle_retvals["iterations"]


CONTENDERS = [
    Contender("problin", "problin", "ProbitRegression() (defaults: alpha=0, tol=1e-8)", True,
              fit_problin),
    Contender("statsmodels", "statsmodels", "Probit(add_constant(X)).fit(newton) + bse", True,
              fit_statsmodels, target=0.1),
]


def make_data(args):
    X, y, beta, b0 = make_probit_data(args.n, args.d, seed=args.seed)
    true = probit_loss(X, y, [b0], [beta])
    return X, y, (f"N={args.n:,} D={args.d} dense float64 seed={args.seed}, P(y=1)={y.mean():.3f}, "
                  f"log-loss of the true model {true:.6f}")


WORKLOAD = Workload(name="probit", title="binary probit, alpha=0, with covariance",
                    contenders=CONTENDERS, make_data=make_data, loss=probit_loss,
                    full={"n": 1_000_000, "d": 50}, quick={"n": 20_000, "d": 10})

if __name__ == "__main__":
    main(WORKLOAD)
