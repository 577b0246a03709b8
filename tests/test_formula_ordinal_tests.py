"""A Formula's ordinal model runs the tests of proportional odds on its training data."""
import numpy as np
import pandas as pd

from problin import Formula, OrdinalRegression


def test_formula_brant_and_lr_tests_equal_the_estimators():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300)})
    frame["y"] = np.digitize(frame.a - 0.5 * frame.b + rng.logistic(size=300), [-1, 0, 1])
    model = Formula("y ~ a + b", OrdinalRegression()).fit(frame)
    X, y = model.transform(frame), frame["y"].to_numpy()
    ours, theirs = model.brant_test(frame), model.estimator_.brant_test(X, y)
    np.testing.assert_array_equal(ours.table.to_numpy(), theirs.table.to_numpy())
    ours = model.proportional_odds_lr_test(frame, variables=["a"])
    theirs = model.estimator_.proportional_odds_lr_test(X, y, variables=["a"])
    assert ours.test.statistic == theirs.test.statistic > 0
