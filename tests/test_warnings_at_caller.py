"""problin's warnings name the user's line, however deep in problin they arise (the fit
wrappers of ``_state``, a ``Formula``, the solvers' diagnostics): a fixed ``stacklevel``
named ``problin/_state.py`` for every plain estimator's fit."""
import warnings

import numpy as np
import pytest

import problin
from problin.exceptions import (CollinearityWarning, ConvergenceWarning, SeparationWarning,
                                SingularCovarianceWarning)

_X_SEP = np.array([[0.0], [1.0], [2.0], [3.0]])
_RNG = np.random.default_rng(0)
_X = _RNG.normal(size=(40, 2))
_X_COLLINEAR = np.column_stack([_X, _X[:, 0] + _X[:, 1]])
_Y = _X @ np.array([1.0, -1.0]) + _RNG.normal(size=40)
_COUNTS = _RNG.poisson(np.exp(0.3 + _X @ np.array([0.5, -0.2]))).astype(float)

CASES = {
    "separation": (lambda: problin.LogisticRegression().fit(_X_SEP, [0, 0, 1, 1]),
                   SeparationWarning),
    "collinear-ols": (lambda: problin.LinearRegression().fit(_X_COLLINEAR, _Y),
                      CollinearityWarning),
    "no-convergence": (lambda: problin.PoissonRegression(max_iter=1).fit(_X, _COUNTS),
                       ConvergenceWarning),
    "singular-qda": (lambda: problin.QuadraticDiscriminantAnalysis().fit(
        _X_COLLINEAR, (_Y > 0).astype(int)), SingularCovarianceWarning),
}


@pytest.mark.parametrize("case", CASES)
def test_a_fits_warning_names_the_callers_line(case):
    fit, category = CASES[case]
    with pytest.warns(category) as caught:
        fit()
    ours = [w for w in caught if issubclass(w.category, category)]
    assert ours and all(w.filename == __file__ for w in ours), [w.filename for w in ours]


def test_an_error_filter_still_stops_the_fit_and_leaves_the_model_unchanged():
    model = problin.LogisticRegression()
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeparationWarning)
        with pytest.raises(SeparationWarning):
            model.fit(_X_SEP, [0, 0, 1, 1])
    assert not hasattr(model, "coef_")
