"""The GLM regressors' maximum-likelihood dispersion, ``scale="ml"`` (issue 32).

References, each computed independently of problin's search: the Gamma's likelihood
equation in the shape ``nu = 1 / scale`` (MASS's ``gamma.shape`` convention, with prior
weights: ``sum f v (log(v nu) - psi(v nu)) = D / 2``) solved by ``brentq`` at
statsmodels' fitted means; statsmodels' ``family.loglike(endog, mu, var_weights,
freq_weights, scale)`` maximised over the scale by ``scipy.optimize`` (a maximiser of a
flat function: located to ~1e-8, hence the looser tolerance); ``scipy.stats.gamma.fit``
with ``floc=0`` for the unweighted intercept-only model; the closed forms
``sum f v d / sum f`` of the Gaussian and the inverse Gaussian. Standard errors, the
log-likelihood, AIC and BIC against statsmodels' ``GLM.fit(scale=phi)`` at that scale.
"""
import numpy as np
import pytest
import scipy.sparse as sp
import statsmodels.api as sm
from numpy.testing import assert_allclose
from scipy import optimize, special, stats
from tests.glm.test_glm_regression import _scotland, _sm_fit

from problin import (
    GLM,
    GammaRegression,
    InverseGaussianRegression,
    NegativeBinomialRegression,
    TweedieRegression,
)
from problin._core.model.dispersion import ml_scale_search
from problin._core.model.distributions import Gaussian

F, L = sm.families, sm.families.links


def _weights(n, seed=1):
    rng = np.random.default_rng(seed)
    return rng.integers(1, 4, n).astype(float), rng.uniform(0.5, 2.0, n)


def _argmax_loglike(family, y, mu, v, f, start):
    """statsmodels' log-likelihood maximised over log(scale) at the means ``mu``."""
    found = optimize.minimize_scalar(
        lambda t: -family.loglike(y, mu, var_weights=v, freq_weights=f, scale=np.exp(t)),
        bracket=(np.log(start) - 0.5, np.log(start) + 0.5), tol=1e-12)
    return float(np.exp(found.x))


def test_gamma_ml_scale_solves_the_shape_equation_with_weights():
    X, y = _scotland()
    f, v = _weights(y.size)
    ours = GammaRegression(scale="ml").fit(X, y, sample_weight=f, var_weights=v)
    ref = _sm_fit(y, X, F.Gamma(L.Log()), freq_weights=f, var_weights=v)
    mu, half_deviance = ref.mu, ref.deviance / 2  # (statsmodels' deviance: sum f v d)

    def shape_equation(nu):
        return np.sum(f * v * (np.log(v * nu) - special.digamma(v * nu))) - half_deviance

    nu = optimize.brentq(shape_equation, 1.0, 1e6, xtol=1e-14, rtol=1e-15)
    assert ours.scale_ == pytest.approx(1 / nu, rel=1e-9)
    assert ours.scale_ == pytest.approx(
        _argmax_loglike(F.Gamma(), y, mu, v, f, 1 / nu), rel=1e-6)
    # the inference at that scale: statsmodels' GLM with the scale given
    at = _sm_fit(y, X, F.Gamma(L.Log()), freq_weights=f, var_weights=v,
                 scale=float(ours.scale_))
    assert_allclose(ours.summary()["std_err"], at.bse, rtol=1e-6)
    assert ours.log_likelihood_ == pytest.approx(at.llf, rel=1e-9)
    assert ours.aic_ == pytest.approx(at.aic, rel=1e-9)
    assert ours.bic_ == pytest.approx(at.bic_llf, rel=1e-9)
    assert ours.summary().attrs["statistic"] == "t"
    note = " ".join(str(ours.summary_text()).split())  # (the notes are wrapped)
    assert "the dispersion is estimated by maximum likelihood (scale" in note


def test_gamma_ml_scale_of_the_intercept_only_model_is_scipys_shape_fit():
    y = np.random.default_rng(5).gamma(2.5, 3.0, 50)
    ours = GammaRegression(fit_intercept=False, scale="ml").fit(np.ones((50, 1)), y)
    shape, _, _ = stats.gamma.fit(y, floc=0)
    assert ours.coef_[0] == pytest.approx(np.log(y.mean()), rel=1e-10)
    assert ours.scale_ == pytest.approx(1 / shape, rel=1e-9)
    assert ours.log_likelihood_ == pytest.approx(
        np.sum(stats.gamma.logpdf(y, shape, scale=y.mean() / shape)), rel=1e-10)


@pytest.mark.parametrize("est, family", [
    (GLM("gaussian", "log", scale="ml"), F.Gaussian(L.Log())),
    (InverseGaussianRegression(scale="ml"), F.InverseGaussian(L.Log()))])
def test_gaussian_and_inverse_gaussian_ml_scale_is_the_mean_deviance(est, family):
    X, y = _scotland()
    f, v = _weights(y.size, 2)
    ours = est.fit(X, y, sample_weight=f, var_weights=v)
    mu = ours.predict(X)
    closed = np.sum(f * v * family.resid_dev(y, mu) ** 2) / np.sum(f)  # sum f v d / sum f
    assert ours.scale_ == pytest.approx(closed, rel=1e-12)
    ref = _sm_fit(y, X, family, freq_weights=f, var_weights=v)
    assert ours.scale_ == pytest.approx(
        _argmax_loglike(family, y, ref.mu, v, f, closed), rel=1e-6)
    assert ours.log_likelihood_ == pytest.approx(
        family.loglike(y, mu, var_weights=v, freq_weights=f, scale=closed), rel=1e-12)


