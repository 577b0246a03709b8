"""Dask input for the one-pass sufficient-statistics models (first slice of issue 8).

Each model fitted on a chunked Dask array, on a ``dask.distributed`` LocalCluster
of two worker processes and on the threaded scheduler, equals the numpy fit to
1e-10 relative; errors name the chunk; predictions stay lazy.
"""
import numpy as np
import pytest
from sklearn.base import clone

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("dask.distributed")

from problin import (
    BayesianLinearRegression,
    GaussianNB,
    LeastSquaresClassifier,
    LinearDiscriminantAnalysis,
    LinearRegression,
    MultinomialNB,
    QuadraticDiscriminantAnalysis,
)

N, D, CHUNK = 20_000, 8, 3_000  # uneven last chunk: 6 x 3000 + 2000

REGRESSORS = [LinearRegression(), LinearRegression(alpha=2.5),
              BayesianLinearRegression(), BayesianLinearRegression(alpha=1.0, beta=4.0)]
CLASSIFIERS = [LinearDiscriminantAnalysis(), QuadraticDiscriminantAnalysis(), GaussianNB()]
FITTED = ["coef_", "intercept_", "alpha_", "beta_", "posterior_cov_", "noise_precision_",
          "means_", "covariances_", "priors_", "class_count_", "var_", "epsilon_"]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(N, D)) * np.linspace(0.5, 3.0, D) + 10.0
    y = (X - 10.0) @ rng.normal(size=D) + 1.5 + rng.normal(scale=0.3, size=N)
    labels = np.digitize(X[:, 0] - 10.0 + 0.5 * X[:, 1] - 5.0 + rng.normal(size=N),
                         [-0.5, 0.5])
    return X, y, labels


def dask_rows(a, chunk=CHUNK):
    return da.from_array(a, chunks=(chunk,) + a.shape[1:])


def assert_same_fit(a, b):
    for name in FITTED:
        if hasattr(a, name):
            want = np.asarray(getattr(a, name), dtype=np.float64)
            got = np.asarray(getattr(b, name), dtype=np.float64)
            scale = max(float(np.max(np.abs(want), initial=0.0)), 1e-300)
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10 * scale, err_msg=name)
    if hasattr(a, "classes_"):
        np.testing.assert_array_equal(b.classes_, a.classes_)
    assert b.n_features_in_ == a.n_features_in_


def target(model, data):
    _, y, labels = data
    return labels if hasattr(model, "priors") else y


