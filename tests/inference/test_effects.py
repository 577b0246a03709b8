"""slopes, comparisons and predictions against independent references: closed forms of the
derivative through a formula's interaction, Richardson-extrapolated differences of the
model's own predictions, numeric Jacobians of the closed forms for the delta method, and
statsmodels' get_margeff (Logit, MNLogit, Poisson) on formula-free fits. (Formula models
of every family against 50-digit references: test_effects_mp.py.)"""
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats
from scipy.special import expit

from problin import Formula, LinearRegression, LogisticRegression, PoissonRegression

FORMULA = "aff ~ C(rate_marriage) + age*children + yrs_married"


@pytest.fixture(scope="module")
def fair() -> tuple[pd.DataFrame, Formula]:
    data = sm.datasets.fair.load_pandas().data.iloc[::16].reset_index(drop=True)
    data["aff"] = (data["affairs"] > 0).astype(float)
    return data, Formula(FORMULA, LogisticRegression()).fit(data)


def _theta(model: Formula) -> np.ndarray:
    est = model.estimator_
    return np.concatenate([np.atleast_1d(est.intercept_), est.coef_.ravel()])


def _age_slope(theta: np.ndarray, X: pd.DataFrame) -> float:
    """The average of d p / d age = p (1 - p) (w_age + w_age:children children), closed form."""
    names = list(X.columns)
    p = expit(theta[0] + X.to_numpy() @ theta[1:])
    w = theta[1 + names.index("age")] + theta[1 + names.index("age:children")] * X["children"]
    return float(np.mean(p * (1 - p) * w))


def _delta_se(func, theta: np.ndarray, cov: np.ndarray, h: float = 1e-5) -> float:
    """The delta method's standard error with a central-difference Jacobian of ``func``."""
    J = np.array([(func(theta + h * e) - func(theta - h * e)) / (2 * h)
                  for e in np.eye(theta.size)])
    return float(np.sqrt(J @ cov @ J))


def test_formula_slope_goes_through_the_interaction(fair):
    data, model = fair
    table = model.slopes(data, "age")
    row = table.loc[("age", "dY/dX")]
    X = model.transform(data)
    theta = _theta(model)
    assert row["estimate"] == pytest.approx(_age_slope(theta, X), rel=1e-7)
    # Richardson extrapolation of the model's own average probability, age shifted
    def average(t: float) -> float:
        return float(model.predict_proba(data.assign(age=data["age"] + t))[:, 1].mean())
    d = [(average(h) - average(-h)) / (2 * h) for h in (0.4, 0.2)]
    assert row["estimate"] == pytest.approx((4 * d[1] - d[0]) / 3, rel=1e-7)
    se = _delta_se(lambda th: _age_slope(th, X), theta, model.covariance_)
    assert row["std_err"] == pytest.approx(se, rel=1e-6)
    assert row["z"] == pytest.approx(row["estimate"] / se, rel=1e-6)
    # the per-column effect (statsmodels' get_margeff) misses the interaction's part
    assert abs(model.marginal_effects(data).loc["age", "dy/dx"] - row["estimate"]) > 1e-3


def test_formula_categorical_gets_discrete_changes(fair):
    data, model = fair
    table = model.slopes(data, "rate_marriage")
    theta, cov = _theta(model), model.covariance_

    designs = {level: model.transform(data.assign(rate_marriage=level)).to_numpy()
               for level in (1.0, 2.0, 3.0, 4.0, 5.0)}

    def average(level: float, th: np.ndarray) -> float:
        return float(expit(th[0] + designs[level] @ th[1:]).mean())

    for level in (2.0, 3.0, 4.0, 5.0):
        row = table.loc[("rate_marriage", f"{level} - 1.0")]
        by_hand = average(level, theta) - average(1.0, theta)
        assert row["estimate"] == pytest.approx(by_hand, rel=1e-10)
        se = _delta_se(lambda th: average(level, th) - average(1.0, th), theta, cov)
        assert row["std_err"] == pytest.approx(se, rel=1e-6)
    pairwise = model.comparisons(data, "rate_marriage", levels="pairwise")
    assert len(pairwise) == 10
    assert pairwise.loc[("rate_marriage", "5.0 - 4.0"), "estimate"] == pytest.approx(
        average(5.0, theta) - average(4.0, theta), rel=1e-10)
    # (4 - 1) - (2 - 1) is the pairwise 4 - 2: the same value and standard error
    test = model.slopes(data, "rate_marriage", hypothesis="b3 - b1 = 0")
    np.testing.assert_allclose(
        test.iloc[0][["estimate", "std_err"]].to_numpy(dtype=float),
        pairwise.loc[("rate_marriage", "4.0 - 2.0"), ["estimate", "std_err"]].to_numpy(
            dtype=float), rtol=1e-9)
    assert len(model.slopes(data, "rate_marriage", hypothesis="pairwise")) == 6
    ratio = model.comparisons(data, "rate_marriage", comparison="ratio")
    assert ratio.loc[("rate_marriage", "5.0 / 1.0"), "estimate"] == pytest.approx(
        average(5.0, theta) / average(1.0, theta), rel=1e-10)


