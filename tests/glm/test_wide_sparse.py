"""Wide and sparse data: Hessian-free fits that never densify X, covariance on request."""
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose

from problin import LogisticRegression


def sparse_counts(n=4000, d=3000, nnz=20, seed=0):
    """Word-count-like CSR data with a sparse true model (overlapping classes)."""
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), nnz)
    popularity = 1.0 / np.arange(1, d + 1)
    cols = rng.choice(d, size=n * nnz, p=popularity / popularity.sum())
    X = sp.csr_matrix((np.log1p(rng.poisson(1.0, n * nnz) + 1.0), (rows, cols)), shape=(n, d))
    X.sum_duplicates()
    w = np.where(rng.random(d) < 0.05, rng.normal(0, 1.0, d), 0.0)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(X @ w - 0.3)))).astype(int)
    return X, y


def test_auto_switches_to_lbfgs_and_matches_scikit_learn():
    from sklearn.linear_model import LogisticRegression as SkLogisticRegression
    X, y = sparse_counts()
    ours = LogisticRegression(alpha=1.0).fit(X, y)
    assert ours.solver_ == "lbfgs" and ours.converged_
    ref = SkLogisticRegression(C=1.0, tol=1e-10, max_iter=10000).fit(X, y)

    def objective(model):
        eta = X @ model.coef_.ravel() + model.intercept_[0]
        return float(np.sum(np.logaddexp(0, eta) - y * eta) + 0.5 * np.sum(model.coef_ ** 2))

    assert objective(ours) <= objective(ref) * (1 + 1e-9)
    assert_allclose(ours.coef_, ref.coef_, atol=1e-5)


def test_sparse_fit_never_densifies_X():
    # Rows outnumber columns, as in a corpus: L-BFGS's own memory is O(p).
    X, y = sparse_counts(n=40000, d=5000, nnz=30, seed=1)
    size = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    dense = X.shape[0] * X.shape[1] * 8
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tracemalloc.start()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        LogisticRegression(alpha=1.0).fit(X, y)
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
    assert peak <= 1.3 * size, f"peak {peak / 1e6:.1f} MB for a CSR X of {size / 1e6:.1f} MB"
    assert peak < dense / 50  # nowhere near the 1.6 GB a dense copy would take


def test_covariance_is_on_request_for_wide_models():
    X, y = sparse_counts(n=3000, d=2500, nnz=15, seed=2)
    model = LogisticRegression(alpha=2.0).fit(X, y)
    assert model.covariance_ is None
    with pytest.raises(ValueError, match="compute_covariance"):
        model.summary()
    model.compute_covariance(X, y)
    table = model.summary()
    assert len(table) == X.shape[1] + 1 and np.all(np.isfinite(table["std_err"]))
    # equals the inverse penalised Hessian built directly
    eta = X @ model.coef_.ravel() + model.intercept_[0]
    p = 1.0 / (1.0 + np.exp(-eta))
    Z = sp.hstack([np.ones((X.shape[0], 1)), X]).tocsc()
    H = (Z.T @ Z.multiply((p * (1 - p))[:, None])).toarray()
    H[np.diag_indices_from(H)] += np.r_[0.0, np.full(X.shape[1], 2.0)]
    assert_allclose(model.covariance_[:5, :5], np.linalg.inv(H)[:5, :5], rtol=1e-6)


def test_compute_covariance_refuses_what_does_not_fit(monkeypatch):
    import problin.glm._diagnostics as diagnostics
    X, y = sparse_counts(n=2000, d=2200, nnz=10, seed=3)
    model = LogisticRegression(alpha=1.0).fit(X, y)
    monkeypatch.setattr(diagnostics, "available_memory", lambda: 1e6)  # a tiny machine
    with pytest.raises(MemoryError, match="information matrix needs"):
        model.compute_covariance(X, y)


@pytest.mark.parametrize("classes", [2, 3])
def test_compute_covariance_holds_unidentified_parameters_at_zero(monkeypatch, classes):
    """A fit that skipped the information matrix left a collinear column's coefficient
    wherever the solver's path ended; compute_covariance computed the covariance but kept
    those coefficients. It now holds them at 0 (a CollinearityWarning naming them), as a
    fit that builds the matrix itself does: the same coefficients, standard errors and
    predictions."""
    import problin.glm._diagnostics as diagnostics
    from problin.exceptions import CollinearityWarning
    rng = np.random.default_rng(4)
    X = rng.normal(size=(600, 3))
    X = np.column_stack([X, X[:, 0] - 2.0 * X[:, 2]])  # the last column: not identified
    y = np.minimum((X[:, :3] @ [1.0, -0.5, 0.4] + rng.logistic(size=600) > 0)
                   + (X[:, 1] > 1.0), classes - 1)
    with pytest.warns(CollinearityWarning, match=r"x3"):
        reference = LogisticRegression().fit(X, y)
    monkeypatch.setattr(diagnostics, "hessian_affordable", lambda n, p: False)  # as if wide
    model = LogisticRegression(solver="lbfgs").fit(X, y)
    assert model.covariance_ is None and np.all(model.coef_[:, 3] != 0.0)
    before = model.predict_proba(X)
    with pytest.warns(CollinearityWarning, match=r"x3"):
        model.compute_covariance(X, y)
    assert np.all(model.coef_[:, 3] == 0.0)
    assert_allclose(model.coef_, reference.coef_, rtol=1e-5, atol=1e-6)
    assert_allclose(model.intercept_, reference.intercept_, rtol=1e-5, atol=1e-6)
    assert_allclose(model.predict_proba(X), before, rtol=1e-10, atol=1e-12)
    ours, theirs = model.summary(), reference.summary()
    assert_allclose(ours["std_err"], theirs["std_err"], rtol=1e-4)
