"""Wald and likelihood-ratio tests: parity with statsmodels, the restriction parser, errors."""
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.exceptions import NotFittedError

import problin
from problin import LinearRegression, LogisticRegression, ProbitRegression, lr_test
from problin.inference.constraints import parse_constraints
from problin.inference.hypothesis import TestResult, wald_test

RTOL = 1e-6


def _spector() -> tuple[pd.DataFrame, pd.Series]:
    data = sm.datasets.spector.load_pandas()
    return data.exog, data.endog


def _longley() -> tuple[pd.DataFrame, pd.Series]:
    data = sm.datasets.longley.load_pandas()
    return data.exog, data.endog


def _cancer() -> tuple[pd.DataFrame, pd.Series]:
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X = X[["mean radius", "mean texture", "mean smoothness", "worst concavity"]]
    return X, y


def _diabetes() -> tuple[pd.DataFrame, pd.Series]:
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    return X, y


def _sm_wald(result: object, R: str, names: list[str]) -> tuple[float, float, float]:
    """statsmodels' wald_test of ``R`` written with problin's names (intercept -> const)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w = result.wald_test(R.replace("intercept", "const"), scalar=True)  # type: ignore[attr-defined]
    return float(w.statistic), float(np.squeeze(w.pvalue)), float(w.df_denom)


def _assert_equal(ours: TestResult, theirs: tuple[float, float, float]) -> None:
    """Statistic to 1e-6 relative; the p-value to 1e-6 relative per unit of statistic (a
    relative error e of W moves a tail probability p by about e W / 2 relative: at
    W = 65, p = 8e-15, the covariance's 1e-7 from the fit's tolerance gives 3e-6)."""
    np.testing.assert_allclose(ours.statistic, theirs[0], rtol=RTOL)
    np.testing.assert_allclose(ours.p_value, theirs[1], rtol=RTOL * max(1.0, ours.statistic))
    if ours.distribution == "F":
        assert ours.df_denom == theirs[2]


LOGIT_CASES = [
    (_spector, "GPA = TUCE"),
    (_spector, "GPA = TUCE, PSI = 0"),
    (_spector, "intercept + 2*GPA = -7, PSI - TUCE = 1"),
    (_cancer, "mean radius = 0, mean texture = 0.5 * worst concavity"),
]


@pytest.mark.parametrize(("data", "R"), LOGIT_CASES)
@pytest.mark.parametrize("model", [LogisticRegression, ProbitRegression])
def test_glm_wald_matches_statsmodels(data: object, R: str, model: type) -> None:
    X, y = data()  # type: ignore[operator]
    ours = model().fit(X, y)
    sm_model = sm.Logit if model is LogisticRegression else sm.Probit
    exog = sm.add_constant(X.rename(columns=lambda c: c.replace(" ", "_")))
    theirs = sm_model(y, exog).fit(disp=0, method="newton", tol=1e-12)
    result = ours.wald_test(R)
    assert result.distribution == "chi2" and result.df_denom is None
    _assert_equal(result, _sm_wald(theirs, _sm_string(R, X), []))
    # the F form, as statsmodels' use_f=True
    f = ours.wald_test(R, use_f=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w = theirs.wald_test(_sm_string(R, X).replace("intercept", "const"), use_f=True,
                             scalar=True)
    _assert_equal(f, (float(w.statistic), float(np.squeeze(w.pvalue)), float(w.df_denom)))


def _sm_string(R: str, X: pd.DataFrame) -> str:
    for name in sorted(X.columns, key=len, reverse=True):
        R = R.replace(name, name.replace(" ", "_"))
    return R


LINEAR_CASES = [
    (_longley, "GNPDEFL = GNP, UNEMP = 0"),
    (_longley, "YEAR = 1800"),
    (_diabetes, "bmi = bp, s1 + s2 = 0, age = 0"),
]


@pytest.mark.parametrize(("data", "R"), LINEAR_CASES)
@pytest.mark.parametrize("cov_type", ["nonrobust", "HC1", "HC3"])
def test_linear_wald_matches_statsmodels(data: object, R: str, cov_type: str) -> None:
    X, y = data()  # type: ignore[operator]
    ours = LinearRegression(cov_type=cov_type).fit(X, y)
    theirs = sm.OLS(y, sm.add_constant(X)).fit(cov_type=cov_type, use_t=True)
    result = ours.wald_test(R)
    assert result.distribution == "F"
    _assert_equal(result, _sm_wald(theirs, R, []))
    chi2 = ours.wald_test(R, use_f=False)
    np.testing.assert_allclose(chi2.statistic, result.statistic * result.df, rtol=1e-12)


def test_glm_wald_robust_covariance() -> None:
    """With ``cov_type="HC0"`` the test uses the sandwich ``covariance_``, chi-squared as
    statsmodels' ``Logit(...).fit(cov_type="HC0").wald_test``."""
    X, y = _spector()
    ours = LogisticRegression(cov_type="HC0").fit(X, y)
    theirs = sm.Logit(y, sm.add_constant(X)).fit(disp=0, cov_type="HC0")
    _assert_equal(ours.wald_test("GPA = TUCE, PSI = 0"),
                  _sm_wald(theirs, "GPA = TUCE, PSI = 0", []))


