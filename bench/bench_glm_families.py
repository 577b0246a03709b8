"""Benchmark: Poisson and Gamma regression (log link), problin vs. glum, scikit-learn, statsmodels.

Every library fits the same data in one process, with standard errors where it has them:

    problin       PoissonRegression() / GammaRegression() (alpha=0, tol=1e-8; covariance_,
                  scaled by the Pearson dispersion for the Gamma, is computed inside fit)
    glum          GeneralizedLinearRegressor(alpha=0, solver="irls-ls", gradient_tol=1e-8)
                  + covariance_matrix(X, y) (non-robust, expected information, as problin)
    sklearn       PoissonRegressor / GammaRegressor(alpha=0, solver="lbfgs") at its default
                  tol (1e-4, max_iter=100) and at tol=1e-8 (max_iter=10000): scikit-learn
                  has no standard errors, so its rows time the fit alone (inference "none")
    statsmodels   GLM(y, add_constant(X), family).fit() (IRLS) + bse

Workloads: {poisson, gamma} x {large: N=1,000,000 D=50, small: N=1,000 D=10} x
{independent columns (rho=0), correlated (equicorrelation rho=0.3)}. Each fit is timed
``--repeats`` times, the libraries interleaved (problin, glum, ..., problin, glum, ...)
so that all see the same load on a shared machine; the table gives the median and the
min-max range. ``problin/ref`` = problin's median / the row's median; the verdict is
problin's median over the *fastest* reference's (target <= 0.5 large, <= 0.7 small).
``deviance`` is computed by this script for every library's coefficients with the same
formula (Poisson ``2 sum y log(y/mu) - (y - mu)``, Gamma ``2 sum (y/mu - 1 - log(y/mu))``);
problin must reach each reference's within 1e-9 relative (``dev_ok``).

    python bench/bench_glm_families.py                          # all 8 workloads
    python bench/bench_glm_families.py --sizes small --repeats 15
    python bench/bench_glm_families.py --families gamma --sizes large --rho 0.3
    python bench/bench_glm_families.py --quick                  # N=20,000 D=10 for 'large'
"""
import argparse
import json
import os
import sys
import time

if "--threads" in sys.argv[:-1]:   # thread pools read these once, when first loaded
    _n = sys.argv[sys.argv.index("--threads") + 1]
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = _n

import numpy as np  # noqa: E402
import pandas as pd
from scipy import special

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import LOSS_RTOL, MB, _dense_features, environment_report, nbytes, timed
from _harness import Contender, fmt_or_dash, import_versions, left_aligned

TOL = 1e-8
SIZES = {"large": (1_000_000, 50), "small": (1_000, 10)}
QUICK = {"large": (20_000, 10), "small": (1_000, 10)}
TARGETS = {"large": 0.5, "small": 0.7}
REPEATS = {"large": 3, "small": 25}  # small fits (ms) are noisy: the median of many
SHAPE = 2.0                          # the Gamma's shape (dispersion 1/2)
INTERCEPT = {"poisson": 0.5, "gamma": 1.0}


# ------------------------------------------------------------------ data, deviance
def make_data(family, n, d, rho, seed):
    """Dense features (standard normal, equicorrelation ``rho``); weights N(0, 1) scaled so
    that ``X w`` has sd 0.5; ``y`` Poisson or Gamma (shape 2) with mean ``exp(b + X w)``."""
    rng = np.random.default_rng(seed)
    X = _dense_features(rng, n, d, rho)
    w = rng.standard_normal(d)
    eta = X @ w
    w *= 0.5 / np.std(eta)
    eta *= 0.5 / np.std(eta)
    eta += INTERCEPT[family]
    mu = np.exp(eta, out=eta)
    y = (rng.poisson(mu).astype(np.float64) if family == "poisson"
         else rng.gamma(SHAPE, mu / SHAPE))
    return X, y


def deviance(family, X, y, b, w):
    """The deviance of intercept ``b`` and coefficients ``w``, the same code for everyone."""
    eta = X @ w + b
    if family == "poisson":
        return 2.0 * float(np.sum(special.kl_div(y, np.exp(eta))))
    return 2.0 * float(np.sum(special.kl_div(1.0, y * np.exp(-eta))))


# ------------------------------------------------------------------ the fits
# Each returns (intercept, coef (D,), iterations, standard errors computed?) and does,
# inside the timed region, everything a user calls to get the result and its SEs.

