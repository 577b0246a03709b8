"""The Gaussian prior N(m0, S0) on Dask input: the distributed passes (the objectives'
penalty, the variational sweeps, the MCMC log posterior with its prior mean) give the
in-memory fits (threaded scheduler; the cluster tests are in tests/dask)."""
import numpy as np
import pytest
from numpy.testing import assert_allclose

from problin import BayesianLogisticRegression, LogisticRegression, PoissonRegression

da = pytest.importorskip("dask.array")

M0 = np.array([0.2, 0.3, -0.01])
S0 = np.array([[2.0, 0.5, 0.01], [0.5, 1.0, 0.03], [0.01, 0.03, 0.05]])


def test_dask_fits_equal_the_in_memory_fits():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 2)) * [1.0, 10.0] + [3.0, 50.0]
    y = (rng.random(400) < 1 / (1 + np.exp(-(X[:, 0] - 3.0)))).astype(int)
    Xd, yd = da.from_array(X, chunks=200), da.from_array(y, chunks=200)
    counts = rng.poisson(np.exp(0.3 * (X[:, 0] - 3.0))).astype(float)
    models = [LogisticRegression(prior_mean=M0, prior_precision=S0, tol=1e-10),
              BayesianLogisticRegression(inference="variational", prior_mean=M0,
                                         prior_precision=S0),
              BayesianLogisticRegression(inference="mcmc", prior_mean=M0, prior_precision=S0,
                                         n_samples=1000, n_chains=2, random_state=0,
                                         progress=False)]  # (independence MH: few passes)
    for model in models:
        a = model.fit(X, y).coef_.copy()
        b = model.fit(Xd, yd).coef_
        assert_allclose(b, a, rtol=1e-9, atol=1e-12)
    assert model.sampler_ == "independence-mh"
    poisson = PoissonRegression(prior_mean=M0, prior_precision=S0, tol=1e-10)
    a = poisson.fit(X, counts).coef_.copy()
    assert_allclose(poisson.fit(Xd, da.from_array(counts, chunks=200)).coef_, a, rtol=1e-9)
