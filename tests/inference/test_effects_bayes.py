"""slopes, comparisons and predictions of Bayesian models: the effect computed per posterior
draw, against the same draws pushed through numpy closed forms (the average of
``p (1 - p) w_j`` for a logistic slope, the average probability, the coefficients of a
linear model), summarised as the tables say (median, sd, equal-tailed quantiles); and, for
a tight posterior, against the plug-in effects and delta-method errors of the
maximum-likelihood fit."""
import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, softmax

from problin import (
    BayesianLinearRegression,
    BayesianLogisticRegression,
    Formula,
    LogisticRegression,
)
from problin._core.bayes.logistic import upper_factor


@pytest.fixture(scope="module")
def binary() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 3)) * [1.0, 2.0, 0.5] + [0.0, 1.0, -1.0]
    y = (rng.random(120) < expit(0.3 + X @ [1.0, -0.5, 0.8])).astype(int)
    return X, y


def _summary(per_draw: np.ndarray, level: float = 0.9) -> np.ndarray:
    """(estimate, std_err, ci_low, ci_high) of draws (D, rows) as the tables report them."""
    tail = (1 - level) / 2
    return np.column_stack([np.median(per_draw, axis=0), per_draw.std(axis=0, ddof=1),
                            np.quantile(per_draw, tail, axis=0),
                            np.quantile(per_draw, 1 - tail, axis=0)])


def _gaussian_draws(model: BayesianLogisticRegression, n: int, seed: int) -> np.ndarray:
    """The documented draws: N(posterior_mean_, posterior_cov_), one 32-bit seed drawn
    from ``random_state`` (as predict_proba(method="sample")); the factor ``U^T U`` of the
    covariance is problin's (a softmax posterior's is singular: the common shift of the
    intercepts)."""
    rng = np.random.default_rng(np.random.RandomState(seed).randint(np.iinfo(np.int32).max))
    Z = rng.standard_normal((n, model.posterior_mean_.size))
    return model.posterior_mean_ + Z @ upper_factor(model.posterior_cov_)


@pytest.mark.parametrize("inference", ["laplace", "variational"])
def test_gaussian_posterior_effects_per_draw(binary, inference):
    X, y = binary
    model = BayesianLogisticRegression(alpha=0.5, inference=inference).fit(X, y)
    theta = _gaussian_draws(model, 300, 7)
    p = expit(theta[:, :1] + theta[:, 1:] @ X.T)  # (D, n)
    dpdx = (p * (1 - p)).mean(axis=1)[:, None] * theta[:, 1:]  # avg p(1-p) w_j per draw
    cols = ["estimate", "std_err", "ci_low", "ci_high"]
    table = model.slopes(X, n_draws=300, random_state=7, level=0.9)
    assert list(table.columns) == cols  # (no z, no p-value: a posterior)
    np.testing.assert_allclose(table[cols].to_numpy(), _summary(dpdx), rtol=1e-12,
                               atol=1e-15)
    pred = model.predictions(X, n_draws=300, random_state=7, level=0.9)
    np.testing.assert_allclose(pred[cols].to_numpy(), _summary(p.mean(axis=1)[:, None]),
                               rtol=1e-12)
    link = model.predictions(X, type="link", n_draws=300, random_state=7, level=0.9)
    eta = (theta[:, :1] + theta[:, 1:] @ X.T).mean(axis=1)[:, None]
    np.testing.assert_allclose(link[cols].to_numpy(), _summary(eta), rtol=1e-12)
    # a ratio of average predictions, x1 moved by +-1 (centred), and a hypothesis on it
    hi = expit(theta[:, :1] + theta[:, 1:] @ (X + [0, 1, 0]).T)
    lo = expit(theta[:, :1] + theta[:, 1:] @ (X - [0, 1, 0]).T)
    ratio = (hi.mean(axis=1) / lo.mean(axis=1))[:, None]
    cmp = model.comparisons(X, "x1", change=2, comparison="ratio", n_draws=300,
                            random_state=7, level=0.9, hypothesis="b1 = 1")
    np.testing.assert_allclose(cmp[cols].to_numpy(), _summary(ratio - 1), rtol=1e-12)