def test_predictions_by_group_and_at_grid(fair):
    data, model = fair
    p = model.predict_proba(data)[:, 1]
    table = model.predictions(data, by="rate_marriage")
    by_hand = pd.Series(p).groupby(data["rate_marriage"]).mean()
    np.testing.assert_allclose(table["estimate"].to_numpy(), by_hand.to_numpy(), rtol=1e-12)
    # one row per grid point: the prediction and its delta-method error are predict_interval's
    grid = model.predictions(data, at={"age": [22.0, 37.0], "children": [0.0, 3.0]})
    rows = pd.DataFrame({"age": [22.0, 22.0, 37.0, 37.0], "children": [0.0, 3.0, 0.0, 3.0],
                         "rate_marriage": data["rate_marriage"].mode()[0],
                         "yrs_married": data["yrs_married"].mean()})
    interval = model.predict_interval(rows)
    np.testing.assert_allclose(grid["estimate"].to_numpy(), interval["mean"], rtol=1e-12)
    np.testing.assert_allclose(grid["std_err"].to_numpy(), interval["std_err"], rtol=1e-9)


@pytest.fixture(scope="module")
def spector() -> tuple[np.ndarray, np.ndarray]:
    data = sm.datasets.spector.load_pandas()
    return data.exog.to_numpy(), data.endog.to_numpy()


@pytest.mark.parametrize("at", [None, "mean"])
def test_plain_logit_slopes_equal_statsmodels_margeff(spector, at):
    X, y = spector
    est = LogisticRegression().fit(X, y)
    table = est.slopes(X, at=at)
    margeff = sm.Logit(y, sm.add_constant(X)).fit(disp=0).get_margeff(
        at="overall" if at is None else at)
    np.testing.assert_allclose(table["estimate"], margeff.margeff, rtol=1e-6)
    np.testing.assert_allclose(table["std_err"], margeff.margeff_se, rtol=1e-6)
    assert list(table.index.get_level_values("term")) == ["x0", "x1", "x2"]


@pytest.mark.parametrize("at", [None, "mean"])
def test_plain_logit_elasticities_equal_statsmodels(spector, at):
    X, y = spector
    est = LogisticRegression().fit(X, y)
    fit = sm.Logit(y, sm.add_constant(X)).fit(disp=0)
    for method in ("eyex", "dyex", "eydx"):
        table = est.slopes(X, slope=method, at=at)
        margeff = fit.get_margeff(at="overall" if at is None else at, method=method)
        np.testing.assert_allclose(table["estimate"], margeff.margeff, rtol=1e-6)
        np.testing.assert_allclose(table["std_err"], margeff.margeff_se, rtol=1e-6)


def _three_classes() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(240, 2))
    eta = np.column_stack([np.zeros(240), 0.5 + X @ [1.0, -0.5], -0.3 + X @ [-0.7, 0.9]])
    y = (rng.random(240)[:, None] > np.cumsum(np.exp(eta) / np.exp(eta).sum(1, keepdims=True),
                                              axis=1)).sum(axis=1)
    return X, y


