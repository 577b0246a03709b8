"""Ill-posed data: a usable, finite model and a clear warning, never a hang or a nan."""
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose

from problin import (
    CollinearityWarning,
    LogisticRegression,
    ProbitRegression,
    ProblinWarning,
    SeparationWarning,
)

MODELS = [LogisticRegression, ProbitRegression]
RNG = np.random.default_rng(0)
X_SEP = RNG.normal(size=(200, 2))
Y_SEP = (X_SEP[:, 0] > 0).astype(int)


def _quasi_separated():
    """Separated except for 20 overlapping rows on the boundary x0 = 0."""
    rng = np.random.default_rng(1)
    X = np.vstack([X_SEP, np.column_stack([np.zeros(20), rng.normal(size=20)])])
    y = np.concatenate([Y_SEP, np.arange(20) % 2])
    return X, y


def _fit_recording(model, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fitted = model.fit(X, y)
    return fitted, [w for w in caught if issubclass(w.category, ProblinWarning)]


@pytest.mark.parametrize("model", MODELS)
def test_complete_separation_warns_and_stops_finite(model):
    fitted, caught = _fit_recording(model(), X_SEP, Y_SEP)
    assert [w.category for w in caught] == [SeparationWarning]
    message = str(caught[0].message)
    assert "completely separated" in message and "alpha > 0" in message
    assert np.all(np.isfinite(fitted.coef_)) and np.isfinite(fitted.intercept_).all()
    assert fitted.n_iter_ < 100  # the iteration stopped by itself
    assert fitted.separated_.all()
    assert np.array_equal(fitted.predict(X_SEP), Y_SEP)
    assert np.all(np.isfinite(fitted.predict_log_proba(X_SEP)))


@pytest.mark.parametrize("model", MODELS)
def test_refit_without_separation_drops_the_separated_rows(model):
    fitted, _ = _fit_recording(model(), X_SEP, Y_SEP)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] + rng.normal(size=200) > 0).astype(int)
    fitted, caught = _fit_recording(fitted, X, y)
    assert caught == [] and not hasattr(fitted, "separated_")


@pytest.mark.parametrize("model", MODELS)
def test_quasi_separation_names_the_separated_rows(model):
    X, y = _quasi_separated()
    fitted, caught = _fit_recording(model(), X, y)
    assert [w.category for w in caught] == [SeparationWarning]
    assert "quasi-completely separated: 200 of 220" in str(caught[0].message)
    assert fitted.separated_[:200].all() and not fitted.separated_[200:].any()
    assert np.all(np.isfinite(fitted.summary()[["coef", "std_err"]].to_numpy()))


@pytest.mark.parametrize("model", MODELS)
def test_more_features_than_rows_is_separation(model):
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(10, 30)), np.arange(10) % 2
    fitted, caught = _fit_recording(model(), X, y)
    assert SeparationWarning in [w.category for w in caught]
    assert np.all(np.isfinite(fitted.coef_))


@pytest.mark.parametrize("model", MODELS)
def test_collinear_and_constant_columns_are_marked(model):
    rng = np.random.default_rng(3)
    x0, x3 = rng.normal(size=300), rng.normal(size=300)
    y = (rng.random(300) < 1 / (1 + np.exp(-x0))).astype(int)
    X = np.column_stack([x0, 2 * x0, np.full(300, 5.0), x3])
    fitted, caught = _fit_recording(model(), X, y)
    assert [w.category for w in caught] == [CollinearityWarning]
    assert "['x1', 'x2']" in str(caught[0].message)
    table = fitted.summary()
    assert list(table["note"]) == ["", "", "not identified (collinear)",
                                   "not identified (collinear)", ""]
    assert table.loc[["x1", "x2"], "std_err"].isna().all()
    # predictions and the identified standard errors equal the reduced model's
    reduced = model().fit(X[:, [0, 3]], y)
    assert_allclose(fitted.predict_proba(X), reduced.predict_proba(X[:, [0, 3]]),
                    rtol=1e-8, atol=1e-14)
    assert_allclose(table.loc[["intercept", "x3"], "std_err"],
                    reduced.summary().loc[["intercept", "x1"], "std_err"], rtol=1e-6)


@pytest.mark.parametrize("model", MODELS)
def test_alpha_fits_ill_posed_data_without_warnings(model):
    X = np.column_stack([X_SEP, X_SEP[:, 0]])
    fitted, caught = _fit_recording(model(alpha=1.0), X, Y_SEP)
    assert caught == []
    assert fitted.converged_ and fitted.identified_.all()
    assert "note" not in fitted.summary().columns


