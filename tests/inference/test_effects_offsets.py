"""Offsets and exposures in slopes, comparisons and predictions: each row keeps its own (as
R's marginaleffects, where the exposure is a column of the data), against closed forms of a
Poisson model's average slope and its delta-method error; without them the effects are
statsmodels' get_margeff (which predicts without the exposure)."""
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy.special import expit

from problin import Formula, LogisticRegression, PoissonRegression


@pytest.fixture(scope="module")
def counts() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2))
    exposure = rng.uniform(0.5, 3.0, 300)
    y = rng.poisson(exposure * np.exp(0.2 + X @ [0.3, -0.2]))
    return X, y, exposure


def test_poisson_exposure_enters_every_prediction(counts):
    X, y, e = counts
    model = PoissonRegression(tol=1e-10).fit(X, y, exposure=e)
    theta = np.r_[model.intercept_, model.coef_]
    Xt = np.column_stack([np.ones(len(X)), X])
    mu = e * np.exp(Xt @ theta)
    table = model.slopes(X, exposure=e)
    # d mean(mu) w_j / d theta = mean(mu x~) w_j + mean(mu) e_j
    for j in range(2):
        J = (mu[:, None] * Xt).mean(axis=0) * theta[1 + j]
        J[1 + j] += mu.mean()
        row = table.iloc[j]
        assert row["estimate"] == pytest.approx(mu.mean() * theta[1 + j], rel=1e-12)
        assert row["std_err"] == pytest.approx(np.sqrt(J @ model.covariance_ @ J), rel=1e-10)
    # elasticities (weighted): log link, so d mu / d eta / mu = 1 and eyex_j = avg(x_j) w_j,
    # eydx_j = w_j, dyex_j = avg(mu x_j) w_j
    w = np.linspace(0.5, 2.0, len(X))
    se_w = np.sqrt(np.diag(model.covariance_))[1:]
    avg = lambda v: np.sum(w[:, None] * v, axis=0) / w.sum()  # noqa: E731
    for kind, closed, se in (("eyex", avg(X) * theta[1:], avg(X) * se_w),
                             ("eydx", theta[1:], se_w),
                             ("dyex", avg(mu[:, None] * X) * theta[1:], None)):
        found = model.slopes(X, slope=kind, exposure=e, sample_weight=w)
        np.testing.assert_allclose(found["estimate"], closed, rtol=1e-12)
        if se is not None:
            np.testing.assert_allclose(found["std_err"], np.abs(se), rtol=1e-10)
    # a change of x1 keeps each row's exposure
    change = model.comparisons(X, "x0", change=2.0, exposure=e)
    by_hand = (model.predict(X + [1.0, 0.0], exposure=e).mean()
               - model.predict(X - [1.0, 0.0], exposure=e).mean())
    assert change["estimate"].iloc[0] == pytest.approx(by_hand, rel=1e-12)
    # at a grid: the mean exposure (marginaleffects' datagrid holds it at its mean)
    at_mean = model.predictions(X, at="mean", exposure=e)["estimate"].iloc[0]
    assert at_mean == pytest.approx(e.mean() * np.exp(theta[0] + X.mean(0) @ theta[1:]),
                                    rel=1e-12)
    # without the exposure: exposure 1, statsmodels' get_margeff (which drops it)
    margeff = sm.Poisson(y, sm.add_constant(X), exposure=e).fit(disp=0, tol=1e-12)
    np.testing.assert_allclose(model.slopes(X)["estimate"], margeff.get_margeff().margeff,
                               rtol=1e-6)
    # a formula reads the exposure as a column of the data
    frame = pd.DataFrame(X, columns=["a", "b"]).assign(y=y, e=e)
    formula = Formula("y ~ a + b", PoissonRegression(tol=1e-10)).fit(frame, exposure="e")
    np.testing.assert_allclose(formula.slopes(frame, exposure="e")["estimate"],
                               table["estimate"], rtol=1e-9)
    with pytest.raises(ValueError, match="names no column"):
        formula.slopes(frame, exposure="exposure")


def test_binary_offset_and_refusals(counts):
    X, y, e = counts
    yb = (y > 1).astype(float)
    offset = np.log(e)
    model = LogisticRegression(tol=1e-10).fit(X, yb, offset=offset)
    p = expit(model.decision_function(X, offset=offset))
    predictions = model.predictions(X, offset=offset)
    assert predictions["estimate"].iloc[0] == pytest.approx(p.mean(), rel=1e-12)
    slope = model.slopes(X, "x1", offset=offset)["estimate"].iloc[0]
    assert slope == pytest.approx(np.mean(p * (1 - p)) * model.coef_.ravel()[1], rel=1e-12)
    with pytest.raises(ValueError, match="takes offset= only"):
        model.slopes(X, exposure=e)
    softmax = LogisticRegression().fit(X, np.minimum(y, 2))
    with pytest.raises(ValueError, match="takes no offset"):
        softmax.predictions(X, offset=offset)
    with pytest.raises(ValueError, match="one value per row"):
        model.slopes(X, offset=offset[:-1])
