"""The GLM families (distribution x link) against statsmodels' families, scipy's
distributions, mpmath and numerical derivatives."""
import warnings

import mpmath
import numpy as np
import pytest
import statsmodels.api as sm
from scipy import integrate, stats
from scipy.special import digamma
from statsmodels.genmod.families import links as sml

from problin._core.model.distributions import (
    DISTRIBUTIONS, Binomial, Tweedie, binomial_proportions, make_distribution)
from problin._core.model.exponential_family import ExponentialFamily, Family, make_family
from problin._core.model.families import BernoulliLogit, BernoulliProbit
from problin._core.model.links import LINKS, BinaryLink, make_link

RNG = np.random.default_rng(20261129)
N = 12

SM_LINKS = {"identity": sml.Identity, "log": sml.Log, "logit": sml.Logit,
            "probit": sml.Probit, "cloglog": sml.CLogLog, "loglog": sml.LogLog,
            "inverse": sml.InversePower, "inverse_squared": sml.InverseSquared,
            "sqrt": sml.Sqrt}


def _sm_family(name, link=None):
    link = SM_LINKS[link]() if link else None
    with warnings.catch_warnings():  # (statsmodels warns of links it finds unusual)
        warnings.simplefilter("ignore")
        return {"gaussian": lambda: sm.families.Gaussian(link),
                "poisson": lambda: sm.families.Poisson(link),
                "gamma": lambda: sm.families.Gamma(link),
                "inverse_gaussian": lambda: sm.families.InverseGaussian(link),
                "tweedie": lambda: sm.families.Tweedie(link, var_power=1.4),
                "binomial": lambda: sm.families.Binomial(link),
                "bernoulli": lambda: sm.families.Binomial(link),
                "negative_binomial": lambda: sm.families.NegativeBinomial(link, alpha=0.7),
                }[name]()


def _ours(name):
    return make_distribution(name, **{"tweedie": {"power": 1.4},
                                      "negative_binomial": {"alpha": 0.7}}.get(name, {}))


def _sample(name, mu, rng=RNG):
    """Valid responses with means ``mu``, and the trials of the binomial."""
    trials = rng.integers(1, 9, size=mu.size).astype(float)
    y = {"gaussian": lambda: mu + rng.normal(size=mu.size),
         "poisson": lambda: rng.poisson(mu).astype(float),
         "negative_binomial": lambda: rng.poisson(rng.gamma(1 / 0.7, 0.7 * mu)).astype(float),
         "gamma": lambda: rng.gamma(2.0, mu / 2.0),
         "inverse_gaussian": lambda: rng.wald(mu, 2.0),
         "tweedie": lambda: rng.poisson(0.8, mu.size) * rng.gamma(2.0, mu, mu.size),
         "binomial": lambda: rng.binomial(trials.astype(int), mu) / trials,
         "bernoulli": lambda: rng.binomial(1, mu).astype(float)}[name]()
    return y, trials


def _eta(family, size=N, rng=RNG):
    """Linear predictors whose means are valid for ``family``."""
    dist, link = family.distribution, family.link_function
    if isinstance(link, BinaryLink) or dist.name == "gaussian" and link.name != "inverse":
        return rng.normal(0.0, 1.0, size)
    return link(rng.uniform(0.5, 3.0, size))  # positive means


COMBOS = [(d, link) for d, kind in DISTRIBUTIONS.items() for link in kind.links]


