"""Bayesian ordinal regression: MCMC against 3-D quadrature of the exact posterior, and
the Laplace MAP under a vague prior against the 50-digit maximum likelihood."""
import numpy as np
import pytest
from scipy import special

from sklearn.utils.estimator_checks import parametrize_with_checks

from problin._core.bayes.mcmc import ess_bulk
from problin import BayesianLogisticRegression, ProblinWarning
from problin.bayesian.ordinal import BayesianOrdinalRegression
from problin.inference.effects import Sampling
from tests.glm._ordinal_mp import reference

ALPHA, CUT_SD, GAP_SD = 0.5, 3.0, 1.0


def _problem():
    """One slope, three classes, 25 rows: a posterior visibly skewed."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=25)
    latent = 1.2 * x + rng.logistic(size=25)
    y = np.digitize(latent, [-0.7, 0.9])
    return x[:, None], y


def _quadrature(x, y, x0):
    """Posterior means of ``beta, theta_0, theta_1`` and of ``P(y = k | x0)`` by the
    trapezoid rule on a 36^3 grid over ``(b, w, gamma)`` (the estimator's parameters:
    ``theta_0 = -b``, ``theta_1 = -b + exp(gamma)``, ``beta = w``), the log posterior
    written out from the model's definition: logistic likelihood, ``w ~ N(0, 1/ALPHA)``,
    ``b + xbar w ~ N(0, CUT_SD^2)``, ``gamma ~ N(0, GAP_SD^2)``. The grid spans 8
    posterior sds of a first coarse pass either side of its mean; the integrand is
    smooth and negligible at the edges, so the rule converges spectrally."""
    x = x[:, 0]

    def integrate(b, w, g):
        B, W, G = np.meshgrid(b, w, g, indexing="ij")
        t0, t1 = -B, -B + np.exp(G)
        eta = W[..., None] * x
        F0, F1 = special.expit(t0[..., None] - eta), special.expit(t1[..., None] - eta)
        p = np.where(y == 0, F0, np.where(y == 1, F1 - F0, 1 - F1))
        logpost = (np.log(p).sum(axis=-1) - ALPHA * W ** 2 / 2
                   - (B + x.mean() * W) ** 2 / (2 * CUT_SD ** 2) - G ** 2 / (2 * GAP_SD ** 2))
        dens = np.exp(logpost - logpost.max())
        dens /= dens.sum()
        q0, q1 = special.expit(t0 - W * x0), special.expit(t1 - W * x0)
        quantities = {"beta": W, "theta0": t0, "theta1": t1,
                      "p0": q0, "p1": q1 - q0, "p2": 1 - q1}
        means = {k: float((dens * v).sum()) for k, v in quantities.items()}
        centres = {k: float((dens * v).sum()) for k, v in (("b", B), ("w", W), ("g", G))}
        sds = {k: float(np.sqrt((dens * (v - centres[k]) ** 2).sum())) for k, v in
               (("b", B), ("w", W), ("g", G))}
        return means, centres, sds

    _, c, s = integrate(np.linspace(-6, 6, 40), np.linspace(-3, 6, 40), np.linspace(-4, 3, 40))
    axes = [np.linspace(c[k] - 8 * s[k], c[k] + 8 * s[k], 36) for k in ("b", "w", "g")]
    return integrate(*axes)[0]


def test_mcmc_equals_quadrature_within_4_mcse():
    """The MCMC posterior means of the slope, both cut-points and the predictive
    probabilities at x0 = 1 equal the quadrature's within 4 Monte Carlo standard errors
    (sd / sqrt(bulk ESS)), and differ from the Laplace approximation's mode by more
    than that for at least one of them (the test can tell)."""
    X, y = _problem()
    x0 = 1.0
    exact = _quadrature(X, y, x0)
    model = BayesianOrdinalRegression(alpha=ALPHA, cutpoint_sd=CUT_SD, gap_sd=GAP_SD,
                                      inference="mcmc", n_samples=1000, random_state=3,
                                      progress=False).fit(X, y)
    draws = model.samples_  # chains x draws x [beta, theta0, theta1]
    q0 = special.expit(draws[..., 1] - draws[..., 0] * x0)
    q1 = special.expit(draws[..., 2] - draws[..., 0] * x0)
    sampled = {"beta": draws[..., 0], "theta0": draws[..., 1], "theta1": draws[..., 2],
               "p0": q0, "p1": q1 - q0, "p2": 1 - q1}
    gaps = {}
    for name, value in sampled.items():
        mcse = value.std() / np.sqrt(ess_bulk(value))
        gaps[name] = abs(value.mean() - exact[name]) / mcse
        assert gaps[name] < 4, (name, value.mean(), exact[name], mcse)
    proba = model.predict_proba(np.array([[x0]]))[0]
    thinned = np.array([exact["p0"], exact["p1"], exact["p2"]])
    np.testing.assert_allclose(proba, thinned, atol=0.01)
    laplace = BayesianOrdinalRegression(alpha=ALPHA, cutpoint_sd=CUT_SD,
                                        gap_sd=GAP_SD).fit(X, y)
    mode = dict(zip(("beta", "theta0", "theta1"), laplace.theta_map_))
    assert max(abs(mode[k] - exact[k]) / (sampled[k].std() / np.sqrt(ess_bulk(sampled[k])))
               for k in mode) > 4


@pytest.mark.parametrize("link", ["logit", "cloglog"])
def test_vague_prior_map_equals_maximum_likelihood(link):
    """With a vague prior the Laplace MAP is the maximum-likelihood fit and its
    covariance the inverse observed information: the 50-digit mpmath Newton solution
    (``_ordinal_mp``), to the prior's pull (~1e-7)."""
    X, y, beta, theta, se, _ = reference(link)
    model = BayesianOrdinalRegression(link, alpha=1e-9, cutpoint_sd=1e5, gap_sd=1e5).fit(X, y)
    np.testing.assert_allclose(model.theta_map_, np.concatenate([beta, theta]), atol=1e-7)
    np.testing.assert_allclose(np.sqrt(np.diag(model.posterior_cov_)), se, rtol=1e-7)
    assert np.all(np.diff(model.cutpoints_) > 0)


