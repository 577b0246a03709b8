"""Readers on hostile or mistyped data (issue 13, items 7 and 8).

- A LibSVM file's width is its largest index: a 30-byte file with index 2,000,000,000 must
  be refused at once, not build two billion feature names.
- A CSV column of numbers with a typo must not become a categorical column: it is an
  error naming the column, the values and their rows, unless ``categorical`` says so.
"""

import numpy as np
import pandas as pd
import pytest
from tests.io._bounded_child import run_bounded

from problin.io import ColumnNotFoundError, DataFileError
from problin.io.readers import read_data

# --- LibSVM -------------------------------------------------------------------------------

def test_libsvm_index_of_two_billion_is_refused_in_bounded_memory(tmp_path):
    path = tmp_path / "huge.svm"
    path.write_text("1 2000000000:1\n0 1:1\n")
    assert path.stat().st_size < 30
    peak, outcome = run_bounded("read_data", path, ok="read")
    assert outcome.startswith("DataFileError"), outcome
    assert "2000000000" in outcome and "--n-features" in outcome and "\n" not in outcome
    assert float(peak) < 100, f"reading raised the peak memory by {peak} MB"


def test_libsvm_width_limit_and_n_features(tmp_path):
    path = tmp_path / "d.svm"
    path.write_text("1 1:0.5 3000000:1\n0 2:1\n")  # 3 values, index 3e6 > 2**20
    with pytest.raises(DataFileError, match=r"feature index 3000000 is implausibly large "
                                            r"for a file of 3 values"):
        read_data(path)
    ds = read_data(path, n_features=3_000_000)  # the user says so: accepted
    assert ds.X.shape == (2, 3_000_000) and ds.encoding["n_features"] == 3_000_000
    assert ds.feature_names[-1] == "f3000000" and ds.X[0, 2_999_999] == 1.0
    # wider than the file needs is fine; narrower than its largest index is not
    assert read_data(path, n_features=4_000_000).X.shape[1] == 4_000_000
    with pytest.raises(DataFileError, match="cannot read as LibSVM"):
        read_data(path, n_features=10)
    # up to 2**20 features without being asked (e.g. hashed features)
    small = tmp_path / "hashed.svm"
    small.write_text(f"1 {2 ** 20}:1\n")
    assert read_data(small).X.shape == (1, 2 ** 20)
    # at predict time the model's width rules; a different n_features is an error
    with pytest.raises(DataFileError, match="n_features=5, but the model was fitted on 3000000"):
        read_data(path, encoding=ds.encoding, n_features=5)
    with pytest.raises(DataFileError, match="n_features applies to LibSVM"):
        read_data(_csv(tmp_path, "a,t\n1,0\n2,1\n"), "t", n_features=3)
    with pytest.raises(ValueError, match="positive integer"):
        read_data(path, n_features=0)


# --- Mixed-type CSV columns ---------------------------------------------------------------

