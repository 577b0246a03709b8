"""Benchmark: exact posterior sampling for Bayesian logistic regression, problin vs. PyMC.

Same data (N=10,000 x D=10, dense, from ``make_logistic_data``), same
posterior: ``w ~ N(0, 1/alpha I)``, intercept ``b ~ N(0, 1/intercept_alpha)``
(problin's defaults: alpha = 1, intercept_alpha = 1e-10, i.e. sd 1e5), logit
likelihood. Both draw 4 chains x 1000 kept draws (PyMC: NUTS, 1000 tuning
steps, its defaults otherwise). Measured, as a user experiences it:

* wall time of the whole call: for problin ``fit()`` (MAP + Laplace +
  sampling + diagnostics); for PyMC building the model, compiling it and
  ``pm.sample()``;
* effective samples: the minimum over parameters of the rank-normalised bulk
  ESS, and the maximum rank-normalised split R-hat (Vehtari et al. 2021),
  computed by ArviZ for both libraries when it is installed (problin's own
  implementation otherwise -- they agree to 1e-10);
* ESS/s = minimum bulk ESS / wall time; the ratio problin / PyMC (target >= 5
  with R-hat <= 1.01).

    python bench/bench_bayes_mcmc.py                  # N=10,000, D=10
    python bench/bench_bayes_mcmc.py --quick          # N=2,000, D=5
    python bench/bench_bayes_mcmc.py --only problin   # without the references

PyMC and ``polyagamma`` (for the Polya-Gamma Gibbs sampler written here, the
other exact sampler measured) are optional (``pip install -e ".[bench]"``): a
reference that cannot be imported is skipped. PyTensor's compiled-module cache
(``~/.pytensor``) makes a second PyMC run in a fresh process compile faster; the
table says which it was.
"""
import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import environment_report, make_logistic_data

ALPHA, INTERCEPT_ALPHA = 1.0, 1e-10
TARGET = 5.0


def diagnostics(draws):
    """(min bulk ESS, max R-hat) of draws shaped (chains, draws, params)."""
    try:
        import arviz as az
    except ImportError:
        from problin._core.bayes.mcmc import ess_bulk, rhat
        return float(np.min(ess_bulk(draws))), float(np.max(rhat(draws))), "problin"
    data = az.convert_to_dataset({"theta": draws})
    ess = az.ess(data, method="bulk")["theta"].values
    r_hat = az.rhat(data, method="rank")["theta"].values
    return float(np.min(ess)), float(np.max(r_hat)), "arviz"


def run_problin(X, y, args):
    from problin import BayesianLogisticRegression
    times, model = [], None
    for rep in range(args.repeats):
        model = BayesianLogisticRegression(alpha=ALPHA, intercept_alpha=INTERCEPT_ALPHA,
                                           inference="mcmc", n_samples=args.draws,
                                           n_chains=args.chains, random_state=args.seed,
                                           progress=False)
        t0 = time.perf_counter()
        model.fit(X, y)
        times.append(time.perf_counter() - t0)
    ess, r_hat, source = diagnostics(model.samples_)
    return {"library": "problin", "wall_s": statistics.median(times), "min_ess_bulk": ess,
            "max_rhat": r_hat, "diagnostics": source,
            "mean": model.posterior_mean_,
            "config": f"BayesianLogisticRegression(inference='mcmc', n_samples={args.draws}, "
                      f"n_chains={args.chains}); acceptance {model.acceptance_rate_:.2f}; "
                      f"median of {args.repeats} fits"}


