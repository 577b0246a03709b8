"""Passes over file-backed Dask data: each reads the files again, so they are counted.

A logistic fit on ``io.read_dask`` data reads each Parquet partition once a pass (X and y
from one read task), the Hessian sketch's rows come with the labels' pass (no pass of
their own), and a last Newton step bounded by the columns' ranges takes no pass. The fits
are compared with the same fits on the rows in memory.
"""
import collections
import functools

import numpy as np
import pandas as pd
import pytest

da = pytest.importorskip("dask.array")
pq = pytest.importorskip("pyarrow.parquet")

from problin import LogisticRegression  # noqa: E402
from problin._core.solvers.newton import sketch_rows  # noqa: E402
from problin._dask import chunks, design  # noqa: E402
from problin.io import read_dask  # noqa: E402


def _counting(monkeypatch, module, name, counter, key):
    original = getattr(module, name)

    @functools.wraps(original)
    def counted(*args, **kwargs):
        counter[key(*args, **kwargs)] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)


def test_parquet_partition_read_once_a_pass(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 3))
    y = (X @ [1.0, -0.5, 0.25] + rng.logistic(size=1500) > 0).astype(np.int64)
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(y=y)
    path = tmp_path / "d.parquet"
    frame.to_parquet(path, index=False, row_group_size=500)
    reads, passes = collections.Counter(), collections.Counter()
    _counting(monkeypatch, pq.ParquetFile, "read_row_groups", reads,
              lambda self, groups, **kw: tuple(groups))
    _counting(monkeypatch, chunks, "reduce_chunks", passes, lambda *a, **kw: "pass")
    _counting(monkeypatch, design, "reduce_chunks", passes, lambda *a, **kw: "pass")
    data = read_dask(path, "y", blocksize=1)  # one row group a partition
    model = LogisticRegression().fit(data.X, data.y)
    assert passes["pass"] >= 3
    # every partition read once a pass: X and y from the same read task
    assert dict(reads) == {(g,): passes["pass"] for g in range(3)}
    reference = LogisticRegression().fit(X, y)
    np.testing.assert_allclose(model.coef_, reference.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(model.covariance_, reference.covariance_, rtol=1e-9)


def test_sketch_rows_come_with_the_labels_pass(monkeypatch):
    # n >= 8 m rows (m = 32,768 sketch rows for 3 parameters): the binary GLM's sketch
    n = 270_000
    rng = np.random.default_rng(1)
    X = rng.normal(size=(n, 2))
    y = (rng.random(n) < 0.3).astype(np.float64)
    w = rng.random(n)
    found = design.dask_classifier_data(LogisticRegression(), da.from_array(X, chunks=70_000),
                                        da.from_array(y, chunks=70_000),
                                        da.from_array(w, chunks=70_000), False, True,
                                        standardise=True)
    passes = collections.Counter()
    _counting(monkeypatch, design, "take_rows", passes, lambda *a, **kw: "take")
    rows = sketch_rows(n, 3)
    assert rows is not None
    gathered, t, ws = found.gather(rows)
    assert not passes  # no pass: the rows were gathered by the labels' pass
    np.testing.assert_array_equal(gathered.X, X[rows])
    np.testing.assert_array_equal(t, y[rows].astype(np.intp))
    np.testing.assert_array_equal(ws, w[rows])
    other = np.arange(5)  # rows not gathered: one gather pass, the same answer
    _, t5, w5 = found.gather(other)
    assert passes["take"] == 1
    np.testing.assert_array_equal(w5, w[other])


def test_last_step_judged_without_a_pass(monkeypatch):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40_000, 3))
    y = (X @ [1.0, -0.5, 0.25] + rng.logistic(size=40_000) > 0).astype(np.int64)
    Xd, yd = da.from_array(X, chunks=13_334), da.from_array(y, chunks=13_334)
    passes = collections.Counter()
    _counting(monkeypatch, design, "reduce_chunks", passes, lambda *a, **kw: "pass")
    model = LogisticRegression().fit(Xd, yd)
    judged = passes["pass"]
    # the same fit with the move unknown: the last step's pass (the engine's bound)
    monkeypatch.setattr(design.DaskDesign, "predictor_change_bound", lambda self, d: np.inf)
    checked = LogisticRegression().fit(Xd, yd)
    assert passes["pass"] - judged == judged + 1
    reference = LogisticRegression().fit(X, y)
    for fit in (model, checked):
        np.testing.assert_allclose(fit.coef_, reference.coef_, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(fit.covariance_, reference.covariance_, rtol=1e-9)
        np.testing.assert_allclose(fit.log_likelihood_, reference.log_likelihood_, rtol=1e-12)
