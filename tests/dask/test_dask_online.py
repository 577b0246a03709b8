"""Dask input for the sequential learners (Perceptron, LMSRegressor) and the basis
transformers (issue 8).

The online learners run each epoch as a chain of chunk tasks carrying the weights
(in storage order, or in the very permutation the numpy fit draws), so a Dask fit
equals the numpy fit to 1e-10 relative (in practice bit for bit), epoch by epoch,
on a ``dask.distributed`` LocalCluster of two worker processes and on the threaded
scheduler. The bases place their centres by exact reductions (range, quantiles)
and transform lazily.
"""
import warnings

import numpy as np
import pytest
from sklearn.base import clone

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
pytest.importorskip("dask.distributed")

from problin import (
    ConvergenceWarning,
    GaussianBasis,
    LMSRegressor,
    Perceptron,
    PolynomialBasis,
    SigmoidalBasis,
)

N, D, CHUNK = 3_000, 4, 700  # uneven last chunk: 4 x 700 + 200


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(18)
    X = rng.normal(size=(N, D)) * np.linspace(0.5, 2.0, D) + 1.0
    y = (X - 1.0) @ np.array([1.0, -1.0, 0.5, 0.25]) + 0.5 + rng.normal(scale=0.3, size=N)
    labels = np.digitize(X[:, 0] - 1.0 + 0.4 * rng.normal(size=N), [-0.4, 0.4])
    return X, y, labels


def dask_rows(a, chunk=CHUNK):
    return da.from_array(a, chunks=(chunk,) + a.shape[1:])


def assert_close(got, want, name):
    want, got = np.asarray(want, dtype=np.float64), np.asarray(got, dtype=np.float64)
    scale = max(float(np.max(np.abs(want), initial=0.0)), 1e-300)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10 * scale, err_msg=name)


def fit_quietly(model, X, y):
    with warnings.catch_warnings():  # few epochs on overlapping classes: expected
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, y)


def assert_same_online_fit(a, b):
    for name in ("coef_", "intercept_"):
        assert_close(getattr(b, name), getattr(a, name), name)
    for name in ("n_iter_", "t_", "converged_"):
        if hasattr(a, name):
            assert getattr(b, name) == getattr(a, name), name
    if hasattr(a, "history_"):
        np.testing.assert_array_equal(b.history_, a.history_)
        np.testing.assert_array_equal(b.classes_, a.classes_)
    assert b.n_features_in_ == a.n_features_in_


def labels_for(k, data):
    _, _, labels = data
    return (labels > 0).astype(np.int64) if k == 2 else np.array(["a", "b", "c"])[labels]


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("k", [2, 3])
def test_distributed_perceptron_equals_numpy(client, data, k, shuffle):
    X, labels = data[0], labels_for(k, data)
    model = Perceptron(max_iter=4, shuffle=shuffle, random_state=3)
    a = fit_quietly(clone(model), X, labels)
    b = fit_quietly(clone(model), dask_rows(X), dask_rows(labels))
    assert_same_online_fit(a, b)
    lazy = b.predict(dask_rows(X))
    assert isinstance(lazy, da.Array) and lazy.dtype == a.classes_.dtype
    np.testing.assert_array_equal(lazy.compute(), a.predict(X))
    scores = b.decision_function(dask_rows(X))
    assert isinstance(scores, da.Array)
    assert_close(scores.compute(), a.decision_function(X), "decision_function")


def test_perceptron_converges_on_separable_dask_data(data):
    X = data[0]
    X = X[np.abs(X[:, 0] + X[:, 1] - 2.0) > 0.5]  # a margin: few epochs to converge
    t = (X[:, 0] + X[:, 1] > 2.0).astype(int)
    with dask.config.set(scheduler="threads"):
        b = Perceptron(random_state=0).fit(dask_rows(X), t)  # numpy labels, Dask rows
    a = Perceptron(random_state=0).fit(X, t)
    assert a.converged_ and b.converged_
    assert_same_online_fit(a, b)


def test_dask_perceptron_refuses_columns_too_small_for_float64(data):
    """As the numpy path: a column at 1e-165 has squares that underflow, so its spread
    reads as 0 and the column was dropped silently; a clear error instead."""
    X = data[0] * [1.0, 1.0, 1.0, 1e-165]
    t = (X[:, 0] + X[:, 1] > 2.0).astype(int)
    with dask.config.set(scheduler="threads"):
        with pytest.raises(ValueError, match=r"column \[3\] of X holds only values too small"):
            Perceptron(random_state=0).fit(dask_rows(X), t)
        fit_quietly(Perceptron(max_iter=2, random_state=0), dask_rows(X * [1, 1, 1, 1e25]), t)


