"""CSV header lines of any length are answered at once (issue 31, item 14): a header over
the 64 KiB sniffing sample is read whole (it was refused as "more than one column is
named ..." from the cut sample), repeated names are refused in linear time before pandas
renames them (2 MB took more than 45 s, a 10 MB line more than 5 minutes), and a first
line of more than MAX_CSV_COLUMNS fields or MAX_HEADER_BYTES is refused with the cap."""
import time

import pytest
from tests.cli.conftest import invoke

from problin.io.errors import DataFileError
from problin.io.readers import read_data

pytestmark = pytest.mark.filterwarnings("ignore")
REPEATED = r"more than one column is named \['a_column_name_0', 'a_column_name_1'"


def _write(path, header, rows=("1", "2")):
    n = header.count(",") + 1
    path.write_text(header + "\n" + "".join(",".join([r] * n) + "\n" for r in rows))
    return path


def _reader(dask):
    """read_data, or read_dask (imported before any timing)."""
    if not dask:
        return read_data
    pytest.importorskip("dask.dataframe")
    from problin.io.dask_readers import read_dask
    return read_dask


def test_a_header_longer_than_the_sample_is_read_whole(tmp_path):
    # the 64 KiB sample ends just after "name1" of the name "name1_long": the cut name
    # repeated the first column's
    head, pad = "name1,", "_" * 54  # 60-byte fillers: few columns (reading is per column)
    fillers = [f"f{i:05d}{pad}" for i in range((65536 - 5 - len(head)) // 61)]
    short = 65536 - 5 - len(head) - 61 * len(fillers)
    names = ["name1", *fillers, "g" * max(short - 1, 1), "name1_long",
             *(f"h{i}" for i in range(20)), "y"]
    header = ",".join(names)
    assert header.encode()[:65536].endswith(b",name1")
    data = read_data(_write(tmp_path / "wide.csv", header), "y")
    assert data.feature_names == names[:-1] and data.X.shape == (2, len(names) - 1)


@pytest.mark.parametrize("dask", [False, True])
def test_repeated_names_in_a_long_header_are_refused_quickly(tmp_path, dask):
    names = [f"a_column_name_{i % 1000}" for i in range(90_000)]  # 2 MB, each name 90 times
    path = _write(tmp_path / "dup.csv", ",".join(names + ["y"]), rows=("1",))
    read = _reader(dask)
    start = time.perf_counter()
    with pytest.raises(DataFileError, match=REPEATED):
        read(path, "y")
    assert time.perf_counter() - start < 5  # (0.2 s alone; minutes before)


@pytest.mark.parametrize("dask", [False, True])
def test_too_many_columns_are_refused_with_the_cap(tmp_path, dask):
    from problin.io._csv_header import MAX_CSV_COLUMNS
    line = ",".join("7" for _ in range(MAX_CSV_COLUMNS + 1))  # one long line of numbers
    path = tmp_path / "line.csv"
    path.write_text(line + "\n")
    read = _reader(dask)
    start = time.perf_counter()
    with pytest.raises(DataFileError, match=f"has {MAX_CSV_COLUMNS + 1} columns, more than "
                       f"the {MAX_CSV_COLUMNS}"):
        read(path, "y")
    assert time.perf_counter() - start < 5  # (0.2 s alone; minutes before)


def test_a_header_over_the_byte_cap_is_refused_without_reading_on(tmp_path):
    from problin.io._csv_header import MAX_HEADER_BYTES
    path = tmp_path / "huge.csv"
    with open(path, "w") as fh:  # one name longer than the cap, never ending
        fh.write("a," + "b" * (MAX_HEADER_BYTES + 10) + "\n1,2\n")
    with pytest.raises(DataFileError, match="first line is longer than"):
        read_data(path, "a")


def test_a_quoted_header_with_a_newline_is_one_record(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text('"a\nb",y\n1,0\n2,1\n3,0\n')
    assert read_data(path, "y").feature_names == ["a\nb"]


def test_the_command_line_answers_in_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "dup.csv", ",".join(["a"] * 50_000 + ["y"]))
    start = time.perf_counter()
    result = invoke("fit", "dup.csv", "-t", "y", "-m", "logistic", "-o", "m.problin")
    assert time.perf_counter() - start < 5  # (0.2 s alone; minutes before)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stderr.startswith("Error: dup.csv: more than one column is named ['a']")
