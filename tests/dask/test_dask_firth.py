"""Firth's penalty on Dask input (issue 35): the leverages' row sums over the chunks
(``problin._dask.fisher_rows``) give the in-memory Firth fit to 1e-10 whatever the
chunking (coefficients, logistf's covariance, the penalised log-likelihood, the
iterations), for the logit, the probit and the Poisson-log with weights and an exposure
in the chunks; on separated data too, where the estimates are finite and solve Heinze &
Schemper's modified score (closed form here); the profile intervals refit on the
chunks; the softmax's contrasts and FLIC likewise. Dask's threaded scheduler: the chunk
arithmetic is the same on a cluster (``test_dask_glm.py`` runs the passes there).
"""
import functools
import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from problin import LogisticRegression, PoissonRegression, ProbitRegression  # noqa: E402
from problin._core.model.design import Design  # noqa: E402
from problin._core.model.families import BernoulliLogit  # noqa: E402
from problin._core.model.penalty_firth import MemoryFisherRows  # noqa: E402


def random_chunks(n, seed, most=6):
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.choice(np.arange(1, n), size=rng.integers(1, most), replace=False))
    return tuple(int(c) for c in np.diff(np.concatenate([[0], cuts, [n]])))


def rows(a, chunks):
    return da.from_array(a, chunks=(chunks,) + a.shape[1:])


def _params(model):
    return np.r_[model.intercept_, np.ravel(model.coef_)]


def assert_same_fit(got, want, where):
    for name in ("coef_", "intercept_", "covariance_"):
        a, b = np.asarray(getattr(want, name)), np.asarray(getattr(got, name))
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-10 * np.abs(a).max(),
                                   err_msg=f"{where} {name}")
    # the minimised objective: minus the penalised log-likelihood
    assert got._result.objective == pytest.approx(want._result.objective, rel=1e-12), where
    assert (got.n_iter_, got.converged_) == (want.n_iter_, want.converged_), where


def _modified_score(X, y, params, w=None):
    """Heinze & Schemper's (2002) score ``Z^T s (y - p + h (1/2 - p))`` (``h`` the
    leverages of the weighted design, frequency weights ``s``)."""
    Z = np.column_stack([np.ones(len(X)), X])
    p = 1.0 / (1.0 + np.exp(-Z @ params))
    s = np.ones(len(y)) if w is None else w
    W = s * p * (1 - p)
    h = W * np.einsum("ij,ij->i", Z @ np.linalg.inv(Z.T @ (W[:, None] * Z)), Z)
    return Z.T @ (s * (y - p) + h * (0.5 - p))


def _binary(seed=3, n=40):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X @ [1.5, -1.0, 0.5] + rng.logistic(size=n) > 0).astype(float)
    return X, y, rng.integers(1, 4, n).astype(float)


@pytest.mark.parametrize("estimator, chunkings", [
    (LogisticRegression, [(40,), random_chunks(40, 1)]),  # (one chunk, random ones)
    (ProbitRegression, [random_chunks(40, 2)])])
def test_binary_firth_on_dask_equals_memory(estimator, chunkings):
    """The in-memory fit (which ``tests/glm/test_firth.py`` holds to mpmath and logistf);
    weighted, the weights in the chunks."""
    X, y, w = _binary()
    want = estimator(penalty="firth").fit(X, y, sample_weight=w)
    for chunks in chunkings:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = estimator(penalty="firth").fit(rows(X, chunks), rows(y, chunks),
                                                 sample_weight=rows(w, chunks))
        assert_same_fit(got, want, chunks)


def test_poisson_firth_on_dask_equals_memory():
    """The regressors' chunks carry the frequency weights and the exposure (the leverages'
    offset)."""
    X, _, w = _binary(11, 50)
    rng = np.random.default_rng(11)
    exposure = rng.uniform(0.5, 2.0, X.shape[0])
    y = rng.poisson(exposure * np.exp(0.3 + X @ [0.8, 0.0, -0.5])).astype(float)
    want = PoissonRegression(penalty="firth").fit(X, y, sample_weight=w, exposure=exposure)
    chunks = random_chunks(y.size, 3)
    got = PoissonRegression(penalty="firth").fit(
        rows(X, chunks), rows(y, chunks), sample_weight=rows(w, chunks),
        exposure=rows(exposure, chunks))
    assert_same_fit(got, want, chunks)
    for name in ("deviance_", "log_likelihood_"):
        assert getattr(got, name) == pytest.approx(getattr(want, name), rel=1e-10)


