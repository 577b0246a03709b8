"""``problin fit/predict/summary/report`` in process (click's CliRunner): options, model
names, messages and exit codes."""
import numpy as np
import pandas as pd
import pytest

from tests.cli.conftest import invoke

import problin
from problin.model_selection import CLASSIFIERS, REGRESSORS


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    n = 80
    x = rng.normal(size=n)
    frame = pd.DataFrame({"x": x, "colour": rng.choice(["red", "green", "blue"], n),
                          "label": np.where(x + rng.normal(size=n) > 0, "on", "off"),
                          "t": 2.0 * x + rng.normal(scale=0.1, size=n)})
    frame.to_csv("d.csv", index=False)
    return frame



def test_fit_help_lists_every_model_name():
    out = invoke("fit", "--help").output
    for name in [*CLASSIFIERS, *REGRESSORS]:
        assert f"  {name} " in out
    # issue 7's short names for the Bayesian models
    assert {"bayes-logistic", "bayes-linear"} <= {*CLASSIFIERS, *REGRESSORS}
    assert "bayesian" not in REGRESSORS


@pytest.mark.parametrize("command", ["compare", "fit", "predict", "summary", "report"])
def test_every_subcommand_has_an_example(command):
    result = invoke(command, "--help")
    assert result.exit_code == 0
    assert "Example" in result.output and f"problin {command}" in result.output


@pytest.mark.parametrize("name", [*CLASSIFIERS, *REGRESSORS])
def test_every_model_fits_saves_and_predicts(data, name):
    target = "label" if name in CLASSIFIERS else "t"
    data = data if name != "multinomial-nb" else data.assign(x=data["x"].abs())
    data.drop(columns=["t" if target == "label" else "label"]).to_csv("m.csv", index=False)
    fit = invoke("fit", "m.csv", "-t", target, "-m", name, "-o", "m.problin")
    assert fit.exit_code == 0, fit.output
    assert "intercept" in fit.output or "prior" in fit.output
    pred = invoke("predict", "m.problin", "m.csv")
    assert pred.exit_code == 0, pred.output
    assert pred.stdout.splitlines()[0] == "predicted" and len(pred.stdout.splitlines()) == 81


def test_model_options_alpha_and_set(data):
    result = invoke("fit", "d.csv", "-t", "label", "-m", "logistic", "--alpha", "2.5",
                    "-p", "solver=lbfgs", "-p", "tol=1e-10", "-o", "m.problin")
    assert result.exit_code == 0, result.output
    params = problin.load("m.problin").get_params()
    assert params["alpha"] == 2.5 and params["solver"] == "lbfgs" and params["tol"] == 1e-10
    bad = invoke("fit", "d.csv", "-t", "label", "-m", "lda", "--alpha", "1", "-o", "m.problin")
    assert bad.exit_code == 2 and "'lda' (LinearDiscriminantAnalysis) has no parameter " \
        "'alpha'" in bad.output
    malformed = invoke("fit", "d.csv", "-t", "label", "-m", "lda", "-p", "oops", "-o", "m")
    assert malformed.exit_code == 2 and "expected NAME=VALUE" in malformed.output


def test_standardize_keeps_the_scaler_and_names(data):
    result = invoke("fit", "d.csv", "-t", "label", "-m", "probit", "--standardize",
                    "-o", "s.problin")
    assert result.exit_code == 0, result.output
    assert "colour=red" in result.output
    summary = invoke("summary", "s.problin")
    assert "StandardScaler -> ProbitRegression" in summary.output


def test_target_kind_must_suit_the_model(data):
    continuous = invoke("fit", "d.csv", "-t", "t", "-m", "logistic", "-o", "m.problin")
    assert continuous.exit_code == 1 and "looks continuous" in continuous.output
    text = invoke("fit", "d.csv", "-t", "label", "-m", "linear", "-o", "m.problin")
    assert text.exit_code == 1 and "is not numeric: choose a classifier" in text.output


