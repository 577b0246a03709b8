"""Dask input for the Newton-fitted classifiers (issue 8): logistic, softmax, probit and
Bayesian logistic regression.

Each fit on a chunked Dask array, on a ``dask.distributed`` LocalCluster of two worker
processes and on the threaded scheduler, equals the numpy fit to 1e-10 relative
(coefficients, covariance, objective per iteration); errors name the chunk;
predictions stay lazy.
"""
import contextlib
import warnings

import numpy as np
import pytest
from sklearn.base import clone

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("dask.distributed")

from problin import BayesianLogisticRegression, LogisticRegression, ProbitRegression
from problin.exceptions import SeparationWarning
from problin.glm.result import GLMFit

N, D, CHUNK = 6_000, 5, 1_100  # uneven last chunk: 5 x 1100 + 500

FITTED = ["coef_", "intercept_", "covariance_", "history_", "posterior_mean_",
          "posterior_cov_", "log_evidence_", "alpha_", "samples_"]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(N, D)) * np.linspace(0.5, 2.0, D) + 3.0
    eta = (X - 3.0) @ rng.normal(scale=0.7, size=D) + 0.4
    y = (eta + rng.logistic(size=N) > 0).astype(int)
    labels = np.digitize(eta + rng.normal(size=N), [-0.7, 0.7])
    w = rng.uniform(0.1, 3.0, size=N)
    return X, y, labels, w


@pytest.fixture(params=["distributed", "threads"])
def scheduler(request):
    if request.param == "distributed":
        request.getfixturevalue("client")  # the module's LocalCluster is the default
        return contextlib.nullcontext
    return lambda: dask.config.set(scheduler="threads")


def dask_rows(a, chunk=CHUNK):
    return da.from_array(a, chunks=(chunk,) + a.shape[1:])


def assert_same_fit(a, b):
    for name in FITTED:
        if getattr(a, name, None) is not None:
            want = np.asarray(getattr(a, name), dtype=np.float64)
            got = np.asarray(getattr(b, name), dtype=np.float64)
            scale = max(float(np.max(np.abs(want), initial=0.0)), 1e-300)
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10 * scale, err_msg=name)
    np.testing.assert_array_equal(b.classes_, a.classes_)
    assert (b.n_iter_, b.converged_, b.n_features_in_) == (a.n_iter_, a.converged_,
                                                          a.n_features_in_)
    if isinstance(getattr(a, "_result", None), GLMFit):  # the minimised objective
        assert b._result.objective == pytest.approx(a._result.objective, rel=1e-12)


def assert_same_predictions(a, b, X, methods=("predict", "predict_proba", "decision_function")):
    for method in methods:
        lazy = getattr(b, method)(dask_rows(X))
        assert isinstance(lazy, da.Array), method
        want = getattr(a, method)(X)
        if want.dtype.kind == "f":
            np.testing.assert_allclose(lazy.compute(), want, rtol=1e-9, atol=1e-12,
                                       err_msg=method)
        else:
            np.testing.assert_array_equal(lazy.compute(), want)


GLMS = [LogisticRegression(), LogisticRegression(alpha=2.5), ProbitRegression(),
        ProbitRegression(information="expected", alpha=1.0)]
SOFTMAX = [LogisticRegression(), LogisticRegression(alpha=1.0)]


@pytest.mark.parametrize("model", GLMS, ids=repr)
def test_binary_fit_equals_numpy_fit(data, scheduler, model):
    X, y, _, _ = data
    a = clone(model).fit(X, y)
    with scheduler():
        b = clone(model).fit(dask_rows(X), dask_rows(y))
        assert_same_fit(a, b)
        assert_same_predictions(a, b, X)
    assert b.summary()["std_err"].to_numpy() == pytest.approx(
        a.summary()["std_err"].to_numpy(), rel=1e-10)


