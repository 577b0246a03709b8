"""The HTML report's content for each kind of model (the browser test checks rendering)."""
import re

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import problin
from problin.report import build_report, choose_features


def _headings(page):
    return re.findall(r'<img src="data:image/png;base64,[A-Za-z0-9+/=]+" alt="([^"]+)">', page)


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(150, 3)), columns=["a", "b", "c"])
    labels = np.array(["x", "y", "z"])[np.argmax(X.to_numpy() @ rng.normal(size=(3, 3)), 1)]
    t = X.to_numpy() @ np.array([1.0, 0.0, -2.0]) + rng.normal(scale=0.3, size=150)
    return X, labels, t


def test_classifier_report_has_every_classifier_plot(frame):
    X, labels, _ = frame
    model = make_pipeline(StandardScaler(), problin.LogisticRegression(alpha=1.0))
    model.set_output(transform="pandas").fit(X, labels)
    steps = []
    page = build_report(model, X, labels, progress=lambda: steps.append(1), title="T <&>")
    assert _headings(page) == ["Decision regions", "Coefficients", "Calibration", "ROC",
                               "Confusion matrix", "Optimiser trace"]
    assert "<title>T &lt;&amp;&gt;</title>" in page and len(steps) == build_report.n_steps
    for score in ("accuracy", "log loss", "Brier score", "ECE", "ROC AUC"):
        assert f"<th>{score}</th>" in page
    assert "<script" not in page and "http" not in page


def test_bayesian_regression_report_shows_the_predictive_band(frame):
    X, _, t = frame
    model = problin.BayesianLinearRegression().fit(X, t)
    page = build_report(model, X, t)
    assert _headings(page) == ["Predictive uncertainty", "Coefficients",
                               "Predicted against actual", "Residuals"]
    # the parameter table is BayesianLinearRegression.summary(): posterior mean, sd, interval
    assert "<th>sd</th>" in page and "<th>ci_high</th>" in page and "<th>RMSE</th>" in page
    assert choose_features(model, X.to_numpy(), ["a", "b", "c"]) == [0, 2]


def test_binary_bayesian_classifier_gets_activation_uncertainty(frame):
    X, labels, _ = frame
    model = problin.LogisticRegression(alpha=1.0).fit(X, labels == "x")
    model.posterior_cov_ = model.covariance_  # the Laplace posterior of a MAP fit
    page = build_report(model, X, labels == "x", features=["b", "c"])
    assert "Uncertainty" in _headings(page)


def test_sparse_data_without_target_and_no_history():
    X = sp.random(60, 5, density=0.5, random_state=0, format="csr")
    y = np.arange(60) % 2
    model = problin.BernoulliNB().fit(X, y)
    page = build_report(model, X, None)
    assert _headings(page) == []
    assert "no target column: no scores" in page and "Sparse data" in page
    assert "log prior" in page


def test_one_feature_perceptron(frame):
    X, labels, _ = frame
    one = X[["a"]]
    model = problin.Perceptron(random_state=0, max_iter=5)
    with pytest.warns(problin.ConvergenceWarning):
        model.fit(one, labels)
    page = build_report(model, one, labels)
    assert _headings(page) == ["ROC", "Confusion matrix", "Optimiser trace"]
    with pytest.raises(ValueError, match="unknown features"):
        build_report(model, one, labels, features=["zz"])


def test_bayesian_logistic_report_uses_predict_activation(frame):
    X, labels, _ = frame
    model = problin.BayesianLogisticRegression().fit(X, labels)
    page = build_report(model, X, labels)
    assert _headings(page)[:2] == ["Decision regions", "Uncertainty"]


def test_a_model_fitted_on_text_columns_is_reported_in_its_features(frame):
    """Every estimator accepts a DataFrame with text columns (it encodes them itself);
    build_report read the raw frame as floats: numpy's "could not convert string"."""
    X, labels, _ = frame
    data = X.assign(colour=np.random.default_rng(0).choice(["red", "green", "blue"], len(X)))
    model = problin.LinearDiscriminantAnalysis().fit(data, labels)
    page = build_report(model, data, labels, cv=None)
    assert "colour=red" in page and "Confusion matrix" in _headings(page)


def test_infinite_decision_values_still_draw_the_roc(frame):
    """A perceptron scores a row at 1e308 +-inf (its limit): the in-sample ROC refused
    non-finite scores and the report failed. The ROC reads ranks, which keep the order."""
    X, labels, _ = frame
    X = X.to_numpy()
    model = problin.Perceptron(random_state=0).fit(X, labels)
    far = np.vstack([X, np.full(X.shape[1], 1e308)])
    assert not np.all(np.isfinite(model.decision_function(far[-1:])))
    page = build_report(model, far, np.concatenate([labels, labels[:1]]), cv=None)
    assert "ROC" in _headings(page)
