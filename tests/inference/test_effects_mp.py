"""slopes and comparisons of formula models equal 50-digit references (tests/inference/
_effects_mp.py: the design written out by hand in mpmath, central differences of step
1e-15 at 50 digits, delta-method errors from a 50-digit gradient and the model's
covariance) to 1e-7, for logistic, probit, softmax and linear models through
interactions, ``np.log`` transforms, powers and categorical terms."""
import mpmath as mp
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from problin import Formula, LinearRegression, LogisticRegression, ProbitRegression

from tests.inference._effects_mp import MpModel, comparison, estimate_and_se, slope

RTOL = 1e-7
LEVELS = ("a", "b", "c")


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 40
    frame = pd.DataFrame({"x1": rng.gamma(2.0, 1.0, n), "x2": rng.normal(size=n),
                          "g": rng.choice(list(LEVELS), n)})
    eta = 0.5 * np.log(frame["x1"] + 1) - 0.6 * frame["x2"] + 0.4 * (frame["g"] == "b")
    frame["yb"] = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    frame["yk"] = (rng.random(n)[:, None] >
                   np.array([0.3, 0.65]) + 0.1 * eta.to_numpy()[:, None]).sum(axis=1)
    frame["t"] = frame["x1"] + 0.3 * frame["x1"] ** 2 - frame["x2"] + rng.normal(size=n)
    return frame


def _is(level: str):
    return lambda r: mp.mpf(1 if r["g"] == level else 0)


# each design column of the formulas below, by hand
COLUMNS = {
    "x1": lambda r: r["x1"],
    "x2": lambda r: r["x2"],
    "np.log(x1 + 1)": lambda r: mp.log(r["x1"] + 1),
    "I(x1 ** 2)": lambda r: r["x1"] ** 2,
    "x1:x2": lambda r: r["x1"] * r["x2"],
    "np.log(x1 + 1):x2": lambda r: mp.log(r["x1"] + 1) * r["x2"],
    "C(g)[T.b]": _is("b"),
    "C(g)[T.c]": _is("c"),
    "x2:C(g)[T.b]": lambda r: r["x2"] * _is("b")(r),
    "x2:C(g)[T.c]": lambda r: r["x2"] * _is("c")(r),
}

CASES = {
    "logistic": ("yb ~ np.log(x1 + 1)*x2 + C(g)", LogisticRegression, "logit"),
    "probit": ("yb ~ np.log(x1 + 1) + x2*C(g)", ProbitRegression, "probit"),
    "softmax": ("yk ~ x1*x2 + C(g)", LogisticRegression, "softmax"),
    "linear": ("t ~ x1 + I(x1**2) + np.log(x1 + 1):x2 + C(g)", LinearRegression,
               "identity"),
}


def _reference(model: Formula, data: pd.DataFrame, mean: str
               ) -> tuple[MpModel, np.ndarray, list[dict]]:
    """The hand-written model of a fitted formula: its columns in the fitted order (the
    design by hand equals the formula's to rounding), its parameters, its rows."""
    names = list(model.transform(data).columns)
    by_hand = [COLUMNS[n] for n in names]
    rows = [{"x1": mp.mpf(float(a)), "x2": mp.mpf(float(b)), "g": g}
            for a, b, g in zip(data["x1"], data["x2"], data["g"])]
    X = np.array([[float(c(r)) for c in by_hand] for r in rows])
    np.testing.assert_allclose(X, model.transform(data).to_numpy(), rtol=1e-13)
    est = model.estimator_
    coef = np.atleast_2d(est.coef_)
    intercept = np.atleast_1d(est.intercept_)
    blocks = range(1, coef.shape[0]) if mean == "softmax" else range(coef.shape[0])
    theta = np.concatenate([np.r_[intercept[k], coef[k]] for k in blocks])
    return MpModel(by_hand, mean, len(blocks)), theta, rows


def _check(table: pd.DataFrame, key: tuple, reference: tuple[np.ndarray, np.ndarray],
           softmax: bool) -> None:
    rows = table.xs(key, level=("term", "contrast")) if softmax else table.loc[[key]]
    np.testing.assert_allclose(rows["estimate"], reference[0], rtol=RTOL)
    np.testing.assert_allclose(rows["std_err"], reference[1], rtol=RTOL)


@pytest.mark.parametrize("case", sorted(CASES))
def test_slopes_and_comparisons_equal_50_digit_references(data, case):
    formula, estimator, mean = CASES[case]
    model = Formula(formula, estimator()).fit(data)
    mp_model, theta, rows = _reference(model, data, mean)
    V = model.covariance_
    softmax = mean == "softmax"
    slopes, changes = model.slopes(data), model.comparisons(data, levels="pairwise")
    for name in ("x1", "x2"):
        _check(slopes, (name, "dY/dX"),
               estimate_and_se(slope(mp_model, rows, name), theta, V), softmax)
        hi, lo = (lambda v: v + mp.mpf(0.5)), (lambda v: v - mp.mpf(0.5))
        _check(changes, (name, "+1"),
               estimate_and_se(comparison(mp_model, rows, name, hi, lo), theta, V), softmax)
    for b, a in (("b", "a"), ("c", "a"), ("c", "b")):
        effect = comparison(mp_model, rows, "g", lambda v, b=b: b, lambda v, a=a: a)
        reference = estimate_and_se(effect, theta, V)
        _check(changes, ("g", f"{b} - {a}"), reference, softmax)
        if a == "a":  # (a slope of a categorical variable is its reference contrast)
            _check(slopes, ("g", f"{b} - {a}"), reference, softmax)
    if case == "linear":  # (least squares: t tests on the residual degrees of freedom)
        np.testing.assert_allclose(slopes["p_value"], 2 * stats.t.sf(
            np.abs(slopes["estimate"] / slopes["std_err"]), model.df_resid_), rtol=1e-9)


def test_elasticities_through_a_log_transform_equal_50_digit_references(data):
    """Stata's eyex/dyex/eydx of one row averaged (statsmodels' get_margeff(method=)),
    of x1 entering np.log(x1 + 1) and its interaction with x2."""
    formula, estimator, mean = CASES["logistic"]
    model = Formula(formula, estimator()).fit(data)
    mp_model, theta, rows = _reference(model, data, mean)
    for kind, label in (("eyex", "eY/eX"), ("dyex", "dY/eX"), ("eydx", "eY/dX")):
        table = model.slopes(data, "x1", slope=kind)
        reference = estimate_and_se(slope(mp_model, rows, "x1", kind), theta,
                                    model.covariance_)
        _check(table, ("x1", label), reference, False)
