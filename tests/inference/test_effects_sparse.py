"""slopes, comparisons and predictions on scipy.sparse data (CSR/CSC): the same numbers as
on the dense array, no n x d dense copy."""
import tracemalloc

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose

import problin

N, D = 240, 5
COLS = ["estimate", "std_err"]


def _data(fmt: str = "csr") -> tuple[sp.spmatrix, np.ndarray]:
    rng = np.random.default_rng(3)
    X = sp.random(N, D, density=0.4, random_state=rng, format=fmt,
                  data_rvs=lambda k: rng.normal(0.5, 1.0, k))
    return X, X.toarray()


def _model(kind: str, X: sp.spmatrix) -> object:
    rng = np.random.default_rng(4)
    eta = X.toarray() @ np.array([0.6, -0.4, 0.3, 0.0, 0.5])
    if kind == "logistic":
        return problin.LogisticRegression().fit(X, (rng.random(N) < 1 / (1 + np.exp(-eta))))
    if kind == "poisson":
        return problin.PoissonRegression().fit(X, rng.poisson(np.exp(0.3 + 0.5 * eta)))
    y = np.digitize(eta + rng.normal(size=N), [-0.3, 0.4])  # three classes
    return problin.LogisticRegression().fit(X, y)


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert a.index.equals(b.index)
    assert_allclose(a[COLS].to_numpy(), b[COLS].to_numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("kind", ["logistic", "poisson", "softmax"])
def test_sparse_equals_dense(kind: str) -> None:
    X, Xd = _data("csc" if kind == "poisson" else "csr")
    model = _model(kind, X)
    w = np.random.default_rng(5).uniform(0.2, 2.0, N)
    calls = [("slopes", {}), ("slopes", {"sample_weight": w}),
             ("slopes", {"slope": "eyex", "sample_weight": w}),
             ("comparisons", {"change": "minmax", "sample_weight": w}),
             ("comparisons", {"change": "sd", "comparison": "ratio"}),
             ("predictions", {"by": "x3", "sample_weight": w}),
             ("slopes", {"variables": [1, "x4"], "type": "link"}),
             ("slopes", {"at": "median"}), ("predictions", {"at": {"x0": [0.0, 1.5]}})]
    for method, kwargs in calls:
        _same(getattr(model, method)(X, **kwargs), getattr(model, method)(Xd, **kwargs))


def test_sparse_slopes_closed_form_and_rows() -> None:
    """Average slopes of a sparse logistic fit are avg(p(1 - p)) b_j (the single-index
    identity, by hand); predictions at a sparse at= are predict_proba, row by row."""
    X, Xd = _data()
    model = _model("logistic", X)
    p = model.predict_proba(Xd)[:, 1]
    table = model.slopes(X)
    assert_allclose(table["estimate"].to_numpy(), np.mean(p * (1 - p)) * model.coef_.ravel(),
                    rtol=1e-12)
    rows = model.predictions(X, at=X[:4])
    assert list(rows.index) == [0, 1, 2, 3]
    assert_allclose(rows["estimate"].to_numpy(), p[:4], rtol=1e-12)


def test_sparse_without_a_dense_copy() -> None:
    """30,000 x 200 CSR (a dense copy: 48 MB): every slope, elasticity and the average
    prediction with a peak under a tenth of that (a few n-vectors and a block's rows)."""
    rng = np.random.default_rng(6)
    n, d = 30_000, 200
    X = sp.random(n, d, density=0.015, random_state=rng, format="csr")
    y = rng.random(n) < 0.3
    model = problin.LogisticRegression(alpha=1.0).fit(X[:3000], y[:3000])
    tracemalloc.start()
    try:
        model.slopes(X)
        model.slopes(X, slope="eyex")
        model.predictions(X)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < n * d * 8 / 10


def test_sparse_bad_input() -> None:
    X, Xd = _data()
    model = _model("logistic", X)
    with pytest.raises(ValueError, match="data have 3 columns, the model 5"):
        model.slopes(X[:, :3])
    with pytest.raises(TypeError, match="at= a sparse matrix is for sparse data"):
        model.predictions(Xd, at=X[:2])
    frame = pd.DataFrame({"a": Xd[:, 0], "g": pd.Categorical(np.arange(N) % 3)})
    encoded = problin.LogisticRegression().fit(frame, np.arange(N) % 2)
    with pytest.raises(TypeError, match="categorical columns"):
        encoded.slopes(sp.csr_matrix(Xd[:, :3]))
    frame = pd.DataFrame(Xd, columns=list("abcde")).assign(y=np.arange(N) % 2)
    formula = problin.Formula("y ~ a + b * c", problin.LogisticRegression()).fit(frame)
    with pytest.raises(TypeError, match="Formula reads its data from a DataFrame"):
        formula.slopes(X)


def test_sparse_bayesian_draws() -> None:
    """A Bayesian logistic fit's per-draw effects read the sparse rows a block at a time:
    the same draws' summaries as on the dense array."""
    X, Xd = _data()
    y = np.random.default_rng(7).random(N) < 0.4
    model = problin.BayesianLogisticRegression().fit(X, y)
    _same(model.slopes(X, random_state=0), model.slopes(Xd, random_state=0))