def run_polyagamma(X, y, args):
    """Polya-Gamma data-augmentation Gibbs (Polson, Scott & Windle 2013), written here
    over the ``polyagamma`` sampler: omega_n ~ PG(1, a_n), then w ~ N(m, V) with
    V^-1 = Phi^T Omega Phi + P, m = V Phi^T (t - 1/2). The alternative exact sampler
    problin measured before choosing independence Metropolis-Hastings."""
    from polyagamma import random_polyagamma
    from scipy.linalg import cho_solve, solve_triangular
    t0 = time.perf_counter()
    Phi = np.column_stack([np.ones(len(y)), X])
    p = Phi.shape[1]
    prior = np.r_[INTERCEPT_ALPHA, np.full(p - 1, ALPHA)]
    kappa = Phi.T @ (y - 0.5)
    rng = np.random.default_rng(args.seed)
    warmup = max(100, args.draws // 4)
    draws = np.empty((args.chains, args.draws, p))
    for c in range(args.chains):
        w = np.zeros(p)
        for it in range(warmup + args.draws):
            omega = random_polyagamma(1.0, Phi @ w, random_state=rng)
            H = Phi.T @ (Phi * omega[:, None])
            H[np.diag_indices(p)] += prior
            L = np.linalg.cholesky(H)
            w = cho_solve((L, True), kappa) + solve_triangular(L.T, rng.standard_normal(p))
            if it >= warmup:
                draws[c, it - warmup] = w
    wall = time.perf_counter() - t0
    ess, r_hat, source = diagnostics(draws)
    return {"library": "polyagamma", "wall_s": wall, "min_ess_bulk": ess, "max_rhat": r_hat,
            "diagnostics": source, "mean": draws.reshape(-1, p).mean(axis=0),
            "config": f"Polya-Gamma Gibbs (this script, numpy + polyagamma), {args.chains} "
                      f"chains x ({warmup} warm-up + {args.draws}) sweeps"}


def run_pymc(X, y, args):
    cache = os.path.expanduser("~/.pytensor")
    warm = os.path.isdir(cache) and any(os.scandir(cache))
    import pymc as pm  # imports are not timed, for either library
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pm.Model():
            b = pm.Normal("b", 0.0, 1.0 / np.sqrt(INTERCEPT_ALPHA))
            w = pm.Normal("w", 0.0, 1.0 / np.sqrt(ALPHA), shape=X.shape[1])
            pm.Bernoulli("y", logit_p=b + pm.math.dot(X, w), observed=y)
            idata = pm.sample(draws=args.draws, tune=args.draws, chains=args.chains,
                              cores=args.pymc_cores, random_seed=args.seed, progressbar=False)
    wall = time.perf_counter() - t0
    post = idata.posterior
    draws = np.concatenate([post["b"].values[:, :, None], post["w"].values], axis=2)
    ess, r_hat, source = diagnostics(draws)
    return {"library": "pymc", "wall_s": wall, "min_ess_bulk": ess, "max_rhat": r_hat,
            "diagnostics": source, "mean": draws.reshape(-1, draws.shape[2]).mean(axis=0),
            "config": f"pm.sample(draws={args.draws}, tune={args.draws}, chains={args.chains}, "
                      f"cores={args.pymc_cores}) "
                      f"NUTS, pymc {pm.__version__}; model + compile + sampling "
                      f"(compile cache {'warm' if warm else 'cold'})"}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=None)
    p.add_argument("--d", type=int, default=None)
    p.add_argument("--quick", action="store_true", help="N=2,000, D=5")
    p.add_argument("--draws", type=int, default=1000, help="kept draws per chain")
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--repeats", type=int, default=3, help="problin fits (median time)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only", default="", help="comma list: problin,polyagamma,pymc")
    p.add_argument("--pymc-cores", type=int, default=None,
                   help="PyMC's cores (default None: PyMC's choice, half the CPUs, as it "
                        "takes every other one for a hyperthread)")
    args = p.parse_args(argv)
    args.n = args.n or (2000 if args.quick else 10_000)
    args.d = args.d or (5 if args.quick else 10)
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    X, y, _, _ = make_logistic_data(args.n, args.d, seed=args.seed)
    print("\n".join(environment_report()))
    print(f"data: N={args.n:,} D={args.d} dense float64, P(y=1)={y.mean():.3f}; prior "
          f"w ~ N(0, 1/{ALPHA:g}), intercept ~ N(0, 1/{INTERCEPT_ALPHA:g})\n")
    rows = []
    for name, run in (("problin", run_problin), ("polyagamma", run_polyagamma),
                      ("pymc", run_pymc)):
        if only and name not in only:
            continue
        try:
            rows.append(run(X, y, args))
        except ImportError as exc:
            print(f"{name}: skipped ({exc})")
    table = pd.DataFrame(rows)
    table["ess_per_s"] = table["min_ess_bulk"] / table["wall_s"]
    if "pymc" in set(table["library"]) and "problin" in set(table["library"]):
        ref = float(table.loc[table["library"] == "pymc", "ess_per_s"].iloc[0])
        table["ratio_vs_pymc"] = table["ess_per_s"] / ref
        means = {r["library"]: r["mean"] for r in rows}
        gap = np.max(np.abs(means["problin"] - means["pymc"]))
        print(f"largest difference of posterior means, problin - pymc: {gap:.4f}")
    shown = table.drop(columns=["mean", "config"])
    print(shown.to_string(index=False, float_format=lambda v: f"{v:,.4g}"))
    for r in rows:
        print(f"  {r['library']}: {r['config']}")
    problin = table[table["library"] == "problin"]
    if "ratio_vs_pymc" in table and len(problin):
        ok = float(problin["ratio_vs_pymc"].iloc[0]) >= TARGET and \
            float(problin["max_rhat"].iloc[0]) <= 1.01
        print(f"target: problin ESS/s >= {TARGET:g} x PyMC's with R-hat <= 1.01: "
              f"{'met' if ok else 'NOT met'}")
    return table


if __name__ == "__main__":
    main()
