"""Separated ordered categories, certified by the linear program of
``_core/model/separation_ordinal.py``: quasi-complete separation that the fitted
probabilities alone do not show (tied rows on a boundary; a level seen in the lowest
class only), with the rows and cut-points worked out by hand, and overlapping data left
alone."""
import warnings

import numpy as np
import pytest

from problin import OrdinalRegression, SeparationWarning
from problin._core.model.separation_ordinal import ordinal_separation


def test_tied_rows_at_a_boundary():
    """x orders the classes, but a class-0 and a class-1 row tie at x = 0: every
    direction d_beta > 0 (d_theta_0 = 0, d_theta_1 = d_beta) moves all rows but the two
    tied ones, which stay at probability 1/2 between them: both cut-points are named, the
    tied rows are not."""
    x = np.r_[np.linspace(-2, 0, 8), np.linspace(0, 1, 6), np.linspace(1.5, 3, 6)]
    y = np.r_[np.zeros(8), np.ones(6), np.full(6, 2)].astype(int)
    rows, cuts = ordinal_separation(x[:, None], y, 3)
    assert cuts.tolist() == [True, True]
    assert np.flatnonzero(~rows).tolist() == [7, 8]  # the tie at x = 0
    with pytest.warns(SeparationWarning, match=r"cut-point\(s\) 0\|1, 1\|2 \(18 row"):
        OrdinalRegression().fit(x[:, None], y)


def test_level_seen_in_the_lowest_class_only():
    """A dummy that is 1 on five rows of class 0 only: d_beta_z -> -inf sends those rows
    to class 0 and moves no other row (quasi-complete separation at 0|1, the other
    column overlapping): the warning names 0|1 and exactly those rows; zero weights
    drop rows from the check."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=90)
    y = np.digitize(x + rng.logistic(size=90), [-0.8, 0.8])
    z = np.zeros(90)
    marked = np.flatnonzero(y == 0)[:5]
    z[marked] = 1.0
    X = np.column_stack([x, z])
    rows, cuts = ordinal_separation(X, y, 3)
    assert cuts.tolist() == [True, False]
    assert np.flatnonzero(rows).tolist() == marked.tolist()
    with pytest.warns(SeparationWarning, match=r"0\|1 \(5 row\(s\) .*: 0, 2, 3, 5, 14\)"):
        OrdinalRegression().fit(X, y)
    weights = np.ones(90)
    weights[marked] = 0.0
    assert not ordinal_separation(X, y, 3, weights)[0].any()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        OrdinalRegression().fit(x[:, None], y)  # overlapping: no warning
