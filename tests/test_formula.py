"""``problin.Formula``: the same coefficients and standard errors as statsmodels' formula API
(patsy) on the same formula, new data encoded as at fit time, model files, the command line."""
import hashlib
import json
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

import problin
from problin import Formula, LinearDiscriminantAnalysis, LinearRegression, LogisticRegression
from problin.cli.main import cli

RTOL = 1e-6


def _fair():
    d = sm.datasets.fair.load_pandas().data
    d["had_affair"] = (d.affairs > 0).astype(int)
    d["rel"] = d.religious.map({1.0: "none", 2.0: "some", 3.0: "more", 4.0: "strong"})
    return d


SPECTOR = sm.datasets.spector.load_pandas().data
ANES = sm.datasets.anes96.load_pandas().data
FAIR = _fair()

# A categorical term, an interaction and a transform in each.
LOGIT = [
    ("spector", SPECTOR, "GRADE ~ C(PSI) + TUCE*GPA + np.log(TUCE)"),
    ("fair", FAIR, "had_affair ~ C(religious) + C(rate_marriage) + np.log(age) + "
                   "educ*yrs_married"),
    ("anes96", ANES, "vote ~ C(educ) + np.log(popul + 0.1) + TVnews*age + selfLR"),
]
OLS = [
    ("spector", SPECTOR, "GPA ~ C(PSI) + TUCE*GRADE + np.log(TUCE)"),
    ("fair", FAIR, "rate_marriage ~ C(rel) + np.log(age) + educ*yrs_married + C(children)"),
    ("anes96", ANES, "selfLR ~ C(educ) + np.log(popul + 0.1) + TVnews:age + C(PID)"),
]


def _names(index):
    return ["intercept" if n == "Intercept" else n for n in index]


def _close(ours, theirs, rtol=RTOL):
    ours, theirs = np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float)
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=rtol * np.abs(theirs).max())


@pytest.mark.parametrize("name,data,formula", LOGIT, ids=[c[0] for c in LOGIT])
def test_logit_matches_statsmodels_formula(name, data, formula):
    ours = Formula(formula, LogisticRegression()).fit(data).summary()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # statsmodels' own convergence chatter
        ref = smf.logit(formula, data).fit(disp=0, method="newton", tol=1e-12, maxiter=200)
    assert set(ours.index) == set(_names(ref.params.index))
    _close(ours.loc[_names(ref.params.index), "coef"], ref.params)
    _close(ours.loc[_names(ref.params.index), "std_err"], ref.bse)


@pytest.mark.parametrize("name,data,formula", OLS, ids=[c[0] for c in OLS])
def test_ols_matches_statsmodels_formula(name, data, formula):
    model = Formula(formula, LinearRegression()).fit(data)
    ref = smf.ols(formula, data).fit()
    est = model.estimator_
    coef = pd.Series(np.r_[est.intercept_, est.coef_], index=["intercept",
                                                              *est.feature_names_in_])
    _close(coef[_names(ref.params.index)], ref.params)
    _close(model.predict(data), ref.fittedvalues)
    if hasattr(model, "summary"):
        _close(model.summary().loc[_names(ref.params.index), "std_err"], ref.bse)


def test_marginal_effects_match_statsmodels_get_margeff():
    name, data, formula = LOGIT[0]
    model = Formula(formula, LogisticRegression()).fit(data)
    if not hasattr(model, "marginal_effects"):
        pytest.skip("LogisticRegression has no marginal_effects")
    ours = model.marginal_effects(data)
    ref = smf.logit(formula, data).fit(disp=0, tol=1e-12).get_margeff()
    names = list(ref.results.model.exog_names[1:])  # the design's columns, no Intercept
    _close(ours.loc[names].iloc[:, 0], ref.margeff)
    _close(ours.loc[names].iloc[:, 1], ref.margeff_se)


def test_no_intercept_fits_without_one_and_matches_statsmodels():
    formula = "GRADE ~ C(PSI) + GPA - 1"
    model = Formula(formula, LogisticRegression()).fit(SPECTOR)
    assert model.estimator_.fit_intercept is False
    assert model.estimator.fit_intercept is True  # the given estimator is not changed
    ref = smf.logit(formula, SPECTOR).fit(disp=0, tol=1e-12)
    _close(model.summary().loc[ref.params.index, "coef"], ref.params)
    assert list(model.summary().index) == list(ref.params.index)  # both levels of C(PSI)