def test_softmax_predict_interval_equals_mnlogit_delta_method():
    """Each class's probability, its delta-method standard error (statsmodels' delta
    method over MNLogit.predict, complex-step Jacobian) and the interval formed on its
    log-odds; a row far out keeps finite intervals inside [0, 1]."""
    from statsmodels.stats._delta_method import NonlinearDeltaCov
    X, y = _three_classes()
    est = LogisticRegression().fit(X, y)
    rows = np.vstack([X[:5], [[40.0, -30.0]]])
    table = est.predict_interval(pd.DataFrame(rows, index=list("abcdef")), level=0.9)
    assert table.index.names == ["row", "class"] and table.index[3] == ("b", 0)
    res = sm.MNLogit(y, sm.add_constant(X)).fit(disp=0)
    exog = sm.add_constant(rows[:5])
    shape = res.params.shape

    def predict(params: np.ndarray) -> np.ndarray:
        return res.model.predict(params.reshape(shape, order="F"), exog=exog).ravel()

    delta = NonlinearDeltaCov(predict, res.params.ravel(order="F"), res.cov_params())
    p, se = predict(res.params.ravel(order="F")), delta.se_vectorized()
    near = table.iloc[:15]
    np.testing.assert_allclose(near["mean"], p, rtol=1e-6)
    np.testing.assert_allclose(near["std_err"], se, rtol=1e-6)
    q = stats.norm.isf(0.05)
    logit, half = np.log(p / (1 - p)), q * se / (p * (1 - p))
    np.testing.assert_allclose(near["ci_low"], expit(logit - half), rtol=1e-6)
    np.testing.assert_allclose(near["ci_high"], expit(logit + half), rtol=1e-6)
    far = table.iloc[15:].to_numpy()
    assert np.all(np.isfinite(far)) and np.all((far >= 0) & (far <= 1))
    assert np.all(far[:, 2] <= far[:, 0]) and np.all(far[:, 0] <= far[:, 3])


def test_softmax_slopes_per_class_equal_mnlogit():
    X, y = _three_classes()
    est = LogisticRegression().fit(X, y)
    table = est.slopes(X)
    margeff = sm.MNLogit(y, sm.add_constant(X)).fit(disp=0).get_margeff()
    for k in range(3):
        np.testing.assert_allclose(table.loc[k, "estimate"], margeff.margeff[:, k], rtol=1e-6)
        np.testing.assert_allclose(table.loc[k, "std_err"], margeff.margeff_se[:, k],
                                   rtol=1e-6)
    preds = est.predictions(X)
    np.testing.assert_allclose(preds["estimate"], est.predict_proba(X).mean(axis=0),
                               rtol=1e-12)


def test_poisson_slopes_equal_statsmodels_and_ols_slopes_are_coefficients():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 2))
    y = rng.poisson(np.exp(0.3 + X @ [0.4, -0.2]))
    table = PoissonRegression().fit(X, y).slopes(X)
    margeff = sm.Poisson(y, sm.add_constant(X)).fit(disp=0).get_margeff()
    np.testing.assert_allclose(table["estimate"], margeff.margeff, rtol=1e-6)
    np.testing.assert_allclose(table["std_err"], margeff.margeff_se, rtol=1e-5)
    t = y + X @ [1.0, 2.0]
    ols = LinearRegression(cov_type="HC1").fit(X, t)
    slopes = ols.slopes(X)
    summary = ols.summary().iloc[1:]
    np.testing.assert_allclose(slopes["estimate"], summary["coef"], rtol=1e-8)
    np.testing.assert_allclose(slopes["std_err"], summary["std_err"], rtol=1e-8)
    np.testing.assert_allclose(slopes["p_value"], summary["p_value"], rtol=1e-6)
    assert "t" in slopes.columns


def test_bad_arguments_are_clear_errors(fair):
    data, model = fair
    with pytest.raises(ValueError, match="not variables of the model"):
        model.slopes(data, "agee")
    with pytest.raises(ValueError, match="type must be"):
        model.predictions(data, type="probability")
    with pytest.raises(ValueError, match="change must be"):
        model.comparisons(data, "age", change=0)
    with pytest.raises(ValueError, match="at must be"):
        model.slopes(data, at="mode")
    with pytest.raises(ValueError, match="names b9"):
        model.slopes(data, hypothesis="b9 - b1")
    with pytest.raises(ValueError, match="not a linear equation"):
        model.slopes(data, hypothesis="b1 * b2")


