"""The Tweedie density's series summed in numpy (``_core/model/tweedie_series.py``).

References: the series ``W = sum_j x^j / (j! Gamma(rho j))`` summed term by term in
mpmath at 50 digits (outward from its largest term until the terms fall below 1e-40 of
it), with its moments ``E[j]``, ``Var[j]`` under ``W_j / W``; scipy's
``log_wright_bessel`` (statsmodels' path) where it is accurate; statsmodels' Tweedie
``loglike`` (``eql=False``) at a fitted TweedieRegression's means and scale; the
derivatives in ``log scale`` by central differences of mpmath's log-likelihood.
"""
import mpmath
import numpy as np
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose
from scipy import special

from problin import TweedieRegression
from problin._core.model.distributions import Tweedie
from problin._core.model.tweedie_series import (
    tweedie_log_likelihood,
    tweedie_scale_derivatives,
    tweedie_series,
    wright_series,
)

mpmath.mp.dps = 50


def _mp_series(rho, log_x):
    """``(log W, E[j], Var[j])`` of the series, summed outward from its largest term."""
    rho, log_x = mpmath.mpf(rho), mpmath.mpf(log_x)

    def term(j):
        return j * log_x - mpmath.loggamma(j + 1) - mpmath.loggamma(rho * j)

    j = max(1, int(mpmath.nint(mpmath.exp((log_x - rho * mpmath.log(rho)) / (1 + rho)))))
    while j > 1 and term(j - 1) > term(j):
        j -= 1
    while term(j + 1) > term(j):
        j += 1
    top, sums = term(j), [mpmath.mpf(0)] * 3
    for steps in (range(j, 0, -1), range(j + 1, 10 ** 9)):
        for i in steps:  # (moments about the largest term: exact where one term dominates)
            w = mpmath.exp(term(i) - top)
            sums = [sums[0] + w, sums[1] + w * (i - j), sums[2] + w * (i - j) ** 2]
            if w < mpmath.mpf("1e-40"):
                break
    offset = sums[1] / sums[0]
    return top + mpmath.log(sums[0]), j + offset, sums[2] / sums[0] - offset * offset


def _mp_integral(rho, log_x, j_max):
    """``(log W, E[j], Var[j])`` where the terms span millions of ``j``: the sum equals
    the integral of the terms over a real ``j`` up to terms exponentially small in the
    peak's width (Euler-Maclaurin), the integral by mpmath's quadrature."""
    rho, log_x = mpmath.mpf(rho), mpmath.mpf(log_x)

    def term(j):
        return j * log_x - mpmath.loggamma(j + 1) - mpmath.loggamma(rho * j)

    with mpmath.workdps(30):  # (a quadrature at 50 digits costs a second more)
        top = mpmath.findroot(lambda j: log_x - mpmath.digamma(j + 1)
                              - rho * mpmath.digamma(rho * j), mpmath.mpf(j_max))
        width = 40 * mpmath.sqrt(top / (1 + rho))
        peak = term(top)
        moments = [mpmath.quad(lambda j, k=k: (j - top) ** k * mpmath.exp(term(j) - peak),
                               [top - width, top, top + width]) for k in range(3)]
        mean = moments[1] / moments[0]
        return (float(peak + mpmath.log(moments[0])), float(top + mean),
                float(moments[2] / moments[0] - mean ** 2))


def _mp_log_density(p, y, mu, phi):
    p, y, mu, phi = (mpmath.mpf(v) for v in (p, y, mu, phi))
    rho = (2 - p) / (p - 1)
    log_x = rho * (mpmath.log(y) - mpmath.log((p - 1) * phi)) - mpmath.log((2 - p) * phi)
    log_w, mean, var = _mp_series(rho, log_x)
    exponent = (y * mu ** (1 - p) / (1 - p) - mu ** (2 - p) / (2 - p)) / phi
    return exponent + log_w - mpmath.log(y), log_w, mean, var


# (p, y, phi): p near 1 and 2, y from 1e-8 to 1e4, phi from 0.01 to 30; j_max from 1e-9
# (one term) to 9e5 (2,048-term windows), x beyond the doubles (p = 1.01: ~e^1400) and
# below them (p = 1.01, y = 1e-8: scipy's path gives -inf there).
_GRID = [(p, y, phi) for p in (1.01, 1.1, 1.5, 1.9, 1.99) for y, phi in (
    (1e-8, 0.01), (1e-8, 30.0), (0.03, 1.0), (1.0, 0.1), (1.0, 1.0), (40.0, 30.0),
    (40.0, 1.0), (1e4, 1.0))] + [(1.01, 1e4, 0.01), (1.1, 1e4, 0.01), (1.5, 1e4, 0.01)]


@pytest.mark.parametrize("p", [1.01, 1.1, 1.5, 1.9, 1.99])
def test_log_density_and_moments_match_the_mpmath_series(p):
    rows = [(y, phi) for q, y, phi in _GRID if q == p]
    y, phi = np.array(rows).T
    mu = np.full(y.size, 2.0)
    ours = tweedie_log_likelihood(p, y, mu, phi)
    sums = tweedie_series(p, y, phi, moments=True)
    ref = np.array([[float(v) for v in _mp_log_density(p, yi, 2.0, fi)] for yi, fi in zip(y, phi)])
    assert_allclose(ours, ref[:, 0], rtol=1e-12)
    assert_allclose(sums.log_sum, ref[:, 1], rtol=1e-13)
    assert_allclose(sums.mean, ref[:, 2], rtol=1e-12)
    # Var[j] is a second moment of the terms' weights, each of whose logarithms carries
    # the rounding of its size, ~|log W| eps (1e-8 of Var at j_max ~ 1e6, p = 1.01);
    # below 1e-290 it is the floor of the terms, not a number.
    assert_allclose(sums.variance, ref[:, 3], atol=1e-290,
                    rtol=1e-12 + 64 * np.finfo(float).eps * np.abs(ref[:, 1]).max())