def test_term_names_index_the_summary_and_the_wald_test():
    model = Formula(LOGIT[1][2], LogisticRegression()).fit(FAIR)
    index = list(model.summary().index)
    assert index[0] == "intercept" and "C(religious)[T.2.0]" in index
    assert "educ:yrs_married" in index and "np.log(age)" in index
    assert "Intercept" not in index
    if hasattr(model, "wald_test"):
        result = model.wald_test("educ:yrs_married = 0")
        z = model.summary().loc["educ:yrs_married", "z"]
        assert np.isclose(float(np.ravel(getattr(result, "statistic", result))[0]), z ** 2,
                          rtol=1e-8)


def test_prediction_applies_the_fitted_encoding_and_references():
    formula = "had_affair ~ C(rel, Treatment('some')) + center(age) + educ"
    model = Formula(formula, LogisticRegression()).fit(FAIR)
    assert "C(rel, Treatment('some'))[T.none]" in model.design_columns_
    rows = FAIR.iloc[[5, 0, 17]]
    # a single row encodes as within the whole data (center() keeps the fitted mean)
    one = np.vstack([model.predict_proba(rows.iloc[[i]]) for i in range(3)])
    np.testing.assert_allclose(one, model.predict_proba(FAIR).take([5, 0, 17], axis=0),
                               rtol=1e-12)
    ref = smf.logit(formula.replace("center(age)", "age"), FAIR).fit(disp=0, tol=1e-12)
    np.testing.assert_allclose(model.predict_proba(rows)[:, 1], ref.predict(rows), rtol=1e-6)


def test_unseen_level_and_missing_columns_are_clear_errors():
    model = Formula("had_affair ~ C(rel) + educ", LogisticRegression()).fit(FAIR)
    bad = FAIR.iloc[:4].assign(rel=["none", "other", "some", "odd"])
    with pytest.raises(ValueError, match=r"column 'rel' .*not seen.*\['odd', 'other'\]"):
        model.predict(bad)
    with pytest.raises(ValueError, match=r"'educ'"):
        model.predict(FAIR.drop(columns="educ"))
    with pytest.raises(ValueError, match=r"'eduk' \(did you mean 'educ'\?\).*'rate_marige' "
                                         r"\(did you mean 'rate_marriage'"):
        Formula("had_affair ~ eduk + rate_marige", LogisticRegression()).fit(FAIR)
    with pytest.raises(ValueError, match="had_afair.*did you mean 'had_affair'"):
        Formula("had_afair ~ educ", LogisticRegression()).fit(FAIR)
    with pytest.raises(ValueError, match="missing|null|NaN|nan"):
        model.predict(FAIR.iloc[:3].assign(educ=[1.0, np.nan, 2.0]))
    with pytest.raises(ValueError, match="cannot parse"):
        Formula("had_affair ~ educ +", LogisticRegression()).fit(FAIR)
    with pytest.raises(TypeError, match="DataFrame"):
        Formula("y ~ x", LogisticRegression()).fit(np.zeros((3, 2)))


def test_intercept_conflict_one_sided_formula_and_fit_params():
    with pytest.raises(ValueError, match="fit_intercept=False.*- 1"):
        Formula("GRADE ~ GPA", LogisticRegression(fit_intercept=False)).fit(SPECTOR)
    one_sided = Formula("~ GPA + TUCE", LogisticRegression()).fit(SPECTOR, SPECTOR.GRADE)
    two_sided = Formula("GRADE ~ GPA + TUCE", LogisticRegression()).fit(SPECTOR)
    np.testing.assert_array_equal(one_sided.summary(), two_sided.summary())
    with pytest.raises(ValueError, match="no response"):
        Formula("~ GPA", LogisticRegression()).fit(SPECTOR)
    w = np.arange(1.0, 33.0)
    by_name = Formula("GRADE ~ GPA", LogisticRegression()).fit(
        SPECTOR.assign(w=w), sample_weight="w")
    by_array = Formula("GRADE ~ GPA", LogisticRegression()).fit(SPECTOR, sample_weight=w)
    np.testing.assert_array_equal(by_name.summary(), by_array.summary())


