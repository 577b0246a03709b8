"""Firth's penalty with the regressors' other weights: variance (prior) weights enter the
information as they enter the score, ``I = sum v_i mu_i x_i x_i^T`` for the Poisson (the
adjusted score with prior weights of Kosmidis & Firth 2009), checked against a direct
scipy maximisation of ``sum v_i (y_i log mu_i - mu_i) + 1/2 log|I|``; binomial trials are
Bernoulli rows repeated (logistf's frequency weights)."""

import numpy as np
from scipy import optimize

from problin import BinomialRegression, LogisticRegression, PoissonRegression


def test_firth_poisson_var_weights_equal_direct_maximisation():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 2))
    Xc = np.c_[np.ones(40), X]
    y = rng.poisson(np.exp(0.2 + X @ [0.5, -0.3])).astype(float)
    v = 0.5 + rng.random(40) * 2.0

    def nll(b):
        eta = Xc @ b
        mu = np.exp(eta)
        info = Xc.T @ (Xc * (v * mu)[:, None])
        return -(np.sum(v * (y * eta - mu)) + 0.5 * np.linalg.slogdet(info)[1])
    direct = optimize.minimize(nll, np.zeros(3), method="BFGS", options={"gtol": 1e-10}).x
    model = PoissonRegression(penalty="firth", tol=1e-12).fit(X, y, var_weights=v)
    np.testing.assert_allclose(np.r_[model.intercept_, model.coef_], direct, atol=1e-6)


def test_firth_binomial_trials_are_repeated_bernoulli_rows():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(25, 2))
    trials = rng.integers(1, 6, size=25).astype(float)
    successes = rng.binomial(trials.astype(int), 0.3).astype(float)
    model = BinomialRegression(penalty="firth").fit(X, successes, trials=trials)
    rows = np.repeat(np.arange(25), trials.astype(int))
    y = np.concatenate([np.r_[np.ones(int(s)), np.zeros(int(n - s))]
                        for s, n in zip(successes, trials)])
    bernoulli = LogisticRegression(penalty="firth").fit(X[rows], y)
    np.testing.assert_allclose(np.r_[model.intercept_, model.coef_],
                               np.r_[bernoulli.intercept_, bernoulli.coef_.ravel()], atol=1e-9)
