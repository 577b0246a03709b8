"""Benchmark: the Tweedie log-likelihood and its derivatives in the dispersion, scipy's
``log_wright_bessel`` (problin before, statsmodels' path) against the series summed in
numpy over row blocks (``problin._core.model.tweedie_series``).

Data: compound Poisson-Gamma rows with power ``p`` (default 1.5), means
``exp(N(0, 0.5²))`` and dispersion ``phi`` (default 1: ~14 % zeros, the share is
printed; the positive rows are what the series costs). Timed, interleaved (before, after,
before, ...), median and min-max of ``--repeats``:

    loglike   the per-row log-likelihood of N rows (every fit computes it for llf/AIC/BIC)
    score     the per-row first and second derivatives in log scale (one step of
              ``scale="ml"``'s search): three ``log_wright_bessel`` calls a row before,
              one series with its moments after

    fit       TweedieRegression(power=p, scale="ml").fit of --fit-n rows x 5 columns
              (log link), the distribution's two methods swapped for the scipy path
              for "before" (the coefficients' IRLS is the same in both)

The largest relative difference between the two is printed with each row (the fit's: of
``log_likelihood_`` and ``scale_``).

    python bench/bench_tweedie.py                    # N = 1,000,000, 3 repeats
    python bench/bench_tweedie.py --n 200000 --power 1.8 --phi 0.2
"""
import argparse
import statistics
import time

import numpy as np
from scipy import special

from problin import TweedieRegression
from problin._core.model.distributions import Tweedie


def make_data(n, power, phi, seed=0):
    """Compound Poisson-Gamma draws: ``N ~ Poisson(lambda)`` Gamma summands, with
    ``lambda = mu^(2-p) / (phi (2-p))``, shape ``(2-p)/(p-1)``, scale ``phi (p-1)
    mu^(p-1)`` (Jørgensen's parametrisation)."""
    rng = np.random.default_rng(seed)
    mu = np.exp(rng.normal(0.0, 0.5, n))
    lam = mu ** (2 - power) / (phi * (2 - power))
    counts = rng.poisson(lam)
    shape = (2 - power) / (power - 1)
    y = np.zeros(n)
    pos = counts > 0
    y[pos] = rng.gamma(shape * counts[pos], phi * (power - 1) * mu[pos] ** (power - 1))
    return y, mu


def scipy_loglike(power, y, mu, phi):
    """problin's log-likelihood before the series (and statsmodels'): scipy's
    ``log_wright_bessel`` at ``x`` as a double."""
    p = power
    rho = (2 - p) / (p - 1)
    with np.errstate(divide="ignore", invalid="ignore"):  # (mu = 0 at y = 0: the saturated)
        out = (np.where(y > 0, y * mu ** (1 - p) / (1 - p), 0.0) - mu ** (2 - p) / (2 - p)) / phi
    pos = y > 0
    x = ((p - 1) * phi / y[pos]) ** (-rho) / ((2 - p) * phi)
    out[pos] += special.log_wright_bessel(rho, 0.0, x) - np.log(y[pos])
    return out


def scipy_score(power, y, mu, phi):
    """The derivatives in log scale before the series: ``W'/W`` and ``W''/W`` by two more
    ``log_wright_bessel`` calls (Wright's ``Phi(rho, b; x)' = Phi(rho, rho + b; x)``)."""
    p = power
    rho = (2 - p) / (p - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        exponent = (np.where(y > 0, y * mu ** (1 - p) / (1 - p), 0.0)
                    - mu ** (2 - p) / (2 - p)) / phi
    s, ds = -exponent, exponent.copy()
    pos = y > 0
    x = ((p - 1) * phi / y[pos]) ** (-rho) / ((2 - p) * phi)
    log_w = special.log_wright_bessel(rho, 0.0, x)
    r1 = np.exp(special.log_wright_bessel(rho, rho, x) - log_w)
    r2 = np.exp(special.log_wright_bessel(rho, 2.0 * rho, x) - log_w)
    c = -(rho + 1.0)
    s[pos] += c * x * r1
    ds[pos] += c * c * (x * r1 + x * x * (r2 - r1 * r1))
    return s, ds


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _row(name, before, after, diff):
    b, a = statistics.median(before), statistics.median(after)
    print(f"{name:<8} before {b:8.3f} s [{min(before):.3f}-{max(before):.3f}]   "
          f"after {a:7.3f} s [{min(after):.3f}-{max(after):.3f}]   "
          f"x{b / a:6.1f}   max rel diff {diff:.1e}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--power", type=float, default=1.5)
    parser.add_argument("--phi", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-score", action="store_true")
    parser.add_argument("--fit-n", type=int, default=100_000, help="0: no fit row")
    args = parser.parse_args()
    y, mu = make_data(args.n, args.power, args.phi)
    dist = Tweedie(args.power)
    print(f"N = {args.n:,}, p = {args.power}, phi = {args.phi}: "
          f"{np.mean(y > 0):.0%} positive rows")
    before, after, diff = [], [], 0.0
    for _ in range(args.repeats):
        t, ref = _timed(lambda: scipy_loglike(args.power, y, mu, args.phi))
        before.append(t)
        t, got = _timed(lambda: dist.log_likelihood(y, mu, 1.0, args.phi))
        after.append(t)
        diff = float(np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1e-300)))
    _row("loglike", before, after, diff)
    if args.skip_score:
        return
    before, after = [], []
    for _ in range(args.repeats):
        t, ref = _timed(lambda: scipy_score(args.power, y, mu, args.phi))
        before.append(t)
        t, got = _timed(lambda: dist.scale_score(y, mu, 1.0, args.phi))
        after.append(t)
        diff = max(float(np.max(np.abs(g - r) / np.maximum(np.abs(r), 1e-300)))
                   for g, r in zip(got, ref))
    _row("score", before, after, diff)
    if args.fit_n:
        _fit_row(args)


def _fit_row(args):
    rng = np.random.default_rng(1)
    X = rng.normal(0.0, 0.3, (args.fit_n, 5))
    y, _ = make_data(args.fit_n, args.power, args.phi, seed=2)
    y *= np.exp(X @ np.array([0.2, -0.1, 0.3, 0.0, 0.1]))  # (a mean that depends on X)
    series = (Tweedie.log_likelihood, Tweedie.scale_score)
    scipy_path = (lambda self, y, mu, var_weights=1.0, scale=1.0: scipy_loglike(
                      self.power, y, mu, scale / np.asarray(var_weights, dtype=float)),
                  lambda self, y, mu, var_weights, scale: scipy_score(
                      self.power, y, mu, scale / np.asarray(var_weights, dtype=float)))
    before, after = [], []
    try:
        for _ in range(args.repeats):
            Tweedie.log_likelihood, Tweedie.scale_score = scipy_path
            t, ref = _timed(lambda: TweedieRegression(power=args.power, scale="ml").fit(X, y))
            before.append(t)
            Tweedie.log_likelihood, Tweedie.scale_score = series
            t, got = _timed(lambda: TweedieRegression(power=args.power, scale="ml").fit(X, y))
            after.append(t)
    finally:
        Tweedie.log_likelihood, Tweedie.scale_score = series
    diff = max(abs(got.log_likelihood_ / ref.log_likelihood_ - 1), abs(got.scale_ / ref.scale_ - 1))
    _row("fit", before, after, diff)


if __name__ == "__main__":
    main()
