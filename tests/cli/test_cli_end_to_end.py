"""``problin fit/predict/summary/report/compare`` through real subprocesses, for every
input format and the error paths: exit codes (0 ok, 1 data error, 2 usage error) and
messages without tracebacks. Independent commands run concurrently (each process spends
most of its time importing scipy/scikit-learn)."""
import zipfile

import numpy as np
import pandas as pd
import pytest

import problin
from problin.datasets import make_heights

FORMATS = ("csv", "parquet", "libsvm", "npz")


def _write_data(d):
    X, y = make_heights(120, random_state=1)
    frame = X.assign(shoe=np.where(X["height"] > 171, "large", "small"), sex=y)
    frame.to_csv(d / "train.csv", sep=";", index=False)
    frame.to_parquet(d / "train.parquet")
    with open(d / "train.svm", "w") as fh:
        for h, s in zip(X["height"], y):
            fh.write(f"{int(s == 'male')} 1:{h} 2:{h / 100:.4f}\n")
    np.savez(d / "train.npz", X=X[["height"]].to_numpy(), y=y.to_numpy().astype(str),
             feature_names=np.array(["height"]))
    bad = frame.copy()
    bad.loc[[3, 7], "height"] = np.nan
    bad.to_csv(d / "nan.csv", index=False)
    frame.assign(shoe="huge").to_csv(d / "unseen.csv", index=False)


def _tamper(src, dst):
    """Copy a model file with its metadata edited (alpha changed), as an attacker would."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for name in zin.namelist():
            data = zin.read(name)
            if name == "metadata.json":
                data = data.replace(b'"alpha": 0.0', b'"alpha": 9.0')
            zout.writestr(name, data)
        zout.comment = zin.comment


@pytest.fixture(scope="module")
def runs(tmp_path_factory, run_all):
    d = tmp_path_factory.mktemp("e2e")
    _write_data(d)
    target = {"csv": "sex", "parquet": "sex", "libsvm": "label", "npz": "y"}
    first = {f"fit-{fmt}": ["fit", f"train.{'svm' if fmt == 'libsvm' else fmt}", "--target",
                            target[fmt], "--model", "logistic", "--out", f"{fmt}.problin"]
             for fmt in FORMATS}
    first.update({
        "missing-file": ["fit", "nope.csv", "-t", "sex", "-m", "logistic", "-o", "x.problin"],
        "unknown-column": ["fit", "train.csv", "-t", "nope", "-m", "logistic", "-o", "x.problin"],
        "bad-model": ["fit", "train.csv", "-t", "sex", "-m", "nope", "-o", "x.problin"],
        "nan": ["fit", "nan.csv", "-t", "sex", "-m", "logistic", "-o", "x.problin"],
        "compare": ["compare", "--datasets", "heights", "--models", "logistic,lda", "--cv", "2"],
    })
    results = run_all(first, d)
    _tamper(d / "csv.problin", d / "tampered.problin")
    second = {
        "predict": ["predict", "parquet.problin", "train.csv", "--proba"],
        "summary": ["summary", "csv.problin"],
        "report": ["report", "libsvm.problin", "train.svm", "-o", "svm.html"],
        "tampered": ["predict", "tampered.problin", "train.csv"],
    }
    results.update(run_all(second, d))
    return d, results


@pytest.mark.parametrize("fmt", FORMATS)
def test_fit_every_format(runs, fmt):
    d, results = runs
    fit = results[f"fit-{fmt}"]
    assert fit.returncode == 0, fit.stderr
    assert "coef" in fit.stdout and "std_err" in fit.stdout and "intercept" in fit.stdout
    assert f"model saved to {fmt}.problin" in fit.stdout
    model = problin.load(d / f"{fmt}.problin")
    assert model.n_features_in_ == {"csv": 2, "parquet": 2, "libsvm": 2, "npz": 1}[fmt]


def test_fit_prints_aligned_summary_with_encoded_names(runs):
    out = runs[1]["fit-csv"].stdout
    rows = [line for line in out.splitlines() if line.split()[:1] in (["height"],
                                                                    ["shoe=small"])]
    assert len(rows) == 2
    header = next(line for line in out.splitlines() if "std_err" in line)
    assert all(len(r) == len(header) for r in rows)  # aligned columns


def test_predict_a_csv_with_a_model_fitted_on_parquet(runs):
    d, results = runs
    result = results["predict"]
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "predicted,p_female,p_male" and len(lines) == 121
    frame = pd.read_csv(d / "train.csv", sep=";")
    X = pd.get_dummies(frame[["height", "shoe"]], drop_first=True, dtype=float)
    expected = problin.load(d / "parquet.problin").predict(X.rename(
        columns={"shoe_small": "shoe=small"}))
    assert [line.split(",")[0] for line in lines[1:]] == list(expected)


def test_summary_report_and_compare(runs):
    d, results = runs
    summary = results["summary"]
    assert summary.returncode == 0 and "target:     sex" in summary.stdout
    assert "one-hot encoded: shoe" in summary.stdout
    assert results["report"].returncode == 0, results["report"].stderr
    html = (d / "svm.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "data:image/png;base64," in html
    compare = results["compare"]
    assert compare.returncode == 0, compare.stderr
    assert "accuracy" in compare.stdout and "lda" in compare.stdout


@pytest.mark.parametrize("key, code, message", [
    ("missing-file", 2, "does not exist"),
    ("unknown-column", 2, "no column named 'nope'"),
    ("bad-model", 2, "'nope' is not one of"),
    ("nan", 1, "missing or infinite values in 1 column: height (2 rows)"),
    ("tampered", 1, "checksum mismatch for metadata.json"),
])
def test_error_paths_exit_codes_and_messages(runs, key, code, message):
    result = runs[1][key]
    assert result.returncode == code, (result.stdout, result.stderr)
    assert message in result.stdout + result.stderr
    assert "Traceback" not in result.stderr


def test_debug_shows_the_traceback(runs):
    """``--debug`` lets the exception through (click then prints its traceback)."""
    from click.testing import CliRunner

    from problin.cli.main import cli
    from problin.io import ModelFileError
    d, _ = runs
    for args in (["--debug", "summary"], ["summary", "--debug"]):
        result = CliRunner().invoke(cli, [*args, str(d / "tampered.problin")])
        assert result.exit_code == 1 and isinstance(result.exception, ModelFileError)