@pytest.mark.parametrize("model", SOFTMAX, ids=repr)
def test_softmax_fit_equals_numpy_fit(data, scheduler, model):
    X, _, labels, _ = data
    a = clone(model).fit(X, labels)
    with scheduler():
        b = clone(model).fit(dask_rows(X), dask_rows(labels))
        assert_same_fit(a, b)
        assert_same_predictions(a, b, X)


@pytest.mark.parametrize("model", [LogisticRegression(), LogisticRegression(alpha=2.5),
                                   ProbitRegression()], ids=repr)
def test_sample_weight(data, model):
    X, y, labels, w = data
    with dask.config.set(scheduler="threads"):
        for t in (y, labels) if model.alpha == 0 and isinstance(model, LogisticRegression) \
                else (y,):
            a = clone(model).fit(X, t, sample_weight=w)
            assert_same_fit(a, clone(model).fit(dask_rows(X), t, sample_weight=dask_rows(w)))
            assert_same_fit(a, clone(model).fit(dask_rows(X), dask_rows(t), sample_weight=w))


BAYES = [BayesianLogisticRegression(), BayesianLogisticRegression(inference="variational"),
         BayesianLogisticRegression(inference="mcmc", n_samples=200, n_chains=2,
                                    random_state=0, progress=False)]


@pytest.mark.filterwarnings("ignore:R-hat")  # 2 short chains: the draws compared, not judged
@pytest.mark.parametrize("model", BAYES, ids=repr)
def test_bayesian_fit_equals_numpy_fit(data, scheduler, model):
    X, y, _, w = data
    a = clone(model).fit(X, y, sample_weight=w)
    with scheduler():
        b = clone(model).fit(dask_rows(X), dask_rows(y), sample_weight=dask_rows(w))
        assert_same_fit(a, b)
        assert_same_predictions(a, b, X)
        mean, var = b.predict_activation(dask_rows(X))
        assert isinstance(mean, da.Array) and isinstance(var, da.Array)
        np.testing.assert_allclose(var.compute(), a.predict_activation(X)[1], rtol=1e-9)


@pytest.mark.parametrize("model", [BayesianLogisticRegression(alpha=None),
                                   BayesianLogisticRegression(alpha=None,
                                                              inference="variational")],
                         ids=repr)
def test_bayesian_evidence_and_softmax(data, model):
    X, y, labels, _ = data
    with dask.config.set(scheduler="threads"):
        assert_same_fit(clone(model).fit(X, y), clone(model).fit(dask_rows(X), dask_rows(y)))
        if model.inference == "laplace":
            a = clone(model).fit(X, labels)
            b = clone(model).fit(dask_rows(X), dask_rows(labels))
            assert_same_fit(a, b)
            assert_same_predictions(a, b, X, ("predict_proba",))


def test_dataframe_input_and_feature_names(client, data):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y, labels, _ = data
    names = [f"f{j}" for j in range(D)]
    frame = pd.DataFrame(X, columns=names)
    ddf = dd.from_pandas(frame, chunksize=CHUNK)
    for t in (y, labels):
        a = LogisticRegression().fit(frame, t)
        b = LogisticRegression().fit(ddf, dd.from_pandas(pd.Series(t), chunksize=CHUNK))
        assert_same_fit(a, b)
        assert list(b.feature_names_in_) == names
        np.testing.assert_allclose(b.predict_proba(ddf).compute(), a.predict_proba(frame),
                                   rtol=1e-9, atol=1e-12)
    assert list(b.summary().index.get_level_values("parameter")[:2]) == ["intercept", "f0"]


def test_unknown_chunk_sizes_and_mismatched_partitions(data):
    dd = pytest.importorskip("dask.dataframe")
    X, y, _, _ = data
    Xu = dd.from_array(X, chunksize=CHUNK).to_dask_array()  # no lengths: nan chunk sizes
    yu = dd.from_array(y, chunksize=CHUNK).to_dask_array()
    assert np.isnan(Xu.chunks[0][0])
    a = ProbitRegression().fit(X, y)
    with dask.config.set(scheduler="threads"):
        assert_same_fit(a, ProbitRegression().fit(Xu, yu))
        assert_same_fit(a, ProbitRegression().fit(dask_rows(X), dask_rows(y, chunk=700)))
        with pytest.raises(ValueError, match=f"y has {N - 1} rows but X has {N}"):
            ProbitRegression().fit(dask_rows(X), dask_rows(y[1:]))
        with pytest.raises(ValueError, match=f"sample_weight has {N - 1} rows but X has {N}"):
            ProbitRegression().fit(dask_rows(X), y, sample_weight=dask_rows(np.ones(N - 1)))