def fit_problin(family):
    def fit(X, y):
        import problin
        m = (problin.PoissonRegression() if family == "poisson"
             else problin.GammaRegression()).fit(X, y)
        return m.intercept_, m.coef_, m.n_iter_, getattr(m, "covariance_", None) is not None
    return fit


def fit_glum(family):
    def fit(X, y):
        from glum import GeneralizedLinearRegressor
        # irls-ls is what solver="auto" picks for alpha=0; gradient_tol=1e-8 as in
        # bench_logistic (glum's default stops visibly short of the optimum). robust=False
        # and expected_information=True: the model-based covariance problin, statsmodels'
        # IRLS and R report (glum's default is a sandwich).
        m = GeneralizedLinearRegressor(family=family, link="log", alpha=0, solver="irls-ls",
                                       gradient_tol=TOL, robust=False,
                                       expected_information=True).fit(X, y)
        m.covariance_matrix(X, y)
        return m.intercept_, m.coef_, m.n_iter_, True
    return fit


def fit_sklearn(family, tol):
    def fit(X, y):
        from sklearn.linear_model import GammaRegressor, PoissonRegressor
        kind = PoissonRegressor if family == "poisson" else GammaRegressor
        extra = {} if tol is None else {"tol": tol, "max_iter": 10_000}
        m = kind(alpha=0.0, solver="lbfgs", **extra).fit(X, y)
        return m.intercept_, m.coef_, m.n_iter_, False
    return fit


def fit_statsmodels(family):
    def fit(X, y):
        import statsmodels.api as sm
        fam = (sm.families.Poisson() if family == "poisson"
               else sm.families.Gamma(sm.families.links.Log()))
        res = sm.GLM(y, sm.add_constant(X, has_constant="add"), family=fam).fit()
        res.bse  # noqa: B018 -- standard errors are computed lazily; include them like problin
        return res.params[0], res.params[1:], res.fit_history["iteration"], True
    return fit


def contenders(family):
    reg = "PoissonRegressor" if family == "poisson" else "GammaRegressor"
    est = "PoissonRegression" if family == "poisson" else "GammaRegression"
    sm_family = "Poisson()" if family == "poisson" else "Gamma(Log())"
    return [
        Contender("problin", "problin", f"{est}() (alpha=0, tol=1e-8; covariance_ in fit)",
                  True, fit_problin(family)),
        Contender("glum", "glum", f"GLR({family}, log, alpha=0, irls-ls, gradient_tol=1e-8) + "
                  "covariance_matrix(X, y) (robust=False, expected information)", True,
                  fit_glum(family)),
        Contender("sklearn-lbfgs-default", "sklearn", f"{reg}(alpha=0, lbfgs) at its defaults "
                  "(tol=1e-4, max_iter=100); no standard errors in scikit-learn", False,
                  fit_sklearn(family, None)),
        Contender("sklearn-lbfgs-1e-8", "sklearn", f"{reg}(alpha=0, lbfgs, tol=1e-8, "
                  "max_iter=10000); no standard errors in scikit-learn", False,
                  fit_sklearn(family, TOL)),
        Contender("statsmodels", "statsmodels", f"GLM(y, add_constant(X), {sm_family}).fit() "
                  "(IRLS) + bse", True, fit_statsmodels(family)),
    ]


