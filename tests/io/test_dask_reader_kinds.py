"""The Dask reader classifies Parquet columns as the in-memory reader does (issue 31, item 5):
its ``meta`` is an empty frame, whose ``object`` columns (decimals, dates) cannot be
classified by what they hold, so it one-hot encoded a decimal column (``d=-0.160``, ...)
and a date column (``when=2020-01-02``, ...). Now the Arrow schema decides: decimals are
float64 features, dates and times (and bytes, lists, ...) the in-memory reader's error,
unless named in ``categorical`` (``--categorical``)."""
import datetime
from decimal import Decimal

import numpy as np
import pytest

from problin.io import DataFileError, read_model_file
from problin.io.readers import read_data
from tests.cli.conftest import invoke

pytest.importorskip("dask.array")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
from problin.io import read_dask  # noqa: E402

N = 20
D = np.random.default_rng(5).normal(size=N).round(3)
LABELS = np.arange(N) % 2
START = datetime.datetime(2020, 1, 1)
TIMES = {"date": [START.date() + datetime.timedelta(days=i) for i in range(N)],
         "timestamp": [START + datetime.timedelta(hours=i) for i in range(N)]}


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    decimals = pa.array([Decimal(f"{v:.3f}") for v in D], pa.decimal128(6, 3))
    pq.write_table(pa.table({"d": decimals, "b": D[::-1], "y": LABELS}), "dec.parquet")
    for kind, values in TIMES.items():
        pq.write_table(pa.table({"when": values, "b": D, "y": LABELS}), f"{kind}.parquet")
    pq.write_table(pa.table({"c": [b"u", b"v"] * (N // 2), "y": LABELS}), "bytes.parquet")
    return tmp_path


def test_a_decimal_column_is_one_float64_feature(files):
    data, memory = read_dask("dec.parquet", "y", blocksize=1), read_data("dec.parquet", "y")
    assert data.feature_names == memory.feature_names == ["d", "b"]
    assert data.encoding == memory.encoding
    np.testing.assert_array_equal(data.X.compute(), np.asarray(memory.X, dtype=np.float64))
    np.testing.assert_array_equal(data.X.compute()[:, 0], D)


@pytest.mark.parametrize("kind", TIMES)
def test_dates_and_times_are_the_in_memory_readers_error(files, kind):
    with pytest.raises(DataFileError) as memory:
        read_data(f"{kind}.parquet", "y")
    with pytest.raises(DataFileError, match=r"column 'when' holds dates or times .*"
                                            "--categorical when") as dask:
        read_dask(f"{kind}.parquet", "y")
    assert str(dask.value) == str(memory.value)


def test_a_column_of_neither_numbers_nor_text_is_refused(files):
    """A binary column was one indicator per value (c=b'v'), as a list column (c=[2])."""
    with pytest.raises(DataFileError, match=r"column 'c' holds values that are neither all "
                                            r"numbers nor all text \(binary\).*--categorical c"):
        read_dask("bytes.parquet", "y")


@pytest.mark.parametrize("kind", TIMES)
def test_named_in_categorical_dates_are_categories_as_in_memory(files, kind):
    data = read_dask(f"{kind}.parquet", "y", categorical=["when"])
    memory = read_data(f"{kind}.parquet", "y", categorical=["when"])
    assert data.encoding == memory.encoding and len(data.feature_names) == N
    np.testing.assert_array_equal(data.X.compute(), np.asarray(memory.X, dtype=np.float64))


def test_the_command_line_dask_engine_reads_decimals_and_refuses_dates(files):
    result = invoke("fit", "dec.parquet", "-t", "y", "-m", "logistic", "--engine", "dask",
                    "-o", "m.problin")
    assert result.exit_code == 0, result.output
    assert read_model_file("m.problin").feature_names == ["d", "b"]
    result = invoke("fit", "date.parquet", "-t", "y", "-m", "logistic", "--engine", "dask",
                    "-o", "t.problin")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stderr.strip().startswith("Error: date.parquet: column 'when' holds dates")
    assert "--categorical when" in result.stderr and len(result.stderr.splitlines()) == 1
