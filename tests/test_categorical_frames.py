"""DataFrames with string or ``category`` columns, without a formula: every estimator
encodes them as the command line does (reference level first, indicators named
``column=level``), learns the encoding at fit and applies it at predict."""
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import BaseEstimator, clone, is_classifier, is_regressor

import problin
from problin.io._table import encode_table

RNG = np.random.default_rng(3)
N = 150
FRAME = pd.DataFrame({
    "x": RNG.normal(size=N),
    "colour": RNG.choice(["red", "blue", "green"], N),
    "size": pd.Categorical(RNG.choice(["S", "M", "L"], N), categories=["S", "M", "L"]),
    "flag": RNG.random(N) > 0.5,
})
LABELS = np.where(FRAME.x + (FRAME.colour == "red") + RNG.normal(size=N) > 0.4, "yes", "no")
TARGET = 2.0 * FRAME.x + (FRAME.colour == "red") - (FRAME["size"] == "L") \
    + 0.3 * RNG.normal(size=N)
NAMES = ["x", "colour=green", "colour=red", "size=M", "size=L", "flag"]  # size: S, M, L declared


def _estimators():
    out = []
    for name in problin.__all__:
        cls = getattr(problin, name)
        if not (isinstance(cls, type) and issubclass(cls, BaseEstimator)) or name == "Formula":
            continue
        est = cls(problin.LogisticRegression()) if name == "BayesDecision" else cls()
        if "random_state" in est.get_params():
            est.set_params(random_state=0)
        if (is_classifier(est) or is_regressor(est)) and name != "MultinomialNB":
            out.append(est)  # (MultinomialNB models counts: x is negative)
    return out


def _fit(est, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", problin.ProblinWarning)
        if is_classifier(est):
            return clone(est).fit(X, LABELS)
        positive = est.__sklearn_tags__().target_tags.positive_only  # GLM regressors
        return clone(est).fit(X, 1.0 / (1.0 + np.exp(-TARGET)) if positive else TARGET)


@pytest.mark.parametrize("est", _estimators(), ids=lambda e: type(e).__name__)
def test_every_estimator_encodes_as_the_command_line(est):
    fitted = _fit(est, FRAME)
    encoded, *_ = encode_table(FRAME, "frame")  # the command line's encoding
    assert list(encoded.columns) == NAMES
    reference = _fit(est, encoded)
    inner = getattr(fitted, "estimator_", fitted)
    assert list(inner.feature_names_in_) == NAMES
    new = FRAME.iloc[::7]
    ours, theirs = fitted.predict(new), reference.predict(encoded.iloc[::7])
    if ours.dtype.kind == "f":  # (rows in another memory layout round differently)
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    else:
        np.testing.assert_array_equal(ours, theirs)
    with pytest.raises(ValueError, match=r"column 'colour' has categories not seen .*'purple'"):
        fitted.predict(new.assign(colour="purple"))


def test_logistic_coefficients_match_statsmodels_treatment_coding():
    y = (LABELS == "yes").astype(int)
    model = problin.LogisticRegression().fit(FRAME[["x", "colour"]], y)
    ref = smf.logit("y ~ x + C(colour)", FRAME.assign(y=y)).fit(disp=0, tol=1e-12)
    table = model.summary()
    pairs = {"intercept": "Intercept", "x": "x", "colour=green": "C(colour)[T.green]",
             "colour=red": "C(colour)[T.red]"}
    for ours, theirs in pairs.items():
        assert np.isclose(table.loc[ours, "coef"], ref.params[theirs], rtol=1e-6)
        assert np.isclose(table.loc[ours, "std_err"], ref.bse[theirs], rtol=1e-6)


def test_refit_on_numbers_forgets_the_encoding_and_save_load_keeps_it(tmp_path):
    model = problin.LinearRegression().fit(FRAME, TARGET)
    assert model.input_encoding_["columns"][1] == {
        "name": "colour", "kind": "categorical", "categories": ["blue", "green", "red"]}
    path = tmp_path / "m.problin"
    problin.save(model, path)
    loaded = problin.load(path)
    np.testing.assert_array_equal(loaded.predict(FRAME), model.predict(FRAME))
    model.fit(FRAME[["x"]], TARGET)
    assert not hasattr(model, "input_encoding_")
    assert model.predict(FRAME[["x"]]).shape == (N,)


def test_missing_values_in_a_text_frame_are_refused():
    with pytest.raises(ValueError, match=r"missing values in the columns \['colour'\]"):
        problin.LogisticRegression().fit(FRAME.assign(colour=FRAME.colour.where(
            FRAME.x > -2)), LABELS)


@settings(max_examples=20, deadline=None)
@given(order=st.permutations(range(12)))
def test_encoding_does_not_depend_on_row_order(order):
    """Levels are sorted, so the first (reference) level does not depend on which level
    comes first in the data: refitting on permuted rows gives the same model."""
    rows = FRAME.iloc[:12]
    a = problin.LinearRegression(alpha=1.0).fit(rows, TARGET[:12])
    b = problin.LinearRegression(alpha=1.0).fit(rows.iloc[list(order)],
                                                 TARGET[:12].iloc[list(order)])
    assert list(a.feature_names_in_) == list(b.feature_names_in_)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-12)


