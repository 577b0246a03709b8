"""Parquet data on Dask through the Python API (issue 33): ``problin.io.read_dask`` is the
one reader of the Python API and of ``problin fit --engine dask``, and equals the fit in
memory; a Dask array that reads its file again with ``dask.dataframe`` on every pass of a
Newton fit (``dd.read_parquet(...).to_dask_array(lengths=True)``, 2-5x slower) is
named by a ``PerformanceWarning`` with the two faster ways; the fast routes are quiet."""
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from problin import (
    LinearDiscriminantAnalysis,
    LogisticRegression,
    PerformanceWarning,
    PoissonRegression,
)
from problin.io import load, read_dask
from problin.io.readers import read_data
from tests.cli.conftest import invoke

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pq = pytest.importorskip("pyarrow.parquet")
pa = pytest.importorskip("pyarrow")
import dask  # noqa: E402

N, ROW_GROUP = 300, 100
FEATURES = ["a", "b", "c"]


@pytest.fixture(scope="module")
def parquet(tmp_path_factory):
    """Three row groups of non-separable logistic data, with a text column."""
    rng = np.random.default_rng(33)
    X = rng.normal(size=(N, 3))
    kind = np.where(rng.random(N) < 0.4, "cat", "dog")
    eta = 0.3 + X @ [0.8, -0.5, 0.2] + 0.6 * (kind == "dog")
    y = (rng.random(N) < 1 / (1 + np.exp(-eta))).astype(np.int64)
    path = tmp_path_factory.mktemp("pq") / "data.parquet"
    frame = pd.DataFrame(X, columns=FEATURES).assign(kind=kind, y=y)
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path,
                   row_group_size=ROW_GROUP)
    return path


def _quiet_fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerformanceWarning)
        return est.fit(X, y)


def test_the_shared_reader_fits_as_in_memory_and_as_statsmodels(parquet):
    lazy, memory = read_dask(parquet, "y", blocksize=1), read_data(parquet, "y")
    assert lazy.X.numblocks == (N // ROW_GROUP, 1)  # a partition a row group
    assert lazy.feature_names == memory.feature_names == FEATURES + ["kind=dog"]
    on_dask = _quiet_fit(LogisticRegression(), lazy.X, lazy.y)
    in_memory = LogisticRegression().fit(memory.X, memory.y)
    np.testing.assert_allclose(on_dask.coef_, in_memory.coef_, rtol=1e-10, atol=0)
    np.testing.assert_allclose(on_dask.intercept_, in_memory.intercept_, rtol=1e-10, atol=0)
    X = np.asarray(memory.X, dtype=np.float64)
    logit = sm.Logit(np.asarray(memory.y), sm.add_constant(X)).fit(disp=0, tol=1e-12)
    np.testing.assert_allclose(np.r_[on_dask.intercept_, on_dask.coef_.ravel()],
                               logit.params, rtol=1e-8, atol=1e-10)


def test_the_command_line_reads_with_the_same_function(parquet, tmp_path, monkeypatch):
    import problin.cli._fit as cli_fit
    import problin.io
    assert cli_fit.read_dask is problin.io.read_dask is read_dask
    calls = []

    def spy(path, target, **options):
        calls.append((str(path), target))
        return read_dask(path, target, **options)

    monkeypatch.setattr(cli_fit, "read_dask", spy)
    out = tmp_path / "m.problin"
    result = invoke("fit", parquet, "-t", "y", "-m", "logistic", "--engine", "dask",
                    "--blocksize", "1", "-o", out)
    assert result.exit_code == 0, result.output
    assert calls == [(str(parquet), "y")]
    lazy = read_dask(parquet, "y", blocksize=1)
    api = _quiet_fit(LogisticRegression(), lazy.X, lazy.y)
    np.testing.assert_allclose(load(out).coef_, api.coef_, rtol=1e-10, atol=0)


def _frame_route(path, columns):
    """What users write: the file through dask.dataframe, as one Dask array."""
    A = dd.read_parquet(path, columns=columns + ["y"]).to_dask_array(lengths=True)
    return A[:, :-1], A[:, -1]


@pytest.mark.parametrize("est", [LogisticRegression(), PoissonRegression()],
                         ids=["logistic", "poisson"])
def test_the_dataframe_route_warns_and_persisting_it_is_quiet(parquet, est):
    X, y = _frame_route(parquet, FEATURES)
    with pytest.warns(PerformanceWarning, match=r"dask\.dataframe\.read_parquet on every "
                      r"pass.*dask\.persist\(X, y\).*problin\.io\.read_dask") as got:
        slow = est.fit(X, y)
    (ours,) = [w for w in got if w.category is PerformanceWarning]  # (Dask's own: pandas')
    assert str(ours.message).startswith(type(est).__name__)
    reference = type(est)().fit(X.compute(), y.compute())
    np.testing.assert_allclose(slow.coef_, reference.coef_, rtol=1e-10, atol=0)
    fast = _quiet_fit(type(est)(), *dask.persist(X, y))
    np.testing.assert_allclose(fast.coef_, reference.coef_, rtol=1e-10, atol=0)


def test_dask_dataframes_of_row_group_partitions_fit_and_warn(parquet):
    """One partition a row group: dask.dataframe merges the target column's partitions
    when it counts their lengths (not in the array), which was dask's ValueError
    "2 != 3" out of the fit; X and y are now counted as they are computed."""
    frame = dd.read_parquet(parquet, split_row_groups=True)
    assert frame.npartitions == N // ROW_GROUP
    with pytest.warns(PerformanceWarning, match="read_parquet"):
        got = LogisticRegression().fit(frame[FEATURES], frame["y"])
    memory = pd.read_parquet(parquet)
    reference = LogisticRegression().fit(memory[FEATURES].to_numpy(), memory["y"].to_numpy())
    np.testing.assert_allclose(got.coef_, reference.coef_, rtol=1e-10, atol=0)


def test_the_readers_own_arrays_in_memory_arrays_and_one_pass_fits_are_quiet(parquet):
    lazy = read_dask(parquet, "y", blocksize=1)
    _quiet_fit(PoissonRegression(), lazy.X, lazy.y)
    X, y = _frame_route(parquet, FEATURES)
    _quiet_fit(LinearDiscriminantAnalysis(), X, y)  # one pass: nothing read twice
    Xm, ym = dask.compute(X, y)
    _quiet_fit(LogisticRegression(), da.from_array(Xm, chunks=100), da.from_array(ym, 100))


def test_a_csv_read_by_dask_dataframe_warns_without_the_parquet_advice(parquet, tmp_path):
    path = tmp_path / "data.csv"
    pd.read_parquet(parquet, columns=FEATURES + ["y"]).to_csv(path, index=False)
    A = dd.read_csv(path, blocksize=2000).to_dask_array(lengths=True)
    with pytest.warns(PerformanceWarning, match=r"dask\.dataframe\.read_csv") as got:
        LogisticRegression().fit(A[:, :-1], A[:, -1])
    (ours,) = [w for w in got if w.category is PerformanceWarning]
    assert "read_dask" not in str(ours.message)