# ------------------------------------------------------------------ one workload
def run_workload(family, size, rho, args):
    n, d = (QUICK if args.quick else SIZES)[size]
    repeats = args.repeats or REPEATS[size]
    X, y = make_data(family, n, d, rho, args.seed)
    cols = "independent columns" if rho == 0 else f"equicorrelation {rho}"
    name = f"{family}-{size}-{'independent' if rho == 0 else 'correlated'}"
    print(f"\n== {name} == {family} (log link), N={n:,} D={d} dense float64, {cols}, "
          f"seed={args.seed}, mean(y)={y.mean():.3f}; X {nbytes(X) / MB:,.1f} MB; "
          f"load before: {load()}", flush=True)
    cands = [c for c in contenders(family)
             if not args.only or c.key in args.only or c.library in args.only]
    versions = import_versions(cands)
    rows = {c.key: {"key": c.key, "version": versions[c.key][0], "config": c.config,
                    "inference": "yes" if c.inference else "none", "times": [], "msgs": set(),
                    "note": versions[c.key][1], "res": None} for c in cands}
    live = [c for c in cands if not rows[c.key]["note"]]
    for c in live:   # untimed warm-up (first-call caches; at N=1e6 the first timed fit's
        try:         # cost is the fit's, and an untimed one would cost minutes)
            c.fit(X, y) if n < 100_000 else None
        except Exception as exc:  # noqa: BLE001 -- report and carry on with the others
            rows[c.key]["note"] = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    live = [c for c in live if not rows[c.key]["note"]]
    for rep in range(repeats):   # interleaved: every library sees the same load
        print(f"   repeat {rep + 1}/{repeats}:", end="", flush=True)
        for c in live:
            try:
                secs, res, msgs, _ = timed(lambda: c.fit(X, y), 1)
            except Exception as exc:  # noqa: BLE001 -- as above (no warm-up at N=1e6)
                rows[c.key]["note"] = f"{type(exc).__name__}: {exc}".replace("\n", " ")
                live = [x for x in live if x is not c]
                continue
            print(f" {c.key} {secs:.3g} s", end=";" if c is not live[-1] else "\n",
                  flush=True)
            r = rows[c.key]
            r["times"].append(secs)
            r["msgs"].update(msgs)
            r["res"] = res
    out = []
    for c in cands:
        r = rows[c.key]
        t = np.array(r["times"]) if r["times"] else np.full(1, np.nan)
        row = {"key": c.key, "inference": r["inference"], "reps": len(r["times"]),
               "median_s": float(np.median(t)), "min_s": float(t.min()),
               "max_s": float(t.max()), "n_iter": -1, "deviance": np.nan, "_theta": None,
               "warnings": "; ".join(sorted(r["msgs"])), "note": r["note"],
               "version": r["version"], "config": r["config"]}
        if r["res"] is not None:
            b, w, n_iter, has_se = r["res"]
            b, w = float(np.ravel(b)[0]), np.asarray(w, dtype=np.float64).ravel()
            row.update(n_iter=int(n_iter), deviance=deviance(family, X, y, b, w),
                       _theta=np.r_[b, w])
            if c.inference and not has_se:
                row["inference"] = "no"
        out.append(row)
    del X, y
    t = pd.DataFrame(out)
    p = t[(t["key"] == "problin") & t["_theta"].notna()]
    p = p.iloc[0] if len(p) else None
    refs = t[(t["key"] != "problin") & t["_theta"].notna()]
    if p is not None:
        t["problin/ref"] = p["median_s"] / t["median_s"]
        t["rel_dev_diff"] = (p["deviance"] - t["deviance"]) / np.abs(t["deviance"])
        t["max_coef_diff"] = [np.max(np.abs(th - p["_theta"])) if th is not None else np.nan
                              for th in t["_theta"]]
    else:
        t["problin/ref"] = t["rel_dev_diff"] = t["max_coef_diff"] = np.nan
    t["dev_ok"] = ["-" if k == "problin" or pd.isna(v) else
                   ("PASS" if v <= LOSS_RTOL else "FAIL")
                   for k, v in zip(t["key"], t["rel_dev_diff"])]
    fastest = refs.loc[refs["median_s"].idxmin()] if len(refs) else None
    target = TARGETS[size]
    summary = {"workload": name, "n": n, "d": d, "problin_s": np.nan, "fastest_ref": "-",
               "ref_s": np.nan, "ratio": np.nan, "target": target, "time": "-",
               "deviance": "FAIL" if (t["dev_ok"] == "FAIL").any() else "PASS",
               "load_after": load()}
    if p is not None and fastest is not None:
        ratio = p["median_s"] / fastest["median_s"]
        summary.update(problin_s=p["median_s"], fastest_ref=fastest["key"],
                       ref_s=fastest["median_s"], ratio=ratio,
                       time="PASS" if ratio <= target else "FAIL")
    elif p is None:
        summary.update(time="FAIL", deviance="FAIL")
    show(name, t, summary, repeats)
    return t.drop(columns="_theta"), summary