def test_scikit_learn_meta_estimator_protocol():
    model = Formula("GRADE ~ GPA + C(PSI)", LogisticRegression(alpha=0.5))
    assert model.get_params()["estimator__alpha"] == 0.5
    copy = clone(model).set_params(estimator__alpha=1.0)
    assert copy.estimator.alpha == 1.0 and model.estimator.alpha == 0.5
    fitted = copy.fit(SPECTOR)
    assert list(fitted.classes_) == [0, 1]
    assert 0.0 <= fitted.score(SPECTOR) <= 1.0
    assert list(fitted.feature_names_in_) == ["GPA", "PSI"]
    lda = Formula("GRADE ~ GPA + C(PSI)", LinearDiscriminantAnalysis()).fit(SPECTOR)
    assert not hasattr(lda, "summary")  # delegates only what the estimator has
    assert list(lda.estimator_.feature_names_in_) == ["GPA", "C(PSI)[T.1.0]"]
    assert lda.predict(SPECTOR).shape == (32,)


@settings(max_examples=20, deadline=None)
@given(rows=st.lists(st.integers(0, len(FAIR) - 1), min_size=1, max_size=8))
def test_predictions_do_not_depend_on_the_other_rows(rows):
    """New data are encoded by the fitted state alone: any subset of rows, in any order
    (missing levels included), gets the predictions it gets within the whole data (to
    rounding: a matrix product over fewer rows may round differently)."""
    proba = _FAIR_MODEL.predict_proba(FAIR.iloc[rows])
    np.testing.assert_allclose(proba, _FAIR_PROBA[rows], rtol=1e-13)


_FAIR_MODEL = Formula("had_affair ~ C(rel) + C(rate_marriage) + np.log(age) + educ*age",
                      LogisticRegression()).fit(FAIR)
_FAIR_PROBA = _FAIR_MODEL.predict_proba(FAIR)


def test_save_and_load_keep_the_formula_and_encoding_as_data(tmp_path):
    formula = ("had_affair ~ C(rel, Treatment('some')) + C(rate_marriage) + np.log(age) "
               "+ educ*yrs_married + center(age)")
    model = Formula(formula, LogisticRegression()).fit(FAIR)
    path = tmp_path / "m.problin"
    problin.save(model, path)
    loaded = problin.load(path)
    assert isinstance(loaded, Formula) and loaded.formula == formula
    np.testing.assert_array_equal(loaded.predict_proba(FAIR), model.predict_proba(FAIR))
    pd.testing.assert_frame_equal(loaded.summary(), model.summary())
    with pytest.raises(ValueError, match="not seen"):
        loaded.predict(FAIR.iloc[:2].assign(rel="other"))
    meta = json.loads(zipfile.ZipFile(path).read("metadata.json"))
    spec = meta["estimator"]["state"]["model_spec_"]["$dict"]
    assert "C(rel, Treatment('some'))" in spec["formula"]
    assert set(spec["encoders"]["$dict"]) >= {"C(rel, Treatment('some'))", "C(rate_marriage)"}
    assert "center(age)" in spec["transforms"]["$dict"]


