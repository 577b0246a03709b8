"""at= grids given as DataFrames, and by= over a grid's rows, against hand computations:
the logistic probability at each grid row (variables the grid does not set at their means
or modes) with its closed-form delta-method error ``p (1 - p) sqrt(x~ V x~)``, and the
average over a grid's rows of the closed-form slope through an interaction."""
import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy.special import expit

from problin import Formula, LogisticRegression


@pytest.fixture(scope="module")
def fair() -> tuple[pd.DataFrame, Formula]:
    data = sm.datasets.fair.load_pandas().data.iloc[::16].reset_index(drop=True)
    data["aff"] = (data["affairs"] > 0).astype(float)
    model = Formula("aff ~ C(rate_marriage) + age*children + yrs_married",
                    LogisticRegression()).fit(data)
    return data, model


def _grid_rows(data: pd.DataFrame, setting: dict) -> pd.DataFrame:
    """The grid's rows by hand: yrs_married at its mean, rate_marriage at its mode."""
    base = {"rate_marriage": data["rate_marriage"].mode().iloc[0],
            "age": data["age"].mean(), "children": data["children"].mean(),
            "yrs_married": data["yrs_married"].mean()}
    return pd.DataFrame([dict(base, **dict(zip(setting, v))) for v in zip(*setting.values())])


def test_dataframe_grid_predictions(fair):
    data, model = fair
    grid = pd.DataFrame({"age": [22.0, 37.0, 27.0], "children": [0.0, 3.0, 0.0]})
    table = model.predictions(data, at=grid)
    assert table.index.names == ["age", "children"]
    assert list(table.index) == [(22.0, 0.0), (37.0, 3.0), (27.0, 0.0)]  # rows as given
    X = model.transform(_grid_rows(data, grid.to_dict("list"))).to_numpy()
    Xt = np.column_stack([np.ones(len(X)), X])
    theta = np.concatenate([[model.estimator_.intercept_[0]], model.estimator_.coef_.ravel()])
    p = expit(Xt @ theta)
    np.testing.assert_allclose(table["estimate"], p, rtol=1e-12)
    se = p * (1 - p) * np.sqrt(np.einsum("ij,jk,ik->i", Xt, model.covariance_, Xt))
    np.testing.assert_allclose(table["std_err"], se, rtol=1e-9)
    # the same rows as a dict grid (every combination) where they coincide
    single = model.predictions(data, at={"age": [22.0], "children": [0.0]})
    assert single["estimate"].iloc[0] == pytest.approx(p[0], rel=1e-12)
    with pytest.raises(ValueError, match="not variables of the model"):
        model.predictions(data, at=pd.DataFrame({"agee": [30.0]}))


def test_by_over_a_grid_averages_its_rows(fair):
    data, model = fair
    ages, kids = [20.0, 30.0, 40.0], [0.0, 2.0]
    table = model.slopes(data, "age", at={"age": ages, "children": kids}, by="children")
    assert list(table.index) == [(0.0, "age", "dY/dX"), (2.0, "age", "dY/dX")]
    names = list(model.transform(data).columns)
    V = model.covariance_

    designs = {c: model.transform(_grid_rows(data, {"age": ages, "children": [c] * 3}))
               .to_numpy() for c in kids}

    def slope(theta: np.ndarray, children: float) -> float:
        X = designs[children]
        p = expit(theta[0] + X @ theta[1:])
        w = theta[1 + names.index("age")] + theta[1 + names.index("age:children")] * children
        return float(np.mean(p * (1 - p) * w))

    theta = np.concatenate([[model.estimator_.intercept_[0]], model.estimator_.coef_.ravel()])
    for children in kids:
        row = table.loc[(children, "age", "dY/dX")]
        assert row["estimate"] == pytest.approx(slope(theta, children), rel=1e-7)
        h = 1e-5
        J = np.array([(slope(theta + h * e, children) - slope(theta - h * e, children))
                      / (2 * h) for e in np.eye(theta.size)])
        assert row["std_err"] == pytest.approx(np.sqrt(J @ V @ J), rel=1e-5)