def test_linear_wald_cluster_uses_clusters_minus_one() -> None:
    X, y = _diabetes()
    groups = np.arange(len(y)) % 17
    ours = LinearRegression(cov_type="cluster").fit(X, y, groups=groups)
    theirs = sm.OLS(y, sm.add_constant(X)).fit(cov_type="cluster", use_t=True,
                                              cov_kwds={"groups": groups})
    result = ours.wald_test("bmi = bp, s5 = 0")
    assert result.df_denom == 16
    _assert_equal(result, _sm_wald(theirs, "bmi = bp, s5 = 0", []))


def test_matrix_and_string_agree() -> None:
    X, y = _spector()
    model = LogisticRegression().fit(X, y)
    R = np.array([[0.0, 1.0, -1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
    by_matrix = model.wald_test(R, q=[0.0, 1.0])
    by_string = model.wald_test("GPA = TUCE, PSI = 1")
    assert tuple(by_matrix) == pytest.approx(tuple(by_string), rel=1e-14)
    stat, df, p = by_string  # unpacks as a triple
    assert df == 2 and 0 < p < 1 and stat > 0
    single = model.wald_test([0.0, 0.0, 0.0, 1.0], q=1.0)  # one row as a vector
    assert single.df == 1


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=4, max_size=4))
def test_wald_invariant_to_rewriting_the_restrictions(a: list[float]) -> None:
    """``A R theta = A q`` states the same restrictions for any invertible ``A``."""
    A = np.array(a).reshape(2, 2) + 4.0 * np.eye(2)
    # [[3, -1], [-3, 1]] is reachable: a singular A states one restriction twice, which
    # wald_test rightly refuses; the property is about invertible rewritings.
    assume(abs(np.linalg.det(A)) > 0.1)
    theta = np.array([0.5, -1.0, 2.0, 0.3])
    L = np.array([[2.0, 0, 0, 0], [0.3, 1.0, 0, 0], [0.1, -0.2, 0.7, 0], [0, 0.4, 0.2, 1.5]])
    cov = L @ L.T
    names = ["intercept", "a", "b", "c"]
    R = np.array([[0.0, 1.0, -1.0, 0.0], [1.0, 0.0, 0.0, 2.0]])
    q = np.array([0.2, -0.1])
    base = wald_test(theta, cov, names, R, q)
    moved = wald_test(theta, cov, names, A @ R, A @ q)
    assert moved.statistic == pytest.approx(base.statistic, rel=1e-9)


@pytest.mark.parametrize(("data", "columns", "model"), [
    (_spector, ["GPA"], LogisticRegression),
    (_spector, ["GPA", "PSI"], ProbitRegression),
    (_cancer, ["mean radius"], LogisticRegression),
    (_cancer, ["mean texture", "worst concavity"], ProbitRegression)])
def test_lr_test_matches_statsmodels(data: object, columns: list[str], model: type) -> None:
    X, y = data()  # type: ignore[operator]
    full, restricted = model().fit(X, y), model().fit(X[columns], y)
    sm_model = sm.Logit if model is LogisticRegression else sm.Probit
    fit = {"disp": 0, "method": "newton", "tol": 1e-12}
    sm_full = sm_model(y, sm.add_constant(X)).fit(**fit)
    sm_restricted = sm_model(y, sm.add_constant(X[columns])).fit(**fit)
    lr, p, df = _lr_from_llf(sm_full, sm_restricted)
    result = lr_test(restricted, full)
    np.testing.assert_allclose(result.statistic, lr, rtol=RTOL)
    np.testing.assert_allclose(result.p_value, p, rtol=RTOL * max(1.0, lr))
    assert result.df == df == X.shape[1] - len(columns)


def _lr_from_llf(full: object, restricted: object) -> tuple[float, float, float]:
    """The LR test from statsmodels' ``llf`` and ``df_resid`` (its ``compare_lr_test``)."""
    lr = 2.0 * (full.llf - restricted.llf)  # type: ignore[attr-defined]
    df = restricted.df_resid - full.df_resid  # type: ignore[attr-defined]
    return lr, float(stats.chi2.sf(lr, df)), df


@pytest.mark.parametrize(("data", "columns"), [(_longley, ["GNP", "YEAR"]),
                                               (_diabetes, ["bmi", "bp", "s5"])])
def test_lr_test_linear_matches_statsmodels(data: object, columns: list[str]) -> None:
    X, y = data()  # type: ignore[operator]
    full, restricted = LinearRegression().fit(X, y), LinearRegression().fit(X[columns], y)
    sm_full = sm.OLS(y, sm.add_constant(X)).fit()
    sm_restricted = sm.OLS(y, sm.add_constant(X[columns])).fit()
    lr, p, df = sm_full.compare_lr_test(sm_restricted)
    result = lr_test(restricted, full)
    np.testing.assert_allclose([result.statistic, result.p_value], [lr, p], rtol=RTOL)
    assert result.df == df
    assert problin.lr_test is lr_test


# ----------------------------------------------------------------- the parser
NAMES = ["intercept", "x1", "x10", "mean radius", "a-b"]


@pytest.mark.parametrize(("text", "R", "q"), [
    ("x1 = x10", [[0, 1, -1, 0, 0]], [0]),
    ("x1 - x10", [[0, 1, -1, 0, 0]], [0]),
    ("2*x1 - x10/4 = 1", [[0, 2, -0.25, 0, 0]], [1]),
    ("x1 = x10 = mean radius", [[0, 1, -1, 0, 0], [0, 0, 1, -1, 0]], [0, 0]),
    ("3 * (x1 + a-b) = 2 + intercept", [[-1, 3, 0, 0, 3]], [2]),
    ("-x1 + 1e-1 = 0.5 * mean radius", [[0, -1, 0, -0.5, 0]], [-0.1]),
])
def test_parser(text: str, R: list[list[float]], q: list[float]) -> None:
    R_out, q_out = parse_constraints(text, NAMES)
    np.testing.assert_allclose(R_out, R)
    np.testing.assert_allclose(q_out, q)


def test_parser_list_of_strings() -> None:
    R, q = parse_constraints(["x1 = 0", "x10 = 2"], NAMES)
    np.testing.assert_allclose(q, [0, 2])
    assert R.shape == (2, 5)


@pytest.mark.parametrize(("text", "message"), [
    ("x1 * x10 = 0", "product of parameters"),
    ("x1 = ", "ends early"),
    ("1 = 2", "without parameters"),
    ("x1 = x1", "without parameters"),
    ("x1 / x10", "division"),
    ("(x1 + x10", "missing"),
    ("x1 x10", "unexpected"),
])
def test_parser_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_constraints(text, NAMES)


# ----------------------------------------------------------------- bad input
@pytest.fixture(scope="module")
def logit() -> LogisticRegression:
    X, y = _spector()
    return LogisticRegression().fit(X, y)


def test_unknown_name_one_clear_error(logit: LogisticRegression) -> None:
    with pytest.raises(ValueError) as info:
        logit.wald_test("GPX = TUCE")
    message = str(info.value)
    assert "unknown parameter 'GPX'" in message and "did you mean 'GPA'" in message
    assert "intercept, GPA, TUCE, PSI" in message
    with pytest.raises(ValueError, match="unknown parameter 'x1'.*intercept, GPA"):
        logit.wald_test("x1 = 0")


def test_matrix_errors(logit: LogisticRegression) -> None:
    with pytest.raises(ValueError, match="R must have 4 columns"):
        logit.wald_test(np.eye(3))
    with pytest.raises(ValueError, match="q must have one value per row of R \\(2\\); got 3"):
        logit.wald_test(np.eye(4)[:2], q=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="linearly dependent \\(R has rank 1\\)"):
        logit.wald_test([[0, 1, -1, 0], [0, 2, -2, 0]])
    with pytest.raises(ValueError, match="linearly dependent"):
        logit.wald_test("GPA = TUCE, 2*TUCE = 2*GPA")
    with pytest.raises(ValueError, match="q is part of a restriction string"):
        logit.wald_test("GPA = 0", q=1.0)
    with pytest.raises(ValueError, match="finite"):
        logit.wald_test([[0, np.nan, 0, 0]])


def test_model_without_covariance(logit: LogisticRegression) -> None:
    X, y = _spector()
    model = LogisticRegression().fit(X, y)
    model._set_fit(model._result.replace(covariance=None))
    with pytest.raises(ValueError, match="covariance_ was not computed"):
        model.wald_test("GPA = 0")
    ridge = LinearRegression(alpha=1.0).fit(*_longley())
    with pytest.raises(ValueError, match="no inference for this fit"):
        ridge.wald_test("GNP = 0")
    with pytest.raises(NotFittedError):
        LogisticRegression().wald_test("x0 = 0")


def test_lr_test_errors(logit: LogisticRegression) -> None:
    X, y = _spector()
    small = LogisticRegression().fit(X[["GPA"]], y)
    with pytest.raises(ValueError, match="fewer parameters"):
        lr_test(logit, small)
    with pytest.raises(ValueError, match="one model class"):
        lr_test(ProbitRegression().fit(X[["GPA"]], y), logit)
    with pytest.raises(ValueError, match="different numbers of observations"):
        lr_test(LogisticRegression().fit(X[["GPA"]][:20], y[:20]), logit)
    with pytest.raises(ValueError, match="alpha=0"):
        lr_test(LogisticRegression(alpha=1.0).fit(X[["GPA"]], y), logit)
    with pytest.raises(ValueError, match="fits better than the full one"):
        lr_test(small, LogisticRegression().fit(X[["TUCE", "PSI"]], y))
    two = LinearRegression().fit(X, np.c_[y, y + X["GPA"]])
    with pytest.raises(ValueError, match="no n_obs_ for this fit"):
        lr_test(two, two)


def test_softmax_wald_matches_mnlogit() -> None:
    """Softmax parameters are class-major blocks named ``"class:parameter"`` (anes96)."""
    data = sm.datasets.anes96.load_pandas().data
    X, y = data[["logpopul", "selfLR", "age", "educ", "income"]], data["PID"]
    ours = LogisticRegression().fit(X, y)
    theirs = sm.MNLogit(y, sm.add_constant(X)).fit(disp=0, method="newton", tol=1e-12)
    p = X.shape[1] + 1
    R = np.zeros((2, 6 * p))
    R[0, 3], R[0, p + 3], R[1, 2 * p + 4] = 1.0, -1.0, 1.0  # age(1) = age(2), educ(3) = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w = theirs.wald_test(R, scalar=True)
    result = ours.wald_test("1.0:age = 2.0:age, 3.0:educ = 0")
    _assert_equal(result, (float(w.statistic), float(np.squeeze(w.pvalue)), 2.0))
    assert tuple(ours.wald_test(R)) == pytest.approx(tuple(result), rel=1e-12)


def test_restrictions_on_non_identified_parameters() -> None:
    X, y = _spector()
    X = X.assign(GPA2=2.0 * X["GPA"])  # collinear: GPA2 is not identified (NaN covariance)
    with pytest.warns(problin.CollinearityWarning):
        model = LogisticRegression().fit(X, y)
    with pytest.raises(ValueError, match="not identified \\(GPA2\\)"):
        model.wald_test("GPA2 = 0")
    result = model.wald_test("TUCE = 0, PSI = 0")  # the NaN block is not touched
    reference = LogisticRegression().fit(X.drop(columns="GPA2"), y).wald_test("TUCE = 0, PSI = 0")
    assert result.statistic == pytest.approx(reference.statistic, rel=1e-6)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(-5, 5), min_size=5, max_size=5).filter(any), st.integers(-9, 9))
