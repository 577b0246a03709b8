"""``problin fit --engine dask``: the out-of-core fit from the command line, end to end.

Each model is fitted twice, by the Dask engine (from a directory of Parquet pieces, or a
CSV file read in byte ranges) and by the default in-memory engine (from one file of the
same rows); the model files must agree (same encoding, names, coefficients to 1e-10) and
``predict`` must read new data with either one. Error paths are checked for their exit
codes (1 data error, 2 usage error) and one-line messages. Commands run concurrently in
subprocesses, as in test_cli_end_to_end.py.
"""
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import problin
from problin.io import read_model_file

pytest.importorskip("dask.dataframe")
pytest.importorskip("pyarrow")

# Several model fits in subprocesses (about 50 s on 2 cores): the second CI step.
pytestmark = pytest.mark.slow

FITS = {"lda": "y", "logistic": "y", "linear": "a"}  # "a": from b, kind and y


def _write_data(d):
    rng = np.random.default_rng(3)
    n = 1200
    frame = pd.DataFrame(rng.normal(size=(n, 2)), columns=["a", "b"])
    frame["kind"] = rng.choice(["cat", "dog", "eel"], n)
    eta = frame["a"] - 0.5 * frame["b"] + (frame["kind"] == "dog")
    frame["y"] = np.where(rng.random(n) < 1 / (1 + np.exp(-eta)), "yes", "no")
    frame.to_parquet(d / "all.parquet")
    (d / "pieces").mkdir()
    for i in range(4):
        frame.iloc[300 * i:300 * (i + 1)].to_parquet(d / "pieces" / f"p{i}.parquet",
                                                     row_group_size=100)
    frame.to_csv(d / "all.csv", index=False)
    gaps = frame.copy()
    gaps.loc[[10, 900], "b"] = np.nan
    gaps.to_parquet(d / "gaps.parquet")
    frame.head(5).to_csv(d / "new.csv", index=False)
    (d / "data.svm").write_text("1 1:0.5\n0 1:1.5\n")


@pytest.fixture(scope="module")
def runs(tmp_path_factory, run_all):
    d = tmp_path_factory.mktemp("dask-cli")
    _write_data(d)
    commands = {}
    for model, target in FITS.items():
        common = ["-t", target, "-m", model]
        commands[f"dask-{model}"] = ["fit", "pieces", *common, "--engine", "dask",
                                     "--blocksize", "8KiB", "-o", f"dask-{model}.problin"]
        commands[f"memory-{model}"] = ["fit", "all.parquet", *common,
                                       "-o", f"memory-{model}.problin"]
    commands["dask-csv"] = ["fit", "all.csv", "-t", "y", "-m", "lda", "--engine", "dask",
                            "--blocksize", "16KiB", "-o", "csv.problin"]
    bad = {
        "no-target": ["pieces", "-t", "nope", "--engine", "dask"],
        "directory-in-memory": ["pieces", "-t", "y"],
        "standardize": ["pieces", "-t", "y", "--engine", "dask", "--standardize"],
        "blocksize": ["pieces", "-t", "y", "--engine", "dask", "--blocksize", "huge"],
        "memory-blocksize": ["all.csv", "-t", "y", "--blocksize", "1MiB"],
        "libsvm": ["data.svm", "-t", "label", "--engine", "dask"],
        "nan": ["gaps.parquet", "-t", "y", "--engine", "dask"],
        "continuous": ["pieces", "-t", "a", "--engine", "dask"],
        "no-scheduler": ["pieces", "-t", "y", "--engine", "dask",
                         "--scheduler", "tcp://127.0.0.1:9"],
    }
    for key, args in bad.items():
        commands[key] = ["fit", *args, "-m", "lda", "-o", f"{key}.problin"]
    results = run_all(commands, d)
    results.update(run_all({"predict": ["predict", "dask-logistic.problin", "new.csv",
                                         "--proba"]}, d))
    return d, results