def test_tight_posterior_matches_plug_in_effects(binary):
    """A nearly flat prior on 120 rows: the posterior median of the slope is the
    maximum-likelihood slope to a small part of its error, and the posterior sd the
    delta method's standard error to the Monte Carlo error (about 1.6% at 2,000 draws)."""
    X, y = binary
    bayes = BayesianLogisticRegression(alpha=1e-8).fit(X, y)
    plug_in = LogisticRegression().fit(X, y).slopes(X)
    table = bayes.slopes(X, n_draws=2000, random_state=0)
    se = plug_in["std_err"].to_numpy()
    assert np.all(np.abs(table["estimate"].to_numpy() - plug_in["estimate"].to_numpy())
                  < 0.15 * se)
    np.testing.assert_allclose(table["std_err"].to_numpy(), se, rtol=0.08)


@pytest.mark.filterwarnings("ignore::problin.exceptions.ConvergenceWarning")  # short chains
def test_mcmc_uses_its_stored_samples(binary):
    X, y = binary
    model = BayesianLogisticRegression(alpha=1.0, inference="mcmc", n_samples=150, n_chains=2,
                                       random_state=0, progress=False).fit(X, y)
    theta = model.samples_.reshape(-1, 4)
    p = expit(theta[:, :1] + theta[:, 1:] @ X.T).mean(axis=1)[:, None]
    table = model.predictions(X, level=0.9)
    assert table.attrs["n_draws"] == 300
    np.testing.assert_allclose(table.iloc[:, :4].to_numpy(), _summary(p), rtol=1e-12)
    thin = model.predictions(X, level=0.9, n_draws=30)  # evenly spaced stored draws
    keep = np.linspace(0, 299, 30).round().astype(int)
    np.testing.assert_allclose(thin.iloc[:, :4].to_numpy(), _summary(p[keep]), rtol=1e-12)


def test_softmax_laplace_predictions_per_class():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(90, 2))
    y = np.argmax(X @ [[1.0, -1.0, 0.0], [0.0, 1.0, -1.0]] + rng.gumbel(size=(90, 3)), 1)
    model = BayesianLogisticRegression(alpha=1.0).fit(X, y)
    theta = _gaussian_draws(model, 200, 2).reshape(200, 3, 3)  # (D, class, [b, w])
    eta = theta[:, None, :, 0] + np.einsum("nj,dkj->dnk", X, theta[:, :, 1:])
    p = softmax(eta, axis=2).mean(axis=1)  # (D, K)
    table = model.predictions(X, n_draws=200, random_state=2, level=0.9)
    assert list(table.index) == [0, 1, 2]
    np.testing.assert_allclose(table.to_numpy(), _summary(p), rtol=1e-12)


def test_bayesian_linear_regression_slopes_are_the_coefficient_draws():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"a": rng.normal(size=80), "b": rng.uniform(1, 3, size=80)})
    t = 1.0 + 2.0 * frame["a"] - frame["b"] + 0.5 * frame["a"] * frame["b"] \
        + rng.normal(size=80)
    plain = BayesianLinearRegression().fit(frame, t)
    W = plain.sample_posterior(400, random_state=4)  # [b, w_a, w_b] per draw
    table = plain.slopes(frame, n_draws=400, random_state=4, level=0.9)
    np.testing.assert_allclose(table.to_numpy(), _summary(W[:, 1:]), rtol=1e-12)
    # a formula: the slope of a goes through a:b (w_a + w_ab b) at the grid's b values
    model = Formula("t ~ a * b", BayesianLinearRegression()).fit(frame.assign(t=t))
    W = model.estimator_.sample_posterior(400, random_state=4)
    grid = model.slopes(frame, "a", at={"b": [1.0, 2.5]}, n_draws=400, random_state=4,
                        level=0.9)
    per_draw = W[:, [1]] + W[:, [3]] * np.array([[1.0, 2.5]])
    np.testing.assert_allclose(grid.to_numpy(), _summary(per_draw), rtol=1e-7)


def test_draws_are_only_for_bayesian_models(binary):
    X, y = binary
    with pytest.raises(ValueError, match="n_draws and random_state are for Bayesian"):
        LogisticRegression().fit(X, y).slopes(X, n_draws=100)
    model = BayesianLogisticRegression().fit(X, y)
    with pytest.raises(ValueError, match="n_draws must be an integer >= 2"):
        model.slopes(X, n_draws=1)
