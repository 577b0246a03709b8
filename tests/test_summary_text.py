"""statsmodels-like text summaries: layout in 80 columns, the statistics shown, HTML."""
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from sklearn.datasets import load_iris

from problin import (
    BayesianLinearRegression,
    BayesianLogisticRegression,
    LinearRegression,
    LogisticRegression,
    ProbitRegression,
)
from problin.inference.text import SummaryText, format_number, format_p, format_value


def _spector() -> tuple[pd.DataFrame, pd.Series]:
    data = sm.datasets.spector.load_pandas()
    return data.exog, data.endog


def _longley() -> tuple[pd.DataFrame, pd.Series]:
    data = sm.datasets.longley.load_pandas()
    return data.exog, data.endog


def _fits() -> dict[str, object]:
    X, y = _spector()
    Xl, yl = _longley()
    iris = load_iris(as_frame=True)
    long_names = X.rename(columns=lambda c: f"a rather long feature name {c}")
    return {
        "logit": LogisticRegression().fit(X, y),
        "probit": ProbitRegression().fit(X, y),
        "penalised": LogisticRegression(alpha=1.0).fit(X, y),
        "softmax": LogisticRegression(alpha=0.5).fit(iris.data, iris.target),
        "linear": LinearRegression().fit(Xl, yl),
        "hc1": LinearRegression(cov_type="HC1").fit(Xl, yl),
        "long names": LogisticRegression().fit(long_names, y),
        "bayes": BayesianLogisticRegression().fit(X, y),
        "bayes linear": BayesianLinearRegression().fit(Xl, yl),
        "numpy": LogisticRegression().fit(X.to_numpy(), y.to_numpy()),
    }


FITS = _fits()


@pytest.mark.parametrize("name", list(FITS))
def test_fits_80_columns_and_renders_html(name: str) -> None:
    model = FITS[name]
    text = model.summary_text()  # type: ignore[attr-defined]
    assert isinstance(text, SummaryText) and isinstance(text, str)
    assert max(len(line) for line in text.splitlines()) <= 78
    html = text._repr_html_()
    assert html.startswith("<div class='problin-summary'>") and "<table>" in html
    assert repr(text) == str(text)
    table = model.summary()  # type: ignore[attr-defined]
    assert isinstance(table, pd.DataFrame)  # summary() is still the DataFrame
    for parameter in table.index.get_level_values(-1):
        assert str(parameter)[:8] in text
    # the estimator keeps scikit-learn's diagram as its own HTML repr
    assert "problin-summary" not in model._repr_html_()  # type: ignore[attr-defined]


def test_logistic_header_shows_the_statistics() -> None:
    model = FITS["logit"]
    text = model.summary_text()  # type: ignore[attr-defined]
    for label, value in [("Log-Likelihood:", model.log_likelihood_),  # type: ignore[attr-defined]
                         ("LL-Null:", model.null_log_likelihood_),  # type: ignore[attr-defined]
                         ("Pseudo R-squ.:", model.pseudo_r2_),  # type: ignore[attr-defined]
                         ("AIC:", model.aic_), ("BIC:", model.bic_)]:  # type: ignore[attr-defined]
        line = next(line for line in text.splitlines() if label in line)
        assert format_value(value) in line
    assert "LLR p-value:" in text and "No. Observations:" in text and "32" in text
    assert "Model:     LogisticRegression (logit)" in text


def test_penalised_header_omits_ml_only_statistics() -> None:
    text = FITS["penalised"].summary_text()  # type: ignore[attr-defined]
    assert "AIC:" not in text and "LLR p-value" not in text
    assert "MAP, alpha=1" in text and "Log-Likelihood:" in text


def test_linear_header_and_notes() -> None:
    model = FITS["linear"]
    text = model.summary_text()  # type: ignore[attr-defined]
    assert "R-squared:" in text and "Prob (F-statistic):" in text and "P>|t|" in text
    assert format_value(model.r2_) in text  # type: ignore[attr-defined]
    assert "condition number is large" in text
    assert "heteroscedasticity robust (HC1" in FITS["hc1"].summary_text()  # type: ignore


def test_softmax_blocks_and_tiny_p_values() -> None:
    text = FITS["softmax"].summary_text()  # type: ignore[attr-defined]
    assert "class = 1" in text and "class = 2" in text
    rng = np.random.default_rng(0)
    x = rng.normal(size=4000)
    strong = LogisticRegression().fit(x[:, None], (x + 0.3 * rng.normal(size=4000)) > 0)
    assert "<1e-16" in strong.summary_text()  # type: ignore[attr-defined]


def test_html_escapes_names() -> None:
    X, y = _spector()
    model = LogisticRegression().fit(X.rename(columns={"GPA": "<b>GPA</b>"}), y)
    html = model.summary_text()._repr_html_()
    assert "&lt;b&gt;GPA&lt;/b&gt;" in html and "<b>GPA" not in html


def test_summary_level_labels_intervals() -> None:
    text = FITS["logit"].summary_text(level=0.9)  # type: ignore[attr-defined]
    assert "[0.05" in text and "0.95]" in text


@pytest.mark.parametrize(("value", "expected"), [
    (0.0, "0"), (1.23456789, "1.2346"), (-13.02130, "-13.0213"), (12345.6789, "12345.6789"), (-12345.6789, "-12345.679"),
    (-3482258.6, "-3.482e+06"), (1.5e-5, "1.500e-05"), (np.nan, "nan"), (np.inf, "inf"),
])
def test_format_number(value: float, expected: str) -> None:
    assert format_number(value) == expected
    assert len(format_number(value)) <= 10


def test_format_p_and_values() -> None:
    assert format_p(2.97e-113) == "<1e-16" and format_p(0.0) == "<1e-16"
    assert format_p(0.0123) == "0.012" and format_p(0.00012) == "1.20e-04"
    assert format_p(0.001502, 4) == "0.001502"
    assert format_value(32.0) == "32" and format_value(True) == "True"
    assert format_value(-12.889634) == "-12.890"


def test_bayesian_linear_header_shows_the_evidence() -> None:
    model = FITS["bayes linear"]
    text = model.summary_text()  # type: ignore[attr-defined]
    assert "Log evidence:" in text and "Prior precision:" in text
    assert format_value(model.log_evidence_) in text  # type: ignore[attr-defined]
    assert "No. Observations:" in text


@pytest.mark.parametrize("value", [-1.414e-101, 1.398e100, -9.999e-300, 5e307, -1.5e-5])
def test_numbers_with_three_digit_exponents_fit_their_column(value: float) -> None:
    """Scientific notation kept 3 decimals: -1.414e-101 took 11 characters of a 10-wide
    column and shifted the row. Now fewer decimals where the exponent needs them."""
    for width in (9, 10):
        text = format_number(value, width)
        assert len(text) <= width
        assert float(text) == pytest.approx(value, rel=0.05)


def test_softmax_notes_name_parameters_as_restrictions_do() -> None:
    """A softmax table's notes named parameters as tuples, "(1, 'd'): not identified",
    where wald_test takes "1:d"."""
    import warnings
    X, y = load_iris(return_X_y=True)
    X = np.column_stack([X, X[:, 0] + X[:, 1]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LogisticRegression().fit(X, y)
    text = str(model.summary_text())
    notes = [line for line in text.splitlines() if "not identified" in line]
    assert notes and all(line.split(":")[0] in ("1", "2") for line in notes)
    assert all("(" not in line.split(": not")[0] for line in notes)
