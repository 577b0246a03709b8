"""The command line on issue 13's bad input (items 6, 7, 8 and 10): one line, no traceback,
a non-zero exit code; ``--categorical`` and ``--n-features``; ``PROBLIN_PROGRESS``; the
Dask engine without Dask installed."""
import io
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from tests.cli.conftest import invoke

from problin.cli import _common


@pytest.fixture
def typo(tmp_path, monkeypatch):
    """``typo.csv``: numeric column b with one text cell (data row 5), target y."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    n = 60
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 4, n).astype(object)})
    frame["y"] = np.where(frame["a"] + rng.normal(size=n) > 0, "yes", "no")
    frame.loc[4, "b"] = "x"
    frame.to_csv("typo.csv", index=False)
    frame.loc[4, "b"] = 2
    frame.drop(columns="y").head(5).to_csv("new.csv", index=False)
    return frame



def _one_line_error(result, code=1):
    assert result.exit_code == code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


@pytest.mark.parametrize("command", ["fit", "compare"])
def test_typo_in_a_numeric_column_is_one_line_naming_it(typo, command):
    args = ["-t", "y"] + (["-m", "logistic", "-o", "m.problin"] if command == "fit" else
                          ["--models", "lda", "--cv", "2"])
    line = _one_line_error(invoke(command, "typo.csv", *args))
    assert "column 'b' looks numeric (59 of 60 values are numbers)" in line
    assert "'x' (row 5)" in line and "--categorical b" in line


def test_categorical_option_on_every_data_command(typo):
    fitted = invoke("fit", "typo.csv", "-t", "y", "-m", "logistic", "--categorical", "b",
                    "-o", "m.problin")
    assert fitted.exit_code == 0, fitted.output
    assert "b=x" in fitted.output  # the text cell is a category now, as asked
    for args in (["predict", "m.problin", "new.csv", "--categorical", "b"],
                 ["report", "m.problin", "typo.csv", "--categorical", "b", "-o", "r.html"],
                 ["compare", "typo.csv", "-t", "y", "--models", "lda", "--cv", "2",
                  "--categorical", "b"]):
        result = invoke(*args)
        assert result.exit_code == 0, (args, result.output)
    wrong = invoke("predict", "m.problin", "new.csv", "--categorical", "a")
    assert "columns ['a'] were numeric when the model was fitted" in _one_line_error(wrong)
    absent = invoke("fit", "typo.csv", "-t", "y", "-m", "lda", "--categorical", "zz",
                    "-o", "z.problin")
    assert absent.exit_code == 2 and "categorical columns ['zz']" in absent.output


def test_categorical_option_with_the_dask_engine(typo):
    pytest.importorskip("dask.dataframe")
    bad = invoke("fit", "typo.csv", "-t", "y", "-m", "lda", "--engine", "dask", "-o", "d.problin")
    assert "column 'b' looks numeric" in _one_line_error(bad)
    good = invoke("fit", "typo.csv", "-t", "y", "-m", "lda", "--engine", "dask",
                  "--categorical", "b", "-o", "d.problin")
    assert good.exit_code == 0, good.output
    memory = invoke("fit", "typo.csv", "-t", "y", "-m", "lda", "--categorical", "b",
                    "-o", "m.problin")
    from problin.io import read_model_file
    assert read_model_file("d.problin").encoding == read_model_file("m.problin").encoding
    libsvm = invoke("fit", "typo.csv", "-t", "y", "-m", "lda", "--engine", "dask",
                    "--n-features", "3", "-o", "d.problin")
    assert memory.exit_code == 0 and libsvm.exit_code == 2
    assert "--n-features applies to LibSVM data" in libsvm.output


# `problin ...` with the address space limited to what the imports took plus 1 GiB: a
# regression fails with a MemoryError there rather than taking the machine's memory.
_LIMITED_CLI = """
import resource, sys
from problin.cli.main import main
with open("/proc/self/status") as fh:
    vm = next(int(line.split()[1]) for line in fh if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (vm * 1024 + 2 ** 30, resource.RLIM_INFINITY))
