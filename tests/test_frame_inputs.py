"""DataFrames whose columns are not plain numbers or text (issue 31, items 5, 6 and 15c):
``object`` columns of numbers are numbers, dates and mixed columns are refused, duplicate
column names are refused, and a polars frame is read as the equivalent pandas frame.
A numeric frame costs no copy beyond the array it holds, in C or F order (issue 33)."""
import datetime
import tracemalloc
import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, clone, is_classifier

import problin

RNG = np.random.default_rng(31)
N = 30
X0 = RNG.normal(size=N).round(3)  # (three decimals: a Decimal of its text is the float)
X1 = RNG.normal(size=N)
LABELS = (X0 + X1 + RNG.normal(size=N) > 0).astype(int)
NUMBERS = pd.DataFrame({"a": X0, "b": X1})
ESTIMATORS = [problin.LogisticRegression(), problin.LinearRegression(), problin.GaussianNB()]


def _target(est):
    if is_classifier(est):
        return LABELS
    if est.__sklearn_tags__().target_tags.positive_only:  # GLM regressors: in (0, 1) fits all
        return 1.0 / (1.0 + np.exp(-(X0 + 2 * X1)))
    return X0 + 2 * X1


def _fit(est, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", problin.ProblinWarning)
        return clone(est).fit(X, _target(est))


def _object(values):
    return pd.Series(list(values), dtype=object)


NUMBER_COLUMNS = {
    "decimal": lambda: _object(Decimal(f"{v:.3f}") for v in X0),
    "object float": lambda: _object(X0),
    "fraction": lambda: _object(Fraction(f"{v:.3f}") for v in X0),
    "numpy and python numbers": lambda: _object(np.float32(v) if i % 3 else float(v)
                                                for i, v in enumerate(X0)),
}


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("kind", NUMBER_COLUMNS)
def test_an_object_column_of_numbers_is_one_numeric_feature(est, kind):
    """Such a column became one indicator per distinct value (30 features from 2 columns)
    with only a SeparationWarning; it is the float64 column."""
    frame = NUMBERS.assign(a=NUMBER_COLUMNS[kind]())
    reference = NUMBERS.assign(a=frame["a"].astype(np.float64))
    model, expected = _fit(est, frame), _fit(est, reference)
    assert model.n_features_in_ == 2 and list(model.feature_names_in_) == ["a", "b"]
    np.testing.assert_array_equal(model.predict(frame), expected.predict(reference))
    np.testing.assert_array_equal(model.predict(frame), model.predict(reference))


def test_object_numbers_beside_a_text_column_and_booleans_as_zero_one():
    colour = RNG.choice(["red", "blue"], N)
    flags = _object(bool(v > 0) if i % 2 else int(v > 0) for i, v in enumerate(X1))
    frame = pd.DataFrame({"a": NUMBER_COLUMNS["decimal"](), "f": flags, "colour": colour})
    reference = pd.DataFrame({"a": X0, "f": (X1 > 0).astype(float), "colour": colour})
    model = _fit(problin.LogisticRegression(), frame)
    assert list(model.feature_names_in_) == ["a", "f", "colour=red"]
    np.testing.assert_allclose(model.coef_, _fit(problin.LogisticRegression(), reference).coef_,
                               rtol=1e-12)
    np.testing.assert_array_equal(model.predict(frame), model.predict(reference))


def _dates():
    return [datetime.date(2020, 1, 1) + datetime.timedelta(days=i) for i in range(N)]


REFUSED = {
    "date objects": (_dates, "dates or times \\(date\\)"),
    "datetime objects": (lambda: _object(datetime.datetime(2020, 1, 1, i % 24) for i in range(N)),
                         "dates or times \\(datetime\\)"),
    "timedelta objects": (lambda: _object(datetime.timedelta(hours=i) for i in range(N)),
                          "dates or times \\(timedelta\\)"),
    "time objects": (lambda: [datetime.time(i % 24) for i in range(N)], "dates or times"),
    "datetime64": (lambda: pd.to_datetime(_dates()), "dates or times \\(datetime64"),
    "timedelta64": (lambda: pd.to_timedelta(np.arange(N), unit="D"), "dates or times"),
    "period": (lambda: pd.period_range("2020-01", periods=N, freq="M"), "dates or times"),
    "numbers and text": (lambda: _object(v if i % 2 else str(v) for i, v in enumerate(X0)),
                         "values that are neither all numbers nor all text \\(float64, str\\)"),
    "complex": (lambda: X0 + 1j, "values that are neither all numbers nor all text \\(complex"),
}


@pytest.mark.parametrize("est", ESTIMATORS[:2], ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("kind", REFUSED)
def test_dates_and_mixed_columns_are_refused_naming_the_column(est, kind):
    """A column of dates became one indicator per date; a mix of numbers and text one
    per distinct text. Both are refused at fit, and at predict by a model fitted on
    numbers, naming the column."""
    make, message = REFUSED[kind]
    frame = NUMBERS.assign(a=make())
    with pytest.raises(ValueError, match=f"column 'a' holds {message}.*convert it to numbers"):
        _fit(est, frame)
    with pytest.raises(ValueError, match=f"column 'a' holds {message}.*fitted on numbers"):
        _fit(est, NUMBERS).predict(frame)


def test_text_where_the_model_had_numbers_names_the_column():
    model = _fit(problin.LogisticRegression(), NUMBERS.assign(c=["u", "v"] * (N // 2)))
    with pytest.raises(ValueError, match=r"column 'a' holds text \(str\), but the model was "
                                         "fitted on numbers"):
        model.predict(NUMBERS.assign(a="x", c="u"))


def test_a_signalling_nan_is_a_clear_error_naming_the_column():
    """``Decimal("sNaN")`` raised decimal.InvalidOperation from pandas' own isna, at fit
    (beside numbers or a text column, or among text) and at predict."""
    snan = _object([Decimal("sNaN")] + [Decimal(f"{v:.3f}") for v in X0[1:]])
    text = ["u", "v"] * (N // 2)
    model = _fit(problin.LogisticRegression(), NUMBERS)
    for frame, call in [(NUMBERS.assign(a=snan), None), (NUMBERS.assign(a=snan, c=text), None),
                        (NUMBERS.assign(a=_object([Decimal("sNaN")] + text[1:])), None),
                        (NUMBERS.assign(a=snan), model.predict)]:
        with pytest.raises(ValueError, match=r"X: column 'a' holds a signalling NaN"):
            (call or (lambda X: _fit(problin.LogisticRegression(), X)))(frame)


def _every_estimator():
    out = []
    for name in problin.__all__:
        cls = getattr(problin, name)
        if isinstance(cls, type) and issubclass(cls, BaseEstimator) and name != "Formula":
            out.append(cls(problin.LogisticRegression()) if name == "BayesDecision" else cls())
    return out


@pytest.mark.parametrize("est", _every_estimator(), ids=lambda e: type(e).__name__)
def test_duplicate_column_names_are_refused_naming_them(est):
    """``AttributeError: 'DataFrame' object has no attribute 'dtype'`` from every
    estimator; now a ValueError naming the columns, at fit, predict and partial_fit."""
    frame = pd.DataFrame(np.c_[np.abs(X0), np.abs(X1), np.abs(X0)], columns=["a", "b", "a"])
    target = LABELS if is_classifier(est) or not hasattr(est, "predict") else X0
    with pytest.raises(ValueError, match=r"more than one column is named \['a'\]"):
        clone(est).fit(frame, target)
    if hasattr(est, "partial_fit"):
        with pytest.raises(ValueError, match=r"more than one column is named \['a'\]"):
            clone(est).partial_fit(frame, target, **(
                {"classes": [0, 1]} if is_classifier(est) else {}))
    if hasattr(est, "predict"):
        fitted = _fit(est, frame.iloc[:, :2].set_axis(["a", "b"], axis=1))
        with pytest.raises(ValueError, match=r"more than one column is named \['a'\]"):
            fitted.predict(frame)


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_a_polars_frame_is_read_as_the_pandas_frame(est):
    """A polars frame with a text column failed ("could not convert string to float")
    where the same pandas frame is encoded; now its text and categorical columns are
    encoded and its names kept, at fit and at predict."""
    pl = pytest.importorskip("polars")
    pytest.importorskip("pyarrow")  # (polars' to_pandas)
    colour = RNG.choice(["red", "blue", "green"], N)
    frame = NUMBERS.assign(colour=colour, size=pd.Categorical(colour, ["red", "green", "blue"]))
    polars_frame = pl.DataFrame({"a": X0, "b": X1, "colour": colour}).with_columns(
        size=pl.Series(colour).cast(pl.Enum(["red", "green", "blue"])))
    model, expected = _fit(est, polars_frame), _fit(est, frame)
    assert list(model.feature_names_in_) == list(expected.feature_names_in_) == [
        "a", "b", "colour=green", "colour=red", "size=green", "size=blue"]
    np.testing.assert_array_equal(model.predict(polars_frame), expected.predict(frame))
    np.testing.assert_array_equal(expected.predict(polars_frame), expected.predict(frame))
    with pytest.raises(TypeError, match="LazyFrame: collect"):
        model.predict(polars_frame.lazy())


def test_a_parquet_file_of_decimals_and_dates_as_the_command_line_reads_it(tmp_path):
    """The command line read a Parquet decimal column as one category per number (36
    features from a 40-row column); its dates likewise. Now decimals are numbers and
    dates a clear error naming the column and --categorical."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from problin.io.errors import DataFileError
    from problin.io.readers import read_data
    decimals = pa.array([Decimal(f"{v:.3f}") for v in X0], pa.decimal128(6, 3))
    pq.write_table(pa.table({"d": decimals, "y": LABELS}), tmp_path / "d.parquet")
    data = read_data(tmp_path / "d.parquet", "y")
    assert data.feature_names == ["d"]
    np.testing.assert_array_equal(np.asarray(data.X, dtype=np.float64)[:, 0], X0)
    pq.write_table(pa.table({"when": _dates(), "y": LABELS}), tmp_path / "t.parquet")
    with pytest.raises(DataFileError, match=r"column 'when' holds dates or times \(date\).*"
                                            "--categorical when"):
        read_data(tmp_path / "t.parquet", "y")


def test_numeric_columns_prepares_a_frame_for_a_formula():
    """What a formula's data path can call before its terms are built (a formula read an
    object column of Decimals as one category per value): numbers converted, text kept,
    dates refused unless kept as categories, polars read as pandas, names unique."""
    from problin._frames import numeric_columns
    frame = pd.DataFrame({"a": NUMBER_COLUMNS["decimal"](), "c": ["u", "v"] * (N // 2),
                          "when": _dates()})
    out = numeric_columns(frame, keep=["when"])
    assert out["a"].dtype == np.float64 and out["c"].dtype == frame["c"].dtype
    np.testing.assert_array_equal(out["a"], X0)
    assert out["when"].dtype == object and frame["a"].dtype == object  # (not changed)
    with pytest.raises(ValueError, match=r"data: column 'when' holds dates or times \(date\)"):
        numeric_columns(frame)
    with pytest.raises(ValueError, match=r"more than one column is named \['a'\]"):
        numeric_columns(frame.set_axis(["a", "a", "when"], axis=1))


def test_a_pyarrow_table_is_read_as_the_pandas_frame():
    pa = pytest.importorskip("pyarrow")
    frame = NUMBERS.assign(colour=RNG.choice(["red", "blue"], N))
    model = _fit(problin.LogisticRegression(), pa.Table.from_pandas(frame))
    assert list(model.feature_names_in_) == ["a", "b", "colour=red"]
    np.testing.assert_array_equal(model.predict(frame), _fit(problin.LogisticRegression(),
                                                             frame).predict(frame))


def test_a_formula_reads_frames_as_the_estimators_do():
    """Through a formula (formulaic coded an object column of Decimals as 30 categories, a
    column of dates likewise, duplicate names gave formulaic's find_nulls error and a polars
    frame was refused): numbers are one column, C() keeps its categories, dates and
    duplicate names are refused naming the column, polars frames read as pandas."""
    pytest.importorskip("formulaic")
    frame = pd.DataFrame({"y": LABELS, "a": NUMBER_COLUMNS["decimal"](), "b": X1,
                          "g": _object([1.5, 2.5] * (N // 2)), "when": _dates()})
    def fit(formula, data):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", problin.ProblinWarning)
            return problin.Formula(formula, problin.LogisticRegression()).fit(data)

    model = fit("y ~ a + b + C(g)", frame)
    assert list(model.estimator_.feature_names_in_) == ["a", "b", "C(g)[T.2.5]"]
    numbers = frame.assign(a=X0)
    reference = fit("y ~ a + b + C(g)", numbers)
    np.testing.assert_allclose(model.predict_proba(frame), reference.predict_proba(numbers),
                               rtol=1e-12)
    with pytest.raises(ValueError, match=r"column 'when' holds dates or times"):
        fit("y ~ a + when", frame)
    with pytest.raises(ValueError, match=r"more than one column is named \['a'\]"):
        model.predict(frame.set_axis(["y", "a", "a", "g", "when"], axis=1))
    pl = pytest.importorskip("polars")
    np.testing.assert_allclose(model.predict_proba(pl.from_pandas(numbers.drop(
        columns="when"))), reference.predict_proba(numbers), rtol=1e-12)


def _traced(call):
    """``(peak, call())``: the most memory ``call()`` held at once (numpy and pandas report
    their allocations to tracemalloc), and its result."""
    tracemalloc.start()
    try:
        result = call()
        return tracemalloc.get_traced_memory()[1], result
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("est", [problin.LogisticRegression(), problin.LinearRegression(),
                                 problin.GaussianNB()], ids=lambda e: type(e).__name__)
def test_a_numeric_frame_costs_no_copy_of_its_values_in_c_or_f_order(est):
    """A frame's values are column-major (pandas' own layout), which made the fit copy them
    whole in the finiteness check, the class statistics' row gathers and the least-squares
    moments (1.12-1.28 s for a logistic fit of 1,000,000 x 30 against 0.72-0.78 s on the
    C array): fit and prediction on a frame in C or F order, or an F array, now hold at
    most a block buffer (<= 4 MB) more than on the C array, give the same model and keep
    the frame's names; a frame of mixed dtypes costs one conversion."""
    rng = np.random.default_rng(33)
    n, d = 50_000, 20  # X of 8 MB: a copy of it is twice a block
    X = rng.normal(size=(n, d))
    names = [f"x{j}" for j in range(d)]
    y = (X[:, 0] - X[:, 1] + rng.logistic(size=n) > 0).astype(int)
    if not is_classifier(est):
        y = X @ np.linspace(-1.0, 1.0, d) + rng.normal(size=n)
    predict = "predict_proba" if is_classifier(est) else "predict"
    fit_peak, reference = _traced(lambda: clone(est).fit(X, y))
    predict_peak, expected = _traced(lambda: getattr(reference, predict)(X))
    frame = pd.DataFrame(X, columns=names, copy=False)
    inputs = {"F array": (np.asfortranarray(X), 0.0), "C frame": (frame, 0.0),
              "F frame": (pd.DataFrame(np.asfortranarray(X), columns=names, copy=False), 0.0),
              "mixed dtypes": (frame.assign(x0=np.round(X[:, 0] * 1e3).astype(np.int64)), 1.0)}
    for kind, (data, copies) in inputs.items():
        allowed = (copies + 0.6) * X.nbytes
        peak, model = _traced(lambda: clone(est).fit(data, y))
        assert peak <= fit_peak + allowed, (kind, peak, fit_peak)
        peak, predicted = _traced(lambda: getattr(model, predict)(data))
        assert peak <= predict_peak + allowed, (kind, peak, predict_peak)
        if copies:
            continue
        assert list(getattr(model, "feature_names_in_", names)) == names
        np.testing.assert_allclose(predicted, expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kind", ["full", "tied", "diag"])
def test_class_statistics_of_column_major_rows_equal_those_of_row_major(kind):
    """A frame's column-major values are gathered by class column by column into a
    column-major buffer (no copy of each block to rows): the same statistics as from the
    C array, to rounding, also in partial blocks and with weights."""
    from problin._core.moments.class_stats import class_stats

    rng = np.random.default_rng(7)
    X = rng.normal(size=(203, 5)) * [1.0, 10.0, 0.1, 1e3, 1.0] + [0.0, 5.0, -3.0, 1e4, 0.0]
    codes, w = rng.integers(0, 3, size=203), rng.random(203)
    codes[40:90] = 1  # (a block of one class: copied whole)
    for rows in (16, 50, None):
        c = class_stats(X, codes, 3, w, kind, rows=rows, workers=1)
        f = class_stats(np.asfortranarray(X), codes, 3, w, kind, rows=rows, workers=1)
        np.testing.assert_allclose(f.counts, c.counts, rtol=1e-15)
        np.testing.assert_allclose(f.means, c.means, rtol=1e-13)
        np.testing.assert_allclose(f.sq, c.sq, rtol=1e-11)
        if kind != "diag":
            np.testing.assert_allclose(f.scatters(), c.scatters(), rtol=1e-11, atol=1e-9)