@pytest.mark.parametrize("name", sorted(DISTRIBUTIONS))
def test_distribution_matches_statsmodels(name):
    dist, ref = _ours(name), _sm_family(name)
    mu = RNG.uniform(0.05, 0.95, N) if isinstance(dist, Binomial) else RNG.uniform(0.3, 4, N)
    y, trials = _sample(name, mu)
    w = RNG.uniform(0.5, 2.0, N)
    scale = 1.0 if dist.fixed_dispersion else 1.7
    np.testing.assert_allclose(dist.variance(mu), ref.variance(mu), rtol=1e-14)
    np.testing.assert_allclose(dist.variance_derivative(mu), ref.variance.deriv(mu), rtol=1e-14)
    if isinstance(dist, Binomial):  # statsmodels' binomial: n trials, y a proportion
        ref.n = trials if name == "binomial" else 1.0
        expected_ll = ref.loglike_obs(y, mu, 1.0)
        np.testing.assert_allclose(dist.log_likelihood(y, mu, trials if name == "binomial"
                                                       else 1.0), expected_ll, rtol=1e-12)
        np.testing.assert_allclose(trials * dist.unit_deviance(y, mu) if name == "binomial"
                                   else dist.unit_deviance(y, mu),
                                   ref._resid_dev(y, mu), rtol=1e-12, atol=1e-13)
        return
    np.testing.assert_allclose(dist.unit_deviance(y, mu), ref._resid_dev(y, mu),
                               rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(dist.log_likelihood(y, mu, w, scale),
                               ref.loglike_obs(y, mu, w, scale), rtol=1e-12)


def test_log_likelihoods_are_normalised_densities():
    """Independently of statsmodels: the Tweedie's point mass at 0 and its series
    density on y > 0 add up to 1 (quadrature), and the NB2 and binomial match scipy."""
    dist, mu, phi = Tweedie(1.4), 1.3, 0.9
    mass0 = np.exp(dist.log_likelihood(np.array([0.0]), mu, 1.0, phi))[0]
    density, _ = integrate.quad(
        lambda t: np.exp(dist.log_likelihood(np.array([t]), mu, 1.0, phi))[0], 0, np.inf,
        epsabs=1e-13, epsrel=1e-12, limit=200)
    assert mass0 + density == pytest.approx(1.0, abs=1e-9)
    mean, _ = integrate.quad(
        lambda t: t * np.exp(dist.log_likelihood(np.array([t]), mu, 1.0, phi))[0], 0, np.inf,
        epsabs=1e-13, epsrel=1e-12, limit=200)
    assert mean == pytest.approx(mu, rel=1e-9)
    k = np.arange(0.0, 9.0)
    nb = make_distribution("negative_binomial", alpha=0.4)
    np.testing.assert_allclose(nb.log_likelihood(k, 2.5),
                               stats.nbinom(1 / 0.4, 1 / (1 + 0.4 * 2.5)).logpmf(k), rtol=1e-13)
    binom = make_distribution("binomial")
    np.testing.assert_allclose(binom.log_likelihood(k / 8, 0.3, 8.0),
                               stats.binom(8, 0.3).logpmf(k), rtol=1e-13)


_MP_INVERSE = {
    "identity": lambda x: x, "log": mpmath.exp, "logit": lambda x: 1 / (1 + mpmath.exp(-x)),
    "probit": lambda x: mpmath.ncdf(x), "cloglog": lambda x: -mpmath.expm1(-mpmath.exp(x)),
    "loglog": lambda x: mpmath.exp(-mpmath.exp(-x)), "inverse": lambda x: 1 / x,
    "inverse_squared": lambda x: 1 / mpmath.sqrt(x), "sqrt": lambda x: x * x}


@pytest.mark.parametrize("name", sorted(LINKS))
def test_link_inverse_and_derivatives_match_mpmath(name):
    link = make_link(name)
    eta = np.array([0.3, 0.9, 2.2]) if link.eta_low == 0 or name == "inverse" else \
        np.array([-3.0, -0.4, 0.7, 2.5])
    mpmath.mp.dps = 40
    f = _MP_INVERSE[name]
    mu, d1, d2 = link.inverse_derivatives(eta)
    for i, x in enumerate(eta):
        x = mpmath.mpf(float(x))
        for got, k in ((mu[i], 0), (d1[i], 1), (d2[i], 2)):
            want = float(mpmath.diff(f, x, k)) if k else float(f(x))
            assert got == pytest.approx(want, rel=1e-13, abs=1e-300)
    # (the round trip is as well conditioned as g at mu: cloglog at eta = 2.5 has
    # 1 - mu = 5e-6, so mu's rounding moves eta by ~1e-13 relatively)
    np.testing.assert_allclose(link(mu), eta, rtol=1e-11)
    np.testing.assert_allclose(link.derivative(mu), 1 / d1, rtol=1e-11)  # (as the round trip)
    keep = np.abs(eta) < 2  # (statsmodels' cloglog g'(mu) loses digits as 1 - mu -> 0)
    np.testing.assert_allclose(link.derivative(mu[keep]), SM_LINKS[name]().deriv(mu[keep]),
                               rtol=1e-12)


_MP_LOGS = {  # (log F, log(1 - F)) in closed forms that keep their digits at any eta
    "logit": (lambda x: -mpmath.log1p(mpmath.exp(-x)), lambda x: -mpmath.log1p(mpmath.exp(x))),
    "probit": (lambda x: _mp_log_ncdf(x), lambda x: _mp_log_ncdf(-x)),
    "cloglog": (lambda x: _mp_log1mexp(mpmath.exp(x)), lambda x: -mpmath.exp(x)),
    "loglog": (lambda x: -mpmath.exp(-x), lambda x: _mp_log1mexp(mpmath.exp(-x)))}


_MP_DENSITY = {"logit": lambda x: mpmath.exp(-x) / (1 + mpmath.exp(-x)) ** 2,
               "probit": mpmath.npdf, "cloglog": lambda x: mpmath.exp(x - mpmath.exp(x)),
               "loglog": lambda x: mpmath.exp(-x - mpmath.exp(-x))}


def _mp_log_ncdf(x):
    return mpmath.log(mpmath.ncdf(x)) if x < 0 else mpmath.log1p(-mpmath.ncdf(-x))


def _mp_log1mexp(u):
    return mpmath.log(-mpmath.expm1(-u)) if u < 1 else mpmath.log1p(-mpmath.exp(-u))


@pytest.mark.parametrize("name", ["logit", "probit", "cloglog", "loglog"])
def test_binary_link_logs_match_mpmath_in_the_tails(name):
    link = make_link(name)
    mpmath.mp.dps = 50
    eta = np.array([-30.0, -6.0, -0.3, 0.0, 1e-6, 0.8, 3.5, 30.0])
    parts = link.log_cdf(eta), link.log_sf(eta)
    fisher = link.fisher(eta)
    for i, x in enumerate(eta):
        x = mpmath.mpf(float(x))
        for side, fn in enumerate(_MP_LOGS[name]):
            for k in range(3):
                want = float(mpmath.diff(fn, x, k)) if k else float(fn(x))
                assert parts[side][k][i] == pytest.approx(want, rel=1e-12, abs=1e-300), \
                    (side, k, float(x))
        log_f, log_s = (fn(x) for fn in _MP_LOGS[name])
        d1 = _MP_DENSITY[name](x)
        want = float(d1 * d1 / mpmath.exp(log_f + log_s))
        assert fisher[i] == pytest.approx(want, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("name,link", COMBOS)
def test_derivatives_match_numerical_and_statsmodels_weights(name, link):
    """g and observed h against central differences of the loss and of g; the loss is
    half the deviance; the expected h is the observed h at y = mu (it is linear in y)
    and statsmodels' IRLS weight; observed = expected for canonical links."""
    family = make_family(_ours(name), link)
    eta = _eta(family)
    mu = family.mean(eta)
    y, _ = _sample(name, mu)
    s = RNG.uniform(0.5, 2.0, N)
    loss, g, h = family.derivatives(y, eta, s, "observed")
    assert loss == pytest.approx(family.deviance(y, mu, s) / 2, rel=1e-12)
    step = 1e-5 * np.maximum(1.0, np.abs(eta))
    up, down = family.derivatives(y, eta + step, s), family.derivatives(y, eta - step, s)
    rows = lambda e: 0.5 * s * family.unit_deviance(y, family.mean(e))  # noqa: E731
    np.testing.assert_allclose(g, (rows(eta + step) - rows(eta - step)) / (2 * step),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(h, (up[1] - down[1]) / (2 * step), rtol=1e-6, atol=1e-8)
    _, _, fisher = family.derivatives(y, eta, s, "expected")
    np.testing.assert_allclose(family.derivatives(mu, eta, s, "observed")[2], fisher,
                               rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(fisher / s, _sm_family(name, link).weights(mu), rtol=1e-10)
    if family.canonical:
        np.testing.assert_allclose(h, fisher, rtol=1e-12, atol=1e-15)


def test_curvature_lipschitz_bounds_hold():
    """|d log h / d eta| <= L where a family declares L (both informations)."""
    for name, link in COMBOS:
        family = make_family(_ours(name), link)
        if family.curvature_lipschitz is None:
            continue
        eta = _eta(family, 40)
        y, _ = _sample(name, family.mean(eta))
        for info in ("observed", "expected"):
            lo = np.log(family.derivatives(y, eta - 1e-6, None, info)[2])
            hi = np.log(family.derivatives(y, eta + 1e-6, None, info)[2])
            assert np.all(np.abs(hi - lo) / 2e-6 <= family.curvature_lipschitz + 1e-6), \
                (name, link, info)


def test_observed_convexity_is_declared_where_it_holds():
    """Where a family says its loss is convex in eta, the observed h is >= 0 at valid y
    drawn far from the means (and for the others some y and eta make it negative)."""
    for name, link in COMBOS:
        family = make_family(_ours(name), link)
        eta = _eta(family, 200)
        mu = family.mean(eta)
        y, _ = _sample(name, mu * RNG.choice([0.05, 1.0, 20.0], 200)
                       if not isinstance(family.distribution, Binomial) else mu)
        h = family.derivatives(y, eta, None, "observed")[2]
        if family.observed_convex:
            assert np.all(h >= 0), (name, link)
        elif name not in ("binomial", "bernoulli"):
            assert np.any(h < 0), (name, link)
    assert BernoulliLogit().observed_convex and BernoulliProbit().observed_convex


@pytest.mark.parametrize("name,link,eta", [
    ("gamma", "inverse", [1.0, 0.0, -0.5]), ("poisson", "identity", [1.0, -1e-3, 2.0]),
    ("inverse_gaussian", "inverse_squared", [0.5, -1.0, 1.0]),
    ("poisson", "sqrt", [1.0, -0.5, 1.0]), ("poisson", "log", [1.0, 800.0, 0.0]),
    ("gamma", "log", [1.0, -800.0, 0.0]), ("binomial", "cloglog", [1.0, 800.0, 0.0])])
def test_loss_is_infinite_outside_the_valid_range(name, link, eta):
    family = make_family(_ours(name), link)
    y = np.array([1.0, 0.0 if name in ("binomial", "poisson") else 1.0, 1.0])
    for info in ("observed", "expected"):  # (no RuntimeWarning: the suite makes them errors)
        loss, g, h = family.derivatives(y, np.array(eta), None, info)
        assert loss == np.inf
        assert np.all(np.isfinite(g)) and np.all(np.isfinite(h))


def test_limits_stay_finite_where_a_row_saturates():
    """A zero count at a vanishing mean, a success at F = 1: finite loss, exact limits."""
    poisson = make_family("poisson")
    loss, g, h = poisson.derivatives(np.array([0.0, 2.0]), np.array([-800.0, np.log(2.0)]))
    assert loss == pytest.approx(0.0, abs=1e-15) and g[0] == 0.0 and h[0] == 0.0
    cloglog = make_family("bernoulli", "cloglog")
    loss, g, _ = cloglog.derivatives(np.array([1.0, 0.0]), np.array([800.0, -800.0]))
    assert loss == 0.0 and np.all(g == 0.0)
    tweedie = make_family("tweedie", power=1.5)
    loss, g, h = tweedie.derivatives(np.array([0.0]), np.array([-2000.0]))
    assert loss == 0.0 and g[0] == 0.0 and h[0] == 0.0


@pytest.mark.parametrize("name,y,message", [
    ("poisson", [1.0, -1.0, 2.0, -3.0], r"y >= 0.*y\[1\] = -1.*y\[3\] = -3 \(2 rows\)"),
    ("negative_binomial", [1.0, np.nan], r"y\[1\] = nan"),
    ("gamma", [1.0, 0.0], r"y > 0.*y\[1\] = 0"),
    ("inverse_gaussian", [-2.0], r"y > 0.*y\[0\] = -2"),
    ("tweedie", [0.0, -1e-3], r"y\[1\] = -0.001"),
    ("binomial", [0.5, 1.5], r"0 <= y <= 1.*y\[1\] = 1.5"),
    ("bernoulli", [1.0, 0.5], r"\{0, 1\}.*y\[1\] = 0.5"),
    ("gaussian", [1.0, np.inf], r"y\[1\] = inf")])
def test_bad_y_is_named(name, y, message):
    with pytest.raises(ValueError, match=message):
        make_family(name).check_y(np.array(y))


def test_bad_names_links_powers_and_trials():
    with pytest.raises(ValueError, match=r"'logit' link is not defined for the poisson "
                                         r"family; its links are log, identity, sqrt"):
        make_family("poisson", "logit")
    with pytest.raises(ValueError, match="unknown family 'poison'"):
        make_family("poison")
    with pytest.raises(ValueError, match=r"strictly between 1 and 2, got 2.5"):
        make_family("tweedie", power=2.5)
    with pytest.raises(ValueError, match=r"trials must be positive: trials\[1\] = 0"):
        binomial_proportions(np.array([1.0, 0.0]), np.array([2.0, 0.0]))
    with pytest.raises(ValueError, match=r"row 0: 3 of 2"):
        binomial_proportions(np.array([3.0, 0.0]), np.array([2.0, 1.0]))
    fam = make_family("gamma")
    assert fam.link_function.name == "inverse" and fam.canonical
    assert make_family("tweedie", power=1.2).link_function.name == "log"


def test_bernoulli_classifier_families_are_implementations():
    """The tuned binary kernels are ExponentialFamily implementations and agree with
    the composition's log-space binary path."""
    y = RNG.integers(0, 2, 30).astype(float)
    eta = RNG.normal(0, 3, 30)
    w = RNG.uniform(0.5, 2, 30)
    for tuned, link in ((BernoulliLogit(), "logit"), (BernoulliProbit(), "probit")):
        composed = make_family("bernoulli", link)
        assert isinstance(tuned, ExponentialFamily) and isinstance(tuned, Family)
        for info in ("observed", "expected"):
            a, b = tuned.derivatives(y, eta, w, info), composed.derivatives(y, eta, w, info)
            assert a[0] == pytest.approx(b[0], rel=1e-13)
            np.testing.assert_allclose(a[1], b[1], rtol=1e-12, atol=1e-300)
            np.testing.assert_allclose(a[2], b[2], rtol=1e-12, atol=1e-300)
        assert tuned.deviance_from_eta(y, eta, w) == pytest.approx(2 * a[0], rel=1e-14)
        mid = np.abs(eta) < 3  # (from the means, as far as their rounding allows)
        assert tuned.deviance(y[mid], tuned.mean(eta[mid]), w[mid]) == pytest.approx(
            composed.deviance_from_eta(y[mid], eta[mid], w[mid]), rel=1e-12)


def _sm_glm(name, link, y, X, offset=None, var_weights=None, scale=None):
    with warnings.catch_warnings():  # (its DomainWarning for the Gamma's inverse link)
        warnings.simplefilter("ignore")
        model = sm.GLM(y, X, family=_sm_family(name, link), offset=offset,
                       var_weights=var_weights)
    return model.fit(scale=scale, tol=1e-13)


@pytest.mark.parametrize("name,link", [("poisson", "log"), ("gamma", "log"),
                                       ("tweedie", "log"), ("binomial", "probit"),
                                       ("gamma", "inverse"), ("gaussian", "identity")])
def test_null_model_matches_statsmodels_intercept_only_fit(name, link):
    family = make_family(_ours(name), link)
    eta = _eta(family, 40)
    y, _ = _sample(name, family.mean(eta))
    offset = RNG.uniform(-0.2, 0.2, 40) if link != "inverse" else RNG.uniform(0, 0.1, 40)
    w = RNG.uniform(0.5, 2, 40)
    null = family.null_model(y, w, offset)
    ref = _sm_glm(name, link, y, np.ones((40, 1)), offset, w)
    assert null.converged
    assert null.intercept == pytest.approx(ref.params[0], rel=1e-9, abs=1e-10)
    np.testing.assert_allclose(null.mean, ref.mu, rtol=1e-9)
    plain = family.null_model(y, w)
    np.testing.assert_allclose(plain.mean, np.average(y, weights=w), rtol=1e-14)


def test_dispersion_estimates_match_statsmodels_and_the_ml_score():
    X = np.column_stack([np.ones(40), RNG.normal(size=40)])
    family = make_family("gamma", "log")
    y, _ = _sample("gamma", np.exp(0.3 + 0.4 * X[:, 1]))
    v = RNG.uniform(0.5, 2, 40)
    for method, sm_scale in (("pearson", None), ("deviance", "dev")):
        ref = _sm_glm("gamma", "log", y, X, var_weights=v, scale=sm_scale)
        got = family.dispersion(y, ref.mu, v, None, ref.df_resid, method)
        # (statsmodels' scale is from its last iteration's means; its statistics at ref.mu)
        stat = ref.pearson_chi2 if method == "pearson" else ref.deviance
        assert got == pytest.approx(stat / ref.df_resid, rel=1e-12)
        assert got == pytest.approx(ref.scale, rel=1e-6)
    mu = ref.mu
    phi = family.dispersion(y, mu, v, None, None, "ml")
    k = v / phi  # the Gamma shape: the score in 1/phi vanishes at the maximum
    score = np.sum(v * (np.log(k * y / mu) + 1 - y / mu - digamma(k)))
    assert abs(score) < 1e-8 * np.sum(v)
    gauss = make_family("gaussian")
    assert gauss.dispersion(y, mu, v, None, None, "ml") == pytest.approx(
        np.sum(v * (y - mu) ** 2) / 40, rel=1e-14)
    assert make_family("poisson").dispersion(y, mu, v, None, 38, "pearson") == 1.0
    assert family.log_likelihood(y, mu, v, None, ref.scale) == pytest.approx(ref.llf, rel=1e-12)
    assert family.pearson_chi2(y, mu, v) == pytest.approx(ref.pearson_chi2, rel=1e-12)
    assert family.deviance(y, mu, v) == pytest.approx(ref.deviance, rel=1e-12)
