"""``problin report`` of a model fitted with ``--formula`` (issue 34): the report reads the
raw columns, works in the formula's design and scores the response the formula reads; the
page renders in headless Chromium as the other reports do (:mod:`.test_report_browser`)."""
import re

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf
from sklearn.metrics import accuracy_score, log_loss, roc_auc_score

from problin import Formula, LogisticRegression
from problin.report import build_report
from problin.report.builder import _formula_design
from tests.cli.conftest import invoke
from tests.report.test_report_browser import (
    _HEADINGS_JS,
    _IMAGES_JS,
    CHROMIUM,
    DevTools,
    open_page,
    page_errors,
)

FORMULA = "aff ~ C(rate_marriage) + age*children"


@pytest.fixture(scope="module")
def fair() -> pd.DataFrame:
    data = sm.datasets.fair.load_pandas().data.sample(300, random_state=1)
    data["aff"] = (data.affairs > 0).astype(int)
    return data.reset_index(drop=True)


def _statistic(page: str, label: str) -> float:
    return float(re.search(rf"<dt>{label}</dt><dd>([-0-9.e]+)</dd>", page).group(1))


def test_report_of_a_formula_model_from_the_command_line(fair, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fair.to_csv("fair.csv", index=False)
    assert invoke("fit", "fair.csv", "-m", "logistic", "-f", FORMULA, "-o",
                  "m.problin").exit_code == 0
    result = invoke("report", "m.problin", "fair.csv", "-o", "report.html", "--cv", "3")
    assert result.exit_code == 0, result.output
    page = (tmp_path / "report.html").read_text()
    ref = smf.logit(FORMULA, pd.read_csv("fair.csv")).fit(disp=0)
    assert _statistic(page, "log-likelihood") == pytest.approx(ref.llf, abs=0.006)
    assert _statistic(page, "observations") == 300
    for name in ref.params.index.drop("Intercept"):
        assert name in page
    assert "Scores: out of sample (3-fold cross-validation) and in sample" in page
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (.ci/run installs the Debian package)")
    browser = DevTools(tmp_path / "profile")
    try:
        session = open_page(browser, (tmp_path / "report.html").as_uri())
        images = browser.send("Runtime.evaluate", session, expression=_IMAGES_JS,
                              awaitPromise=True, returnByValue=True)["result"]["value"]
        headings = browser.send("Runtime.evaluate", session, expression=_HEADINGS_JS,
                                returnByValue=True)["result"]["value"]
    finally:
        browser.close()
    assert page_errors(browser.events) == []
    assert headings[:3] == ["Fit statistics (on the training data: in sample)", "Parameters",
                            "Scores: out of sample (3-fold cross-validation) and in sample"]
    assert {"Decision regions", "ROC", "Calibration", "Confusion matrix"} <= \
        {alt for alt, *_ in images}
    assert all(w > 0 and h > 0 and done for _, w, h, done in images), images


def test_build_report_reads_a_formula_and_its_response(fair):
    model = Formula(FORMULA, LogisticRegression()).fit(fair)
    page = build_report(model, fair, cv=None)
    table = page[page.index("Scores: in sample"):]
    cells = [float(v) for v in re.findall(r"<td>([-0-9.e]+)</td>",
                                          table[:table.index("</table>")])]
    proba = model.predict_proba(fair)[:, 1]
    expected = [accuracy_score(fair.aff, model.predict(fair)), log_loss(fair.aff, proba),
                np.mean((proba - fair.aff) ** 2)]
    np.testing.assert_allclose(cells[:3], expected, rtol=5e-3)  # (3 digits, as shown)
    np.testing.assert_allclose(cells[-1], roc_auc_score(fair.aff, proba), rtol=5e-3)
    # without the response column: the design, and no response (a report without scores)
    estimator, design, y, _ = _formula_design(model, fair.drop(columns="aff"), None)
    assert estimator is model.estimator_ and y is None
    pd.testing.assert_frame_equal(design, model.transform(fair))