def test_command_line_fit_predict_summary(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    FAIR.to_csv("fair.csv", index=False)
    FAIR.iloc[:3].assign(rel=["none", "other", "some"]).to_csv("bad.csv", index=False)
    formula = "had_affair ~ C(rel) + np.log(age) + educ*yrs_married"
    runner = CliRunner()
    res = runner.invoke(cli, ["fit", "fair.csv", "-m", "logistic", "--formula", formula,
                              "-o", "m.problin"])
    assert res.exit_code == 0, res.output
    assert "C(rel)[T.some]" in res.output and "educ:yrs_married" in res.output
    res = runner.invoke(cli, ["predict", "m.problin", "fair.csv", "--proba"])
    assert res.exit_code == 0, res.output
    out = pd.read_csv(pd.io.common.StringIO(res.output))
    ref = Formula(formula, LogisticRegression()).fit(FAIR).predict_proba(FAIR)[:, 1]
    np.testing.assert_allclose(out["p_1"], ref, rtol=1e-9)
    res = runner.invoke(cli, ["summary", "m.problin"])
    assert res.exit_code == 0 and "np.log(age)" in res.output and "formula" in res.output
    res = runner.invoke(cli, ["predict", "m.problin", "bad.csv"])
    assert res.exit_code == 1 and "'other'" in res.output
    res = runner.invoke(cli, ["fit", "fair.csv", "-m", "logistic", "-f",
                              "had_affair ~ C(rell) + age", "-o", "x.problin"])
    assert res.exit_code == 2 and "did you mean 'rel'" in res.output
    res = runner.invoke(cli, ["fit", "fair.csv", "-m", "logistic", "-f", formula, "-t", "x",
                              "-o", "x.problin"])
    assert res.exit_code == 2 and "drop --target" in res.output
    res = runner.invoke(cli, ["fit", "fair.csv", "-m", "logistic", "-o", "x.problin"])
    assert res.exit_code == 2 and "--target" in res.output


def _rewrite(path, edit):
    """The model file with its metadata edited and its checksum recomputed (a tampered
    file that passes the integrity checks)."""
    with zipfile.ZipFile(path) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    meta = json.loads(members["metadata.json"])
    edit(meta)
    members["metadata.json"] = json.dumps(meta).encode()
    digest = hashlib.sha256(members["metadata.json"]).hexdigest().encode()
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        zf.comment = b"problin-model sha256=" + digest


@pytest.mark.parametrize("formula", [
    "GRADE ~ np.savetxt('owned.txt', GPA)", "GRADE ~ eval('GPA')", "GRADE ~ GPA.__class__",
    "GRADE ~ getattr(np, 'savetxt')('owned.txt', GPA)", "GRADE ~ GPA[0]",
    # A backtick inside a string literal is no column quote to formulaic: the check
    # must read the expression as formulaic evaluates it.
    "GRADE ~ I(GPA + 0 * ('`' and np.savetxt('owned.txt', GPA) and '`' or 0))",
    "GRADE ~ I(GPA + 0 * ('`' and __import__('os').system('touch owned.txt') and '`' or 0))",
    # Arithmetic on literals runs in Python's unbounded integers: these ran for ever
    # (or filled the memory) at the first prediction of a file that loaded.
    "GRADE ~ I(GPA * 9**9**9)", "GRADE ~ I(GPA * (9**1000)**1000)",
    "GRADE ~ I(GPA + (1 << 99999999999))", "GRADE ~ I(GPA + 0 * len([GPA] * 999999999999))",
    "GRADE ~ I(GPA * ('x' * 999999999999))", "GRADE ~ I(GPA * 99999999999 ** 9999)"])
def test_a_formula_in_a_model_file_is_data_not_code(tmp_path, formula, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "m.problin"
    problin.save(Formula("GRADE ~ np.log(GPA)", LogisticRegression()).fit(SPECTOR), path)
    _rewrite(path, lambda meta: None)
    assert problin.load(path).predict(SPECTOR).shape == (32,)  # the rewrite itself is fine

    def in_spec(meta):
        meta["estimator"]["state"]["model_spec_"]["$dict"]["formula"] = formula

    def in_params(meta):
        meta["estimator"]["params"]["formula"] = formula

    for edit in (in_spec, in_params):
        problin.save(Formula("GRADE ~ np.log(GPA)", LogisticRegression()).fit(SPECTOR), path)
        _rewrite(path, edit)
        with pytest.raises(problin.ModelFileError, match=r"\.formula: (malformed or unsafe|"
                                                         r"cannot parse|factor|the formula)"):
            problin.load(path)
    assert not (tmp_path / "owned.txt").exists()


def test_arithmetic_on_literals_survives_a_model_file(tmp_path):
    """The bound on literal arithmetic (65,536 bits) leaves what formulas hold alone."""
    model = Formula("GRADE ~ I(GPA * (1 / 3)) + I(TUCE * 2**10 - 10**100 / 10**99) "
                    "+ I((PSI + 1) ** -2.5 + 1e300 * 1e-300)", LogisticRegression()).fit(SPECTOR)
    path = tmp_path / "m.problin"
    problin.save(model, path)
    np.testing.assert_array_equal(problin.load(path).predict_proba(SPECTOR),
                                  model.predict_proba(SPECTOR))


@pytest.mark.parametrize("rhs", ["`grade point` + TUCE", "`grade point`:TUCE + `class` - 1"])
def test_quoted_plain_columns_survive_a_model_file(tmp_path, rhs):
    """A quoted column used as it is (not inside a call): formulaic writes the fitted
    formula as ``1 + grade point + TUCE``, which the model file kept and could not parse
    back: the fitted model saved but did not load."""
    data = SPECTOR.rename(columns={"GPA": "grade point", "PSI": "class"})
    model = Formula(f"GRADE ~ {rhs}", LogisticRegression()).fit(data)
    path = tmp_path / "m.problin"
    problin.save(model, path)
    loaded = problin.load(path)
    np.testing.assert_array_equal(loaded.predict_proba(data), model.predict_proba(data))
    assert list(loaded.summary().index) == list(model.summary().index)


def test_quoted_column_names_survive_a_model_file(tmp_path):
    """Backtick-quoted names (not identifiers, or beginning with a digit) are columns:
    the safety check reads them as such, and the loaded model predicts."""
    data = SPECTOR.rename(columns={"GPA": "grade point", "TUCE": "1tuce"})
    model = Formula("GRADE ~ np.log(`grade point`) + I(`1tuce` / 10)",
                    LogisticRegression()).fit(data)
    path = tmp_path / "m.problin"
    problin.save(model, path)
    np.testing.assert_array_equal(problin.load(path).predict_proba(data),
                                  model.predict_proba(data))


@pytest.mark.parametrize("formula, read", [
    ("GRADE ~ GPA + center(TUCE)", ["GPA", "TUCE"]),
    ("GRADE ~ scale(GPA) + poly(TUCE, 2) + PSI", ["GPA", "TUCE", "PSI"]),
    ("GRADE ~ bs(GPA, df=3)", ["GPA"]),
    ("GRADE ~ GPA + C(PSI)", ["GPA", "PSI"]),  # no stateful transform: as before
])
def test_feature_names_in_include_the_columns_of_stateful_transforms(formula, read):
    """formulaic's parsed required_variables leave out the columns inside stateful
    transforms; the model must still record (and ask new data for) every column it reads."""
    model = Formula(formula, LogisticRegression()).fit(SPECTOR)
    assert list(model.feature_names_in_) == read and model.n_features_in_ == len(read)
    with pytest.raises(ValueError, match=rf"names columns the data do not have: '{read[0]}'"):
        model.predict(SPECTOR.drop(columns=read[0]))


@pytest.mark.parametrize("formula", ["GRADE ~ 1", "GRADE ~ 0", "GRADE ~", "GRADE ~ 1 - 1"])
@pytest.mark.parametrize("estimator", [LogisticRegression(), LinearDiscriminantAnalysis()],
                         ids=["logistic", "lda"])
def test_a_formula_without_feature_columns_is_a_clear_error(formula, estimator):
    with pytest.raises(ValueError, match=r"^formula '.*' gives no feature columns .*"
                                         r"intercept-only or empty right-hand side"):
        Formula(formula, estimator).fit(SPECTOR)


@pytest.mark.parametrize("formula", ["y ~ poly(a, 3) + center(b)", "y ~ bs(a, df=4) + b - 1",
                                     "y ~ scale(a) + poly(b, 2)"])
def test_stateful_transforms_survive_a_model_file(tmp_path, formula):
    """poly's state keys its coefficients by degree (integers): the model file stores such
    a mapping as pairs and restores it, so the loaded model predicts bit for bit (the save
    used to fail: "a dict with non-string keys")."""
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    data["y"] = data.a ** 2 + data.b + 0.1 * rng.normal(size=60)
    model = Formula(formula, problin.LinearRegression()).fit(data)
    path = tmp_path / "m.problin"
    problin.save(model, path)
    loaded = problin.load(path)
    np.testing.assert_array_equal(loaded.predict(data), model.predict(data))
    assert dict(loaded.model_spec_.transform_state) == dict(model.model_spec_.transform_state)


def test_levels_outside_the_declared_ones_are_refused_at_fit():
    """C(g, levels=['a', 'b']) on data that also hold 'c': formulaic only warned and coded
    the 'c' rows as the reference level, and predict on the same rows then refused them."""
    frame = pd.DataFrame({"y": np.arange(9.0), "g": list("abcabcabc"),
                          "x": np.arange(9.0) % 4})
    with pytest.raises(ValueError, match="categories outside of the nominated levels"):
        Formula("y ~ x + C(g, levels=['a', 'b'])", problin.LinearRegression()).fit(frame)
    model = Formula("y ~ x + C(g, levels=['a', 'b', 'c'])", problin.LinearRegression())
    assert model.fit(frame).predict(frame).shape == (9,)