def test_integer_column_labels_with_a_categorical_column():
    """pandas' default integer column labels: the encoding names columns as text, and
    looking them up by that text failed ("columns ... are missing: ['0', '1']; the data
    has ['0', '1']") for every estimator."""
    import problin as pl
    frame = pd.DataFrame({0: [1.0, 2, 3, 4, 5, 6], 1: ["a", "b", "a", "b", "a", "b"]})
    y = np.array([0, 0, 1, 1, 0, 1])
    by_name = frame.rename(columns=str)
    for make in (pl.GaussianNB, pl.LogisticRegression, pl.LinearRegression):
        target = y.astype(float) if make is pl.LinearRegression else y
        model = make().fit(frame, target)
        np.testing.assert_array_equal(model.predict(frame), make().fit(by_name, target)
                                      .predict(by_name))
    clash = pd.DataFrame({1: [1.0, 2.0], "1": ["a", "b"]})
    with pytest.raises(ValueError, match="same name as text"):
        pl.GaussianNB().fit(pd.concat([clash] * 3, ignore_index=True), [0, 1] * 3).predict(
            pd.concat([clash] * 3, ignore_index=True))


def test_a_category_column_keeps_its_declared_order():
    """A pandas category column's levels were sorted as text, so its reference was
    "high" of ["low", "mid", "high"] (statsmodels/patsy take the declared order). Now the
    declared order, levels that occur only; the fit matches statsmodels' formula fit."""
    import statsmodels.formula.api as smf
    rng = np.random.default_rng(0)
    n = 300
    dose = pd.Categorical(rng.choice(["low", "mid", "high"], n),
                          categories=["none", "low", "mid", "high"])
    x = rng.normal(size=n)
    eta = -0.5 + x + pd.Series(dose).map({"low": 0.0, "mid": 0.2, "high": 1.0}).to_numpy()
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(int)
    frame = pd.DataFrame({"x": x, "dose": dose})
    model = problin.LogisticRegression().fit(frame, y)
    assert list(model.summary().index) == ["intercept", "x", "dose=mid", "dose=high"]
    data = frame.assign(y=y, dose=frame["dose"].cat.remove_unused_categories())
    reference = smf.logit("y ~ x + dose", data).fit(disp=0, method="newton", tol=1e-12)
    np.testing.assert_allclose(np.r_[model.intercept_, model.coef_.ravel()],
                               reference.params[["Intercept", "x", "dose[T.mid]",
                                                 "dose[T.high]"]].to_numpy(), rtol=1e-8)


def _classifier_names():
    for n in problin.__all__:
        cls = getattr(problin, n)
        if isinstance(cls, type) and issubclass(cls, BaseEstimator) \
                and n not in ("BayesDecision", "Formula") and is_classifier(cls()):
            yield n  # (the wrappers take a model: their classes_ are the model's)


@pytest.mark.parametrize("name", list(_classifier_names()))
def test_categorical_labels_of_booleans_or_numbers_keep_their_values(name):
    """A ``category`` Series of booleans as y gave classes_ [0.0, 1.0] in memory (scikit-
    learn's check reads it as floats) but [False, True] on Dask and as a plain bool
    Series. Every classifier now reads the categories' values: True/False labels stay
    labels, numbers stay integers."""
    est = getattr(problin, name)()
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    X = np.abs(np.column_stack([FRAME.x, RNG.normal(size=N)]))
    flags = (FRAME.x + RNG.normal(size=N) > 0.3).to_numpy()
    for labels, values in ((flags, [False, True]), (flags.astype(int) * 3 + 1, [1, 4])):
        as_category = clone(est).fit(X, pd.Series(labels).astype("category"))
        plain = clone(est).fit(X, pd.Series(labels))
        assert as_category.classes_.dtype == plain.classes_.dtype == np.asarray(labels).dtype
        np.testing.assert_array_equal(as_category.classes_, values)
        np.testing.assert_array_equal(as_category.predict(X), plain.predict(X))
