"""What the report says about a model: out-of-sample scores beside in-sample ones, the
features its plots are drawn over, fit statistics in the header, readable numbers."""
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import StratifiedKFold, cross_val_predict

import problin
from problin.datasets import load_dataset
from problin.metrics import brier_score
from problin.report import build_report, choose_features
from problin.report.numbers import format_p, rounded_table


def _headings(page):
    return re.findall(r'<img src="data:image/png;base64,[A-Za-z0-9+/=]+" alt="([^"]+)">', page)


def _scores(page):
    """The scores table of the page as a DataFrame of strings (pandas' to_html layout:
    a header row of column names, then one row per index label)."""
    start = page.index("<h2>Scores")
    html = page[start:page.index("</table>", start)]
    rows = [re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r, re.DOTALL)
            for r in re.findall(r"<tr[^>]*>(.*?)</tr>", html, re.DOTALL)]
    header = rows[0][1:]
    body = [r for r in rows[1:] if len(r) == len(header) + 1]
    return pd.DataFrame([r[1:] for r in body], index=[r[0] for r in body], columns=header)


@pytest.fixture(scope="module")
def cancer():
    X, y = load_dataset("breast-cancer")
    return X.iloc[:, :8], y


def test_scores_out_of_sample_are_a_cross_validation(cancer):
    X, y = cancer
    model = problin.LogisticRegression(alpha=1.0).fit(X, y)
    page = build_report(model, X, y)
    assert "<h2>Scores: out of sample (5-fold cross-validation) and in sample</h2>" in page
    table = _scores(page)
    assert list(table.index) == ["out of sample: 5-fold cross-validation",
                                 "in sample: the fitted model"]
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    proba = cross_val_predict(problin.LogisticRegression(alpha=1.0), X, y, cv=folds,
                              method="predict_proba")
    classes = model.classes_
    accuracy = np.mean(classes[proba.argmax(axis=1)] == y)
    assert table.loc["out of sample: 5-fold cross-validation", "accuracy"] == f"{accuracy:.3g}"
    brier = brier_score(proba, y, classes)
    assert table.loc["out of sample: 5-fold cross-validation", "Brier score"] == f"{brier:.3g}"
    in_sample = brier_score(model.predict_proba(X), y, classes)
    assert table.loc["in sample: the fitted model", "Brier score"] == f"{in_sample:.3g}"
    assert "optimistic when it was fitted on them" in page
    # the diagnostics are drawn from the out-of-sample predictions, and say so
    assert "Calibration.</b> Observed frequency" in page
    assert "bars: predictions per bin; out of sample: 5-fold cross-validation." in page


def test_held_out_split_and_in_sample_only(cancer):
    X, y = cancer
    model = problin.GaussianNB().fit(X, y)
    held = build_report(model, X, y, cv=0.25)
    assert "out of sample (a held-out 25% of the rows) and in sample" in held
    assert len(_scores(held)) == 2
    only = build_report(model, X, y, cv=None)
    assert "<h2>Scores: in sample</h2>" in only and len(_scores(only)) == 1


def test_refits_that_cannot_run_or_warn_leave_a_note():
    X = pd.DataFrame({"a": np.arange(6.0), "b": np.arange(6.0) ** 2 % 5})
    y = np.array(["p", "p", "p", "p", "q", "p"])  # one row of q: nothing to cross-validate
    model = problin.GaussianNB().fit(X, y)
    page = build_report(model, X, y)
    assert "Too few rows of the rarest class to cross-validate" in page
    assert "<h2>Scores: in sample</h2>" in page
    rng = np.random.default_rng(1)
    Xs = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    ys = np.where(Xs.a > 0, "hi", "lo")  # separated: every refit warns
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", problin.SeparationWarning)
        separated = problin.LogisticRegression().fit(Xs, ys)
    page = build_report(separated, Xs, ys)
    assert "The 5 out-of-sample refits warned 5× SeparationWarning" in page


