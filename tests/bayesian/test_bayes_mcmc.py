"""MCMC: reproducible draws, R-hat and bulk ESS to their published definitions, warnings."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from tests.glm.conftest import synthetic_logit

from problin import BayesianLogisticRegression, ConvergenceWarning
from problin._core.bayes.mcmc import ess_bulk, rhat
from problin.bayesian import _fit


def _ar1(rho, chains, n, params, seed):
    rng = np.random.default_rng(seed)
    x = np.empty((chains, n, params))
    x[:, 0] = rng.normal(size=(chains, params)) / np.sqrt(1 - rho**2)
    for t in range(1, n):
        x[:, t] = rho * x[:, t - 1] + rng.normal(size=(chains, params))
    return x


def test_diagnostics_match_arviz():
    az = pytest.importorskip("arviz")
    x = _ar1(0.7, 4, 501, 3, seed=0)  # an odd length: the middle draw is dropped
    x[1] += 0.3  # one chain off: R-hat clearly above 1
    data = az.convert_to_dataset({"theta": x})
    assert_allclose(rhat(x), az.rhat(data, method="rank")["theta"].values, rtol=1e-10)
    assert_allclose(ess_bulk(x), az.ess(data, method="bulk")["theta"].values, rtol=1e-10)


@pytest.mark.parametrize("phi, n", [(0.95, 100), (0.9, 50), (0.9, 8), (0.99, 41),
                                    (0.5, 12), (0.97, 300)])
def test_ess_of_poorly_mixing_chains_matches_arviz(phi, n):
    """Geyer's sequence as ArviZ and Stan truncate it: the pairs stopped at lag n - 2 and
    the last lag counted as a pair, so slowly mixing chains were up to 6 % off (8 draws:
    13.4 where ArviZ gives 48.2)."""
    az = pytest.importorskip("arviz")
    for seed in range(5):
        x = _ar1(phi, 4, n, 3, seed=seed)
        data = az.convert_to_dataset({"theta": x})
        assert_allclose(ess_bulk(x), az.ess(data, method="bulk")["theta"].values, rtol=1e-10)


def _metropolis_like(chains, n, params, seed, accept=0.3):
    """Chains that repeat their current draw where a proposal is rejected."""
    rng = np.random.default_rng(seed)
    x = np.empty((chains, n, params))
    current = rng.normal(size=(chains, params))
    for t in range(n):
        moved = rng.random((chains, 1)) < accept
        current = np.where(moved, rng.normal(size=(chains, params)), current)
        x[:, t] = current
    return x


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), scale=st.sampled_from([10.0, 0.1, 3.0, 1 + 2**-52]))
def test_rhat_does_not_change_with_the_units_of_repeated_draws(seed, scale):
    # Metropolis chains repeat the two middle draws, whose distances to the median
    # (their midpoint) are equal; rounding used to order them, moving the folded
    # R-hat by up to 1e-4 under a mere rescaling (and the sampler choice made on it).
    x = _metropolis_like(4, 400, 3, seed)
    assert np.array_equal(rhat(x * scale), rhat(x))


def test_diagnostics_on_known_cases():
    iid = np.random.default_rng(1).normal(size=(4, 2000, 2))
    assert np.all(np.abs(rhat(iid) - 1) < 0.005)
    assert np.all(np.abs(ess_bulk(iid) / 8000 - 1) < 0.1)
    rho = 0.9
    ar = _ar1(rho, 4, 5000, 2, seed=2)
    assert_allclose(ess_bulk(ar), 20000 * (1 - rho) / (1 + rho), rtol=0.2)
    stuck = iid.copy()
    stuck[0] += 1.0
    assert np.all(rhat(stuck) > 1.05)


def test_reruns_are_bit_identical():
    X, y = synthetic_logit(n=300, d=3, seed=7)
    kw = {"inference": "mcmc", "n_samples": 300, "n_chains": 3, "progress": False}
    a = BayesianLogisticRegression(random_state=3, **kw).fit(X, y)
    b = BayesianLogisticRegression(random_state=3, **kw).fit(X, y)
    c = BayesianLogisticRegression(random_state=4, **kw).fit(X, y)
    assert a.samples_.shape == (3, 300, 4)
    assert np.array_equal(a.samples_, b.samples_)
    assert np.array_equal(a.predict_proba(X, method="sample"), b.predict_proba(X, method="sample"))
    assert not np.array_equal(a.samples_, c.samples_)
    assert 0.3 < a.acceptance_rate_ <= 1
    table = a.summary()
    flat = a.samples_.reshape(-1, 4)
    assert_allclose(table["ci_low"], np.quantile(flat, 0.025, axis=0))
    assert_allclose(table["sd"], flat.std(axis=0, ddof=1))


def test_rhat_warning_when_the_chains_disagree(monkeypatch):
    X, y = synthetic_logit(n=200, d=2, seed=8)
    monkeypatch.setattr(_fit, "rhat", lambda s: np.full(s.shape[2], 1.05))
    with pytest.warns(ConvergenceWarning, match="R-hat is 1.050 > 1.01"):
        BayesianLogisticRegression(inference="mcmc", n_samples=50, random_state=0,
                                   progress=False).fit(X, y)


def test_real_short_chains_warn_and_long_ones_do_not():
    X, y = synthetic_logit(n=200, d=2, seed=8)
    with pytest.warns(ConvergenceWarning, match="R-hat"):
        BayesianLogisticRegression(inference="mcmc", n_samples=6, random_state=0,
                                   progress=False).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = BayesianLogisticRegression(inference="mcmc", n_samples=2000, random_state=0,
                                           progress=False).fit(X, y)
    assert np.max(model.rhat_) <= 1.01 and np.min(model.ess_) > 1000


def test_progress_bar_only_when_asked_and_slow(monkeypatch, capsys):
    X, y = synthetic_logit(n=200, d=2, seed=8)
    monkeypatch.setattr(_fit, "_PROGRESS_AFTER_S", 0.0)
    BayesianLogisticRegression(inference="mcmc", n_samples=2000, random_state=0,
                               progress=False).fit(X, y)
    assert "MCMC" not in capsys.readouterr().err
    BayesianLogisticRegression(inference="mcmc", n_samples=2000, random_state=0).fit(X, y)
    assert "MCMC" in capsys.readouterr().err


def test_alpha_none_samples_at_the_evidence_alpha():
    X, y = synthetic_logit(n=300, d=3, seed=10)
    laplace = BayesianLogisticRegression(alpha=None).fit(X, y)
    mcmc = BayesianLogisticRegression(alpha=None, inference="mcmc", n_samples=500,
                                      random_state=0, progress=False).fit(X, y)
    assert mcmc.alpha_ == laplace.alpha_ and mcmc.log_evidence_ == laplace.log_evidence_
    sd = np.sqrt(np.diag(laplace.posterior_cov_))
    assert np.all(np.abs(mcmc.posterior_mean_ - laplace.posterior_mean_) < 0.2 * sd)


def test_refit_with_another_method_forgets_the_draws():
    X, y = synthetic_logit(n=200, d=2, seed=8)
    model = BayesianLogisticRegression(inference="mcmc", n_samples=200, random_state=0,
                                       progress=False).fit(X, y)
    model.set_params(inference="laplace").fit(X, y)
    assert not hasattr(model, "samples_") and not hasattr(model, "rhat_")
    assert model.summary()["sd"].iloc[0] == np.sqrt(model.posterior_cov_[0, 0])


def test_hmc_takes_over_where_the_independence_sampler_would_not_mix():
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)  # 31 parameters for 569 rows: far from Gaussian
    kw = {"alpha": 1.0, "inference": "mcmc", "n_samples": 600, "random_state": 1,
          "progress": False}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = BayesianLogisticRegression(**kw).fit(X, y)
    assert model.sampler_ == "hmc" and 0.6 < model.acceptance_rate_ < 0.95
    assert np.max(model.rhat_) <= 1.01 and np.min(model.ess_) > 500
    again = BayesianLogisticRegression(**kw).fit(X, y)
    assert np.array_equal(model.samples_, again.samples_)
    laplace = BayesianLogisticRegression(alpha=1.0).fit(X, y)
    sd = np.sqrt(np.diag(laplace.posterior_cov_))
    assert np.all(np.abs(model.posterior_mean_ - laplace.posterior_mean_) < 0.5 * sd)


def test_log_posterior_gradient_matches_finite_differences():
    from problin._core.bayes.mcmc import LogitLogPosterior
    from problin._core.model.design import Design
    from problin._core.model.objective import PriorPrecision
    X, y = synthetic_logit(n=300, d=3, seed=12)
    target = LogitLogPosterior(Design(X, True), y, np.linspace(0.5, 1.5, 300),
                               PriorPrecision(np.array([1e-3, 1.0, 2.0, 3.0])))
    W = np.random.default_rng(0).normal(size=(3, 4))
    values, grads = target.value_and_grad(W)
    assert_allclose(values, target(W), rtol=1e-14)
    h = 1e-6
    for j in range(4):
        e = np.zeros(4)
        e[j] = h
        numeric = (target(W + e) - target(W - e)) / (2 * h)
        assert_allclose(grads[:, j], numeric, rtol=1e-6, atol=1e-6)


def test_too_few_draws_per_chain_fail_clearly():
    """One draw has no spread, and R-hat splits each chain in two: below 4 draws per
    chain the summary would report sd 0 and z = inf. A clear error before any fitting;
    4 draws give finite spreads and an R-hat."""
    X, y = synthetic_logit(n=60, d=2, seed=3)
    with pytest.raises(ValueError, match="n_samples >= 4 draws per chain.*got 3"):
        BayesianLogisticRegression(inference="mcmc", n_samples=3, progress=False).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # (4 draws: R-hat may exceed 1.01)
        model = BayesianLogisticRegression(inference="mcmc", n_samples=4, progress=False,
                                           random_state=0).fit(X, y)
    assert np.all(np.isfinite(model.rhat_)) and np.all(np.diag(model.posterior_cov_) > 0)
    # Gaussian posteriors use n_samples only for method="sample": 1 draw is allowed there.
    laplace = BayesianLogisticRegression(n_samples=1, random_state=0).fit(X, y)
    assert laplace.predict_proba(X[:3], method="sample").shape == (3, 2)