@pytest.mark.parametrize("model", [LogisticRegression(), BayesianLogisticRegression(
    inference="variational")], ids=repr)
def test_bad_values_name_the_chunk(data, model):
    X, y, _, w = data
    row = 3 * CHUNK + 17
    Xb = X.copy()
    Xb[row, 2] = np.nan
    yb = y.astype(np.float64)
    yb[row] = np.inf
    wb = w.copy()
    wb[row] = -1.0
    where = rf"in chunk 3 \(row {row}"
    with dask.config.set(scheduler="threads"):
        with pytest.raises(ValueError, match=rf"Input X contains NaN or infinity {where}"):
            clone(model).fit(dask_rows(Xb), y)
        with pytest.raises(ValueError, match=rf"Input y contains NaN or infinity {where}"):
            clone(model).fit(dask_rows(X), dask_rows(yb))
        with pytest.raises(ValueError, match="sample_weight has negative values in chunk 3"):
            clone(model).fit(dask_rows(X), y, sample_weight=dask_rows(wb))
        wb[row] = 1e300  # beyond the bound on the total weight, as numpy input is refused
        with pytest.raises(ValueError, match="the weights of chunk 3 sum to 1e\\+300, beyond"):
            clone(model).fit(dask_rows(X), y, sample_weight=dask_rows(wb))


def test_other_errors_as_on_numpy(data):
    X, y, labels, _ = data
    with dask.config.set(scheduler="threads"):
        with pytest.raises(ValueError, match="Only binary classification"):
            ProbitRegression().fit(dask_rows(X), dask_rows(labels))
        with pytest.raises(ValueError, match="only one class"):
            LogisticRegression().fit(dask_rows(X), np.zeros(N))
        with pytest.raises(ValueError, match="classes \\[1\\] have zero total sample weight"):
            LogisticRegression().fit(dask_rows(X), y, sample_weight=(y == 0) * 1.0)
        with pytest.raises(ValueError, match="solver='newton' or 'lbfgs'"):
            LogisticRegression(solver="gradient").fit(dask_rows(X), y)
        with pytest.raises(ValueError, match="have no samples in y"):
            LogisticRegression(classes=[0, 1, 5]).fit(dask_rows(X), y)


def test_lbfgs_sketch_and_compute_covariance(data):
    X, _, labels, _ = data
    with dask.config.set(scheduler="threads"):
        # L-BFGS stops within tol standard errors of the optimum by a path that
        # rounding steers (chunked sums), so it meets the numpy fit there, as
        # in memory two summation orders would: compared in standard errors.
        a = LogisticRegression().fit(X, labels)
        b = LogisticRegression(solver="lbfgs").fit(dask_rows(X), dask_rows(labels))
        se = np.sqrt(np.diag(a.covariance_)).reshape(2, D + 1)[:, 1:]
        assert np.max(np.abs(b.coef_[1:] - a.coef_[1:]) / se) < 1e-4
        b = clone(a)
        b.__dict__.update({k: v for k, v in a.__dict__.items() if k.endswith("_")},
                          _result=a._result)
        a.compute_covariance(X, labels)
        b.compute_covariance(dask_rows(X), dask_rows(labels))
        scale = np.max(np.abs(a.covariance_))
        np.testing.assert_allclose(b.covariance_, a.covariance_, rtol=1e-10, atol=1e-10 * scale)
        # many rows: Newton's warm start on a gathered sketch of 10,000 rows
        rng = np.random.default_rng(3)
        Xl = rng.normal(size=(90_000, 3))
        yl = (Xl @ [1.0, -0.5, 0.2] + rng.logistic(size=90_000) > 0).astype(int)
        assert_same_fit(LogisticRegression().fit(Xl, yl),
                        LogisticRegression().fit(dask_rows(Xl, 20_000), yl))