def test_a_weak_prior_still_identifies_softmax_slopes_on_columns_far_from_zero():
    # alpha = 1 in raw units on columns at 1e6 +- 1e4 is ~1e-10 of the Hessian's
    # diagonal in the solver's basis: weak, but it identifies the common shift of the
    # K slope vectors that the data leave free (was: CollinearityWarning, NaN SEs).
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((500, 3))
    y = rng.integers(0, 3, 500)
    fitted, caught = _fit_recording(LogisticRegression(alpha=1.0), 1e6 + 1e4 * Z, y)
    assert caught == [] and fitted.identified_.all()
    se = np.sqrt(np.diag(fitted.covariance_)).reshape(3, 4)
    # Along the shift only the prior informs: variance 1 / (K alpha), plus the data's
    # (to the ~1e-6 that a Hessian conditioned at 1e10 leaves).
    assert np.all(np.isfinite(se)) and np.all(se[:, 1:] ** 2 > (1 / 3) * (1 - 1e-5))
    # The same model in standard units (prior precision alpha / 1e4^2) agrees.
    standard = LogisticRegression(alpha=1e-8).fit(Z, y)
    cov = fitted.covariance_.reshape(3, 4, 3, 4)[:, 1:, :, 1:].reshape(9, 9) * 1e8
    cov_z = standard.covariance_.reshape(3, 4, 3, 4)[:, 1:, :, 1:].reshape(9, 9)
    assert_allclose(cov, cov_z, rtol=0, atol=1e-5 * np.abs(cov_z).max())


def test_max_iter_exhaustion_warns_convergence():
    from problin import ConvergenceWarning
    X, y = _quasi_separated()
    rng = np.random.default_rng(4)
    X = rng.normal(size=(500, 3))
    y = (rng.random(500) < 0.5).astype(int)
    with pytest.warns(ConvergenceWarning, match="did not converge in 2 iterations"):
        fitted = LogisticRegression(solver="gradient", max_iter=2).fit(X, y)
    assert not fitted.converged_


def test_columns_too_small_to_square_are_refused():
    """The mirror of the 1e144 bound: a column whose values are all below 1e-144 in size
    makes 1 / scale^2, the coefficients' variances, overflow (logit and probit gave
    infinite standard errors with numpy warnings, the Bayesian fit a LinAlgError). A
    clear error naming the column; 1e-100 fits and scales exactly."""
    from problin import BayesianLogisticRegression, ProbitRegression
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] + rng.normal(size=60) > 0).astype(int)
    tiny = X.copy()
    tiny[:, 1] *= 1e-300
    for est in (LogisticRegression(), ProbitRegression(), BayesianLogisticRegression()):
        with pytest.raises(ValueError, match=r"column \[1\] of X holds only values too small"):
            est.fit(tiny, y)
    small = X * 2.0 ** -333
    z = LogisticRegression().fit(small, y).summary()["z"]
    np.testing.assert_allclose(z, LogisticRegression().fit(X, y).summary()["z"], rtol=1e-9)


@pytest.mark.parametrize("value", [1.0, 0.5, 3.0, -1.0, 0.999])
def test_a_constant_column_changes_nothing_under_a_prior(value):
    """A constant column duplicates the intercept: under a prior its coefficient is 0 and
    the others are those of the fit without it, for C and Fortran order alike. (The
    solving basis took it for a column of spread ~1e-16: the weighted mean of equal
    values rounds, and the fit collapsed to the intercept-only model for some values
    and memory layouts.)"""
    from problin import BayesianLogisticRegression, ProbitRegression
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.8, size=60) > 0).astype(int)
    Xc = np.c_[X, np.full(60, value)]
    for est in (LogisticRegression(alpha=1.0), ProbitRegression(alpha=0.1),
                BayesianLogisticRegression(alpha=1.0)):
        plain = est.fit(X, y).coef_.ravel().copy()
        for A in (np.ascontiguousarray(Xc), np.asfortranarray(Xc)):
            coef = est.fit(A, y).coef_.ravel()
            assert_allclose(coef[:2], plain, rtol=1e-8)
            assert abs(coef[2]) <= 1e-12


@pytest.mark.parametrize("case", ["logit", "probit", "softmax"])
def test_a_collinear_column_is_held_at_zero_as_r_does(case):
    """x3 = x0 + x1: x3 is not identified (the later column, as R's glm reports it), but
    its coefficient kept whatever value the solver left (2.8), so x0's and x1's were those
    of the fit conditional on that value (0.92 where the fit without x3 gives 1.07, with
    the same standard error). It is now held at 0, moved onto the columns it is a
    combination of: the others equal the fit without x3, the predictions are unchanged."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(400, 3))
    eta = X @ [1.0, 0.5, -1.0]
    y = (np.digitize(eta + rng.logistic(size=400), [-1.0, 1.0]) if case == "softmax"
         else (eta + rng.logistic(size=400) > 0).astype(int))
    X4 = np.column_stack([X, X[:, 0] + X[:, 1]])
    Model = ProbitRegression if case == "probit" else LogisticRegression
    with pytest.warns(CollinearityWarning, match="x3"):
        full = Model().fit(X4, y)
    plain = Model().fit(X, y)
    coef = np.atleast_2d(full.coef_)
    assert np.all(coef[:, 3] == 0.0)
    np.testing.assert_allclose(coef[:, :3], np.atleast_2d(plain.coef_), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(full.intercept_, plain.intercept_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(full.predict_proba(X4), plain.predict_proba(X), rtol=1e-7)
    kept = full.summary().drop(index=[i for i in full.summary().index
                                      if (i[-1] if isinstance(i, tuple) else i) == "x3"])
    np.testing.assert_allclose(kept[["coef", "std_err"]].to_numpy(),
                               plain.summary()[["coef", "std_err"]].to_numpy(), rtol=1e-6)