def test_formula_poisson_equals_stata_margins_with_a_factor():
    """Stata's ``poisson ... i.south ...; margins, dydx(*)`` (statsmodels' shipped
    results): slopes of the continuous variables, the discrete change of the factor."""
    from statsmodels.discrete.tests.results import results_count_margins as stata
    from statsmodels.datasets import cpunish

    raw = cpunish.load_pandas()
    exog = np.asarray(raw.exog, dtype=float).copy()
    exog[:, 3] = np.log(exog[:, 3])
    exog /= np.round(np.abs(exog).max(0), 3)
    names = ["sincome", "sperpoverty", "sperblack", "LN_VC100k96", "south", "sdegree"]
    data = pd.DataFrame(exog, columns=names).assign(y=np.asarray(raw.endog) - 1)
    model = Formula("y ~ sincome + sperpoverty + sperblack + LN_VC100k96 + C(south) + "
                    "sdegree", PoissonRegression(tol=1e-12)).fit(data)
    table = model.slopes(data)
    ref = stata.results_poisson_margins_dummy
    rows = dict(zip(ref.margins_table_rownames, ref.margins_table, strict=True))
    # statsmodels' get_margeff(dummy=True) on a fit converged to rounding
    tight = sm.Poisson(data["y"], sm.add_constant(data[names])).fit(disp=0, tol=1e-14,
                                                                    maxiter=200)
    margeff = tight.get_margeff(dummy=True)
    for j, name in enumerate(names):
        key = (name, "1.0 - 0.0") if name == "south" else (name, "dY/dX")
        b, se = rows["1.south" if name == "south" else name][:2]
        # (Stata's own fit is converged to ~3e-6 in LN_VC100k96's effect: statsmodels'
        # test of these numbers allows 1e-5; the converged reference is checked below)
        assert table.loc[key, "estimate"] == pytest.approx(b, rel=1e-5)
        assert table.loc[key, "std_err"] == pytest.approx(se, rel=1e-6)
        assert table.loc[key, "estimate"] == pytest.approx(margeff.margeff[j], rel=1e-7)
        assert table.loc[key, "std_err"] == pytest.approx(margeff.margeff_se[j], rel=1e-6)


@pytest.fixture(scope="module")
def synthetic() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    n = 300
    frame = pd.DataFrame({"x1": rng.gamma(2.0, 1.0, n), "x2": rng.normal(size=n),
                          "g": rng.choice(["a", "b", "c"], n)})
    eta = 0.3 * np.log(frame["x1"] + 1) - 0.5 * frame["x2"] + (frame["g"] == "b") * 0.4
    frame["yb"] = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    frame["yk"] = rng.choice([0, 1, 2], n) + (eta > 0.5)
    frame["yk"] = frame["yk"].clip(0, 2)
    frame["t"] = frame["x1"] + 0.3 * frame["x1"] ** 2 - frame["x2"] + rng.normal(size=n)
    return frame


def test_plain_estimator_on_a_frame_with_a_text_column(synthetic):
    frame = synthetic[["x1", "x2", "g"]]
    est = LogisticRegression().fit(frame, synthetic["yb"])
    table = est.comparisons(frame, change="sd")
    for level in ("b", "c"):
        by_hand = (est.predict_proba(frame.assign(g=level))[:, 1].mean() -
                   est.predict_proba(frame.assign(g="a"))[:, 1].mean())
        assert table.loc[("g", f"{level} - a"), "estimate"] == pytest.approx(by_hand,
                                                                          rel=1e-10)
    sd = frame["x2"].std()
    by_hand = (est.predict_proba(frame.assign(x2=frame["x2"] + sd / 2))[:, 1].mean() -
               est.predict_proba(frame.assign(x2=frame["x2"] - sd / 2))[:, 1].mean())
    assert table.loc[("x2", "+sd"), "estimate"] == pytest.approx(by_hand, rel=1e-9)
    forward = est.comparisons(frame, "x2", direction="forward", comparison="ratio")
    by_hand = (est.predict_proba(frame.assign(x2=frame["x2"] + 1))[:, 1].mean() /
               est.predict_proba(frame)[:, 1].mean())
    assert forward.loc[("x2", "x+1 / x"), "estimate"] == pytest.approx(by_hand, rel=1e-12)
    with pytest.raises(ValueError, match="direction must be"):
        est.comparisons(frame, "x2", direction="backward")
