"""Dask input for Fisher's discriminant, the least-squares classifier and the count
naive Bayes models (issue 8): fits on a 2-process LocalCluster equal the numpy fits
to 1e-10 relative, predictions and transforms stay lazy, errors name the chunk.
"""
import numpy as np
import pytest
from sklearn.base import clone

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("dask.distributed")
sp = pytest.importorskip("scipy.sparse")

from problin import (
    BernoulliNB,
    FisherDiscriminant,
    LeastSquaresClassifier,
    LinearDiscriminantAnalysis,
    MultinomialNB,
)

N, D, CHUNK = 12_000, 6, 2_500  # uneven last chunk: 4 x 2500 + 2000

MODELS = [FisherDiscriminant(), FisherDiscriminant(n_components=1, priors=[0.2, 0.3, 0.5]),
          LeastSquaresClassifier(), LeastSquaresClassifier(fit_intercept=False),
          BernoulliNB(binarize=2.0), BernoulliNB(alpha=0.5, binarize=None), MultinomialNB(),
          MultinomialNB(alpha=0.1, priors=[0.5, 0.25, 0.25])]
FITTED = ["coef_", "intercept_", "components_", "explained_variance_ratio_", "means_",
          "priors_", "threshold_", "class_count_", "feature_count_", "feature_log_prob_",
          "class_log_prior_"]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(81)
    labels = rng.integers(0, 3, size=N)
    X = rng.poisson(1.0 + labels[:, None] * np.linspace(0.2, 1.5, D)).astype(np.float64)
    return X, labels


def features(model, X):
    """0/1 features for BernoulliNB(binarize=None), counts otherwise."""
    return (X > 1).astype(np.float64) if getattr(model, "binarize", 0) is None else X


def dask_rows(a, chunk=CHUNK):
    return da.from_array(a, chunks=(chunk,) + a.shape[1:])


def assert_close(got, want, rtol=1e-10):
    want = np.asarray(want, dtype=np.float64)
    scale = max(float(np.max(np.abs(want[np.isfinite(want)]), initial=0.0)), 1e-300)
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want, rtol=rtol,
                               atol=rtol * scale)


def assert_same_fit(a, b):
    for name in FITTED:
        if hasattr(a, name):
            assert_close(getattr(b, name), getattr(a, name))
    np.testing.assert_array_equal(b.classes_, a.classes_)
    assert b.n_features_in_ == a.n_features_in_


def assert_same_outputs(a, b, X):
    Xd = dask_rows(X)
    lazy = b.predict(Xd)
    assert isinstance(lazy, da.Array)
    np.testing.assert_array_equal(lazy.compute(), a.predict(X))
    for method in ("predict_proba", "predict_log_proba", "decision_function", "transform"):
        if hasattr(a, method):
            out = getattr(b, method)(Xd)
            want = getattr(a, method)(X)
            assert isinstance(out, da.Array) and out.shape == want.shape, method
            assert_close(out.compute(), want, rtol=1e-9)


@pytest.mark.parametrize("model", MODELS, ids=repr)
def test_distributed_fit_equals_numpy_fit(client, data, model):
    X, labels = data
    X = features(model, X)
    a = clone(model).fit(X, labels)
    b = clone(model).fit(dask_rows(X), dask_rows(labels))
    assert_same_fit(a, b)
    assert_same_outputs(a, b, X)


@pytest.mark.parametrize("model", [FisherDiscriminant(), LeastSquaresClassifier(),
                                   BernoulliNB(binarize=1.5), MultinomialNB()], ids=repr)
def test_threaded_weights_and_sparse_chunks(data, model):
    X, labels = data
    w = np.random.default_rng(2).uniform(0.1, 3.0, size=N)
    a = clone(model).fit(X, labels, sample_weight=w)
    with dask.config.set(scheduler="threads"):
        b = clone(model).fit(dask_rows(X), labels, sample_weight=dask_rows(w))
        c = clone(model).fit(dask_rows(X).map_blocks(sp.csr_matrix), dask_rows(labels),
                             sample_weight=w)
        assert_same_fit(a, b)
        assert_same_fit(a, c)
        np.testing.assert_array_equal(
            c.predict(dask_rows(X).map_blocks(sp.csr_matrix)).compute(), a.predict(X))


@pytest.mark.parametrize("model", [FisherDiscriminant(), LeastSquaresClassifier(),
                                   BernoulliNB(), MultinomialNB()], ids=repr)
