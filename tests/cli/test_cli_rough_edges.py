"""Issue 16, item 6 (command-line rough edges): "did you mean", the documented exit codes
with one-line messages, ``compare --task/--seed`` and the spread over folds, the Brier
score as scikit-learn defines it, ``predict --drop-missing``'s ``row`` column and the
``--standardize`` note."""
import io

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import brier_score_loss
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from tests.cli.conftest import invoke

from problin import LinearDiscriminantAnalysis
from problin.datasets import make_heights
from problin.model_selection import compare_classifiers, compare_regressors, is_continuous_target



@pytest.fixture
def files(tmp_path, monkeypatch):
    """d.csv (x, colour, label, t, score: 8 non-integer values), a fitted m.problin."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    n = 80
    x = rng.normal(size=n)
    frame = pd.DataFrame({"x": x, "colour": rng.choice(["red", "green", "blue"], n),
                          "label": np.where(x + rng.normal(size=n) > 0, "on", "off"),
                          "t": 2.0 * x + rng.normal(scale=0.1, size=n)})
    # 8 distinct values, none a whole number: a score, not 8 classes
    frame["score"] = 0.5 + np.repeat(np.arange(8), n // 8)[rng.permutation(n)]
    frame.to_csv("d.csv", index=False)
    assert invoke("fit", "d.csv", "-t", "label", "-m", "lda", "-o", "m.problin").exit_code == 0
    return frame


def error_line(result, code):
    """The run's exit code is ``code``, without a traceback, and its message one line:
    returns that line (``Error: ...``)."""
    assert result.exit_code == code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1, result.stderr
    if code == 1:  # a data error prints that line only
        assert result.stderr.strip() == lines[0]
    else:  # a usage error: click's usage line and help hint, then the message
        assert result.stderr.strip().splitlines()[-1] == lines[0]
    return lines[0]


# --- 1. did you mean ---------------------------------------------------------------------

@pytest.mark.parametrize("args, hint", [
    (["fit", "d.csv", "-t", "label", "-m", "logistc", "-o", "x.problin"], "'logistic'"),
    (["fit", "d.csv", "-t", "lable", "-m", "lda", "-o", "x.problin"], "'label'"),
    (["fit", "d.csv", "-t", "label", "-m", "lda", "--categorical", "colur", "-o", "x.problin"],
     "'colour'"),
    (["fit", "d.csv", "-t", "label", "-m", "logistic", "-p", "solvr=lbfgs", "-o", "x.problin"],
     "'solver'"),
    (["fit", "d.csv", "-t", "label", "-m", "logistic", "-p", "solver=lbgfs", "-o", "x.problin"],
     "'lbfgs'"),
    (["fit", "d.csv", "-t", "label", "-m", "lda", "--format", "cvs", "-o", "x.problin"], "'csv'"),
    (["fit", "d.csv", "-m", "lda", "-f", "label ~ xx", "-o", "x.problin"], "'x'"),
    (["compare", "--models", "lda,probt", "--datasets", "iris"], "'probit'"),
    (["compare", "--datasets", "iriss"], "'iris'"),
    (["compare", "d.csv", "-t", "labl"], "'label'"),
    (["compare", "d.csv", "-t", "label", "--task", "regresion"], "'regression'"),
    (["report", "m.problin", "d.csv", "-o", "r.html", "--features", "x,colour=rde"],
     "'colour=red'"),
])
def test_a_typo_names_the_closest_valid_name(files, args, hint):
    line = error_line(invoke(*args), 2)
    assert f"did you mean {hint}?" in line


def test_no_suggestion_for_a_name_like_none(files):
    line = error_line(invoke("fit", "d.csv", "-t", "zzzzzz", "-m", "lda", "-o", "x.problin"), 2)
    assert "no column named 'zzzzzz'" in line and "did you mean" not in line


# --- 2. exit codes as documented: 2 usage errors, 1 data errors ------------------------------

@pytest.mark.parametrize("args, code, message", [
    (["fit", "d.csv", "-t", "label", "-m", "logistic", "-p", "solver=lbgfs", "-o", "x.problin"],
     2, "-p solver: The 'solver' parameter of LogisticRegression must be"),
    (["fit", "d.csv", "-t", "label", "-m", "logistic", "-p", "max_iter=abc", "-o", "x.problin"],
     2, "-p max_iter: The 'max_iter' parameter"),
    (["fit", "d.csv", "-t", "label", "-m", "logistic", "--alpha", "-1", "-o", "x.problin"],
     2, "--alpha: The 'alpha' parameter"),
    (["fit", "d.csv", "-t", "label", "-m", "lda", "-p", "nope", "-o", "x.problin"],
     2, "expected NAME=VALUE"),
    (["fit", "d.csv", "-t", "label", "-m", "lda", "-o", "no/such/folder/x.problin"],
     2, "does not exist"),
    (["fit", "d.csv", "-m", "lda", "-f", "label ~ x +", "-o", "x.problin"],
     2, "cannot parse the formula"),
    (["fit", "missing.csv", "-t", "label", "-m", "lda", "-o", "x.problin"], 2, "does not exist"),
    (["fit", "d.csv", "-t", "label", "-m", "lda", "--bogus", "-o", "x.problin"],
     2, "No such option"),
    (["report", "m.problin", "d.csv", "-o", "r.html", "--features", "nope"],
     2, "the model has no feature 'nope'"),
    (["report", "m.problin", "d.csv", "-o", "r.html", "--features", "x,t,colour=red"],
     2, "at most two features"),
    (["compare", "d.csv"], 2, "--target is required with DATA"),
    (["compare", "d.csv", "-t", "label", "--task", "regression"],
     2, "--task regression: the target of d.csv is not numeric"),
    (["compare", "d.csv", "-t", "label", "--models", "lda", "--report", "no/dir/lb.html"],
     2, "does not exist"),
    (["fit", "d.csv", "-t", "t", "-m", "logistic", "-o", "x.problin"], 1, "looks continuous"),
    (["fit", "nan.csv", "-t", "label", "-m", "lda", "-o", "x.problin"],
     1, "missing or infinite values"),
    (["summary", "broken.problin"], 1, "broken.problin"),
    (["predict", "m.problin", "purple.csv"], 1, "categories not seen"),
])
def test_every_user_error_has_its_documented_exit_code_and_one_line(files, args, code, message):
    files.assign(x=files["x"].where(files.index != 3)).to_csv("nan.csv", index=False)
    files.assign(colour="purple").to_csv("purple.csv", index=False)
    with open("broken.problin", "wb") as fh:
        fh.write(b"PK\x03\x04 not a model")
    assert message in error_line(invoke(*args), code)


# --- 3. compare: --task, --seed, mean ± sd over the folds -------------------------------------

def _models(output):
    """The model names of a leaderboard's rows."""
    names = ("linear", "lda", "logistic")
    return [line.split()[0] for line in output.splitlines() if line.split()[:1] and
            line.split()[0] in names]


