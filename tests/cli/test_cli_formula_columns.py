"""``problin fit -f``: a formula reads the columns inside stateful transforms
(``center(b)``, ``scale(b)``, ``bs(b, df=3)``) from the file as the Python API reads them from
a DataFrame, and a formula without feature columns is a one-line data error."""
import json
import zipfile

import numpy as np
import pandas as pd
import pytest

from tests.cli.conftest import invoke

import problin
from problin import Formula, LogisticRegression



@pytest.fixture
def ab(tmp_path, monkeypatch):
    """ab.csv: a, b, an unused column c and a label y; returns the frame as read back."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    n = 60
    frame = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    frame["y"] = (frame.a - 0.8 * frame.b + rng.normal(size=n) > 0).astype(int)
    frame.to_csv("ab.csv", index=False)
    return pd.read_csv("ab.csv")


@pytest.mark.parametrize("formula", ["y ~ a + center(b)", "y ~ a + scale(b)",
                                     "y ~ bs(b, df=3) + a"])
def test_fit_reads_columns_inside_stateful_transforms(ab, formula):
    fitted = invoke("fit", "ab.csv", "-m", "logistic", "-f", formula, "-o", "m.problin")
    assert fitted.exit_code == 0, fitted.output
    api = Formula(formula, LogisticRegression()).fit(ab)
    loaded = problin.load("m.problin")
    assert list(loaded.feature_names_in_) == ["a", "b"]
    np.testing.assert_allclose(loaded.summary().to_numpy(dtype=float),
                               api.summary().to_numpy(dtype=float), rtol=1e-10)
    meta = json.loads(zipfile.ZipFile("m.problin").read("metadata.json"))
    assert meta["encoding"]["variables"] == ["a", "b"]  # what predict reads: not c, not y
    predicted = invoke("predict", "m.problin", "ab.csv", "--proba")
    assert predicted.exit_code == 0, predicted.output
    out = pd.read_csv(pd.io.common.StringIO(predicted.stdout))
    np.testing.assert_allclose(out["p_1"], api.predict_proba(ab)[:, 1], rtol=1e-10)


def test_drop_missing_counts_the_columns_inside_stateful_transforms(ab):
    ab.loc[[3, 7], "b"] = np.nan
    ab.loc[5, "c"] = np.nan  # a column the formula does not read: its row stays
    ab.to_csv("gaps.csv", index=False)
    formula = "y ~ a + center(b)"
    refused = invoke("fit", "gaps.csv", "-m", "logistic", "-f", formula, "-o", "m.problin")
    assert refused.exit_code == 1, refused.output
    assert "missing or infinite values in 1 column: b (2 rows)" in refused.stderr
    fitted = invoke("fit", "gaps.csv", "-m", "logistic", "-f", formula, "--drop-missing",
                    "-o", "m.problin")
    assert fitted.exit_code == 0, fitted.output
    assert "2 rows with missing values dropped" in fitted.output
    api = Formula(formula, LogisticRegression()).fit(ab.drop(index=[3, 7]))
    np.testing.assert_allclose(problin.load("m.problin").summary().to_numpy(dtype=float),
                               api.summary().to_numpy(dtype=float), rtol=1e-10)


@pytest.mark.parametrize("formula", ["y ~ 1", "y ~ 0", "y ~"])
def test_a_formula_without_feature_columns_is_a_one_line_data_error(ab, formula):
    result = invoke("fit", "ab.csv", "-m", "logistic", "-f", formula, "-o", "m.problin")
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert result.stderr.strip().startswith(f"Error: formula {formula!r} gives no feature "
                                            "columns")
    assert "intercept-only or empty right-hand side" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_an_internal_error_is_one_line_unless_debug(tmp_path, monkeypatch):
    """A bug of problin's own (an exception no data error explains) is still one line,
    saying how to see the traceback; --debug lets it through."""
    rng = np.random.default_rng(0)
    pd.DataFrame({"a": rng.normal(size=30), "y": rng.integers(0, 2, 30)}).to_csv(
        tmp_path / "d.csv", index=False)

    def broken(self, *args, **kwargs):
        raise RuntimeError("boom")
    monkeypatch.setattr(problin.LogisticRegression, "fit", broken)
    args = ["fit", str(tmp_path / "d.csv"), "-m", "logistic", "-t", "y",
            "-o", str(tmp_path / "m.problin")]
    result = invoke(*args)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "Error: internal error (RuntimeError: boom); run with --debug" in result.output
    result = invoke(*args, "--debug")
    assert isinstance(result.exception, RuntimeError)


def test_predict_reads_text_categories_as_text(tmp_path, monkeypatch):
    """A category column of "1", "2" and "x" at fit reads as integers in a file that
    holds only "1" and "2": the formula model refused it ("levels not seen: [1, 2]"),
    where the plain model predicts. The fitted text levels are now read as text."""
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    n = 60
    train = pd.DataFrame({"x": rng.normal(size=n), "code": rng.choice(["1", "2", "x"], n)})
    train["y"] = train.x + (train.code == "2") + 0.1 * rng.normal(size=n)
    train.to_csv("train.csv", index=False)
    new = train[train.code != "x"].head(5)
    new.to_csv("new.csv", index=False)
    fitted = invoke("fit", "train.csv", "-m", "linear", "-f", "y ~ x + C(code)", "-o",
                    "m.problin")
    assert fitted.exit_code == 0, fitted.output
    predicted = invoke("predict", "m.problin", "new.csv")
    assert predicted.exit_code == 0, predicted.output
    out = pd.read_csv(pd.io.common.StringIO(predicted.stdout))
    api = Formula("y ~ x + C(code)", problin.LinearRegression()).fit(train)
    np.testing.assert_allclose(out["predicted"], api.predict(new), rtol=1e-10)


@pytest.mark.parametrize("formula", ["y ~ a + C(g, Treatment('b'))", "y ~ bs(a, df=3)"])
def test_columns_named_only_in_literals_or_keywords_are_not_read(ab, formula):
    """The rows were read with every column whose name the formula's text held: 'b' in
    Treatment('b') or 'df' in bs(a, df=3) made their missing values refuse the fit, or
    drop rows the API keeps (66 of 100, other coefficients). Now only the columns the
    factors read."""
    ab["g"] = np.where(ab.a > 0, "a", "b")
    ab["df"] = np.nan
    ab.loc[[2, 5, 9], "b"] = np.nan
    ab.to_csv("lit.csv", index=False)
    fitted = invoke("fit", "lit.csv", "-m", "logistic", "-f", formula, "-o", "m.problin")
    assert fitted.exit_code == 0, fitted.output
    assert "dropped" not in fitted.output
    api = Formula(formula, LogisticRegression()).fit(ab)
    np.testing.assert_allclose(problin.load("m.problin").summary().to_numpy(dtype=float),
                               api.summary().to_numpy(dtype=float), rtol=1e-10)


def test_quoted_names_with_a_dot_are_columns(ab):
    """formulaic's required_variables read `x.1` (and Q("x.1")) inside a Python factor as
    the attribute access x.1, the column x: such R-style names were refused."""
    data = ab.rename(columns={"a": "a.1", "b": "b.2"})
    data.to_csv("dots.csv", index=False)
    formula = "y ~ `a.1` + np.log(Q('b.2') ** 2)"
    fitted = invoke("fit", "dots.csv", "-m", "logistic", "-f", formula, "-o", "m.problin")
    assert fitted.exit_code == 0, fitted.output
    api = Formula(formula, LogisticRegression()).fit(data)
    assert list(api.feature_names_in_) == ["a.1", "b.2"]
    predicted = invoke("predict", "m.problin", "dots.csv", "--proba")
    assert predicted.exit_code == 0, predicted.output
    out = pd.read_csv(pd.io.common.StringIO(predicted.stdout))
    np.testing.assert_allclose(out["p_1"], api.predict_proba(data)[:, 1], rtol=1e-10)
