"""A ``Formula`` is a first-class model (issue 34, point 2): the wrapped estimator's methods
and fitted attributes on the formula, ``lr_test`` of two formula fits equal to statsmodels'
formula API, a text summary naming the dependent variable and the full term names, "did you
mean" for restriction names, warnings at the caller's line, and the command line printing
the text summary."""
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf
from scipy import stats
from sklearn.exceptions import NotFittedError

import problin
from problin import (
    Formula,
    LinearDiscriminantAnalysis,
    LinearRegression,
    LogisticRegression,
    ProbitRegression,
)
from problin.exceptions import SeparationWarning
from tests.cli.conftest import invoke


def _fair(n: int = 800) -> pd.DataFrame:
    d = sm.datasets.fair.load_pandas().data.sample(n, random_state=0)
    d["aff"] = (d.affairs > 0).astype(float)
    return d.reset_index(drop=True)


FAIR = _fair()
SMALL = "aff ~ C(rate_marriage) + age"
FULL = "aff ~ C(rate_marriage) + age*children + yrs_married"


@pytest.fixture(scope="module")
def fits():
    return (Formula(SMALL, LogisticRegression()).fit(FAIR),
            Formula(FULL, LogisticRegression()).fit(FAIR))


def test_lr_test_of_formula_fits_equals_statsmodels(fits):
    small, full = fits
    ref_small, ref_full = (smf.logit(f, FAIR).fit(disp=0) for f in (SMALL, FULL))
    statistic, df, p = problin.lr_test(small, full)
    ref = 2 * (ref_full.llf - ref_small.llf)
    np.testing.assert_allclose(statistic, ref, rtol=1e-7)
    assert df == ref_small.df_resid - ref_full.df_resid == 3
    np.testing.assert_allclose(p, stats.chi2.sf(ref, 3), rtol=1e-6)
    # the inference protocol, typed on the formula itself
    np.testing.assert_allclose(full.log_likelihood_, ref_full.llf, rtol=1e-9)
    assert full.n_obs_ == 800 and full.df_resid_ == ref_full.df_resid
    assert full.lr_reference() == "chi2"


def test_lr_test_checks_what_the_formulas_wrap(fits):
    small, _ = fits
    probit = Formula(FULL, ProbitRegression()).fit(FAIR)
    with pytest.raises(ValueError, match="LogisticRegression and ProbitRegression"):
        problin.lr_test(small, probit)
    ridge = Formula(FULL, LogisticRegression(alpha=1.0)).fit(FAIR)
    with pytest.raises(ValueError, match="maximum-likelihood fits"):
        problin.lr_test(small, ridge)
    lda = Formula(SMALL, LinearDiscriminantAnalysis()).fit(FAIR)
    with pytest.raises(ValueError, match="LinearDiscriminantAnalysis has no likelihood that lr_test compares"):
        problin.lr_test(lda, lda)


def test_fitted_attributes_and_methods_are_the_estimators(fits):
    _, full = fits
    est = full.estimator_
    for name in ("coef_", "intercept_", "covariance_", "aic_", "bic_", "pseudo_r2_",
                 "deviance_", "converged_", "n_iter_"):
        np.testing.assert_array_equal(getattr(full, name), getattr(est, name))
    assert full.n_features_in_ == 4  # the formula's own: the data columns it reads
    with pytest.raises(AttributeError, match="LogisticRegression has no fitted attribute "
                                             "'r2_'"):
        full.r2_  # noqa: B018
    unfitted = Formula(FULL, LogisticRegression())
    assert not hasattr(unfitted, "coef_")
    with pytest.raises(NotFittedError):
        unfitted.log_likelihood_  # noqa: B018
    # methods of every estimator, delegated by name (and only where the estimator has them)
    ols = Formula("affairs ~ age + C(rate_marriage)", LinearRegression()).fit(FAIR)
    assert ols.r2_ == ols.estimator_.r2_ and not hasattr(ols, "pseudo_r2_")
    pd.testing.assert_frame_equal(ols.predict_interval(FAIR.head(5)),
                                  ols.estimator_.predict_interval(ols.transform(FAIR.head(5))))


def test_summary_text_names_the_dependent_variable_and_every_term(fits):
    _, full = fits
    ref = smf.logit(FULL, FAIR).fit(disp=0)
    text = full.summary_text()
    assert isinstance(text, problin.inference.SummaryText)
    lines = text.splitlines()
    assert lines[2].startswith("Dep. Variable:") and lines[2].split()[2] == "aff"
    assert "Dep. Variable" in text._repr_html_() and "<td style='text-align:right'>aff" in \
        text._repr_html_()
    assert max(len(line) for line in lines) <= 78
    table = text.split("=" * 78)[2]  # the coefficient table: full names, never elided
    assert "~" not in table
    for name in ref.params.index.drop("Intercept"):
        assert name in table, name
        row = next(line for line in table.splitlines() if line.strip().startswith(name))
        coef = float((row if len(row.split()) > 1 else
                      table.splitlines()[table.splitlines().index(row) + 1]).split()[-6])
        np.testing.assert_allclose(coef, ref.params[name], atol=5e-5)  # as printed
    llf = next(line for line in lines if "Log-Likelihood:" in line)
    assert f"{ref.llf:#.5g}" in llf