def test_nan_names_the_chunk(data, model):
    X = data[0].copy()
    X[2 * CHUNK + 5, 1] = np.nan
    with dask.config.set(scheduler="threads"), \
            pytest.raises(ValueError, match=rf"Input X contains NaN or infinity in chunk 2 "
                                            rf"\(row {2 * CHUNK + 5}"):
        clone(model).fit(dask_rows(X), data[1])


def test_model_checks_run_on_every_chunk(data):
    X, labels = data
    bad = X.copy()
    bad[-3, 0] = -1.0
    with dask.config.set(scheduler="threads"):
        with pytest.raises(ValueError, match="Negative values in data passed to MultinomialNB"):
            MultinomialNB().fit(dask_rows(bad), labels)
        with pytest.raises(ValueError, match=r"binarize=None\) takes binary features"):
            BernoulliNB(binarize=None).fit(dask_rows(X), labels)
        with pytest.raises(TypeError, match="scipy.sparse"):  # Gaussian models: dense chunks
            LinearDiscriminantAnalysis().fit(dask_rows(X).map_blocks(sp.csr_matrix), labels)


def test_dataframe_input(data):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, labels = data
    names = [f"f{j}" for j in range(D)]
    frame = dd.from_pandas(pd.DataFrame(X, columns=names), chunksize=CHUNK)
    with dask.config.set(scheduler="threads"):
        for model in (FisherDiscriminant(), MultinomialNB()):
            b = clone(model).fit(frame, labels)
            assert list(b.feature_names_in_) == names
            a = clone(model).fit(pd.DataFrame(X, columns=names), labels)
            assert_same_fit(a, b)
            np.testing.assert_array_equal(b.predict(frame).compute(), a.predict(X))


def test_prediction_keywords_reach_the_chunks_and_offsets_are_refused_at_the_call():
    """A prediction method's own method= clashed with the lazy wrapper's parameter (a
    raw TypeError for BayesianLogisticRegression.predict_proba(Xd, method="map")); an
    offset was sent whole to every chunk and failed only at compute, about row counts."""
    import dask.array as da
    import numpy as np
    import pytest
    from problin import BayesianLogisticRegression, LogisticRegression
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    off = rng.normal(size=400)
    y = (X[:, 0] + off + rng.logistic(size=400) > 0).astype(int)
    Xd = da.from_array(X, chunks=100)
    bayes = BayesianLogisticRegression(alpha=1.0, random_state=0).fit(X, y)
    for method in ("map", "moderated"):
        np.testing.assert_allclose(bayes.predict_proba(Xd, method=method).compute(),
                                   bayes.predict_proba(X, method=method), rtol=1e-12)
    np.testing.assert_allclose(bayes.predict_log_proba(Xd, "map").compute(),
                               bayes.predict_log_proba(X, "map"), rtol=1e-12)
    glm = LogisticRegression().fit(X, y, offset=off)
    for predict in (glm.predict_proba, glm.predict, glm.decision_function):
        with pytest.raises(ValueError, match="offset is not supported with Dask X"):
            predict(Xd, offset=off)
    np.testing.assert_allclose(glm.predict_proba(Xd).compute(), glm.predict_proba(X))


def test_dask_frames_of_extension_and_boolean_dtypes_fit_as_in_memory():
    """A Dask DataFrame with a bool, Int64, Float64 or pyarrow-double column became an
    object array ("X must be numeric"), and a categorical Series of integer labels an
    object array of "unknown" label type; text columns are now named in the error."""
    import dask.dataframe as dd
    import numpy as np
    import pandas as pd
    import pytest
    from problin import GaussianNB, LogisticRegression
    rng = np.random.default_rng(0)
    x = rng.normal(size=200)
    flag = rng.random(200) > 0.5
    y = (x + flag + rng.logistic(size=200) > 0.5).astype(int)
    frames = {"bool": pd.DataFrame({"x": x, "f": flag}),
              "Int64": pd.DataFrame({"x": x, "f": pd.array(flag.astype(int), dtype="Int64")}),
              "Float64": pd.DataFrame({"x": pd.array(x, dtype="Float64"),
                                       "f": pd.array(flag * 1.0, dtype="Float64")})}
    for name, frame in frames.items():
        a = LogisticRegression().fit(frame.astype(float).to_numpy(), y)
        b = LogisticRegression().fit(dd.from_pandas(frame, npartitions=3), y)
        np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-9, err_msg=name)
    labels = dd.from_pandas(pd.Series(y).astype("category"), npartitions=3)
    X = dd.from_pandas(frames["bool"].astype(float), npartitions=3)
    np.testing.assert_array_equal(GaussianNB().fit(X, labels).classes_, [0, 1])
    text = dd.from_pandas(pd.DataFrame({"x": x, "g": np.where(flag, "a", "b")}), npartitions=2)
    with pytest.raises(TypeError, match=r"columns that are not numbers: \['g'\]"):
        LogisticRegression().fit(text, y)


