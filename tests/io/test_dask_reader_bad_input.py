"""The Dask reader on mistyped CSV columns (issue 13, item 8), as the in-memory reader.

``dask.dataframe.read_csv`` types columns from the first 64 KiB: a typo there made the
column text (silently one-hot encoded), a typo further on failed the fit with a
multi-line dtype table. Both must be the in-memory reader's one-line error, with rows.
"""
import numpy as np
import pandas as pd
import pytest

from problin.io import ColumnNotFoundError, DataFileError

pytest.importorskip("dask.dataframe")
from problin.io import read_dask  # noqa: E402


def _write(path, typo_row, value="x", n=20000):
    """Columns a, b (small integers) and y; ``b`` holds ``value`` at 0-based data row
    ``typo_row`` (about 6 bytes a row: row 15000 is well past the 64 KiB sample)."""
    frame = pd.DataFrame({"a": np.arange(n) % 7, "b": np.arange(n) % 5,
                          "y": np.arange(n) % 2}).astype(object)
    frame.loc[typo_row, "b"] = value
    frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("row", [3, 15000])
def test_typo_in_a_numeric_column_is_named_with_its_row(tmp_path, row):
    path = _write(tmp_path / "d.csv", row)
    with pytest.raises(DataFileError) as info:
        read_dask(path, "y", blocksize=50_000)
    message = str(info.value)
    assert f"column 'b' looks numeric (19999 of 20000 values are numbers) but holds text: " \
           f"'x' (row {row + 1})" in message
    assert "--categorical b" in message and "\n" not in message


@pytest.mark.parametrize("row", [3, 15000])
def test_categorical_reads_the_column_as_text(tmp_path, row):
    path = _write(tmp_path / "d.csv", row)
    ds = read_dask(path, "y", blocksize=50_000, categorical=["b"])
    assert ds.feature_names == ["a", "b=1", "b=2", "b=3", "b=4", "b=x"]
    assert ds.encoding["columns"][1]["categories"] == ["0", "1", "2", "3", "4", "x"]
    X = ds.X.compute()
    assert X.shape == (20000, 6) and X[row, 5] == 1.0 and X[:, 5].sum() == 1.0


def test_numbers_first_then_mostly_text_asks_for_categorical(tmp_path):
    # Numbers through the 64 KiB sample (about 6 bytes a row), text in most rows after:
    # a text column, not typos; the message says so and names the option.
    n, numbers = 50000, 15000
    frame = pd.DataFrame({"a": np.arange(n) % 7, "y": np.arange(n) % 2})
    frame["code"] = [str(i % 9) if i < numbers else f"k{i % 3}" for i in range(n)]
    frame.to_csv(tmp_path / "codes.csv", index=False)
    assert (tmp_path / "codes.csv").read_text()[:65536].count("\n") < numbers
    with pytest.raises(DataFileError, match=r"column 'code' holds numbers in its first rows "
                                            r"but is mostly text \(35000 of 50000 values, "
                                            r"e\.g\. 'k0' in data row 15001\).*--categorical code"):
        read_dask(tmp_path / "codes.csv", "y", blocksize=50_000)
    ds = read_dask(tmp_path / "codes.csv", "y", blocksize=50_000, categorical="code")
    assert len(ds.feature_names) == 1 + 8 + 3  # a, then codes 0-8 and k0-k2 less one


def test_categorical_names_must_exist(tmp_path):
    path = _write(tmp_path / "d.csv", 3)
    with pytest.raises(ColumnNotFoundError, match=r"categorical columns \['zz'\]"):
        read_dask(path, "y", categorical=["b", "zz"])