@pytest.mark.parametrize("params", [dict(shuffle=False), dict(shuffle=True),
                                    dict(learning_rate="constant", eta0=0.05)], ids=repr)
@pytest.mark.parametrize("outputs", [1, 2])
def test_distributed_lms_equals_numpy(client, data, params, outputs):
    X, y, _ = data
    t = y if outputs == 1 else np.column_stack([y, 2.0 - y])
    model = LMSRegressor(max_iter=3, tol=0.0, random_state=5, **params)
    a = fit_quietly(clone(model), X, t)
    b = fit_quietly(clone(model), dask_rows(X), dask_rows(t))
    assert_same_online_fit(a, b)
    pred = b.predict(dask_rows(X))
    assert isinstance(pred, da.Array)
    assert_close(pred.compute(), a.predict(X), "predict")


def test_lms_stops_at_the_same_epoch_and_partial_fit_takes_dask_batches(data):
    X, y, _ = data
    a = LMSRegressor(tol=1e-3, random_state=1).fit(X, y)
    with dask.config.set(scheduler="threads"):
        b = LMSRegressor(tol=1e-3, random_state=1).fit(dask_rows(X), dask_rows(y))
        assert 1 < a.n_iter_ < a.max_iter
        assert_same_online_fit(a, b)
        c, d = LMSRegressor(random_state=2), LMSRegressor(random_state=2)
        for lo, hi, chunk in [(0, 1_000, 300), (1_000, 1_700, None), (1_700, N, 450)]:
            c.partial_fit(X[lo:hi], y[lo:hi])
            d.partial_fit(X[lo:hi] if chunk is None else dask_rows(X[lo:hi], chunk), y[lo:hi])
            assert_same_online_fit(c, d)
        with pytest.raises(ValueError, match="X has 3 features"):
            d.partial_fit(dask_rows(X[:, :3]), y)


@pytest.mark.parametrize("basis", [PolynomialBasis(degree=3, include_bias=True),
                                   GaussianBasis(n_centers=5),
                                   GaussianBasis(n_centers=4, spacing="quantile", radial=True),
                                   SigmoidalBasis(n_centers=6, spacing="quantile"),
                                   SigmoidalBasis(centers=[0.0, 1.0, 2.0], scale=0.5)], ids=repr)
def test_distributed_bases_equal_numpy(client, data, basis):
    X = data[0]
    a = clone(basis).fit(X)
    b = clone(basis).fit(dask_rows(X))
    for name in ("centers_", "width_"):
        if hasattr(a, name):
            assert_close(getattr(b, name), getattr(a, name), name)
    out = b.transform(dask_rows(X))
    assert isinstance(out, da.Array) and out.shape == a.transform(X).shape
    assert_close(out.compute(), a.transform(X), "transform")
    assert isinstance(clone(basis).fit_transform(dask_rows(X)), da.Array)


def test_quantile_centres_need_several_passes_and_stay_exact():
    # 20 000 heavy-tailed values with ties: more than one counting pass per quantile.
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.standard_cauchy(20_000) * 1e100,
                         np.round(rng.normal(size=20_000), 1)])
    with dask.config.set(scheduler="threads"):
        b = GaussianBasis(n_centers=7, spacing="quantile").fit(dask_rows(X, 3_000))
    np.testing.assert_array_equal(b.centers_, GaussianBasis(n_centers=7, spacing="quantile")
                                  .fit(X).centers_)


@pytest.mark.parametrize("model", [Perceptron(max_iter=2, shuffle=False),
                                   Perceptron(max_iter=2), LMSRegressor(max_iter=2),
                                   LMSRegressor(max_iter=2, shuffle=False),
                                   GaussianBasis(), SigmoidalBasis(spacing="quantile")],
                         ids=repr)
def test_nan_names_the_chunk(data, model):
    X = data[0].copy()
    X[2 * CHUNK + 17, 1] = np.nan
    t = data[2] if isinstance(model, Perceptron) else data[1]
    with dask.config.set(scheduler="threads"), \
            pytest.raises(ValueError, match=rf"Input X contains NaN or infinity in chunk 2 "
                                            rf"\(row {2 * CHUNK + 17}"):
        fit_quietly(clone(model), dask_rows(X), dask_rows(t))