@pytest.mark.parametrize("model", list(FITS))
def test_dask_engine_writes_the_in_memory_model_file(runs, model):
    d, results = runs
    for engine in ("dask", "memory"):
        result = results[f"{engine}-{model}"]
        assert result.returncode == 0, result.stderr
        assert "fitted on 1200 rows, 4 features" in result.stdout
        assert "Warning" not in result.stderr
    lazy = read_model_file(d / f"dask-{model}.problin")
    eager = read_model_file(d / f"memory-{model}.problin")
    assert lazy.encoding == eager.encoding and lazy.feature_names == eager.feature_names
    assert lazy.feature_names == (["b", "kind=dog", "kind=eel", "y=yes"] if model == "linear"
                                  else ["a", "b", "kind=dog", "kind=eel"])
    assert type(lazy.model) is type(eager.model)
    np.testing.assert_array_equal(lazy.model.feature_names_in_, eager.model.feature_names_in_)
    np.testing.assert_allclose(lazy.model.coef_, eager.model.coef_, rtol=1e-10, atol=0)
    np.testing.assert_allclose(lazy.model.intercept_, eager.model.intercept_, rtol=1e-10,
                               atol=0)


def test_dask_engine_reads_csv(runs):
    d, results = runs
    assert results["dask-csv"].returncode == 0, results["dask-csv"].stderr
    lazy, eager = problin.load(d / "csv.problin"), problin.load(d / "memory-lda.problin")
    np.testing.assert_allclose(lazy.coef_, eager.coef_, rtol=1e-10, atol=0)


def test_predict_with_a_model_fitted_out_of_core(runs):
    d, results = runs
    result = results["predict"]
    assert result.returncode == 0 and result.stderr == "", result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "predicted,p_no,p_yes" and len(lines) == 6
    eager = problin.load(d / "memory-logistic.problin")
    new = pd.read_csv(d / "new.csv")
    X = new[["a", "b"]].assign(**{f"kind={k}": (new["kind"] == k) * 1.0 for k in ("dog", "eel")})
    assert [line.split(",")[0] for line in lines[1:]] == list(eager.predict(X))


@pytest.mark.parametrize("key, code, message", [
    ("no-target", 2, "no column named 'nope'; columns are"),
    ("directory-in-memory", 2, ("is a directory: read a directory of Parquet or CSV files "
                                "with --engine dask")),
    ("standardize", 2, "--standardize needs the data in memory"),
    ("blocksize", 2, "not a size: 'huge'"),
    ("memory-blocksize", 2, "--blocksize and --scheduler apply to --engine dask"),
    ("libsvm", 1, "the Dask engine reads CSV and Parquet, not libsvm"),
    ("nan", 1, "gaps.parquet (partition 0): missing or infinite values in 1 column: b (2 rows)"),
    ("continuous", 1, "target 'a' looks continuous"),
    ("no-scheduler", 1, "cannot connect to the Dask scheduler at tcp://127.0.0.1:9"),
])
def test_dask_engine_error_paths(runs, key, code, message):
    result = runs[1][key]
    assert result.returncode == code, (result.stdout, result.stderr)
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_scheduler_address_runs_on_a_distributed_cluster(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    _write_data(tmp_path)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  protocol="tcp://", dashboard_address=None,
                                  worker_dashboard_address=None) as cluster:
        result = subprocess.run(
            [sys.executable, "-m", "problin", "fit", "pieces", "-t", "y", "-m", "lda",
             "--engine", "dask", "--blocksize", "8KiB", "--scheduler",
             cluster.scheduler_address, "-o", "m.problin"],
            cwd=tmp_path, check=False, capture_output=True, text=True, timeout=240)
        assert result.returncode == 0, result.stderr
    eager = problin.LinearDiscriminantAnalysis().fit(
        problin.io.readers.read_data(tmp_path / "all.parquet", "y").X,
        pd.read_parquet(tmp_path / "all.parquet")["y"])
    np.testing.assert_allclose(problin.load(tmp_path / "m.problin").coef_, eager.coef_,
                               rtol=1e-10, atol=0)
