"""Ordered targets on the command line: ``fit -m ordinal --link probit`` (the model file
is the Python fit), formulas with factors (the intercept sets the coding, the cut-points
replace it, as R's polr), ``compare`` with the ordinal model, and model files of both
ordinal estimators."""
import numpy as np
import pandas as pd
import pytest

import problin
from problin import BayesianOrdinalRegression, Formula, OrdinalRegression
from tests.cli.conftest import invoke


@pytest.fixture
def grades(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    n = 150
    x, z = rng.normal(size=n), rng.uniform(size=n)
    grade = np.digitize(x - z + rng.logistic(size=n), [-1.5, 0.0, 1.5]) + 1
    frame = pd.DataFrame({"x": x, "z": z, "c": np.where(z > 0.5, "hi", "lo"), "grade": grade})
    frame.to_csv("g.csv", index=False)
    return frame


def test_fit_ordinal_with_link_is_the_python_fit(grades):
    result = invoke("fit", "g.csv", "-t", "grade", "-m", "ordinal", "--link", "probit",
                    "-o", "m.problin", "--categorical", "c")
    assert result.exit_code == 0, result.output
    assert "1|2" in result.output and "3|4" in result.output
    model = problin.load("m.problin")
    X = pd.DataFrame({"x": grades.x, "z": grades.z, "c=lo": (grades.c == "lo") * 1.0})
    want = OrdinalRegression(link="probit").fit(X, grades.grade)
    assert model.link == "probit"
    np.testing.assert_allclose(model.coef_, want.coef_, rtol=1e-10)
    np.testing.assert_allclose(model.cutpoints_, want.cutpoints_, rtol=1e-10)
    pred = invoke("predict", "m.problin", "g.csv")
    assert pred.exit_code == 0, pred.output
    assert pred.stdout.split()[1:] == [str(v) for v in want.predict(X)]
    bad = invoke("fit", "g.csv", "-t", "grade", "-m", "ordinal", "--link", "probitt",
                 "-o", "m.problin")
    assert bad.exit_code == 2 and "--link" in bad.output and "did you mean 'probit'" in bad.output


def test_formula_keeps_the_coding_and_drops_the_intercept(grades):
    result = invoke("fit", "g.csv", "-m", "ordinal", "-f", "grade ~ x + C(c)", "-o", "f.problin")
    assert result.exit_code == 0, result.output
    fitted = problin.load("f.problin")
    want = OrdinalRegression().fit(
        pd.DataFrame({"x": grades.x, "lo": (grades.c == "lo") * 1.0}), grades.grade)
    np.testing.assert_allclose(fitted.estimator_.coef_, want.coef_, rtol=1e-10)
    with pytest.raises(ValueError, match="keep the intercept"):
        Formula("grade ~ x + C(c) - 1", OrdinalRegression()).fit(grades)


def test_compare_ordered_and_binary_targets(grades):
    result = invoke("compare", "g.csv", "-t", "grade", "--models", "ordinal,logistic",
                    "--cv", "3")
    assert result.exit_code == 0, result.output
    assert " ordinal " in result.output or "\nordinal " in result.output
    grades.assign(grade=(grades.grade > 2) * 1).to_csv("b.csv", index=False)
    binary = invoke("compare", "b.csv", "-t", "grade", "--models", "ordinal,logistic",
                    "--cv", "3")
    assert binary.exit_code == 0, binary.output
    assert "(left out, ordered classes, three or more: ordinal; 2 classes)" in binary.output


@pytest.mark.parametrize("model", [
    OrdinalRegression(link="cloglog", classes=[4, 3, 2, 1], cov_type="HC1"),
    BayesianOrdinalRegression(random_state=0)], ids=["ordinal", "bayes-ordinal"])
def test_model_files_round_trip(grades, model):
    X = grades[["x", "z"]]
    fitted = model.fit(X, grades.grade)
    problin.save(fitted, "o.problin")
    loaded = problin.load("o.problin")
    np.testing.assert_array_equal(loaded.predict_proba(X), fitted.predict_proba(X))
    pd.testing.assert_frame_equal(loaded.summary(), fitted.summary())
