"""MCMC with many parameters: the independence sampler's t proposal widens its degrees of
freedom with the dimension, the fallback to HMC is decided on the adapted proposal and on
R-hat, and tall data at D = 30 mix without a warning."""
import warnings

import numpy as np
import pytest
from scipy.special import expit
from sklearn.datasets import load_breast_cancer

from problin import BayesianLogisticRegression
from problin._core.bayes.mcmc import _default_nu


def make_logistic_data(n, d, seed):
    """Correlated standard normal features (one shared factor), labels from the model."""
    rng = np.random.default_rng(seed)
    X = np.sqrt(0.7) * rng.standard_normal((n, d)) + np.sqrt(0.3) * rng.standard_normal((n, 1))
    y = (rng.random(n) < expit(X @ rng.normal(0.0, 0.3, d) + 0.5)).astype(float)
    return X, y


def _fit(X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ConvergenceWarning (nor any other)
        return BayesianLogisticRegression(inference="mcmc", random_state=0,
                                          progress=False).fit(X, y)


def test_tall_data_with_thirty_features_mix_by_independence_proposals():
    X, y = make_logistic_data(20_000, 30, seed=0)
    model = _fit(X, y)
    assert model.sampler_ == "independence-mh"
    assert model.acceptance_rate_ > 0.8
    assert np.max(model.rhat_) <= 1.01
    assert np.min(model.ess_) > 1000


def test_a_posterior_the_proposal_misses_goes_to_hmc_without_a_warning():
    """Breast cancer, 30 correlated features, 569 rows: the adapted t proposal is accepted
    often enough, but its chains disagree (R-hat > 1.01): HMC takes over."""
    X, y = load_breast_cancer(return_X_y=True)
    model = _fit(X, y)
    assert model.sampler_ == "hmc"
    assert np.max(model.rhat_) <= 1.01


@pytest.mark.parametrize("p", [1, 5, 31, 200])
def test_degrees_of_freedom_grow_with_the_dimension(p):
    assert _default_nu(p) == 10.0 * p
