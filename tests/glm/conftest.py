"""Datasets shared by the GLM tests (small, overlapping classes: the MLE exists)."""
import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris

from problin.datasets import make_heights


def synthetic_logit(n=2000, d=5, seed=0, link="logit"):
    rng = np.random.default_rng(seed)
    cov = 0.5 * np.eye(d) + 0.5  # correlated features
    X = rng.multivariate_normal(np.zeros(d), cov, size=n)
    w = np.linspace(-1.0, 1.0, d)
    eta = 0.3 + X @ w
    if link == "logit":
        p = 1.0 / (1.0 + np.exp(-eta))
    else:
        from scipy.stats import norm
        p = norm.cdf(eta)
    y = (rng.random(n) < p).astype(int)
    return X, y


def breast_cancer_subset():
    data = load_breast_cancer(as_frame=True)
    cols = ["mean radius", "mean texture", "mean smoothness", "mean symmetry"]
    return data.data[cols], data.target


def iris_versicolor_virginica():
    X, y = load_iris(return_X_y=True)
    keep = y > 0
    return X[keep], y[keep]


def heights():
    X, y = make_heights(600, random_state=1)
    return X, y


DATASETS = {
    "synthetic": lambda: synthetic_logit(),
    "synthetic-probit": lambda: synthetic_logit(link="probit", seed=3),
    "breast-cancer": breast_cancer_subset,
    "iris": iris_versicolor_virginica,
    "heights": heights,
}


@pytest.fixture(params=sorted(DATASETS))
def dataset(request):
    return DATASETS[request.param]()
