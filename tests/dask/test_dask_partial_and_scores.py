"""Dask input for the generative classifiers' ``partial_fit``, ``decision_function``
and ``score_samples`` (issue 8).

A stream of Dask and numpy batches equals one numpy fit to 1e-10 relative, on a
``dask.distributed`` LocalCluster and on the threaded scheduler; the scores of
Dask input are lazy Dask arrays equal to the numpy ones.
"""
import numpy as np
import pytest
from sklearn.base import clone

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
pytest.importorskip("dask.distributed")

from problin import (
    BernoulliNB,
    GaussianDiscriminantAnalysis,
    GaussianNB,
    LinearDiscriminantAnalysis,
    MultinomialNB,
    QuadraticDiscriminantAnalysis,
)

N, D, CHUNK = 6_000, 5, 1_100  # uneven last chunk
GAUSSIAN = [LinearDiscriminantAnalysis(), QuadraticDiscriminantAnalysis(), GaussianNB(),
            GaussianDiscriminantAnalysis(covariance_type="spherical"),
            GaussianDiscriminantAnalysis(covariance_type="diag", reg_covar=0.1)]
COUNTS = [BernoulliNB(binarize=1.0), MultinomialNB(alpha=0.5)]
FITTED = ["means_", "covariances_", "priors_", "class_count_", "coef_", "intercept_",
          "epsilon_", "var_", "feature_count_", "feature_log_prob_", "class_log_prior_"]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(88)
    X = rng.normal(size=(N, D)) * np.linspace(0.5, 2.0, D) + 10.0
    labels = np.digitize(X[:, 0] - 10.0 + 0.5 * (X[:, 1] - 10.0) + rng.normal(size=N),
                         [-0.5, 0.5])
    counts = rng.poisson(np.exp(0.3 * (X - 10.0))).astype(np.float64)
    return X, counts, np.array(["a", "b", "c"])[labels]


def dask_rows(a, chunk=CHUNK):
    return da.from_array(a, chunks=(chunk,) + a.shape[1:])


def features(model, data):
    return data[1] if isinstance(model, (BernoulliNB, MultinomialNB)) else data[0]


def assert_same_fit(a, b):
    assert (b.n_features_in_, list(b.classes_)) == (a.n_features_in_, list(a.classes_))
    for name in (n for n in FITTED if hasattr(a, n)):
        want, got = (np.asarray(getattr(m, name), dtype=np.float64) for m in (a, b))
        scale = max(float(np.max(np.abs(want), initial=0.0)), 1e-300)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10 * scale, err_msg=name)


def stream(model, X, labels, w=None):
    """Batches: Dask (first, with classes), numpy, Dask without ``c``, Dask."""
    cuts = [0, 2_000, 3_000, 4_500, N]
    for i, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:])):
        Xb, yb = X[lo:hi], labels[lo:hi]
        wb = None if w is None else w[lo:hi]
        if i == 2:
            keep = yb != "c"
            Xb, yb, wb = Xb[keep], yb[keep], None if wb is None else wb[keep]
        if i != 1:
            Xb, yb = dask_rows(Xb, 700), dask_rows(yb, 700)
            wb = None if wb is None else dask_rows(wb, 700)
        model.partial_fit(Xb, yb, classes=["a", "b", "c"] if i == 0 else None,
                          sample_weight=wb)
    return model


def one_fit(model, X, labels, w=None):
    keep = np.ones(N, bool)
    keep[3_000:4_500] = labels[3_000:4_500] != "c"
    return clone(model).fit(X[keep], labels[keep], None if w is None else w[keep])


@pytest.mark.parametrize("model", GAUSSIAN + COUNTS, ids=repr)
def test_stream_of_dask_and_numpy_batches_equals_one_fit(client, data, model):
    X, labels = features(model, data), data[2]
    assert_same_fit(one_fit(model, X, labels), stream(clone(model), X, labels))


@pytest.mark.parametrize("model", [LinearDiscriminantAnalysis(), GaussianNB(), COUNTS[0]],
                         ids=repr)
def test_weighted_stream_threaded(data, model):
    X, labels = features(model, data), data[2]
    w = np.random.default_rng(3).uniform(0.1, 3.0, size=N)
    with dask.config.set(scheduler="threads"):
        b = stream(clone(model), X, labels, w)
    assert_same_fit(one_fit(model, X, labels, w), b)


def test_stream_errors(data):
    X, _, labels = data
    with dask.config.set(scheduler="threads"):
        m = GaussianNB()
        with pytest.raises(ValueError, match="only one class"):
            m.partial_fit(dask_rows(X[labels == "a"]), dask_rows(labels[labels == "a"]))
        assert not hasattr(m, "classes_")
        m.partial_fit(dask_rows(X), labels, classes=["a", "b", "c"])  # numpy y
        with pytest.raises(ValueError, match=r"labels \['z'\] that are not among"):
            m.partial_fit(dask_rows(X[:10]), np.array(["z"] * 10))
        with pytest.raises(ValueError, match="X has 4 features"):
            m.partial_fit(dask_rows(X[:, :4]), labels)
        with pytest.raises(ValueError, match="y has 5999 rows but X has 6000"):
            m.partial_fit(dask_rows(X), dask_rows(labels[1:]))
        with pytest.raises(ValueError, match="Negative values"):
            MultinomialNB().partial_fit(dask_rows(X - 10.0), labels)
        assert_same_fit(GaussianNB().fit(X, labels), m)  # the failed batches left no trace


@pytest.mark.parametrize("model", GAUSSIAN + COUNTS, ids=repr)
@pytest.mark.parametrize("binary", [False, True])
def test_lazy_decision_function_and_score_samples(client, data, model, binary):
    X, labels = features(model, data), data[2]
    if binary:
        labels = np.where(labels == "a", "a", "b")
    fitted = clone(model).fit(X, labels)
    for method in ("decision_function", "score_samples"):
        if not hasattr(fitted, method):
            continue
        lazy = getattr(fitted, method)(dask_rows(X))
        want = getattr(fitted, method)(X)
        assert isinstance(lazy, da.Array) and lazy.shape == want.shape
        np.testing.assert_allclose(lazy.compute(), want, rtol=1e-9,
                                   atol=1e-9 * np.max(np.abs(want)))