def test_plots_default_to_continuous_features_never_indicators():
    rng = np.random.default_rng(0)
    n = 300
    X = pd.DataFrame({"smoker": rng.integers(0, 2, n).astype(float),
                      "age": rng.normal(50, 10, n), "male": rng.integers(0, 2, n).astype(float),
                      "visits": rng.integers(0, 5, n).astype(float),
                      "bmi": rng.normal(25, 4, n)})
    eta = 3 * X.smoker - 3 * X.male + 0.8 * X.visits + 0.03 * (X.age - 50)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-eta)), "sick", "well")
    model = problin.LogisticRegression().fit(X, y)
    names = list(X.columns)
    assert choose_features(model, X.to_numpy(), names) == [1, 4]  # age, bmi
    only_discrete = X[["smoker", "male", "visits"]]
    model3 = problin.LogisticRegression().fit(only_discrete, y)
    assert choose_features(model3, only_discrete.to_numpy(), list(only_discrete)) == [2]
    assert choose_features(model, X.to_numpy(), names, ["male", "age"]) == [2, 1]
    page = build_report(problin.LogisticRegression().fit(X[["smoker", "male"]], y),
                        X[["smoker", "male"]], y)
    assert "No continuous feature to draw the model over" in page
    assert "Decision regions" not in _headings(page)


def test_header_has_the_fit_statistics_and_p_values_are_readable(cancer):
    X, y = load_dataset("diabetes")
    model = problin.LinearRegression().fit(X, y)
    page = build_report(model, X, y)
    assert "Fit statistics (on the training data: in sample)" in page
    for label, value in (("R²", f"{model.r2_:.3f}"), ("AIC", f"{model.aic_:.1f}"),
                         ("log-likelihood", f"{model.log_likelihood_:.2f}"),
                         ("F test p", "&lt; 1e-16")):
        assert f"<dt>{label}</dt><dd>{value}</dd>" in page, label
    assert not re.search(r"\d\.\d+e-(1[7-9]|[2-9]\d|\d{3})", page)  # no 2.97e-113
    Xc, yc = cancer
    glm = problin.LogisticRegression().fit(Xc, yc)
    page = build_report(glm, Xc, yc, cv=None)
    for label in ("log-likelihood", "AIC", "BIC", "pseudo R²", "LR test p"):
        assert f"<dt>{label}</dt>" in page
    assert "log evidence" not in page  # a GLM has none
    bayes = problin.BayesianLogisticRegression().fit(Xc, yc)
    assert "<dt>log evidence</dt>" in build_report(bayes, Xc, yc, cv=None)


def test_numbers_are_rounded_to_what_they_support():
    assert [format_p(p) for p in (2.97e-113, 3.1e-5, 0.04213, np.nan)] == \
        ["< 1e-16", "3.1e-05", "0.042", "-"]
    table = pd.DataFrame({"coef": [1.772907, -9.428738], "std_err": [6.870123, 0.0164],
                          "z": [0.258, -5.75], "p_value": [0.796, 8.9e-9],
                          "ci_low": [-11.692287, -9.46], "ci_high": [15.238101, -9.39]},
                         index=["intercept", "x"])
    out = rounded_table(table)
    assert list(out.loc["intercept"]) == ["1.8", "6.9", "0.26", "0.796", "-11.7", "15.2"]
    assert list(out.loc["x"]) == ["-9.429", "0.016", "-5.75", "8.9e-09", "-9.460", "-9.390"]


def test_arrays_for_a_model_fitted_on_a_frame_are_named_by_it(cancer):
    X, y = cancer
    model = problin.BayesianLogisticRegression().fit(X, y)
    page = build_report(model, X.to_numpy(), y, cv=None)
    assert {"Decision regions", "Uncertainty"} <= set(_headings(page))
    assert "<td>mean radius</td>" in page or "<th>mean radius</th>" in page


def test_mcmc_report_shows_the_traces(cancer):
    X, y = cancer
    model = problin.BayesianLogisticRegression(inference="mcmc", n_samples=300, random_state=0,
                                               progress=False).fit(X.iloc[:, :3], y)
    page = build_report(model, X.iloc[:, :3], y, cv=None)
    assert "MCMC trace" in _headings(page) and "Uncertainty" in _headings(page)
    assert "<dt>max R-hat</dt>" in page and "<dt>MCMC</dt><dd>4 chains × 300 draws</dd>" in page