def test_predict_proba_std_out_file_and_unseen_category(data):
    invoke("fit", "d.csv", "-t", "t", "-m", "bayes-linear", "-o", "b.problin")
    invoke("fit", "d.csv", "-t", "label", "-m", "perceptron", "-o", "p.problin")
    out = invoke("predict", "b.problin", "d.csv", "--proba", "--out", "pred.csv")
    assert out.exit_code == 0 and "80 predictions written to pred.csv" in out.output
    assert list(pd.read_csv("pred.csv").columns) == ["predicted", "std"]
    no_proba = invoke("predict", "p.problin", "d.csv", "--proba")
    assert no_proba.exit_code == 2 and "Perceptron gives no probabilities" in no_proba.output
    no_std = invoke("fit", "d.csv", "-t", "t", "-m", "linear", "-o", "l.problin")
    assert no_std.exit_code == 0
    assert "no predictive distribution" in invoke("predict", "l.problin", "d.csv",
                                                  "--proba").output
    data.assign(colour="purple").to_csv("new.csv", index=False)
    unseen = invoke("predict", "p.problin", "new.csv")
    assert unseen.exit_code == 1
    assert "column 'colour' has categories not seen when the model was fitted: " \
        "['purple']" in unseen.output
    data.drop(columns=["colour"]).to_csv("fewer.csv", index=False)
    fewer = invoke("predict", "p.problin", "fewer.csv")
    assert fewer.exit_code == 1 and "columns the model was fitted on are missing: " \
        "['colour']" in fewer.output


def test_drop_missing_and_wrong_format(data):
    data.loc[[1, 2, 5], "x"] = np.nan
    data.to_csv("nan.csv", index=False)
    result = invoke("fit", "nan.csv", "-t", "label", "-m", "lda", "--drop-missing",
                    "-o", "m.problin")
    assert result.exit_code == 0 and "3 rows with missing values dropped" in result.output
    np.savez("arr.npz", X=np.ones((3, 4)), y=np.array([0, 1, 0]))
    wrong = invoke("predict", "m.problin", "arr.npz")
    assert wrong.exit_code == 1
    assert "the model was fitted on table (CSV/Parquet) data, this file is npz" in wrong.output


def test_report_shows_progress_when_forced(data):
    invoke("fit", "d.csv", "-t", "label", "-m", "lda", "-o", "m.problin")
    result = invoke("report", "m.problin", "d.csv", "-o", "r.html", "--features", "x,colour=red",
                    env={"PROBLIN_PROGRESS": "1"})
    assert result.exit_code == 0, result.output
    assert "report" in result.stderr and "report written to r.html" in result.stdout
    bad = invoke("report", "m.problin", "d.csv", "-o", "r.html", "--features", "nope")
    assert bad.exit_code == 2 and "the model has no feature 'nope'" in bad.output


def test_compare_on_a_data_file_with_an_html_leaderboard(data):
    result = invoke("compare", "d.csv", "--target", "label", "--models", "lda,gaussian-nb",
                    "--cv", "2", "--report", "lb.html")
    assert result.exit_code == 0, result.output
    assert "d.csv: 80 samples, 4 features, 2-fold cross-validation" in result.output
    page = open("lb.html").read()
    assert "<th>accuracy</th>" in page and "gaussian-nb" in page
    regression = invoke("compare", "d.csv", "-t", "t", "--models", "linear", "--cv", "2")
    assert regression.exit_code == 0 and "regression" in regression.output
    assert invoke("compare", "d.csv").exit_code == 2
    missing = invoke("compare", "d.csv", "-t", "nope")
    assert missing.exit_code == 2 and "no column named 'nope'" in missing.output


@pytest.mark.parametrize("fmt", ["csv", "parquet", "libsvm", "npz"])
def test_fit_predict_summary_report_per_format(data, fmt):
    X = np.column_stack([data["x"], data["x"] ** 2])
    label = (data["label"] == "on").astype(int).to_numpy()
    if fmt == "csv":
        pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": label}).to_csv("f.csv", sep="\t",
                                                                      index=False)
    elif fmt == "parquet":
        pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": label}).to_parquet("f.parquet")
    elif fmt == "libsvm":
        from sklearn.datasets import dump_svmlight_file
        dump_svmlight_file(X, label, "f.libsvm")
    else:
        np.savez("f.npz", X=X, y=label)
    path = f"f.{fmt}"
    target = {"libsvm": "label", "npz": "y"}.get(fmt, "y")
    fit = invoke("fit", path, "-t", target, "-m", "logistic-l2", "-o", "f.problin")
    assert fit.exit_code == 0, fit.output
    names = {"libsvm": ("f0", "f1"), "npz": ("x0", "x1")}.get(fmt, ("a", "b"))
    assert all(f"\n{n} " in fit.output for n in names)  # summary rows named by feature
    pred = invoke("predict", "f.problin", path, "--proba")
    assert pred.exit_code == 0, pred.output
    assert pred.stdout.splitlines()[0] == "predicted,p_0,p_1"
    summary = invoke("summary", "f.problin")
    assert summary.exit_code == 0 and "encoding:" in summary.output
    report = invoke("report", "f.problin", path, "-o", "f.html")
    assert report.exit_code == 0, report.output
    assert "<th>accuracy</th>" in open("f.html").read()
