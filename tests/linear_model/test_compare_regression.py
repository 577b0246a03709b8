"""``problin compare`` in regression mode (continuous targets, e.g. diabetes)."""
import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from sklearn.datasets import load_diabetes
from sklearn.model_selection import KFold
from sklearn.preprocessing import StandardScaler

from problin import BayesianLinearRegression
from problin.cli.main import cli
from problin.model_selection import REGRESSORS, compare_regressors, is_continuous_target


def test_compare_runs_regressors_on_diabetes():
    result = CliRunner().invoke(cli, ["compare", "--datasets", "diabetes", "--cv", "3"])
    assert result.exit_code == 0, result.output
    assert "diabetes: 442 samples, 10 features, 3-fold cross-validation, regression" in result.output
    lines = result.output.splitlines()
    header = [line.split() for line in lines if line.split()[:1] == ["model"]]
    assert header == [["model", "rmse", "nlpd", "r2", "fit_ms", "warnings"]]
    for name in REGRESSORS:
        assert any(line.split()[:1] == [name] for line in lines)


def test_models_are_chosen_by_the_kind_of_target():
    result = CliRunner().invoke(cli, ["compare", "--datasets", "heights,diabetes",
                                      "--models", "logistic,ridge", "--cv", "2"])
    assert result.exit_code == 0, result.output
    rows = [line.split()[0] for line in result.output.splitlines()
            if line.split()[:1] in (["logistic"], ["ridge"])]
    assert rows == ["logistic", "ridge"]
    skipped = CliRunner().invoke(cli, ["compare", "--datasets", "diabetes", "--models",
                                       "logistic", "--cv", "2"])
    assert skipped.exit_code == 0 and "skipped (no regressor among --models)" in skipped.output


def test_nlpd_and_r2_match_a_direct_computation():
    X, y = load_diabetes(return_X_y=True)
    table = compare_regressors(X, y, ["bayes-linear", "linear"], cv=3)
    assert list(table.columns) == ["model", "rmse", "nlpd", "r2", "fit_ms", "warnings"]
    row = table.set_index("model").loc["bayes-linear"]
    nlpd, r2 = [], []
    for train, test in KFold(3, shuffle=True, random_state=0).split(X):
        scaler = StandardScaler().fit(X[train])
        model = BayesianLinearRegression().fit(scaler.transform(X[train]), y[train])
        mean, std = model.predict(scaler.transform(X[test]), return_std=True)
        nlpd.append(np.mean(0.5 * np.log(2 * np.pi * std ** 2) + 0.5 * ((y[test] - mean) / std) ** 2))
        r2.append(1 - np.sum((y[test] - mean) ** 2) / np.sum((y[test] - y[test].mean()) ** 2))
    assert row["nlpd"] == pytest.approx(np.mean(nlpd), rel=1e-10)
    assert row["r2"] == pytest.approx(np.mean(r2), rel=1e-10)
    assert table["nlpd"].is_monotonic_increasing


def test_continuous_target_detection():
    assert is_continuous_target(pd.Series(np.linspace(0, 1, 50)))
    assert not is_continuous_target(np.array(["a", "b"] * 30))
    assert not is_continuous_target(np.array([0.0, 1.0] * 30))
    assert not is_continuous_target(np.arange(100))  # integer codes: classes