def test_two_classes_warn_and_fit_the_binary_model():
    """Two classes: a warning pointing to the binary model, whose posterior it then is
    (the cut-point at minus the intercept: Laplace MAP of BayesianLogisticRegression with
    the same priors on the slope and the centred intercept)."""
    X, y = _problem()
    t = np.minimum(y, 1)
    with pytest.warns(ProblinWarning, match="BayesianLogisticRegression"):
        model = BayesianOrdinalRegression(alpha=ALPHA, cutpoint_sd=CUT_SD).fit(X, t)
    binary = BayesianLogisticRegression(alpha=ALPHA, intercept_alpha=CUT_SD ** -2).fit(X, t)
    np.testing.assert_allclose(model.theta_map_, [binary.coef_[0, 0], -binary.intercept_[0]],
                               rtol=1e-6)


@parametrize_with_checks([BayesianOrdinalRegression(n_samples=100, random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_dask_input_is_refused_by_name():
    da = pytest.importorskip("dask.array")
    X, y = _problem()
    with pytest.raises(ValueError, match="rows in memory"):
        BayesianOrdinalRegression().fit(da.from_array(X, chunks=10), y)


def _direct_effects(X, draws, x_column):
    """Per draw of ``[beta, theta]`` (logit): the average class probabilities over the
    rows and their average derivative in column ``x_column``, written out from
    ``P(y <= k) = expit(theta_k - x^T beta)``."""
    D = X.shape[1]
    beta, theta = draws[:, :D], draws[:, D:]
    eta = X @ beta.T  # rows x draws
    u = theta[None, :, :] - eta[:, :, None]  # rows x draws x (K-1)
    F = special.expit(u)
    f = F * (1 - F)
    n, S = eta.shape
    cum = np.concatenate([np.zeros((n, S, 1)), F, np.ones((n, S, 1))], axis=2)
    dens = np.concatenate([np.zeros((n, S, 1)), f, np.zeros((n, S, 1))], axis=2)
    proba = np.diff(cum, axis=2).mean(axis=0)  # draws x K
    slope = (-beta[:, x_column][None, :, None] * np.diff(dens, axis=2)).mean(axis=0)
    return proba, slope


def _summarise(values):
    """median, sd (ddof 1) and the 2.5 % / 97.5 % quantiles of each column's draws."""
    low, mid, high = np.quantile(values, [0.025, 0.5, 0.975], axis=0)
    return np.column_stack([mid, values.std(axis=0, ddof=1), low, high])


# (a short run: what is checked is the statistics of its draws, not their mixing)
@pytest.mark.filterwarnings("ignore:R-hat:problin.ConvergenceWarning")
def test_mcmc_summary_and_effects_from_the_draws():
    """The MCMC fit's summary and its per-category predictions and slopes are the draws'
    statistics, computed here directly from ``samples_``: posterior mean, sd, central
    interval and the probability of the opposite sign per parameter; per-draw average
    probabilities and slopes, summarised by median, sd and quantiles."""
    X, y = _problem()
    X = np.column_stack([X[:, 0], np.linspace(-1, 1, len(y))])
    model = BayesianOrdinalRegression(alpha=ALPHA, cutpoint_sd=CUT_SD, gap_sd=GAP_SD,
                                      inference="mcmc", n_samples=100, n_chains=2,
                                      random_state=5, progress=False).fit(X, y)
    flat = model.samples_.reshape(-1, 4)
    table = model.summary()
    assert list(table.index) == ["x0", "x1", "0|1", "1|2"]
    np.testing.assert_allclose(table["mean"], flat.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(table["sd"], flat.std(axis=0, ddof=1), rtol=1e-10)
    np.testing.assert_allclose(table[["ci_low", "ci_high"]].T,
                               np.quantile(flat, [0.025, 0.975], axis=0), rtol=1e-12)
    np.testing.assert_allclose(table["p_opposite"], np.mean(
        np.sign(flat) != np.sign(flat.mean(axis=0)), axis=0), atol=1e-12)
    assert "0|1" in str(model.summary_text())
    proba, slope = _direct_effects(X, flat, 0)
    got = model.predictions(X)[["estimate", "std_err", "ci_low", "ci_high"]].to_numpy()
    np.testing.assert_allclose(got, _summarise(proba), rtol=1e-9)
    got = model.slopes(X, variables="x0")[["estimate", "std_err", "ci_low", "ci_high"]]
    np.testing.assert_allclose(got.to_numpy(), _summarise(slope), rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(slope.sum(axis=1), 0.0, atol=1e-12)


def test_laplace_effect_draws_are_the_laplace_posterior():
    """Laplace: the effects' draws of the slopes are the Gaussian ``N(MAP, posterior_cov_)``
    exactly (the slopes are linear in the solver's parameters), their cut-points lie in
    order around the MAP's, and ``n_draws``/``random_state`` choose and seed them."""
    X, y = _problem()
    model = BayesianOrdinalRegression(alpha=ALPHA, cutpoint_sd=CUT_SD, gap_sd=GAP_SD,
                                      random_state=0).fit(X, y)
    blocks = model._effects_draws(Sampling(4000, 7))  # draws x cuts x [theta_j, -beta]
    beta = -blocks[:, 0, 1]
    assert np.array_equal(beta, -blocks[:, 1, 1])
    se = np.sqrt(model.posterior_cov_[0, 0])
    assert abs(beta.mean() - model.theta_map_[0]) < 4 * se / np.sqrt(4000)
    assert beta.std() == pytest.approx(se, rel=0.05)
    assert np.all(blocks[:, 1, 0] > blocks[:, 0, 0])
    again = model.predictions(X, n_draws=50, random_state=7)
    assert again.equals(model.predictions(X, n_draws=50, random_state=7))
    assert not again.equals(model.predictions(X, n_draws=50, random_state=8))
    assert again.attrs["n_draws"] == 50
