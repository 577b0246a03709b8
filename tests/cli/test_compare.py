"""The main job, ``problin compare``, on bundled data."""
import subprocess
import sys

import pandas as pd
import pytest
from click.testing import CliRunner

from problin.cli.main import cli
from problin.datasets import make_heights
from problin.model_selection import compare_classifiers


def test_compare_prints_an_aligned_leaderboard_per_dataset():
    result = CliRunner().invoke(cli, ["compare", "--cv", "3"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "breast-cancer: 569 samples, 30 features, 3-fold" in out
    assert "heights: 1000 samples, 1 features" in out
    header = [line for line in out.splitlines() if line.split()[:3] == ["model", "accuracy", "log_loss"]]
    assert len(header) == 4  # breast-cancer, iris, wine, heights
    assert "(left out, binary only: probit, probit-l2; 3 classes)" in out
    for name in ("logistic", "logistic-l2", "probit", "probit-l2"):
        assert out.count(f" {name} ") + out.count(f"\n{name} ") >= 2 or name in out


def test_compare_flags_separation_on_breast_cancer():
    result = CliRunner().invoke(cli, ["compare", "--datasets", "breast-cancer", "--models",
                                      "logistic,logistic-l2", "--cv", "3"])
    assert result.exit_code == 0
    rows = {line.split()[0]: line for line in result.output.splitlines() if line.strip()}
    assert "SeparationWarning" in rows["logistic"]
    assert "Warning" not in rows["logistic-l2"]


def test_unknown_model_or_dataset_is_a_usage_error():
    runner = CliRunner()
    bad_model = runner.invoke(cli, ["compare", "--models", "nope"])
    assert bad_model.exit_code == 2 and "unknown models: 'nope'" in bad_model.output
    bad_data = runner.invoke(cli, ["compare", "--datasets", "nope"])
    assert bad_data.exit_code == 2 and "unknown datasets: 'nope'" in bad_data.output


def test_compare_classifiers_scores_match_a_direct_computation():
    X, y = make_heights(300, random_state=3)
    table = compare_classifiers(X, y, ["logistic", "probit"], cv=3)
    assert isinstance(table, pd.DataFrame)
    assert list(table.columns) == ["model", "accuracy", "log_loss", "brier", "ece", "fit_ms",
                                   "warnings"]
    assert table["brier"].between(0, 2).all() and table["ece"].between(0, 1).all()
    assert table["accuracy"].between(0.7, 1.0).all()
    assert (table["log_loss"] > 0).all() and table["log_loss"].is_monotonic_increasing


@pytest.mark.parametrize("args", [["--help"], ["compare", "--help"]])
def test_python_dash_m_entry_point(args):
    out = subprocess.run([sys.executable, "-m", "problin", *args], capture_output=True, text=True)
    assert out.returncode == 0
    assert "Usage:" in out.stdout


def test_binary_only_models_are_left_out_for_more_classes():
    from problin.datasets import DEFAULT_DATASETS, load_dataset
    from problin.model_selection import applicable_classifiers
    ok, left_out = applicable_classifiers(["a", "b", "c", "a"])
    assert left_out == ["probit", "probit-l2"] and "logistic" in ok
    assert applicable_classifiers([0, 1, 1], ["probit"]) == (["probit"], [])
    X, y = load_dataset("digits")
    assert X.shape == (1797, 64) and y.nunique() == 10 and "digits" not in DEFAULT_DATASETS


def test_a_class_rarer_than_the_folds_is_one_warning_line(tmp_path, monkeypatch):
    """scikit-learn's "least populated class" warning leaked to stderr with its source
    path and line; now problin's own warning, naming the class, as one line."""
    import numpy as np
    import warnings
    from problin import ProblinWarning
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=60), "z": rng.normal(size=60)})
    frame["y"] = np.where(frame.x > 0, "a", "b")
    frame.loc[:1, "y"] = "c"
    frame.to_csv("rare.csv", index=False)
    result = CliRunner().invoke(cli, ["compare", "rare.csv", "-t", "y", "--models", "lda"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == ["Warning (ProblinWarning): classes ['c'] have fewer rows than the 5 "
                     "folds: some test folds hold none of them; use fewer folds for scores "
                     "of every class in every fold"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compare_classifiers(frame[["x", "z"]], frame["y"], ["lda"], cv=2)
    assert not [w for w in caught if issubclass(w.category, UserWarning)]
    with pytest.warns(ProblinWarning, match=r"\['c'\]"):
        compare_classifiers(frame[["x", "z"]], frame["y"], ["lda"], cv=3)


def test_compare_classifiers_by_default_leaves_out_binary_only_models_for_k_classes():
    """models=None ran every model, the binary-only probit too: on iris a ValueError."""
    import warnings
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = compare_classifiers(X, y, cv=3)
    assert "probit" not in set(table["model"]) and "lda" in set(table["model"])