def load():
    return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def show(name, t, s, repeats):
    fmt = {k: fmt_or_dash(v) for k, v in {
        "median_s": "{:.4g}", "min_s": "{:.4g}", "max_s": "{:.4g}", "problin/ref": "{:.3f}",
        "deviance": "{:.10g}", "rel_dev_diff": "{:+.2e}", "max_coef_diff": "{:.1e}"}.items()}
    fmt["n_iter"] = lambda v: "-" if v < 0 else str(v)
    v = t.copy()
    v["note"] = left_aligned([n[:48] + ("..." if len(n) > 48 else "") for n in v["note"]])
    cols = ["key", "inference", "reps", "median_s", "min_s", "max_s", "problin/ref", "n_iter",
            "deviance", "rel_dev_diff", "dev_ok", "max_coef_diff", "note"]
    print(f"\n== results: {name} == median and range of {repeats} interleaved fit(s)")
    print(v[cols].to_string(index=False, formatters=fmt, na_rep="-"))
    print(f"  problin / fastest reference ({s['fastest_ref']}): "
          + ("-" if pd.isna(s["ratio"]) else f"{s['ratio']:.3f}")
          + f" (target <= {s['target']:g}): {s['time']}; deviance within {LOSS_RTOL:g} of "
          f"every reference or lower: {s['deviance']}; load after: {s['load_after']}")
    for _, r in t.iterrows():
        extra = (f"  [warnings: {r['warnings'][:200]}]" if r["warnings"] else "") + \
                (f"  [error: {r['note'][:300]}]" if r["note"] else "")
        print(f"  {r['key']} ({r['version']}): {r['config']}{extra}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--families", default="poisson,gamma")
    p.add_argument("--sizes", default="large,small")
    p.add_argument("--rho", default="0,0.3", help="comma list of equicorrelations "
                   "(0: independent columns)")
    p.add_argument("--repeats", type=int, default=None,
                   help="interleaved timed fits per library (default 3 large, 7 small)")
    p.add_argument("--only", default="", help="comma list of keys or library names")
    p.add_argument("--quick", action="store_true", help="'large' is N=20,000 D=10")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=None, help="every BLAS and OpenMP pool "
                   "this many threads, for all libraries alike (set as OMP_NUM_THREADS etc. "
                   "before numpy is imported); default: the libraries' own")
    p.add_argument("--json", metavar="PATH", help="also save the results as JSON")
    args = p.parse_args(argv)

    families = [f.strip() for f in args.families.split(",") if f.strip()]
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    if set(families) - {"poisson", "gamma"} or set(sizes) - set(SIZES):
        p.error("--families: poisson, gamma; --sizes: large, small")
    if args.repeats is not None and args.repeats < 3:
        p.error("--repeats must be >= 3 (the spread needs them)")
    args.only = {s.strip() for s in args.only.split(",") if s.strip()}
    rhos = [float(r) for r in args.rho.split(",")]
    t0 = time.perf_counter()
    import_versions(contenders("poisson"))   # every thread pool exists before the report
    print("== environment ==\n" + "\n".join(environment_report()) + f"\n  load: {load()} "
          f"on {os.cpu_count()} CPUs (1, 5, 15 min averages)"
          + ("" if args.threads is None else f"; --threads {args.threads}"))
    tables, summaries = [], []
    for size in sizes:
        for rho in rhos:
            for family in families:
                t, s = run_workload(family, size, rho, args)
                tables.append(t)
                summaries.append(s)
    s = pd.DataFrame(summaries)
    s["target"] = [f"<={g:g}" for g in s["target"]]
    print(f"\n== summary == problin's median / the fastest reference's median"
          f"{' (--quick sizes)' if args.quick else ''}")
    print(s[["workload", "problin_s", "fastest_ref", "ref_s", "ratio", "target", "time",
             "deviance", "load_after"]].to_string(index=False, na_rep="-", formatters={
                 "problin_s": fmt_or_dash("{:.4g}"), "ref_s": fmt_or_dash("{:.4g}"),
                 "ratio": fmt_or_dash("{:.3f}")}))
    print(f"  deviance: PASS when problin's is within {LOSS_RTOL:g} (relative) of every "
          "reference's or lower. scikit-learn computes no standard errors: its rows time the "
          "fit alone.\n  load: os.getloadavg() (1, 5, 15 min) after the workload; timings "
          "on a loaded machine are slower and noisier for every library alike.")
    print(f"\ntotal wall time {time.perf_counter() - t0:.1f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": {k: (sorted(v) if isinstance(v, set) else v)
                                for k, v in vars(args).items()},
                       "environment": environment_report(),
                       "summary": json.loads(pd.DataFrame(summaries).to_json(orient="records")),
                       "workloads": [json.loads(t.to_json(orient="records")) for t in tables]},
                      f, indent=2)
        print(f"saved {args.json}")


if __name__ == "__main__":
    main()
