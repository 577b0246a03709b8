"""Formulas are a checked language, not Python (issue 31, items 1, 2, 7, 15a, 15b): no
payload runs through the API, the command line or a re-signed model file (a marker file
proves it); hostile formula state in a file is refused before anything is allocated; what
fit accepts, save writes and load reads (``log(z)``); a formula model saved from Python
predicts on the command line; an older file names its version."""
import time

import numpy as np
import pandas as pd
import pytest

from tests.cli.conftest import invoke
from tests.test_formula import _rewrite

import problin
from problin import Formula, LinearRegression, LogisticRegression

MARK = "touch MARKER"
PAYLOADS = [
    f"y ~ x + {{__import__('os').system('{MARK}')}}",
    f"{{__import__('os').system('{MARK}')(x)}} ~ x",  # ran while formulaic parsed it
    f"y ~ x + np.log(__import__('os').system('{MARK}'))",
    f"y ~ I(__import__('os').system('{MARK}'))",
    "y ~ x.__class__", "y ~ I(x.__class__)", "y ~ I(().__class__.__bases__)",
    f"y ~ I((lambda: __import__('os').system('{MARK}'))())",
    f"y ~ I([__import__('os').system('{MARK}') for _ in x])",
    "y ~ hashed(g, levels=2**30)", "y ~ lag(x)", "y ~ np.savetxt('MARKER', x)",
]


def _data(n=40):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=n), "z": rng.uniform(1, 3, n),
                          "g": np.array(["a", "b", "c", "d"])[np.arange(n) % 4]})
    frame["y"] = (frame.x + np.log(frame.z) + rng.normal(size=n) > 0.5).astype(int)
    return frame


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _data().to_csv("d.csv", index=False)
    return tmp_path


@pytest.mark.parametrize("formula", PAYLOADS)
def test_a_payload_is_refused_by_the_api_and_the_command_line(here, formula):
    with pytest.raises(ValueError, match="formula|factor"):
        Formula(formula, LogisticRegression()).fit(_data())
    result = invoke("fit", "d.csv", "-m", "logistic", "-f", formula, "-o", "m.problin")
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert "a formula may hold" in result.output or "not a column" in result.output
    assert not (here / "MARKER").exists()


@pytest.mark.parametrize("formula", PAYLOADS)
def test_a_payload_in_a_model_file_is_refused_at_load(here, formula):
    problin.save(Formula("y ~ x + np.log(z)", LogisticRegression()).fit(_data()), "m.problin")

    def edit(meta):
        meta["estimator"]["params"]["formula"] = formula
        meta["estimator"]["state"]["model_spec_"]["$dict"]["formula"] = formula
    _rewrite(here / "m.problin", edit)
    with pytest.raises(problin.ModelFileError, match=r"\.formula: "):
        problin.load("m.problin")
    result = invoke("predict", "m.problin", "d.csv")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert not (here / "MARKER").exists()


@pytest.mark.parametrize("formula, match", [
    ("y ~ cr(x, df=10**6)", "df = 1000000, outside 1..100"),
    ("y ~ bs(x, df=10**7)", "df = 10000000, outside 1..100"),
    ("y ~ poly(x, 10**9)", "degree = 1000000000, outside 1..100"),
    ("y ~ hashed(g, levels=2**30)", "calls 'hashed'"),
    ("y ~ a*b*c*d*e*f*g*h*i*j*k*l*m*n*o*p*q*r*s*t*u*v*w*x*z", "more than 4096 terms"),
])
def test_a_formula_bomb_in_a_model_file_is_refused_at_load(here, formula, match):
    problin.save(Formula("y ~ x + bs(z, df=3)", LinearRegression()).fit(_data()), "m.problin")
    _rewrite(here / "m.problin", lambda meta: meta["estimator"]["state"]["model_spec_"][
        "$dict"].__setitem__("formula", formula))
    start = time.perf_counter()
    with pytest.raises(problin.ModelFileError, match=match):
        problin.load("m.problin")
    assert time.perf_counter() - start < 5


