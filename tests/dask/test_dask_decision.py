"""Dask input for BayesDecision (issue 8): the wrapped classifier fits chunk by chunk,
the training class frequencies are one pass over y, and the decisions under deployment
priors and costs equal the numpy ones to 1e-10, lazily."""
import numpy as np
import pytest
from sklearn.base import clone

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("dask.distributed")

from problin import BayesDecision, LinearDiscriminantAnalysis, LogisticRegression

N, D, CHUNK = 9_000, 4, 2_000
COST = [[0.0, 1.0, 4.0], [2.0, 0.0, 1.0], [8.0, 1.0, 0.0]]
MODELS = [BayesDecision(LogisticRegression(), priors=[0.5, 0.3, 0.2], cost=COST),
          BayesDecision(LinearDiscriminantAnalysis(), priors=[0.2, 0.2, 0.6]),
          BayesDecision(LogisticRegression(alpha=1.0), cost=COST)]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    labels = rng.choice([2, 5, 7], size=N, p=[0.5, 0.3, 0.2])
    X = rng.standard_normal((N, D)) + (labels[:, None] == 5) * 0.8 - (labels[:, None] == 7)
    w = rng.uniform(0.5, 2.0, N)
    return X, labels, w


def rows(a):
    return da.from_array(a, chunks=(CHUNK,) + a.shape[1:])


@pytest.mark.parametrize("model", MODELS, ids=repr)
@pytest.mark.parametrize("weighted", [False, True])
def test_decisions_on_dask_equal_numpy(client, data, model, weighted):
    X, labels, w = data
    kw = {"sample_weight": w} if weighted else {}
    a = clone(model).fit(X, labels, **kw)
    dkw = {"sample_weight": rows(w)} if weighted else {}
    b = clone(model).fit(rows(X), rows(labels), **dkw)
    np.testing.assert_array_equal(b.classes_, a.classes_)
    np.testing.assert_allclose(b.training_priors_, a.training_priors_, rtol=1e-10)
    proba = b.predict_proba(rows(X))
    assert isinstance(proba, da.Array)
    np.testing.assert_allclose(proba.compute(), a.predict_proba(X), rtol=1e-10, atol=1e-12)
    cost = b.expected_cost(rows(X))
    assert isinstance(cost, da.Array)
    np.testing.assert_allclose(cost.compute(), a.expected_cost(X), rtol=1e-10, atol=1e-12)
    pred = b.predict(rows(X))
    assert isinstance(pred, da.Array)
    np.testing.assert_array_equal(pred.compute(), a.predict(X))


def test_dask_labels_with_a_nan_are_named(data):
    X, labels, _ = data
    y = labels.astype(float)
    y[4321] = np.nan
    with dask.config.set(scheduler="threads"), pytest.raises(ValueError, match="NaN"):
        BayesDecision(LogisticRegression()).fit(rows(X), rows(y))