def test_extremes_of_the_series_itself():
    """log x = -inf (a row of weight 0): log W = -inf, E[j] = 1, Var[j] = 0; NaN stays NaN;
    a row beyond 8,192 terms (Laplace's method) against mpmath's integral of the terms,
    with a row of a few terms in the same call."""
    got = wright_series(1.0, np.array([-np.inf, np.nan, 0.0]), moments=True)
    assert got.log_sum[0] == -np.inf and (got.mean[0], got.variance[0]) == (1.0, 0.0)
    assert np.isnan(got.log_sum[1]) and np.isnan(got.mean[1])
    rho, j_max = 0.5, 1e6  # (14,000 terms: Laplace's method with its next order)
    log_x = (1 + rho) * np.log(j_max) + rho * np.log(rho)
    far = wright_series(rho, np.array([log_x, 0.0]), moments=True)
    ref_log_w, ref_mean, ref_var = _mp_integral(rho, log_x, j_max)
    assert far.log_sum[0] == pytest.approx(ref_log_w, rel=1e-14)
    assert far.mean[0] == pytest.approx(ref_mean, rel=1e-13)
    assert far.variance[0] == pytest.approx(ref_var, rel=1e-8)  # (O(1 / j*): the
    # curvature of the dispersion's search, which steers its steps, not its root)
    assert far.log_sum[1] == pytest.approx(float(_mp_series(rho, 0.0)[0]), rel=1e-14)


def _scipy_log_density(p, y, mu, phi):
    """statsmodels' path: ``log_wright_bessel`` of ``x`` as a double."""
    rho = (2 - p) / (p - 1)
    out = (np.where(y > 0, y * mu ** (1 - p) / (1 - p), 0.0) - mu ** (2 - p) / (2 - p)) / phi
    pos = y > 0
    x = ((p - 1) * phi[pos] / y[pos]) ** (-rho) / ((2 - p) * phi[pos])
    out[pos] += special.log_wright_bessel(rho, 0.0, x) - np.log(y[pos])
    return out


@pytest.mark.parametrize("p", [1.3, 1.5, 1.8])
def test_log_likelihood_equals_the_scipy_path_on_random_rows(p):
    """To 1e-12 at p = 1.5 and 1.8; at p = 1.3 scipy's ``log_wright_bessel`` loses up to
    1e-10 for ``x`` in the thousands, where mpmath sides with the series."""
    rng = np.random.default_rng(int(p * 10))
    n = 3000
    mu = np.exp(rng.normal(0.0, 1.0, n))
    phi = np.exp(rng.uniform(-1.0, 1.5, n))
    y = np.where(rng.random(n) < 0.4, 0.0, rng.gamma(1.5, mu / 1.5) * np.exp(rng.normal(
        0, 1.0, n)))
    ours = Tweedie(p).log_likelihood(y, mu, 1.0 / phi, 1.0)
    scipy_path = _scipy_log_density(p, y, mu, phi)
    differ = ~np.isclose(ours, scipy_path, rtol=1e-12, atol=1e-13)
    assert p < 1.5 or not differ.any()
    for i in np.flatnonzero(differ)[:6]:
        ref = float(_mp_log_density(p, y[i], mu[i], phi[i])[0])
        assert ours[i] == pytest.approx(ref, rel=1e-13)
        assert scipy_path[i] != pytest.approx(ref, rel=1e-12)


def test_scale_derivatives_match_central_differences_of_mpmath():
    p, y, mu, v = 1.4, np.array([0.0, 0.2, 1.7, 9.0]), np.array([0.8, 1.1, 1.5, 4.0]), \
        np.array([1.0, 2.0, 0.5, 1.0])
    scale = 1.3

    def total(t):
        phi = mpmath.exp(t) / np.asarray(v, dtype=object)
        return [(-(mu[i] ** (2 - p) / (2 - p)) / phi[i] if y[i] == 0 else
                 _mp_log_density(p, y[i], mu[i], phi[i])[0]) for i in range(y.size)]

    t, h = mpmath.log(scale), mpmath.mpf("1e-12")
    lo, mid, hi = total(t - h), total(t), total(t + h)
    s, ds = tweedie_scale_derivatives(p, y, mu, v, scale)
    assert_allclose(s, [float((b - a) / (2 * h)) for a, b in zip(lo, hi)], rtol=1e-11)
    assert_allclose(ds, [float((b - 2 * m + a) / h ** 2) for a, m, b in zip(lo, mid, hi)],
                    rtol=1e-9)


def test_fitted_log_likelihood_equals_statsmodels_loglike():
    rng = np.random.default_rng(3)
    n = 400
    X = rng.normal(size=(n, 3))
    mu = np.exp(0.2 + X @ np.array([0.3, -0.2, 0.1]))
    counts = rng.poisson(mu ** 0.6 / 0.9)  # compound Poisson-Gamma, p = 1.4
    y = np.array([rng.gamma(1.5, 0.6 * m ** 0.4, k).sum() for m, k in zip(mu, counts)])
    v = rng.uniform(0.5, 2.0, n)
    ours = TweedieRegression(power=1.4).fit(X, y, var_weights=v)
    family = sm.families.Tweedie(sm.families.links.Log(), var_power=1.4, eql=False)
    ref = family.loglike(y, ours.predict(X), var_weights=v, scale=ours.scale_)
    assert ours.log_likelihood_ == pytest.approx(ref, rel=1e-8)