def test_separated_firth_on_dask_is_finite():
    """Complete separation (the exact-Hessian steps, ``M M^T`` formed after the chunk
    sums): finite estimates solving the modified score, no SeparationWarning but the
    summary's note, the in-memory fit; its profile intervals too, refitted on the chunks (on data whose
    classes overlap: on separated data the profile's bounds move with the estimate's
    rounding, in memory as on Dask)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(float)
    want = LogisticRegression(penalty="firth").fit(X, y)
    chunks = random_chunks(y.size, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = LogisticRegression(penalty="firth").fit(rows(X, chunks), rows(y, chunks))
    assert_same_fit(got, want, chunks)
    params = _params(got)
    assert np.all(np.isfinite(params)) and np.abs(params).max() < 20
    assert np.abs(_modified_score(X, y, params)).max() < 1e-8
    assert not hasattr(got, "separated_")
    assert "separated" in str(got.summary_text())  # (the note: the margins' certificate)

    X, y, _ = _binary(8, 30)
    X = X[:, :1]
    want = LogisticRegression(penalty="firth").fit(X, y)
    got = LogisticRegression(penalty="firth").fit(rows(X, 11), rows(y, 11))
    table = got.summary(ci="profile", X=rows(X, 11), y=rows(y, 11))
    reference = want.summary(ci="profile", X=X, y=y)
    for column in ("ci_low", "ci_high"):
        np.testing.assert_allclose(table[column], reference[column], rtol=1e-8,
                                   err_msg=column)


def test_flic_on_dask_equals_memory():
    """FLIC's intercept shift (a Newton step a distributed pass) and its Gram on the
    chunks: the in-memory fit (held to logistf in ``tests/glm/test_firth_calibrated.py``),
    weighted; the weighted mean prediction is the weighted event rate."""
    X, y, w = _binary(9, 40)
    want = LogisticRegression(penalty="flic").fit(X, y, sample_weight=w)
    chunks = random_chunks(y.size, 9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = LogisticRegression(penalty="flic").fit(rows(X, chunks), rows(y, chunks),
                                                     sample_weight=rows(w, chunks))
    assert_same_fit(got, want, chunks)
    p = np.asarray(got.predict_proba(X))[:, 1]
    assert abs(w @ p - w @ y) / w.sum() < 1e-10
    assert got.log_likelihood_ == pytest.approx(want.log_likelihood_, rel=1e-12)


@pytest.mark.parametrize("separated", [False, True])
def test_softmax_firth_on_dask_equals_memory(separated):
    """Softmax (K - 1 contrasts): the chunks' information and leverage sums give the
    in-memory fit (held to mpmath in ``tests/glm/test_firth_softmax.py``), weighted, on
    random chunkings; on separated classes too, where the steps take the exact Hessian
    (its ``N N^T`` formed after the chunk sums)."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(36, 2))
    if separated:  # class 0 (x0 < -0.4) apart from the others
        t, w = np.digitize(X[:, 0], [-0.4, 0.4]), None
    else:
        eta = np.column_stack([np.zeros(36), 0.5 + X @ [1.0, -0.5], X @ [-0.8, 1.2]])
        prob = np.exp(eta) / np.exp(eta).sum(axis=1, keepdims=True)
        t = (prob.cumsum(axis=1) < rng.uniform(size=(36, 1))).sum(axis=1)
        w = rng.integers(1, 4, 36).astype(float)
    want = LogisticRegression(penalty="firth").fit(X, t, sample_weight=w)
    chunks = random_chunks(36, 7 + separated)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = LogisticRegression(penalty="firth").fit(
            rows(X, chunks), rows(t, chunks),
            sample_weight=None if w is None else rows(w, chunks))
    assert_same_fit(got, want, chunks)
    assert got.coef_.shape == (3, 2) and np.abs(got.coef_).max() < 30


def test_dask_fisher_rows_sketch_and_refusals():
    """The sketch's rows are gathered into the in-memory rows of the same subset (binary
    and softmax); FLAC refuses Dask input by name."""
    from problin._core.model.family_softmax import CategoricalSoftmax
    from problin._core.model.penalty_firth_softmax import SoftmaxFisherRows
    from problin._dask.design import dask_classifier_data
    from problin._dask.fisher_rows import (DaskFisherRows, binary_fisher_rows,
                                           softmax_fisher_rows)

    X, y, w = _binary(4, 30)
    model = LogisticRegression(penalty="firth")
    design = dask_classifier_data(model, rows(X, 7), rows(y, 7), rows(w, 7), False, True)
    family = BernoulliLogit()
    dask_rows = DaskFisherRows(design, functools.partial(binary_fisher_rows, family=family))
    subset, sw = np.array([1, 5, 8, 13, 21, 29]), np.linspace(1.0, 2.0, 6)
    theta = np.array([0.2, 0.5, -0.3, 0.1])
    memory = MemoryFisherRows(Design(X, True), family, y, w, None).subsample(subset, sw)
    np.testing.assert_allclose(dask_rows.subsample(subset, sw).information(theta),
                               memory.information(theta), rtol=1e-13)
    np.testing.assert_allclose(dask_rows.information(theta),
                               MemoryFisherRows(Design(X, True), family, y, w,
                                                None).information(theta), rtol=1e-12)
    t = np.arange(30) % 3
    design = dask_classifier_data(model, rows(X, 7), rows(t, 7), rows(w, 7), True, True)
    softmax = CategoricalSoftmax(3, contrast=True)
    dask_rows = DaskFisherRows(design, functools.partial(softmax_fisher_rows, family=softmax))
    theta = np.linspace(-0.5, 0.5, 8)
    memory = SoftmaxFisherRows(Design(X, True), softmax, t, w).subsample(subset, sw)
    np.testing.assert_allclose(dask_rows.subsample(subset, sw).information(theta),
                               memory.information(theta), rtol=1e-13)
    with pytest.raises(ValueError, match="penalty='flac' refits in memory"):
        LogisticRegression(penalty="flac").fit(rows(X, 7), rows(y, 7))