sys.argv[0] = "problin"
main()
"""


def test_libsvm_huge_index_and_n_features(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "huge.svm").write_text("1 2000000000:1\n0 1:1\n")
    done = subprocess.run([sys.executable, "-c", _LIMITED_CLI, "fit", "huge.svm", "-t",
                           "label", "-m", "logistic", "-o", "m.problin"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=240)
    assert done.returncode == 1, done.stderr[-3000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "feature index 2000000000 is implausibly large" in lines[0]
    assert "--n-features" in lines[0]
    (tmp_path / "small.svm").write_text("1 1:1 3:2\n0 2:1\n1 1:2\n0 3:1\n")
    fitted = invoke("fit", "small.svm", "-t", "label", "-m", "logistic", "--alpha", "1",
                    "--n-features", "5", "-o", "m.problin")
    assert fitted.exit_code == 0 and "5 features" in fitted.output, fitted.output
    assert invoke("predict", "m.problin", "small.svm").exit_code == 0
    wrong = invoke("predict", "m.problin", "small.svm", "--n-features", "4")
    assert "n_features=4, but the model was fitted on 5" in _one_line_error(wrong)
    (tmp_path / "t.csv").write_text("a,t\n1,0\n2,1\n")
    csv = invoke("fit", "t.csv", "-t", "t", "-m", "lda", "--n-features", "4", "-o", "c.problin")
    assert "n_features applies to LibSVM data, not csv" in _one_line_error(csv)


def test_model_file_over_the_cap_is_one_line(typo, monkeypatch):
    assert invoke("fit", "typo.csv", "-t", "y", "-m", "lda", "--categorical", "b",
                  "-o", "m.problin").exit_code == 0
    import problin.io.model_file as model_file
    monkeypatch.setattr(model_file, "MAX_MODEL_BYTES", 64)
    for args in (["summary", "m.problin"], ["predict", "m.problin", "new.csv"]):
        line = _one_line_error(invoke(*args))
        assert "larger than a model file holds (64 bytes" in line


# --- PROBLIN_PROGRESS ---------------------------------------------------------------------

class _Stream(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self.tty = tty

    def isatty(self):
        return self.tty


@pytest.mark.parametrize("tty, setting, shown", [
    (False, "1", True), (False, "", False), (False, "0", False),
    (True, "", True), (True, "0", False), (True, "1", True)])
def test_progress_setting_decides_over_the_terminal(monkeypatch, tty, setting, shown):
    stream = _Stream(tty)
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setenv("PROBLIN_PROGRESS", setting)
    with _common.progress("work", 4) as step:
        for _ in range(4):
            step()
    text = stream.getvalue()
    if shown:
        assert f"\rwork [{'#' * 30}] 4/4 100%" in text and text.endswith("\n")
        assert "work [" + " " * 30 + "] 0/4   0%" in text  # drawn from the start
    else:
        assert text == ""


def test_forced_progress_draws_a_bar_on_a_pipe(tmp_path):
    env = {**os.environ, "PROBLIN_PROGRESS": "1"}
    done = subprocess.run([sys.executable, "-m", "problin", "compare", "--datasets", "iris",
                           "--models", "lda", "--cv", "2"], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=240)
    assert done.returncode == 0, done.stderr
    assert "iris [" in done.stderr and "] 2/2 100%" in done.stderr  # a bar, not a bare label


# --- the Dask engine without Dask ---------------------------------------------------------

def test_dask_engine_without_dask_says_what_to_install(tmp_path):
    shim = tmp_path / "shim"
    shim.mkdir()
    # None in sys.modules makes `import dask` raise ImportError, as if not installed.
    (shim / "sitecustomize.py").write_text("import sys\nsys.modules['dask'] = None\n")
    (tmp_path / "d.csv").write_text("a,y\n1,0\n2,1\n3,0\n4,1\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(shim), *filter(None, [os.environ.get("PYTHONPATH")])])}
    check = subprocess.run([sys.executable, "-c", "import dask"], env=env, capture_output=True)
    assert check.returncode != 0  # the shim works
    done = subprocess.run([sys.executable, "-m", "problin", "fit", "d.csv", "-t", "y", "-m",
                           "lda", "--engine", "dask", "-o", "m.problin"], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=240)
    assert done.returncode == 1, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    # the wording of every missing extra (problin._optional)
    assert lines[0] == "Error: --engine dask needs dask: pip install 'problin[dask]'"
    assert not (tmp_path / "m.problin").exists()
    memory = subprocess.run([sys.executable, "-m", "problin", "fit", "d.csv", "-t", "y", "-m",
                             "lda", "-o", "m.problin"], capture_output=True, text=True,
                            env=env, cwd=tmp_path, timeout=240)
    assert memory.returncode == 0, memory.stderr  # the in-memory engine needs no Dask