def test_task_is_sensible_by_default_and_can_be_forced(files):
    auto = invoke("compare", "d.csv", "-t", "score", "--models", "linear,lda", "--cv", "2")
    assert auto.exit_code == 0, auto.output
    assert "2-fold cross-validation, regression" in auto.output
    assert _models(auto.output) == ["linear"]
    forced = invoke("compare", "d.csv", "-t", "score", "--models", "linear,lda", "--cv", "2",
                    "--task", "classification")
    assert forced.exit_code == 0, forced.output
    assert "regression" not in forced.output and "accuracy" in forced.output
    assert _models(forced.output) == ["lda"]
    labels = invoke("compare", "d.csv", "-t", "label", "--models", "linear", "--cv", "2",
                    "--task", "auto")
    assert "skipped (no classifier among --models)" in labels.output
    files.assign(grade=np.arange(80) % 4).to_csv("g.csv", index=False)  # whole numbers
    grades = ["compare", "g.csv", "-t", "grade", "--models", "linear,lda", "--cv", "2"]
    assert _models(invoke(*grades).output) == ["lda"]
    counts = invoke(*grades, "--task", "regression")
    assert counts.exit_code == 0 and "2-fold cross-validation, regression" in counts.output
    assert _models(counts.output) == ["linear"]


def test_continuous_target_rule():
    assert is_continuous_target(np.repeat([0.5, 1.5, 2.5], 10))  # few values, not whole
    assert is_continuous_target(np.linspace(0, 1, 50))
    assert not is_continuous_target(np.repeat([0.0, 1.0, 2.0], 10))  # whole numbers: classes
    assert not is_continuous_target(np.arange(100))  # integer codes: classes
    assert not is_continuous_target(np.array(["a", "b"] * 5))
    assert is_continuous_target(np.arange(30, dtype=float))  # many values: a quantity


def _board(output):
    return [line for line in output.splitlines() if line.split()[:1] in (["lda"], ["logistic"])]



def test_seed_sets_the_folds_and_scores_show_their_spread(files):
    args = ["compare", "d.csv", "-t", "label", "--models", "lda,logistic", "--cv", "3"]
    runs = {seed: invoke(*args, "--seed", seed) for seed in (1, 2)}
    again = invoke(*args, "--seed", 1)
    assert all(r.exit_code == 0 for r in [*runs.values(), again])
    assert "3-fold cross-validation, seed 2 (features standardised; mean ± sd over the " \
        "folds)" in runs[2].output
    fit_ms = slice(None, -1)  # the times differ from run to run
    rows = {seed: [row.split()[fit_ms] for row in _board(r.output)] for seed, r in runs.items()}
    assert rows[1] == [row.split()[fit_ms] for row in _board(again.output)]
    assert len(rows[1]) == 2 and rows[1] != rows[2]
    for row in _board(runs[1].output):  # accuracy, log-loss, Brier, ECE: "mean ± sd" each
        assert row.count("±") == 4