def _csv(tmp_path, text, name="d.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _typo_rows(n=10, typos=((2, "x"),)):
    rows = [f"{i % 3},{3 + i % 4},{i % 2}" for i in range(n)]
    for row, value in typos:  # row: 0-based data row
        a, _, t = rows[row].split(",")
        rows[row] = f"{a},{value},{t}"
    return "a,b,t\n" + "\n".join(rows) + "\n"


def test_numeric_column_with_a_typo_is_an_error_naming_it(tmp_path):
    path = _csv(tmp_path, _typo_rows(typos=((2, "x"), (6, "3..5"))))
    with pytest.raises(DataFileError) as info:
        read_data(path, "t")
    message = str(info.value)
    assert "column 'b' looks numeric (8 of 10 values are numbers)" in message
    assert "'x' (row 3), '3..5' (row 7)" in message  # 1-based data rows
    assert "the header not counted" in message and "--categorical b" in message
    assert "\n" not in message


def test_typo_rows_are_those_of_the_file_even_with_missing_values(tmp_path):
    text = _typo_rows(n=12, typos=((1, ""), (9, "seven")))
    with pytest.raises(DataFileError, match=r"'seven' \(row 10\)"):
        read_data(_csv(tmp_path, text), "t", drop_missing=True)


def test_many_typos_are_counted_not_all_listed(tmp_path):
    text = _typo_rows(n=30, typos=[(r, f"v{r}") for r in range(0, 14)])  # 14 of 30
    with pytest.raises(DataFileError) as info:
        read_data(_csv(tmp_path, text), "t")
    message = str(info.value)
    assert "16 of 30 values are numbers" in message
    assert "'v4' (row 5) and 9 more" in message and "v5" not in message


def test_a_typo_in_the_target_is_an_error_too(tmp_path):
    text = "a,t\n" + "\n".join(f"{i},{i % 2}" for i in range(9)) + "\n9,1x\n"
    with pytest.raises(DataFileError, match=r"column 't' looks numeric .*'1x' \(row 10\)"):
        read_data(_csv(tmp_path, text), "t")


def test_categorical_forces_categories_from_the_text(tmp_path):
    path = _csv(tmp_path, _typo_rows(typos=((2, "x"),)))
    ds = read_data(path, "t", categorical=["b"])
    assert ds.feature_names == ["a", "b=4", "b=5", "b=6", "b=x"]
    assert ds.encoding["columns"][1] == {"name": "b", "kind": "categorical",
                                         "categories": ["3", "4", "5", "6", "x"]}
    # a column of numbers only, forced: categories are its text, at predict time too
    codes = _csv(tmp_path, "zip,t\n01234,0\n1234,1\n01234,1\n", "codes.csv")
    fitted = read_data(codes, "t", categorical="zip")
    assert fitted.feature_names == ["zip=1234"]
    again = read_data(_csv(tmp_path, "zip\n1234\n01234\n", "new.csv"), encoding=fitted.encoding)
    np.testing.assert_array_equal(again.X.to_numpy(), [[1.0], [0.0]])
    with pytest.raises(ColumnNotFoundError, match=r"categorical columns \['nope'\]"):
        read_data(path, "t", categorical=["b", "nope"])
    with pytest.raises(DataFileError, match=r"columns \['a'\] were numeric when the model"):
        read_data(path, encoding=ds.encoding, categorical=["a"])


def test_parquet_numeric_column_can_be_made_categorical(tmp_path):
    frame = pd.DataFrame({"grade": [1, 2, 3, 2], "y": [0.5, 1.0, 2.0, 1.5]})
    frame.to_parquet(tmp_path / "g.parquet")
    ds = read_data(tmp_path / "g.parquet", "y", categorical=["grade"])
    assert ds.feature_names == ["grade=2", "grade=3"]
    again = read_data(tmp_path / "g.parquet", encoding=ds.encoding)
    np.testing.assert_array_equal(again.X.to_numpy(), ds.X.to_numpy())


def test_genuine_text_columns_stay_categorical(tmp_path):
    # Mostly text with a few numbers (or half and half): a text column, as before.
    text = "size,t\nS,0\nM,1\nL,0\n3,1\nXL,0\n4,1\n"
    ds = read_data(_csv(tmp_path, text), "t")
    assert ds.feature_names == ["size=4", "size=L", "size=M", "size=S", "size=XL"]
    half = "code,t\nA1,0\n2,1\nB3,0\n4,1\n"
    assert read_data(_csv(tmp_path, half, "half.csv"), "t").feature_names == \
        ["code=4", "code=A1", "code=B3"]


def test_predict_time_typo_names_the_values_and_rows(tmp_path):
    fitted = read_data(_csv(tmp_path, _typo_rows(typos=())), "t")
    new = _csv(tmp_path, "a,b\n1,3\n2,4\n0,five\n", "new.csv")
    with pytest.raises(DataFileError, match=r"column 'b' was numeric at fit time but holds "
                                            r"text here: 'five' \(row 3\)"):
        read_data(new, encoding=fitted.encoding)


def test_categorical_applies_to_tables_only(tmp_path):
    np.savez(tmp_path / "a.npz", X=np.ones((2, 2)), y=np.array([0, 1]))
    with pytest.raises(DataFileError, match="categorical columns apply to CSV and Parquet"):
        read_data(tmp_path / "a.npz", categorical=["x0"])