def assert_same_predictions(a, b, X):
    lazy = b.predict(dask_rows(X))
    assert isinstance(lazy, da.Array)
    want = a.predict(X)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(lazy.compute(), want, rtol=1e-10,
                                   atol=1e-10 * np.max(np.abs(want)))
    else:
        np.testing.assert_array_equal(lazy.compute(), want)
    if hasattr(a, "predict_proba"):
        proba = b.predict_proba(dask_rows(X))
        assert isinstance(proba, da.Array) and proba.shape == (X.shape[0], a.classes_.size)
        np.testing.assert_allclose(proba.compute(), a.predict_proba(X), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("model", REGRESSORS + CLASSIFIERS, ids=repr)
def test_distributed_fit_equals_numpy_fit(client, data, model):
    X, t = data[0], target(model, data)
    a = clone(model).fit(X, t)
    b = clone(model).fit(dask_rows(X), dask_rows(t))
    assert_same_fit(a, b)
    assert_same_predictions(a, b, X)


@pytest.mark.parametrize("model", [LinearRegression(), BayesianLinearRegression(),
                                   LinearDiscriminantAnalysis(), GaussianNB()], ids=repr)
def test_threaded_scheduler_and_sample_weight(data, model):
    X, t = data[0], target(model, data)
    w = np.random.default_rng(1).uniform(0.1, 3.0, size=N)
    a = clone(model).fit(X, t, sample_weight=w)
    with dask.config.set(scheduler="threads"):
        b = clone(model).fit(dask_rows(X), t, sample_weight=w)          # numpy y, weights
        c = clone(model).fit(dask_rows(X), dask_rows(t), sample_weight=dask_rows(w))
    assert_same_fit(a, b)
    assert_same_fit(a, c)


def test_two_outputs_and_lazy_std(client, data):
    X, y, _ = data
    T = np.column_stack([y, 2.0 * y + X[:, 1]])
    a = BayesianLinearRegression().fit(X, T)
    b = BayesianLinearRegression().fit(dask_rows(X), dask_rows(T))
    assert_same_fit(a, b)
    mean, std = b.predict(dask_rows(X), return_std=True)
    assert isinstance(mean, da.Array) and isinstance(std, da.Array)
    want_mean, want_std = a.predict(X, return_std=True)
    np.testing.assert_allclose(mean.compute(), want_mean, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(std.compute(), want_std, rtol=1e-10)


@pytest.mark.parametrize("model", [LinearRegression(), LinearDiscriminantAnalysis()], ids=repr)
@pytest.mark.parametrize("where", ["X", "y"])
def test_nan_names_the_chunk(data, model, where):
    X, t = data[0].copy(), target(model, data).astype(np.float64)
    if where == "X" or hasattr(model, "priors"):
        X[3 * CHUNK + 17, 2] = np.nan
        where = "X"
    else:
        t[3 * CHUNK + 17] = np.inf
    with dask.config.set(scheduler="threads"), \
            pytest.raises(ValueError, match=rf"Input {where} contains NaN or infinity in chunk "
                                            rf"3 \(row {3 * CHUNK + 17}"):
        clone(model).fit(dask_rows(X), dask_rows(t))


@pytest.mark.parametrize("model", [LinearRegression(), QuadraticDiscriminantAnalysis()],
                         ids=repr)
def test_unknown_chunk_sizes_from_a_dataframe(client, data, model):
    dd = pytest.importorskip("dask.dataframe")
    X, t = data[0], target(model, data)
    frame = dd.from_array(X, chunksize=CHUNK)
    Xu = frame.to_dask_array()  # no lengths: chunk sizes are nan
    tu = dd.from_array(t, chunksize=CHUNK).to_dask_array()
    assert np.isnan(Xu.chunks[0][0])
    a = clone(model).fit(X, t)
    assert_same_fit(a, clone(model).fit(Xu, tu))
    assert_same_fit(a, clone(model).fit(frame, t))  # a Dask DataFrame itself


@pytest.mark.parametrize("model", [BayesianLinearRegression(), GaussianNB()], ids=repr)
def test_mismatched_chunks_of_X_and_y(data, model):
    X, t = data[0], target(model, data)
    a = clone(model).fit(X, t)
    with dask.config.set(scheduler="threads"):
        b = clone(model).fit(dask_rows(X), dask_rows(t, chunk=2_500))
        assert_same_fit(a, b)
        with pytest.raises(ValueError, match="y has 19999 rows but X has 20000"):
            clone(model).fit(dask_rows(X), dask_rows(t[1:]))


def test_columns_in_several_chunks_and_wrong_width(data):
    X, y, labels = data
    Xc = da.from_array(X, chunks=(CHUNK, 3))
    with dask.config.set(scheduler="threads"):
        b = LinearDiscriminantAnalysis().fit(Xc, labels)
        assert_same_fit(LinearDiscriminantAnalysis().fit(X, labels), b)
        with pytest.raises(ValueError, match="X has 7 features"):
            b.predict(dask_rows(X[:, :7]))
        with pytest.raises(ValueError, match="Expected a 2D Dask array"):
            LinearRegression().fit(dask_rows(X[:, 0]), y)


def test_partial_fit(data):
    X, y, labels = data
    half = N // 2
    with dask.config.set(scheduler="threads"):
        b = LinearRegression(alpha=1.0).partial_fit(dask_rows(X[:half]), y[:half])
        b.partial_fit(X[half:], y[half:])  # Dask and numpy batches merge
        assert_same_fit(LinearRegression(alpha=1.0).fit(X, y), b)
        # (the classifiers' Dask partial_fit: test_dask_partial_and_scores.py)


def test_dataframe_feature_names(data):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, _, labels = data
    names = [f"f{j}" for j in range(D)]
    frame = dd.from_pandas(pd.DataFrame(X, columns=names), chunksize=CHUNK)
    with dask.config.set(scheduler="threads"):
        b = GaussianNB().fit(frame, labels)
        assert list(b.feature_names_in_) == names
        np.testing.assert_array_equal(b.predict(frame).compute(),
                                      GaussianNB().fit(X, labels).predict(X))
        with pytest.raises(ValueError, match="feature names"):
            b.predict(frame.rename(columns={"f0": "g0"}))


@pytest.mark.parametrize("model", CLASSIFIERS + [LeastSquaresClassifier(), MultinomialNB()],
                         ids=repr)
def test_one_pass_finds_labels_that_differ_between_chunks(data, model):
    """The labels are found in the statistics' own pass (one compute on the scheduler),
    each chunk holding its own labels: sorted rows, so that the first chunk holds only
    ``"a"`` and ``"b"``, the last only ``"c"`` (merged over the union of labels)."""
    from dask.callbacks import Callback
    X, _, labels = data
    order = np.argsort(labels, kind="stable")
    X, names = X[order], np.array(["a", "b", "c"], dtype=object)[labels[order]]
    X = np.abs(X) if isinstance(model, MultinomialNB) else X
    a = clone(model).fit(X, names)
    computes = []
    with dask.config.set(scheduler="threads"), Callback(start=computes.append):
        b = clone(model).fit(dask_rows(X), dask_rows(names))
    assert len(computes) == 1
    assert_same_fit(a, b)
    np.testing.assert_array_equal(b.predict(X[::97]), a.predict(X[::97]))


def misaligned(a):
    """``a``'s values in a view one byte into a buffer: a chunk as a worker holds it
    after a message (the passes read such rows block by block, not as a copy)."""
    out = np.frombuffer(np.empty(a.nbytes + 1, np.uint8)[1:], dtype=a.dtype).reshape(a.shape)
    out[...] = a
    assert not out.flags.aligned
    return out


def misaligned_rows(a):
    return dask_rows(a).map_blocks(misaligned, dtype=a.dtype)


@pytest.mark.parametrize("model", [LinearRegression(), *CLASSIFIERS], ids=repr)
def test_misaligned_chunks_checked_through_the_statistics(data, model):
    """Misaligned chunks give the numpy fit; a value beyond the magnitude bound there
    (finite, its square too) fails the statistics' bound and is named by chunk and row."""
    X, t = data[0], target(model, data).astype(np.float64)
    with dask.config.set(scheduler="sync"):
        assert_same_fit(clone(model).fit(X, t),
                        clone(model).fit(misaligned_rows(X), misaligned_rows(t)))
        X = np.where(np.arange(N)[:, None] == 2 * CHUNK + 5, 1e145, X)
        with pytest.raises(ValueError, match=rf"in chunk 2 \(row {2 * CHUNK + 5}, 1 row"):
            clone(model).fit(misaligned_rows(X), misaligned_rows(t))