def test_spread_is_the_standard_deviation_over_the_folds_and_brier_is_sklearns():
    X, y = make_heights(240, random_state=5)
    X = np.asarray(X, dtype=float)
    table = compare_classifiers(X, y, ["lda"], cv=4, random_state=3, spread=True)
    assert list(table.columns) == ["model", "accuracy", "accuracy_sd", "log_loss", "log_loss_sd",
                                   "brier", "brier_sd", "ece", "ece_sd", "fit_ms", "warnings"]
    acc, brier = [], []
    for train, test in StratifiedKFold(4, shuffle=True, random_state=3).split(X, y):
        model = make_pipeline(StandardScaler(), LinearDiscriminantAnalysis()).fit(X[train],
                                                                                   y[train])
        acc.append(np.mean(model.predict(X[test]) == y[test]))
        positive = model.predict_proba(X[test])[:, 1]
        brier.append(brier_score_loss(y[test], positive, pos_label=model.classes_[1]))
    row = table.iloc[0]
    assert row["accuracy"] == pytest.approx(np.mean(acc), rel=1e-12)
    assert row["accuracy_sd"] == pytest.approx(np.std(acc, ddof=1), rel=1e-12)
    assert row["brier"] == pytest.approx(np.mean(brier), rel=1e-12)
    assert row["brier_sd"] == pytest.approx(np.std(brier, ddof=1), rel=1e-12)
    plain = compare_classifiers(X, y, ["lda"], cv=4, random_state=3)
    assert "accuracy_sd" not in plain.columns and plain["brier"].iloc[0] == row["brier"]
    reg = compare_regressors(X, np.linspace(0, 1, len(y)), ["linear"], cv=3, spread=True)
    assert {"rmse_sd", "nlpd_sd", "r2_sd"} <= set(reg.columns)


# --- 5. predict --drop-missing keeps the input's row numbers ----------------------------------

def test_drop_missing_adds_the_input_row_number(files):
    gaps = files.drop(columns=["label"]).head(8).copy()
    gaps.loc[[1, 4], "x"] = np.nan
    gaps.loc[6, "colour"] = None
    gaps.to_csv("gaps.csv", index=False)
    result = invoke("predict", "m.problin", "gaps.csv", "--drop-missing", "--proba")
    assert result.exit_code == 0, result.output
    out = pd.read_csv(io.StringIO(result.stdout))
    assert list(out.columns) == ["row", "predicted", "p_off", "p_on"]
    assert out["row"].tolist() == [1, 3, 4, 6, 8]  # data rows 2, 5 and 7 had gaps
    full = pd.read_csv(io.StringIO(
        invoke("predict", "m.problin", "d.csv", "--proba").stdout)).head(8)
    np.testing.assert_allclose(out[["p_off", "p_on"]].to_numpy(),
                               full.iloc[out["row"] - 1][["p_off", "p_on"]].to_numpy())
    assert "3 rows with missing values dropped" in result.stderr
    whole = invoke("predict", "m.problin", "d.csv", "--drop-missing", "-o", "p.csv")
    assert pd.read_csv("p.csv")["row"].tolist() == list(range(1, 81))
    plain = invoke("predict", "m.problin", "d.csv")
    assert whole.exit_code == plain.exit_code == 0 and plain.stdout.startswith("predicted\n")


@pytest.mark.parametrize("blank", ["all", "some"])
def test_predict_ignores_the_target_column_blank_or_not(files, blank):
    """predict's help: "the target column, if present, is ignored". A file of rows to
    score with the target column left blank was refused as missing values (or, with
    --drop-missing, its rows with a blank target dropped from the predictions)."""
    rows = files.head(10).copy()
    rows["label"] = None if blank == "all" else rows["label"].where(np.arange(10) % 3 > 0)
    rows.to_csv("score.csv", index=False)
    want = pd.read_csv(io.StringIO(invoke("predict", "m.problin", "d.csv", "--proba").stdout))
    for extra in ([], ["--drop-missing"]):
        result = invoke("predict", "m.problin", "score.csv", "--proba", *extra)
        assert result.exit_code == 0, result.output
        out = pd.read_csv(io.StringIO(result.stdout))
        assert len(out) == 10 and "dropped" not in result.stderr
        np.testing.assert_allclose(out[["p_off", "p_on"]].to_numpy(),
                                   want.head(10)[["p_off", "p_on"]].to_numpy())


