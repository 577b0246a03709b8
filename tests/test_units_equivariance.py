"""Every estimator's result transforms exactly with the units of its inputs (issue 13).

Random columns are scaled by 10^k, k in [-12, 12], and shifted by up to 1e8
(``x' = 10^k (x + s)``: the shift in the column's own units); the fit on the
transformed data must be the fit on the original data, mapped -- coefficients to
1e-8, predictions and probabilities to 1e-9, standard errors and z-values to
1e-6 -- with no warning the original fit does not give (no spurious
CollinearityWarning). On numpy input, on scipy.sparse input (scaling only: a
shift would fill the matrix in) and on Dask input in random row chunkings,
which must give the numpy result to 1e-10. What each estimator promises, and
why, is stated with its case in ``tests/_equivariance_cases.py``; the checks
and tolerances are in ``tests/_equivariance_checks.py``.
"""
import warnings

import dask
import dask.array as da
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import BaseEstimator, clone
from sklearn.pipeline import Pipeline
from tests._equivariance_cases import CASES, N_ROWS, make_data, scale_only, sparsify
from tests._equivariance_checks import Transform, assert_same_fit, snapshot

import problin
from problin import ProblinWarning

BY_ID = {case.id: case for case in CASES}
SPARSE = [c.id for c in CASES if c.sparse]
DASK = [c.id for c in CASES if c.dask]


@st.composite
def draws(draw):
    """A data seed, the number of columns, and per column: whether it is transformed,
    its power of ten and its integer shift; plus row cuts for Dask chunks."""
    d = draw(st.integers(2, 4))
    per_column = (lambda s: st.lists(s, min_size=d, max_size=d))
    return {"seed": draw(st.integers(0, 2 ** 32 - 1)), "d": d,
            "which": draw(per_column(st.booleans())),
            "k": draw(per_column(st.integers(-12, 12))),
            "s": draw(per_column(st.integers(-10 ** 8, 10 ** 8))),
            "cuts": sorted(draw(st.sets(st.integers(1, N_ROWS - 1), max_size=4)))}


def fit(case, tf, X, y):
    """The case's estimator for data in ``tf``'s units, fitted under the warning policy:
    every problin warning is an error unless the case allows it."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ProblinWarning)
        for allowed in case.allowed:
            warnings.simplefilter("ignore", allowed)
        return clone(case.make(tf)).fit(X, y)


def check(case, ref, got, tf, X, Xt, y):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ProblinWarning)
        case.check(ref, got, tf, X, Xt, y)


def _setup(case, p, sparse=False):
    X, y = make_data(case.data, p["seed"], p["d"])
    if sparse:
        X = sparsify(X, p["seed"])
    tf = case.transform(p)
    if sparse:
        tf = scale_only(tf)
    identity = Transform.identity(p["d"])
    return X, y, tf, fit(case, identity, X, y)


def _chunks(n, cuts):
    edges = [0, *cuts, n]
    return tuple(b - a for a, b in zip(edges[:-1], edges[1:]))


# --------------------------------------------------------------------- tests
def test_every_estimator_has_a_case():
    """All the estimators of ``problin.__all__`` are covered (a new one needs a case)."""
    public = {getattr(problin, name) for name in problin.__all__
              if isinstance(getattr(problin, name), type)
              and issubclass(getattr(problin, name), BaseEstimator)
              and name != "Formula"}  # a wrapper reading DataFrames (tests/test_formula.py)
    covered = set()
    for case in CASES:
        est = case.make(Transform.identity(2))
        parts = [step for _, step in est.steps] if isinstance(est, Pipeline) else [est]
        covered |= {type(part) for part in parts}
    assert public <= covered, sorted(c.__name__ for c in public - covered)
    assert len(public) >= 18


@pytest.mark.parametrize("case_id", list(BY_ID))
@settings(max_examples=15, deadline=None)
@given(p=draws())
def test_numpy(case_id, p):
    case = BY_ID[case_id]
    X, y, tf, ref = _setup(case, p)
    Xt = tf.apply(X)
    check(case, ref, fit(case, tf, Xt, y), tf, X, Xt, y)


@pytest.mark.parametrize("case_id", SPARSE)
@settings(max_examples=8, deadline=None)
@given(p=draws())
def test_sparse_scaling(case_id, p):
    """CSR input scaled column by column (``X @ diag(c)``, no densifying): the fit on it
    is the dense fit on the original data, mapped."""
    case = BY_ID[case_id]
    X, y, tf, ref = _setup(case, p, sparse=True)
    Xt = tf.apply(sp.csr_matrix(X))
    assert sp.issparse(Xt)
    check(case, ref, fit(case, tf, Xt, y), tf, X, Xt, y)


@pytest.mark.parametrize("case_id", DASK)
@settings(max_examples=3, deadline=None)
@given(p=draws())
def test_dask_chunkings(case_id, p):
    """A Dask array in random row chunks: the numpy fit to 1e-10, so mapped exactly too."""
    case = BY_ID[case_id]
    X, y, tf, ref = _setup(case, p)
    Xt = tf.apply(X)
    chunks = _chunks(X.shape[0], p["cuts"])
    Xd = da.from_array(Xt, chunks=(chunks, X.shape[1]))
    yd = da.from_array(y, chunks=(chunks,) + y.shape[1:])
    with dask.config.set(scheduler="synchronous"):
        got = fit(case, tf, Xd, yd)
    assert_same_fit(snapshot(got, Xt), snapshot(fit(case, tf, Xt, y), Xt))
    check(case, ref, got, tf, X, Xt, y)
