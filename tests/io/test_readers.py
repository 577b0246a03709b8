"""Data readers: CSV sniffing, Parquet, LibSVM, npz, categorical encoding, missing values."""
import numpy as np
import pandas as pd
import pytest

from problin.io import ColumnNotFoundError, DataFileError
from problin.io.readers import detect_format, read_data


@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
def test_csv_delimiter_is_sniffed(tmp_path, sep):
    path = tmp_path / "d.csv"
    path.write_text(sep.join(["a", "b c", "t"]) + "\n" + "\n".join(
        sep.join([str(i), f"{i / 3:.3f}", "yes" if i % 2 else "no"]) for i in range(20)))
    ds = read_data(path, "t")
    assert ds.feature_names == ["a", "b c"] and ds.X.shape == (20, 2)
    assert list(ds.y[:3]) == ["no", "yes", "no"] and ds.y.dtype == object


def test_csv_header_detection_and_override(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text("1.5,2,0\n3,4e-1,1\n-5,6,0\n")
    ds = read_data(path, "x2")
    assert ds.feature_names == ["x0", "x1"] and ds.X.shape == (3, 2)
    np.testing.assert_array_equal(ds.y, [0, 1, 0])
    forced = read_data(path, "0", header=True)
    assert forced.X.shape == (2, 2) and forced.feature_names == ["1.5", "2"]
    named = tmp_path / "n.csv"
    named.write_text("colour,size\nred,1\nblue,2\n")
    assert read_data(named, "size").feature_names == ["colour=red"]


def test_categorical_encoding_is_reused_at_predict_time(tmp_path):
    train = pd.DataFrame({"c": ["b", "a", "c", "a"], "n": [1.0, 2, 3, 4], "flag": [True, False,
                          True, True], "t": [0, 1, 0, 1]})
    train.to_parquet(tmp_path / "train.parquet")
    ds = read_data(tmp_path / "train.parquet", "t")
    assert ds.feature_names == ["c=b", "c=c", "n", "flag"]
    np.testing.assert_array_equal(ds.X["c=b"], [1, 0, 0, 0])
    test = pd.DataFrame({"n": [5.0], "c": ["c"], "flag": [False], "extra": ["ignored"]})
    test.to_csv(tmp_path / "test.csv", index=False)
    again = read_data(tmp_path / "test.csv", encoding=ds.encoding)
    assert again.y is None and again.feature_names == ds.feature_names
    np.testing.assert_array_equal(again.X.to_numpy(), [[0.0, 1.0, 5.0, 0.0]])
    test.assign(c="z").to_csv(tmp_path / "unseen.csv", index=False)
    with pytest.raises(DataFileError, match=r"column 'c' has categories not seen .*\['z'\]"):
        read_data(tmp_path / "unseen.csv", encoding=ds.encoding)
    test.assign(n="five").to_csv(tmp_path / "text.csv", index=False)
    with pytest.raises(DataFileError, match="'n' was numeric at fit time but holds text"):
        read_data(tmp_path / "text.csv", encoding=ds.encoding)


def test_missing_values_are_named_or_dropped(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("a,b,c,t\n1,,x,0\n2,3,,1\n,4,y,0\n5,6,x,\n7,inf,y,1\n8,9,x,1\n")
    with pytest.raises(DataFileError) as info:
        read_data(path, "t")
    message = str(info.value)
    assert "missing or infinite values in 4 columns: a (1 row), b (2 rows), c (1 row), " \
           "t (1 row)" in message and "--drop-missing" in message
    ds = read_data(path, "t", drop_missing=True)
    assert ds.n_dropped == 5 and ds.y.tolist() == [1]
    assert ds.feature_names == ["a", "b"]  # one category left in c: no indicator column
    assert ds.y.dtype == np.int64


def test_libsvm_indices_and_width_are_kept(tmp_path):
    one = tmp_path / "one.svm"
    one.write_text("1 1:0.5 4:2\n-1 2:1\n")
    ds = read_data(one)
    assert ds.feature_names == ["f1", "f2", "f3", "f4"] and ds.encoding["zero_based"] is False
    assert ds.y.dtype == np.int64 and ds.y.tolist() == [1, -1]
    np.testing.assert_array_equal(ds.X.toarray()[0], [0.5, 0, 0, 2])
    narrow = tmp_path / "narrow.libsvm"
    narrow.write_text("0 1:3\n")
    assert read_data(narrow, encoding=ds.encoding).X.shape == (1, 4)
    zero = tmp_path / "zero.svmlight"
    zero.write_text("2.5 0:1 1:2\n0.5 1:1\n")
    dz = read_data(zero)
    assert dz.encoding["zero_based"] is True and dz.feature_names == ["f0", "f1"]
    assert dz.y.dtype == np.float64
    with pytest.raises(ColumnNotFoundError, match="named 'label'"):
        read_data(zero, "other")
    wide = tmp_path / "wide.svm"
    wide.write_text("1 9:1\n")
    with pytest.raises(DataFileError, match="cannot read as LibSVM"):
        read_data(wide, encoding=ds.encoding)


def test_npz_arrays(tmp_path):
    np.savez(tmp_path / "a.npz", X=np.arange(6.0).reshape(3, 2), y=np.array(["u", "v", "u"]),
             w=np.array([1.0, 2.0, 3.0]), feature_names=np.array(["p", "q"]))
    ds = read_data(tmp_path / "a.npz")
    assert ds.feature_names == ["p", "q"] and ds.y.tolist() == ["u", "v", "u"]
    assert read_data(tmp_path / "a.npz", "w").y.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(ColumnNotFoundError, match="no array named 'z'"):
        read_data(tmp_path / "a.npz", "z")
    np.savez(tmp_path / "new.npz", X=np.ones((2, 2)))
    again = read_data(tmp_path / "new.npz", encoding=ds.encoding)
    assert again.feature_names == ["p", "q"] and again.y is None
    np.savez(tmp_path / "wide.npz", X=np.ones((2, 3)))
    with pytest.raises(DataFileError, match="3 features, but the model was fitted on 2"):
        read_data(tmp_path / "wide.npz", encoding=ds.encoding)
    np.savez(tmp_path / "obj.npz", X=np.array([[1, "a"]], dtype=object))
    with pytest.raises(DataFileError, match="allow_pickle=False"):
        read_data(tmp_path / "obj.npz")
    np.savez(tmp_path / "noX.npz", data=np.ones((2, 2)))
    with pytest.raises(DataFileError, match="no array named 'X'"):
        read_data(tmp_path / "noX.npz")
    np.savez(tmp_path / "nan.npz", X=np.array([[1.0], [np.nan]]), y=np.array([0, 1]))
    with pytest.raises(DataFileError, match=r"x0 \(1 row\)"):
        read_data(tmp_path / "nan.npz")


def test_bad_paths_and_formats(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_data(tmp_path / "none.csv")
    with pytest.raises(DataFileError, match="cannot tell the format"):
        detect_format(tmp_path / "d.xlsx")
    with pytest.raises(ValueError, match="unknown data format"):
        detect_format("d.csv", "excel")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(DataFileError, match="empty"):
        read_data(tmp_path / "empty.csv")
    (tmp_path / "head.csv").write_text("a,b\n")
    with pytest.raises(DataFileError, match="no data rows"):
        read_data(tmp_path / "head.csv", "b")
    (tmp_path / "only.csv").write_text("t\n1\n2\n")
    with pytest.raises(DataFileError, match="no feature columns"):
        read_data(tmp_path / "only.csv", "t")
    (tmp_path / "bin.csv").write_bytes(b"a,b\n\x00\x01\x02")
    with pytest.raises(DataFileError, match="not a text file"):
        read_data(tmp_path / "bin.csv")
    (tmp_path / "x.parquet").write_text("not parquet")
    with pytest.raises(DataFileError, match="cannot read as Parquet"):
        read_data(tmp_path / "x.parquet")


def test_columns_that_share_a_name_are_refused(tmp_path):
    """A CSV header naming a column twice was read with the second renamed "a.1" (pandas),
    and names differing only by surrounding spaces became two columns of one name. Each
    is now a DataFileError naming them (pyarrow refuses a Parquet file's own repeats)."""
    repeated = tmp_path / "repeated.csv"
    repeated.write_text("a,b,a,t\n1,2,3,0\n4,5,6,1\n")
    with pytest.raises(DataFileError, match=r"more than one column is named \['a'\]"):
        read_data(repeated, "t")
    spaced = tmp_path / "spaced.csv"
    spaced.write_text('"b ",b,t\n1,2,0\n4,5,1\n')
    with pytest.raises(DataFileError, match=r"more than one column is named \['b'\]"):
        read_data(spaced, "t")
    fine = tmp_path / "fine.csv"
    fine.write_text("a,a.1,t\n1,2,0\n4,5,1\n")  # a name that looks renamed is a name
    assert read_data(fine, "t").feature_names == ["a", "a.1"]


def test_numbers_with_a_decimal_comma_are_refused_not_one_hot_encoded(tmp_path):
    """A ';'-separated file with decimal commas ("1,5") was read as text: every distinct
    number became a category (hundreds of 0/1 features, silently). It is now an error naming
    the column and values, unless the column is declared categorical."""
    path = tmp_path / "european.csv"
    rows = [f"{i},{i % 7}5;{'ab'[i % 2]};{i % 2}" for i in range(40)]
    path.write_text("x;g;t\n" + "\n".join(rows) + "\n")
    with pytest.raises(DataFileError, match=r"column 'x' holds numbers written with a decimal "
                                             r"comma: '0,05' \(row 1\), '1,15' \(row 2\)"):
        read_data(path, "t")
    assert read_data(path, "t", categorical=["x"]).X.shape == (40, 40)  # as asked
    mixed = tmp_path / "mixed.csv"  # integers beside decimal commas: still numbers
    mixed.write_text("x;t\n" + "\n".join(f"{v};{i % 2}" for i, v in
                                         enumerate(["3", "2,5", "-1", ",5", "7", "1,0"])))
    with pytest.raises(DataFileError, match="decimal comma"):
        read_data(mixed, "t")
    words = tmp_path / "words.csv"  # pairs of codes in a text column stay text
    words.write_text("x,t\n" + "\n".join(f'"{v}",{i % 2}' for i, v in
                                         enumerate(["a", "b,c", "1,2", "d", "e", "f"])))
    assert read_data(words, "t").X.shape[1] == 5


def test_dates_and_times_are_refused_not_one_hot_encoded(tmp_path):
    """A Parquet datetime column (or a DataFrame's, passed to an estimator) was one-hot
    encoded, one category per instant. It is now an error saying how to use it; named
    categorical, it is categories as asked."""
    from problin import LogisticRegression
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame({"when": pd.date_range("2024-01-01", periods=30, freq="D"),
                          "x": np.arange(30.0), "t": np.arange(30) % 2})
    frame.to_parquet(tmp_path / "dated.parquet")
    with pytest.raises(DataFileError, match=r"column 'when' holds dates or times "
                                             r"\(datetime64.*--categorical when"):
        read_data(tmp_path / "dated.parquet", "t")
    assert read_data(tmp_path / "dated.parquet", "t", categorical=["when"]).X.shape == (30, 30)
    for column in (frame["when"], frame["when"] - frame["when"].min()):  # datetime, timedelta
        with pytest.raises(ValueError, match=r"column 'when' holds dates or times .*"
                                             r"X\['when'\]\.astype\(str\)"):
            LogisticRegression().fit(frame[["x"]].assign(when=column), frame["t"])