def test_nan_in_a_dask_chunk_at_predict_names_the_chunk_and_row():
    """Fits name the chunk and row of a NaN; predictions gave scikit-learn's bare
    "Input X contains NaN"."""
    import dask.array as da
    import numpy as np
    import pytest
    from problin import GaussianNB, LogisticRegression
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] + rng.logistic(size=400) > 0).astype(int)
    gaps = X.copy()
    gaps[250, 1] = np.nan
    for model in (LogisticRegression().fit(X, y), GaussianNB().fit(X, y)):
        with pytest.raises(ValueError, match=r"NaN in chunk 2 \(row 250; the chunk holds "
                                             r"rows 200 to 299\)"):
            model.predict_proba(da.from_array(gaps, chunks=100)).compute(scheduler="sync")


def test_bayes_decision_with_rows_in_memory_and_dask_labels():
    """BayesDecision.fit(numpy X, Dask y) fitted the model, then failed counting the
    classes ("X is a ndarray; pass a dask.array.Array")."""
    import dask.array as da
    import numpy as np
    from problin import BayesDecision, LogisticRegression
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = (X[:, 0] + rng.normal(size=300) > 0).astype(int)
    # (a model without priors of its own: the class frequencies are counted from y)
    a = BayesDecision(LogisticRegression(), priors=[0.3, 0.7]).fit(X, da.from_array(y, 100))
    b = BayesDecision(LogisticRegression(), priors=[0.3, 0.7]).fit(X, y)
    np.testing.assert_allclose(a.training_priors_, b.training_priors_)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X))


def test_predictions_on_unknown_row_counts_compute_nothing_and_leave_x_as_it_was():
    """Predictions on a Dask array of unknown chunk sizes (a boolean row selection) or
    on a Dask DataFrame computed every chunk's length first (a whole read of the source),
    and compute_chunk_sizes() changed the caller's array in place. Now they stay lazy
    until computed, equal the in-memory predictions, and a fit on such rows works on a
    copy. A NaN there is named by its chunk and its row within the chunk."""
    import dask.array as da
    import dask.dataframe as dd
    import numpy as np
    import pandas as pd
    import pytest
    from problin import GaussianNB, LogisticRegression
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] + rng.logistic(size=400) > 0).astype(int)
    keep = X[:, 2] > -1.0
    Xd = da.from_array(X, chunks=100)
    rows = Xd[Xd[:, 2] > -1.0]
    assert np.isnan(rows.chunks[0]).all()
    frame = dd.from_pandas(pd.DataFrame(X, columns=list("abc")), npartitions=4)
    for model in (LogisticRegression().fit(X, y), GaussianNB().fit(X, y)):
        proba = model.predict_proba(rows)
        assert np.isnan(rows.chunks[0]).all() and np.isnan(proba.chunks[0]).all()
        np.testing.assert_allclose(proba.compute(scheduler="sync"),
                                   model.predict_proba(X[keep]), rtol=1e-12, atol=0)
        named = clone_named(model, X, y)
        labels = named.predict(frame)
        assert np.isnan(labels.chunks[0]).all()  # no partition lengths computed
        np.testing.assert_array_equal(labels.compute(scheduler="sync"), named.predict(
            pd.DataFrame(X, columns=list("abc"))))
    yd = da.from_array(y, chunks=100)[Xd[:, 2] > -1.0]
    fitted = LogisticRegression().fit(rows, yd)
    assert np.isnan(rows.chunks[0]).all() and np.isnan(yd.chunks[0]).all()
    np.testing.assert_allclose(fitted.coef_, LogisticRegression().fit(X[keep], y[keep]).coef_,
                               rtol=1e-9)
    gaps = X.copy()
    gaps[np.flatnonzero(keep)[130], 1] = np.nan  # the 131st kept row: chunk 1, row 30 of it
    Gd = da.from_array(gaps, chunks=100)
    gap_rows = Gd[Gd[:, 2] > -1.0]
    first = int(keep[:100].sum())
    with pytest.raises(ValueError, match=rf"NaN in chunk 1 \(its row {130 - first} of "
                                         rf"{int(keep[100:200].sum())}\)"):
        LogisticRegression().fit(X, y).predict(gap_rows).compute(scheduler="sync")


def clone_named(model, X, y):
    import pandas as pd
    from sklearn.base import clone
    return clone(model).fit(pd.DataFrame(X, columns=list("abc")), y)