def test_nan_in_the_target_names_the_chunk(data):
    X, y, _ = data
    y = y.copy()
    y[CHUNK + 3] = np.inf
    with dask.config.set(scheduler="threads"), \
            pytest.raises(ValueError, match=rf"Input y contains NaN or infinity in chunk 1 "
                                            rf"\(row {CHUNK + 3}"):
        LMSRegressor(max_iter=1).fit(dask_rows(X), dask_rows(y))


@pytest.mark.parametrize("model", [Perceptron(max_iter=3, random_state=0),
                                   LMSRegressor(max_iter=2, random_state=0)], ids=repr)
def test_unknown_chunk_sizes_dataframes_and_mismatched_chunks(data, model):
    dd = pytest.importorskip("dask.dataframe")
    X = data[0]
    t = data[2] if isinstance(model, Perceptron) else data[1]
    a = fit_quietly(clone(model), X, t)
    frame = dd.from_array(X, chunksize=CHUNK)
    Xu = frame.to_dask_array()  # no lengths: chunk sizes are nan
    assert np.isnan(Xu.chunks[0][0])
    with dask.config.set(scheduler="threads"):
        assert_same_online_fit(a, fit_quietly(clone(model), Xu, dd.from_array(t, 900)))
        assert_same_online_fit(a, fit_quietly(clone(model), frame, t))
        assert_same_online_fit(a, fit_quietly(clone(model), dask_rows(X), dask_rows(t, 1_100)))
        with pytest.raises(ValueError, match="y has 2999 rows but X has 3000"):
            clone(model).fit(dask_rows(X), dask_rows(t[1:]))


def test_dataframe_feature_names_reach_the_basis_and_the_classifier(data):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, _, labels = data
    names = [f"f{j}" for j in range(D)]
    frame = dd.from_pandas(pd.DataFrame(X, columns=names), chunksize=CHUNK)
    with dask.config.set(scheduler="threads"):
        basis = PolynomialBasis(degree=2).fit(frame)
        assert list(basis.get_feature_names_out())[:3] == ["f0", "f0^2", "f1"]
        out = basis.transform(frame)
        assert isinstance(out, da.Array)
        assert_close(out.compute(), PolynomialBasis(degree=2).fit(X).transform(X), "transform")
        clf = fit_quietly(Perceptron(max_iter=2, random_state=0), frame, labels)
        assert list(clf.feature_names_in_) == names
        with pytest.raises(ValueError, match="feature names"):
            clf.predict(frame.rename(columns={"f0": "g0"}))


@pytest.mark.parametrize("shuffle", [False, True])
def test_empty_chunks_are_skipped(data, shuffle):
    X, y, labels = data
    chunks = ((1_000, 0, 1_500, 0, 500),)
    Xd = da.from_array(X, chunks=chunks + ((D,)))
    with dask.config.set(scheduler="threads"):
        for model, t in [(LMSRegressor(max_iter=2, shuffle=shuffle, random_state=0), y),
                         (Perceptron(max_iter=2, shuffle=shuffle, random_state=0), labels)]:
            a = fit_quietly(clone(model), X, t)
            assert_same_online_fit(a, fit_quietly(clone(model), Xd, da.from_array(t, chunks)))
        b = GaussianBasis(spacing="quantile").fit(Xd)
        assert_close(b.centers_, GaussianBasis(spacing="quantile").fit(X).centers_, "centers_")


def test_lms_on_dask_rows_with_an_empty_chunk_equals_numpy(data):
    """A boolean filter leaves empty chunks; dask's std of y was NaN there, so the
    stopping rule fell back to a floor of 1 and stopped 11 epochs later than numpy."""
    X, y, _ = data
    Xd = da.from_array(X[:600], chunks=((100, 100, 100, 0, 100, 100, 100), 4))
    yd = da.from_array(y[:600], chunks=((100, 100, 100, 0, 100, 100, 100),))
    with dask.config.set(scheduler="threads"):
        b = fit_quietly(LMSRegressor(shuffle=False, random_state=0), Xd, yd)
    a = fit_quietly(LMSRegressor(shuffle=False, random_state=0), X[:600], y[:600])
    assert b.n_iter_ == a.n_iter_
    assert_close(b.coef_, a.coef_, "coef_")
