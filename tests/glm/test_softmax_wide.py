"""Wide and many-class softmax: the memory L-BFGS needs is stated before it is
allocated, and the penalised sparse fit converges in tens of iterations (issue 31,
item 13). The real sizes are measured by bench/bench_softmax_wide.py."""
import numpy as np
import pytest
import scipy.sparse as sp

import problin.glm._diagnostics as diagnostics
from problin import LogisticRegression
from problin._core.solvers.quasi_newton import (
    MAX_PAIRS,
    MIN_PAIRS,
    history_size,
    lbfgs_memory,
)


def sparse_softmax(n=600, d=600, k=6, density=0.01, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=seed)
    return X, rng.integers(0, k, n)


def test_lbfgs_memory_counts_pairs_vectors_and_rows():
    # 2 m p pairs, 12 parameter vectors, 5 n x M row arrays, 8 bytes each
    assert lbfgs_memory(1000, 50, 4, pairs=3) == 8 * ((6 + 12) * 1000 + 5 * 50 * 4)
    # the 10,000 x 1,000,000 sparse softmax with K = 50 (49 free blocks at alpha=0)
    need = lbfgs_memory(49 * 1_000_001, 10_000, 49, pairs=MIN_PAIRS)
    assert 7e9 < need < 7.1e9
    assert history_size(1000, 50, 4, budget=1e12) == MAX_PAIRS
    budget = lbfgs_memory(1000, 50, 4, pairs=5) + 100
    assert history_size(1000, 50, 4, budget=budget) == 5
    assert history_size(1000, 50, 4, budget=lbfgs_memory(1000, 50, 4, pairs=2)) is None


def test_fit_refuses_up_front_what_does_not_fit(monkeypatch):
    """A fit whose L-BFGS vectors exceed the memory available raised MemoryError
    mid-fit (or crashed in scipy); it is now refused before anything is allocated,
    with the estimate and what is available."""
    X, y = sparse_softmax(n=200, d=40_000, k=4, density=0.0005)
    monkeypatch.setattr(diagnostics, "_UNCHECKED_BYTES", 0)
    monkeypatch.setattr(diagnostics, "available_memory", lambda: 20e6)  # a tiny machine
    model = LogisticRegression(alpha=1.0, max_iter=5)
    with pytest.raises(MemoryError, match=r"needs at least 0\.[0-9] GB .* only 0\.0 GB"):
        model.fit(X, y)
    assert not hasattr(model, "coef_")
    # ... before the objective is built: its prior and start vectors are parameter-sized
    # too (a 10,000 x 1,000,000, K = 50 fit failed there, allocating 381 MiB under
    # ulimit -v 3000000, before the estimate was made)
    import problin.glm._base as base

    def built(*args, **kwargs):
        raise AssertionError("the objective was built before the memory check")

    monkeypatch.setattr(base, "classifier_problem", built)
    for solver in ("auto", "lbfgs"):
        for alpha, blocks in ((1.0, 4), (0.0, 3)):  # (K blocks with a prior, K-1 without)
            with pytest.raises(MemoryError, match=f"fitting {blocks * 40_001:,} parameters "
                                                  "by L-BFGS needs at least"):
                LogisticRegression(alpha=alpha, solver=solver).fit(X, y)


def test_fewer_pairs_where_memory_is_short(monkeypatch):
    """Between the fewest pairs and the most, the fit stores what fits and converges."""
    X, y = sparse_softmax()
    full = LogisticRegression(alpha=1.0, solver="lbfgs").fit(X, y)
    p, rows, blocks = 6 * 601, 600, 6
    short = lbfgs_memory(p, rows, blocks, pairs=4)
    monkeypatch.setattr(diagnostics, "_UNCHECKED_BYTES", 0)
    monkeypatch.setattr(diagnostics, "available_memory", lambda: 2.0 * short)
    assert diagnostics.lbfgs_pairs(_objective(X, y), rows=600) == 4
    lean = LogisticRegression(alpha=1.0, solver="lbfgs").fit(X, y)
    assert lean.converged_
    np.testing.assert_allclose(lean.coef_, full.coef_, rtol=1e-5, atol=1e-7)


