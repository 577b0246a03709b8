"""Ordered classes in the plots and the report: the cumulative curves are
``F(theta_k - x^T beta)`` written out from the fitted parameters, the stack sums to one,
and the report shows both for an ordinal model (and its slopes, without the cut-points)."""
import re

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, ndtr

from problin import OrdinalRegression
from problin.plot import OrdinalProbabilityDisplay
from problin.report import build_report, plots


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=200), "z": rng.uniform(-1, 1, size=200)})
    y = np.digitize(X.to_numpy() @ [1.0, -0.5] + rng.logistic(size=200), [-1.0, 0.5, 2.0])
    return X, np.array(["low", "mid", "high", "top"])[y]


@pytest.mark.parametrize("link, F", [("logit", expit), ("probit", ndtr)])
def test_cumulative_curves_are_the_model(data, link, F):
    X, y = data
    levels = ["low", "mid", "high", "top"]
    model = OrdinalRegression(link=link, classes=levels).fit(X, y)
    shown = OrdinalProbabilityDisplay.from_estimator(model, X, feature="x")
    stack = OrdinalProbabilityDisplay.from_estimator(model, X, feature="x", kind="stack")
    eta = shown.x * model.coef_[0] + X["z"].mean() * model.coef_[1]  # z held at its mean
    want = F(model.cutpoints_[None, :] - eta[:, None])
    np.testing.assert_allclose(np.cumsum(shown.proba, axis=1)[:, :-1], want, atol=1e-12)
    np.testing.assert_allclose(stack.proba.sum(axis=1), 1.0, atol=1e-12)
    assert [t.get_text() for t in shown.ax_.get_legend().get_texts()] == \
        ["P(y ≤ low)", "P(y ≤ mid)", "P(y ≤ high)"]
    with pytest.raises(ValueError, match="kind must be one of"):
        OrdinalProbabilityDisplay.from_estimator(model, X, kind="bars")


def test_report_draws_ordered_classes(data, monkeypatch):
    """(The figures are drawn, not encoded as PNG: which ones the page holds is checked.)"""
    monkeypatch.setattr(plots, "to_data_uri", lambda fig: "data:image/png;base64,")
    X, y = data
    model = OrdinalRegression(classes=["low", "mid", "high", "top"]).fit(X, y)
    html = build_report(model, X, y)
    headings = re.findall(r"<figcaption[^>]*><b>([^<.]*)", html)
    assert {"Cumulative probabilities", "Class probability stack", "Coefficients"} \
        <= set(headings)
    assert "not drawn" not in html