def test_drop_missing_row_numbers_for_npz_and_formula_models(files):
    X = np.column_stack([files["x"], files["t"]])
    np.savez("d.npz", X=X, y=files["label"].to_numpy(dtype=str))
    assert invoke("fit", "d.npz", "-t", "y", "-m", "lda", "-o", "n.problin").exit_code == 0
    X[[0, 9], 1] = np.nan
    np.savez("gaps.npz", X=X)
    npz = invoke("predict", "n.problin", "gaps.npz", "--drop-missing")
    assert npz.exit_code == 0, npz.output
    rows = [int(line.split(",")[0]) for line in npz.stdout.splitlines()[1:]]
    assert len(rows) == 78 and 1 not in rows and 10 not in rows and rows[:2] == [2, 3]
    assert invoke("fit", "d.csv", "-m", "lda", "-f", "label ~ x + C(colour)",
                  "-o", "f.problin").exit_code == 0
    files.assign(x=files["x"].where(files.index != 2)).to_csv("fgaps.csv", index=False)
    formula = invoke("predict", "f.problin", "fgaps.csv", "--drop-missing")
    assert formula.exit_code == 0, formula.output
    lines = formula.stdout.splitlines()
    assert lines[0] == "row,predicted" and [line.split(",")[0] for line in lines[1:4]] == \
        ["1", "2", "4"]


# --- 7. --standardize says what the coefficients are per --------------------------------------

def test_standardize_says_coefficients_are_per_standard_deviation(files):
    fitted = invoke("fit", "d.csv", "-t", "label", "-m", "logistic", "--standardize",
                    "-o", "s.problin")
    assert fitted.exit_code == 0, fitted.output
    note = "coefficients are per standard deviation of each feature"
    assert note in fitted.output.splitlines()[1]  # under the header, above the table
    assert note in invoke("summary", "s.problin").output
    assert note not in invoke("summary", "m.problin").output


@pytest.mark.parametrize(("cv", "heading"), [("3", "3-fold cross-validation"),
                                             ("0.25", "held-out"), ("none", None)])
def test_report_cv_option_chooses_the_out_of_sample_scores(files, cv, heading):
    result = invoke("report", "m.problin", "d.csv", "--cv", cv, "-o", "r.html")
    assert result.exit_code == 0, result.output
    page = open("r.html", encoding="utf-8").read()
    if heading is None:
        assert "cross-validation" not in page and "held-out" not in page
    else:
        assert heading in page


@pytest.mark.parametrize("cv", ["1", "1.5", "abc", "0"])
def test_report_bad_cv_is_a_usage_error(files, cv):
    result = invoke("report", "m.problin", "d.csv", "--cv", cv, "-o", "r.html")
    assert result.exit_code == 2 and "--cv" in result.output


def test_a_blank_in_a_true_false_column_is_a_missing_value(tmp_path, monkeypatch):
    """pandas reads True, blank, False as objects: at predict that was "numeric at fit
    time but holds text here:" with nothing named, which --drop-missing did not help; at
    fit the column became a category (flag=True). Now a missing value, at both."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    n = 40
    frame = pd.DataFrame({"x": rng.normal(size=n), "flag": rng.random(n) > 0.5})
    frame["y"] = (frame.x + frame.flag + rng.normal(size=n) > 0.5).astype(int)
    frame.to_csv("b.csv", index=False)
    assert invoke("fit", "b.csv", "-t", "y", "-m", "logistic", "-o", "b.problin").exit_code == 0
    gaps = frame.head(6).astype({"flag": object})
    gaps.loc[2, "flag"] = None
    gaps.drop(columns="y").to_csv("bp.csv", index=False)
    line = error_line(invoke("predict", "b.problin", "bp.csv"), 1)
    assert "missing or infinite values in 1 column: flag (1 row)" in line
    kept = invoke("predict", "b.problin", "bp.csv", "--drop-missing")
    assert kept.exit_code == 0, kept.output
    assert pd.read_csv(io.StringIO(kept.stdout))["row"].tolist() == [1, 2, 4, 5, 6]
    frame.astype({"flag": object}).assign(flag=frame.flag.where(np.arange(n) != 3)) \
        .to_csv("bgap.csv", index=False)
    line = error_line(invoke("fit", "bgap.csv", "-t", "y", "-m", "logistic", "-o", "c.problin"), 1)
    assert "flag (1 row)" in line
    fitted = invoke("fit", "bgap.csv", "-t", "y", "-m", "logistic", "--drop-missing", "-o",
                    "c.problin")
    assert fitted.exit_code == 0 and "flag=True" not in fitted.output