def _objective(X, y):
    from problin._core.model.families import BernoulliLogit
    from problin._source import data_source
    from problin.glm.problem import classifier_family, classifier_problem
    est = LogisticRegression(alpha=1.0)
    rows = data_source(X).classifier_rows(est, y, None, True, True)
    family = classifier_family(BernoulliLogit(), est.classes_.size, 1.0)
    return classifier_problem(rows, family, 1.0).objective


def test_penalised_sparse_softmax_converges_in_tens_of_iterations():
    """Standardising sparse columns (std ~ 0.05) made the penalty's curvature on them
    hundreds of times the data's: L-BFGS took hundreds of iterations where
    scikit-learn's raw coordinates take tens. The scaling now balances the two."""
    X, y = sparse_softmax()
    model = LogisticRegression(alpha=1.0, solver="lbfgs").fit(X, y)
    assert model.converged_
    assert model.n_iter_ <= 40
    # the penalised optimum: the data's gradient balances the prior's, alpha W
    P = model.predict_proba(X)
    T = np.eye(P.shape[1])[y]
    np.testing.assert_allclose(X.T @ (T - P), model.coef_.T, atol=1e-5)


def test_available_memory_counts_the_address_space_limit(monkeypatch):
    """Under ``ulimit -v`` MemAvailable overstated what a fit could allocate (20 GB
    with a 3 GB limit): the limit less the address space in use now bounds it."""
    import resource
    with open("/proc/self/status") as fh:
        used = next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmSize:"))
    monkeypatch.setattr(resource, "getrlimit", lambda what: (used + 2**30, -1))
    assert diagnostics.available_memory() <= 2**30 + 2**26


def many_classes(n=1500, d=8, k=40, seed=0):
    from scipy.special import softmax
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) + 0.5 * rng.standard_normal((n, 1))
    cdf = np.cumsum(softmax(X @ rng.normal(0, 0.3, (d, k)), axis=1), axis=1)
    return X, np.minimum((cdf < rng.random((n, 1))).sum(axis=1), k - 1)


@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_many_class_softmax_starts_from_the_start_hessian(alpha):
    """L-BFGS from a multiple of the identity crawled along the classes' coupling
    (K = 300: 521 iterations, scikit-learn tens); from the exact start Hessian
    ``C (x) G + prior`` (M blocks of order p) it takes tens."""
    X, y = many_classes()
    model = LogisticRegression(alpha=alpha, solver="lbfgs").fit(X, y)
    assert model.converged_
    assert model.n_iter_ <= 60
    newton = LogisticRegression(alpha=alpha, solver="newton").fit(X, y)
    np.testing.assert_allclose(model.predict_proba(X), newton.predict_proba(X), atol=1e-6)


@pytest.mark.parametrize("alpha", [0.0, 2.0])
def test_start_preconditioner_is_the_inverse_start_hessian(alpha):
    from problin._core.model.families import BernoulliLogit
    from problin._source import data_source
    from problin.glm.problem import classifier_family, classifier_problem
    X, y = many_classes(n=300, d=3, k=5)
    est = LogisticRegression(alpha=alpha)
    rows = data_source(X).classifier_rows(est, y, None, True, True, standardise=True)
    problem = classifier_problem(rows, classifier_family(BernoulliLogit(), 5, alpha), alpha)
    objective, theta0 = problem.objective, problem.theta0
    H = objective.shared_hessian(theta0)
    apply = objective.start_preconditioner(theta0)
    v = np.random.default_rng(1).standard_normal(theta0.size)
    # exact up to the 1e-10 ridge on a null direction and the rank-one's cross terms
    np.testing.assert_allclose(H @ apply(v), v, atol=1e-6)