def test_gaussian_identity_ml_scale_reports_least_squares_likelihood():
    X, y = _scotland()
    ours = GLM("gaussian", scale="ml").fit(X, y)
    ref = _sm_fit(y, X, F.Gaussian())  # statsmodels' llf: at RSS / n
    assert ours.scale_ == pytest.approx(ref.deviance / y.size, rel=1e-12)
    assert ours.log_likelihood_ == pytest.approx(ref.llf, rel=1e-12)
    assert_allclose(ours.summary()["std_err"],
                    ref.bse * np.sqrt((y.size - 5) / y.size), rtol=1e-8)


def test_tweedie_ml_scale_maximises_the_series_likelihood():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(80, 2))
    mu = np.exp(0.3 + X @ np.array([0.4, -0.3]))
    counts = rng.poisson(mu ** 0.5 / 0.6)  # compound Poisson-Gamma, p = 1.5, phi ~ 1.2
    y = np.array([rng.gamma(1.0, 0.6 * m ** 0.5, k).sum() for m, k in zip(mu, counts)])
    f, v = _weights(80, 3)
    ours = TweedieRegression(power=1.5, scale="ml").fit(X, y, sample_weight=f,
                                                         var_weights=v)
    family = F.Tweedie(var_power=1.5, eql=False)
    ref = _sm_fit(y, X, F.Tweedie(L.Log(), var_power=1.5, eql=False), freq_weights=f,
                  var_weights=v)
    best = _argmax_loglike(family, y, ref.mu, v, f, ours.scale_)
    assert ours.scale_ == pytest.approx(best, rel=1e-6)
    at_ours = family.loglike(y, ref.mu, var_weights=v, freq_weights=f, scale=ours.scale_)
    at_best = family.loglike(y, ref.mu, var_weights=v, freq_weights=f, scale=best)
    assert at_ours >= at_best - 1e-9 * abs(at_best)  # (no scale does better)
    assert ours.log_likelihood_ == pytest.approx(at_ours, rel=1e-9)


def test_ml_scale_on_sparse_rows_equals_dense():
    X, y = _scotland()
    f, v = _weights(y.size, 4)
    dense = GammaRegression(scale="ml").fit(X.to_numpy(), y, sample_weight=f,
                                            var_weights=v)
    sparse = GammaRegression(scale="ml").fit(sp.csr_matrix(X.to_numpy()), y,
                                             sample_weight=f, var_weights=v)
    for name in ("scale_", "covariance_", "log_likelihood_", "aic_"):
        assert_allclose(getattr(sparse, name), getattr(dense, name), rtol=1e-9)


def test_ml_scale_on_dask_equals_numpy():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(6)
    X = rng.normal(size=(120, 3))
    y = rng.gamma(3.0, np.exp(0.2 + X @ np.array([0.3, -0.2, 0.1])) / 3.0)
    f, v = _weights(120, 5)
    here = GammaRegression(scale="ml").fit(X, y, sample_weight=f, var_weights=v)
    there = GammaRegression(scale="ml").fit(da.from_array(X, chunks=((50, 31, 39), 3)), y,
                                            sample_weight=f, var_weights=v)
    for name in ("coef_", "scale_", "covariance_", "log_likelihood_",
                 "null_log_likelihood_", "aic_", "bic_"):
        assert_allclose(getattr(there, name), getattr(here, name), rtol=1e-10)


class _NoMaximumLikelihood(Gaussian):
    """A user's distribution that does not say how its likelihood depends on the scale."""

    name = "quasi_gaussian"
    has_ml_scale = False


@pytest.mark.parametrize("est, match", [
    (GLM("poisson", scale="ml"), "poisson family's dispersion is fixed at 1"),
    (GLM("binomial", scale="ml"), "binomial family's dispersion is fixed at 1"),
    (NegativeBinomialRegression(nb_alpha=0.5, scale="ml"), "fixed at 1"),
    (GLM(_NoMaximumLikelihood(), "identity", scale="ml"),
     r"quasi_gaussian family defines no maximum-likelihood dispersion \(has_ml_scale\); "
     "the gamma, gaussian, inverse_gaussian, tweedie families do")])
def test_ml_scale_where_it_is_not_defined_is_refused(est, match):
    X, y = _scotland()
    with pytest.raises(ValueError, match=match):
        est.fit(X, y / y.max() if est.get_params().get("family") == "binomial"
                else np.round(y))


def test_the_search_steps_back_from_overflow_and_says_when_there_is_no_maximum():
    # a Gaussian-type score in t = log scale, 0.5 (D e^-t - n), whose root is log(D / n)
    def gaussian(t, D=3.0, n=40.0):
        return 0.5 * (D * np.exp(-t) - n), -0.5 * D * np.exp(-t)

    assert ml_scale_search(gaussian, 2.0) == pytest.approx(3.0 / 40.0, rel=1e-12)
    assert ml_scale_search(gaussian, 1e-6) == pytest.approx(3.0 / 40.0, rel=1e-12)

    def arctan(t):  # (root 0; Newton from 1.5 overshoots to -0.5, where it overflows)
        return (-np.arctan(t), -1.0 / (1.0 + t * t)) if t > -0.3 else (np.nan, np.nan)

    assert ml_scale_search(arctan, np.exp(1.5)) == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(ValueError, match="not finite at the start"):
        ml_scale_search(arctan, np.exp(-1.0))
    with pytest.raises(ValueError, match="grows without bound as the scale grows"):
        ml_scale_search(lambda t: (1.0, -1e-3), 1.0)  # (all-zero Tweedie targets)