def test_state_bombs_in_a_model_file_are_refused_before_they_are_built(here):
    """A spline's knots and a factor's levels are stored state: 10,000 knots are
    refused at load; levels beyond what the fitted design codes at the first prediction,
    before the design is built."""
    problin.save(Formula("y ~ x + bs(z, df=3) + C(g)", LinearRegression()).fit(_data()),
                 "m.problin")

    def knots(meta):
        state = meta["estimator"]["state"]["model_spec_"]["$dict"]["transforms"]["$dict"]
        state["bs(z, df=3)"]["$dict"]["knots"] = list(range(10 ** 4))
    _rewrite(here / "m.problin", knots)
    with pytest.raises(problin.ModelFileError, match="more than 208"):
        problin.load("m.problin")

    problin.save(Formula("y ~ x + C(g)", LinearRegression()).fit(_data()), "m.problin")

    def levels(meta):
        encoders = meta["estimator"]["state"]["model_spec_"]["$dict"]["encoders"]["$dict"]
        encoders["C(g)"]["$dict"]["categories"] = [str(i) for i in range(5_000)] + list("abcd")
    _rewrite(here / "m.problin", levels)
    with pytest.raises(ValueError, match="5004 fitted levels"):
        problin.load("m.problin").predict(_data())


@pytest.mark.parametrize("rhs", ["log(z) + x", "exp(x) + abs(x)", "sqrt(z):x + center(x)"])
def test_what_fit_accepts_load_reads(here, rhs):
    """y ~ log(z) + x fitted and saved, then load refused it ("calls 'log', not a formula
    transform")."""
    data = _data()
    model = Formula(f"y ~ {rhs}", LogisticRegression()).fit(data)
    problin.save(model, "m.problin")
    np.testing.assert_array_equal(problin.load("m.problin").predict_proba(data),
                                  model.predict_proba(data))
    fitted = invoke("fit", "d.csv", "-m", "logistic", "-f", f"y ~ {rhs}", "-o", "c.problin")
    assert fitted.exit_code == 0, fitted.output
    predicted = invoke("predict", "c.problin", "d.csv", "--proba")
    assert predicted.exit_code == 0, predicted.output
    out = pd.read_csv(pd.io.common.StringIO(predicted.stdout))
    np.testing.assert_allclose(out["p_1"], model.predict_proba(data)[:, 1], rtol=1e-9)


def test_the_command_line_predicts_with_a_formula_saved_from_python(here):
    """problin predict on a Formula saved by problin.save refused the file's raw columns:
    "names columns the data do not have"."""
    data = _data()
    model = Formula("y ~ x + np.log(z) + C(g)", LogisticRegression()).fit(data)
    problin.save(model, "m.problin")
    result = invoke("predict", "m.problin", "d.csv", "--proba")
    assert result.exit_code == 0, result.output
    out = pd.read_csv(pd.io.common.StringIO(result.stdout))
    np.testing.assert_allclose(out["p_1"], model.predict_proba(data)[:, 1], rtol=1e-9)


def test_a_formula_of_an_older_version_names_the_version(here):
    """A file written before the formula language was versioned loads where its formula is
    in the language, and otherwise says which version wrote it (it said "malformed or
    unsafe formula state")."""
    data = _data()
    problin.save(Formula("y ~ x + np.log(z)", LogisticRegression()).fit(data), "m.problin")

    def older(meta):
        meta["estimator"]["state"]["model_spec_"]["$dict"].pop("language", None)
    _rewrite(here / "m.problin", older)
    assert problin.load("m.problin").predict(data).shape == (40,)

    def outside(meta):
        older(meta)
        spec = meta["estimator"]["state"]["model_spec_"]["$dict"]
        spec["formula"] = "1 + x + np.clip(z, 0, 1)"
    _rewrite(here / "m.problin", outside)
    with pytest.raises(problin.ModelFileError, match="older problin .formula language "
                                                     "version 1.*refit the model"):
        problin.load("m.problin")

    def newer(meta):
        meta["estimator"]["state"]["model_spec_"]["$dict"]["language"] = 99
    problin.save(Formula("y ~ x + np.log(z)", LogisticRegression()).fit(data), "m.problin")
    _rewrite(here / "m.problin", newer)
    with pytest.raises(problin.ModelFileError, match="newer problin .formula language "
                                                     "version 99.*upgrade"):
        problin.load("m.problin")