def test_separation_and_collinearity(data):
    X, y, _, _ = data
    Xs = X[:400].copy()
    ys = (Xs[:, 0] > 3.0).astype(int)
    Xc = np.column_stack([X, X[:, 0] - X[:, 1]])  # a collinear column
    with dask.config.set(scheduler="threads"):
        with pytest.warns(SeparationWarning) as want:
            a = LogisticRegression().fit(Xs, ys)
        with pytest.warns(SeparationWarning) as got:
            b = LogisticRegression().fit(dask_rows(Xs, 150), ys)
        assert str(got[0].message) == str(want[0].message)
        assert isinstance(b.separated_, da.Array)
        np.testing.assert_array_equal(b.separated_.compute(), a.separated_)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = LogisticRegression().fit(Xc, y)
            b = LogisticRegression().fit(dask_rows(Xc), y)
        np.testing.assert_array_equal(b.identified_, a.identified_)
        np.testing.assert_allclose(b.predict_proba(dask_rows(Xc)).compute(),
                                   a.predict_proba(Xc), rtol=1e-9)


@pytest.mark.parametrize("offset", [0.0, 1e4], ids=["uncentred", "centred"])
def test_lbfgs_takes_the_in_memory_path_on_poorly_scaled_columns(offset):
    """L-BFGS preconditions by the columns' moments in the design's own coordinates;
    the Dask design read raw X's, standardising twice: 94 iterations (each a
    distributed pass) where the same fit in memory takes 8."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6_000, 4)) * np.array([1e-3, 1.0, 1e3, 50.0])
    X[:, 2] += offset  # far from zero: the basis centres
    eta = (X - X.mean(0)) / X.std(0) @ np.array([0.8, -0.5, 0.3, 0.6])
    y = (eta + rng.logistic(size=6_000) > 0).astype(int)
    with dask.config.set(scheduler="synchronous"):
        a = LogisticRegression(solver="lbfgs").fit(X, y)
        b = LogisticRegression(solver="lbfgs").fit(dask_rows(X), dask_rows(y))
    from problin._core.model.basis import ColumnBasis
    assert (ColumnBasis.of(X, True).center is not None) == (offset > 0)
    assert b.n_iter_ == a.n_iter_ <= 15
    se = np.sqrt(np.diag(LogisticRegression().fit(X, y).covariance_))[1:]
    assert np.max(np.abs(b.coef_ - a.coef_) / se) < 1e-6


def test_glm_regressor_on_the_cluster(client):
    """A GLM regressor's chunk tasks (its family, its validation, the offsets and weights
    in the chunks) travel to the module's LocalCluster: the numpy fit to 1e-10 (every
    regressor on the threaded scheduler: ``test_dask_glm_regression.py``)."""
    from problin import PoissonRegression
    rng = np.random.default_rng(2)
    X, exposure = rng.normal(size=(200, 3)), rng.uniform(0.5, 2.0, 200)
    y = rng.poisson(exposure * np.exp(0.3 + X @ [0.2, -0.1, 0.3])).astype(float)
    w = rng.integers(0, 3, 200).astype(float)
    want = PoissonRegression().fit(X, y, exposure=exposure, sample_weight=w)
    got = PoissonRegression().fit(dask_rows(X, 70), dask_rows(y, 70),
                                  exposure=dask_rows(exposure, 70), sample_weight=w)
    for name in ("coef_", "intercept_", "covariance_", "deviance_", "log_likelihood_",
                 "null_log_likelihood_"):
        np.testing.assert_allclose(getattr(got, name), getattr(want, name), rtol=1e-10,
                                   err_msg=name)
