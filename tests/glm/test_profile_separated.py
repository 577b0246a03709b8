"""Profile intervals of a maximum-likelihood fit on quasi-separated data (every carrier
of a marker had the event): the marker's lower bound is finite and lies where the
brute-force profile (scipy refits with the marker fixed) crosses the chi² cut-off; the
upper bound is inf, with the note. No step leaves the data's scale (the Wald start is
tens of thousands of standard errors out)."""

import warnings

import numpy as np
import pytest
from scipy import optimize
from scipy.stats import chi2

from problin import LogisticRegression, SeparationWarning


def test_ml_profile_of_a_separated_coefficient():
    rng = np.random.default_rng(7)
    age = rng.normal(size=80)
    marker = (rng.random(80) < 0.15).astype(float)
    y = (rng.random(80) < 1 / (1 + np.exp(2.5 - 0.8 * age))).astype(float)
    y[marker == 1] = 1.0
    X = np.column_stack([age, marker])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeparationWarning)
        model = LogisticRegression(alpha=0.0).fit(X, y)
    table = model.summary(ci="profile", X=X, y=y)
    low, high = table.loc["x1", ["ci_low", "ci_high"]]
    assert high == np.inf and "No bound found for x1" in table.attrs["ci_note"]
    Xc = np.c_[np.ones(80), X]

    def nll(b):
        e = Xc @ b
        return np.sum(np.logaddexp(0, e) - y * e)
    f_hat = nll(np.r_[model.intercept_, model.coef_.ravel()])
    at_low = optimize.minimize(lambda u: nll(np.r_[u, low]), np.zeros(2), method="BFGS",
                               options={"gtol": 1e-10}).fun
    assert 2 * (at_low - f_hat) == pytest.approx(chi2.ppf(0.95, 1), abs=1e-6)