def test_restriction_names_suggest_a_different_case():
    data = sm.datasets.spector.load_pandas().data
    model = Formula("GRADE ~ GPA + TUCE", LogisticRegression()).fit(data)
    with pytest.raises(ValueError, match="did you mean 'GPA'"):
        model.wald_test("gpa = 0")
    with pytest.raises(ValueError, match="did you mean 'TUCE'"):
        model.estimator_.wald_test("tuce = 0")


def test_warnings_of_a_formula_fit_point_at_the_caller():
    rng = np.random.default_rng(0)
    x = rng.normal(size=40)
    data = pd.DataFrame({"x": x, "y": (x > 0).astype(int)})
    with pytest.warns(SeparationWarning) as caught:
        Formula("y ~ x", LogisticRegression()).fit(data)
    assert [w.filename for w in caught] == [__file__]
    with warnings.catch_warnings():  # an "error" filter still makes the fit fail, unchanged
        warnings.simplefilter("error", SeparationWarning)
        model = Formula("y ~ x", LogisticRegression())
        with pytest.raises(SeparationWarning):
            model.fit(data)
        assert not hasattr(model, "estimator_")


def test_command_line_fit_and_summary_print_the_summary_text(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    FAIR.to_csv("fair.csv", index=False)
    fitted = invoke("fit", "fair.csv", "-m", "logistic", "-f", FULL, "-o", "m.problin")
    assert fitted.exit_code == 0, fitted.output
    api = Formula(FULL, LogisticRegression()).fit(pd.read_csv("fair.csv"))
    text = str(api.summary_text())
    assert "Dep. Variable:                    aff" in text
    assert text in fitted.output  # not the raw pandas table
    described = invoke("summary", "m.problin")
    assert described.exit_code == 0, described.output
    assert described.output.rstrip().endswith(text)
    ridge = invoke("fit", "fair.csv", "-m", "linear", "--alpha", "1", "-f",
                   "affairs ~ age + C(rate_marriage)", "-o", "r.problin")
    assert ridge.exit_code == 0 and "C(rate_marriage)[T.2.0]" in ridge.output  # its table


def _estimators():
    """Every problin estimator that fits with its defaults (BayesDecision wraps one)."""
    return [getattr(problin, name) for name in problin.__all__
            if isinstance(getattr(problin, name), type) and hasattr(getattr(problin, name), "fit")
            and name not in ("Formula", "BayesDecision")]


def test_every_fitted_attribute_and_method_of_every_estimator_is_on_the_formula():
    """The declared delegation is complete: each public fitted attribute and method an
    estimator has after a fit is the formula's (its own n_features_in_ and
    feature_names_in_ aside), the very object, and nothing more (``hasattr``)."""
    rng = np.random.default_rng(0)
    data = pd.DataFrame(rng.uniform(0.5, 2.0, size=(80, 2)), columns=["a", "b"])
    data["label"] = (data.a + rng.normal(scale=0.3, size=80) > 1.25).astype(int)
    data["amount"] = np.exp(0.3 * data.a + rng.normal(scale=0.2, size=80))
    data["count"] = rng.poisson(np.exp(0.3 * data.a))
    own = {"n_features_in_", "feature_names_in_"}
    skipped = {"fit", "partial_fit", "get_params", "set_params", "get_metadata_routing",
               "fit_transform", "set_output", "get_feature_names_out", "transform"}
    targets = {"MultinomialNB": "count", "BinomialRegression": "label",
               "PoissonRegression": "count", "NegativeBinomialRegression": "count"}
    for cls in _estimators():
        target = targets.get(cls.__name__, "label" if getattr(
            cls().__sklearn_tags__(), "estimator_type", None) == "classifier" else "amount")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = Formula(f"{target} ~ a + b", cls()).fit(data)
        est = model.estimator_
        names = {k for k in dir(est) if k.endswith("_") and not k.startswith("_")
                 and hasattr(est, k)} - own
        for name in names:
            assert getattr(model, name) is getattr(est, name) or np.array_equal(
                getattr(model, name), getattr(est, name)), (cls.__name__, name)
        methods = {k for k in dir(type(est)) if not k.startswith(("_", "set_"))
                   and callable(getattr(type(est), k)) and hasattr(est, k)} - skipped
        assert methods <= {k for k in methods if hasattr(model, k)}, cls.__name__
        assert not hasattr(model, "summary") or hasattr(est, "summary")