def test_parser_reads_written_restrictions(coef: list[int], rhs: int) -> None:
    """A restriction written out as ``c0*intercept + c1*x1 ... = q`` parses back to ``(c, q)``."""
    text = " + ".join(f"{c}*{name}" for c, name in zip(coef, NAMES, strict=True)) + f" = {rhs}"
    R, q = parse_constraints(text.replace("+ -", "- "), NAMES)
    np.testing.assert_array_equal(R, [coef])
    np.testing.assert_array_equal(q, [rhs])


def test_lr_test_of_fits_with_one_scalar_weight():
    """A scalar sample_weight counted 49.999999999999986 rows (the summed weight rounds),
    and lr_test refused the nested pair as fitted on "different numbers of observations
    (50 and 50)"; the count is whole, and equals the per-row weights' fit."""
    from problin import LinearRegression, lr_test
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2))
    y = X @ [1.0, 2.0] + rng.normal(size=50)
    small = LinearRegression().fit(X[:, :1], y, sample_weight=0.1)
    big = LinearRegression().fit(X, y, sample_weight=np.full(50, 0.1))
    assert small.n_obs_ == big.n_obs_ == 50
    same = LinearRegression().fit(X[:, :1], y, sample_weight=np.full(50, 0.1))
    assert str(lr_test(small, big)) == str(lr_test(same, big))


@pytest.mark.parametrize("model", ["linear", "logit"])
def test_wald_with_a_singular_restriction_covariance_takes_its_rank(model: str) -> None:
    """Five slopes, four clusters: the cluster covariance has rank 3, and R V R^T for all
    five slopes is singular. The Cholesky of it failed ("collinear or non-identified
    parameters", which they are not) or passed on a rounding pivot with F ~ 5e15 (p =
    4e-24). Now the pseudo-inverse of the correlation-scaled matrix with its rank as J:
    the least-squares F equals its own f_statistic_, checked against a pseudo-inverse
    written out; rescaling a column changes neither."""
    rng = np.random.default_rng(3)
    n = 80
    X = rng.normal(size=(n, 5))
    groups = np.repeat(np.arange(4), n // 4)
    eta = X @ [0.5, -0.5, 0.3, 0.0, 0.2] + rng.normal(size=4)[groups]
    y = eta + rng.normal(size=n) if model == "linear" else (eta + rng.logistic(size=n) > 0)
    names = [f"x{j}" for j in range(5)]
    Estimator = LinearRegression if model == "linear" else LogisticRegression
    results = []
    for scale in (1.0, 1000.0):
        Xs = X * [scale, 1, 1, 1, 1]
        fit = Estimator(cov_type="cluster").fit(Xs, y.astype(float), groups=groups)
        result = fit.wald_test(", ".join(f"{name} = 0" for name in names))
        V = fit.covariance_[1:, 1:]
        s = np.sqrt(np.diag(V))
        b = np.ravel(fit.coef_) / s
        C = V / np.outer(s, s)
        P, rank = np.linalg.pinv(C, hermitian=True, rcond=1e-10), np.linalg.matrix_rank(C)
        assert rank == 3 and result.df == 3
        expected = b @ P @ b / (3 if model == "linear" else 1)
        assert result.statistic == pytest.approx(expected, rel=1e-8)
        if model == "linear":
            assert result.statistic == pytest.approx(fit.f_statistic_, rel=1e-12)
        results.append(result.statistic)
    assert results[1] == pytest.approx(results[0], rel=1e-8)


def test_a_name_two_parameters_share_is_refused_in_restrictions() -> None:
    """A feature named "intercept" beside the fitted intercept: "intercept = 0" tested
    whichever came first, silently. Now an error naming the clash; a matrix still works."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(50, 2)), columns=["intercept", "x"])
    y = X["x"] + rng.normal(size=50)
    model = LinearRegression().fit(X, y)
    with pytest.raises(ValueError, match="2 parameters are named 'intercept'"):
        model.wald_test("intercept = 0")
    by_matrix = model.wald_test([[0.0, 1.0, 0.0]])
    assert by_matrix.statistic == pytest.approx(
        (model.coef_[0] / np.sqrt(model.covariance_[1, 1])) ** 2, rel=1e-10)
    assert model.wald_test("x = 0").df == 1
