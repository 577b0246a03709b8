"""LMSRegressor converges to least squares; the basis transformers compute phi (Bishop §3.1)."""
import warnings

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline

from problin import (
    BayesianLinearRegression,
    ConvergenceWarning,
    GaussianBasis,
    LinearRegression,
    LMSRegressor,
    LogisticRegression,
    PolynomialBasis,
    SigmoidalBasis,
)


def well_conditioned(n=800, d=3, k=None, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    W = rng.normal(size=(d,) if k is None else (d, k))
    return X, X @ W + 0.7 + 0.2 * rng.normal(size=(n,) if k is None else (n, k))


@pytest.mark.parametrize("k", [None, 2])
def test_lms_converges_to_least_squares(k):
    X, T = well_conditioned(k=k)
    lms = LMSRegressor(random_state=0, max_iter=100, tol=0).fit(X, T)
    ls = LinearRegression().fit(X, T)
    np.testing.assert_allclose(lms.coef_, ls.coef_, atol=2e-3)
    np.testing.assert_allclose(lms.intercept_, ls.intercept_, atol=2e-3)
    assert lms.n_iter_ == 100


def test_lms_is_deterministic_and_partial_fit_continues():
    X, t = well_conditioned(n=300)
    a = LMSRegressor(random_state=3, max_iter=5, tol=0).fit(X, t)
    b = LMSRegressor(random_state=3, max_iter=5, tol=0).fit(X, t)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    online = LMSRegressor(random_state=3)
    for _ in range(5):
        online.partial_fit(X, t)
    # Same schedule, same shuffles; each call re-standardises by the rows seen (here the
    # same rows repeated: the same means and deviations, merged, to rounding).
    np.testing.assert_allclose(online.coef_, a.coef_, rtol=1e-12)
    assert online.t_ == 5


def test_lms_without_shuffle_visits_rows_in_order():
    X, t = well_conditioned(n=3, d=2)
    model = LMSRegressor(shuffle=False, learning_rate="constant", fit_intercept=False,
                         eta0=0.5).partial_fit(X, t)
    # Without an intercept the columns are divided by their root mean square
    # (mean |z|^2 = 2); the weights come back in raw units.
    rms = np.sqrt(np.mean(X ** 2, axis=0))
    eta, v = 0.5 / 2, np.zeros(2)
    for z, tn in zip(X / rms, t):
        v = v + eta * (tn - v @ z) * z
    np.testing.assert_allclose(model.coef_, v / rms, rtol=1e-12)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_lms_runs_on_standardised_columns(fit_intercept):
    # The same epochs on data in other units (and, with an intercept, other
    # offsets) give the same fit in those units: coef_ / c, intercept_ - coef_ @ s.
    X, t = well_conditioned(n=200, d=3)
    c = np.array([1e-9, 1.0, 1e7])
    s = np.array([1e6, -3.0, 0.0]) if fit_intercept else np.zeros(3)
    a = LMSRegressor(random_state=4, max_iter=3, tol=0, fit_intercept=fit_intercept)
    b = LMSRegressor(random_state=4, max_iter=3, tol=0, fit_intercept=fit_intercept)
    with pytest.warns(ConvergenceWarning):
        a.fit(X, t)
    with pytest.warns(ConvergenceWarning):
        b.fit(c * (X + s), t)
    np.testing.assert_allclose(b.coef_ * c, a.coef_, rtol=1e-10)
    np.testing.assert_allclose(b.intercept_, a.intercept_ - a.coef_ @ s, rtol=1e-10,
                               atol=1e-10 * np.abs(a.coef_ * s).max())
    np.testing.assert_allclose(b.predict(c * (X + s)), a.predict(X), atol=1e-9)


def test_polynomial_basis_values_and_names():
    X = np.array([[2.0, -1.0]])
    basis = PolynomialBasis(degree=2, include_bias=True, standardize=False).fit(X)
    np.testing.assert_array_equal(basis.transform(X), [[1.0, 2.0, 4.0, -1.0, 1.0]])
    assert list(basis.get_feature_names_out()) == ["1", "x0", "x0^2", "x1", "x1^2"]


def test_polynomial_basis_standardises_each_feature():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 2)) * [1e-9, 1e4] + [0.0, 1e8]
    basis = PolynomialBasis(degree=3).fit(X)
    np.testing.assert_allclose(basis.mean_, X.mean(axis=0), rtol=1e-15, atol=1e-25)
    np.testing.assert_allclose(basis.scale_, X.std(axis=0), rtol=1e-12)
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    np.testing.assert_allclose(basis.transform(X), np.column_stack(
        [Z[:, 0], Z[:, 0] ** 2, Z[:, 0] ** 3, Z[:, 1], Z[:, 1] ** 2, Z[:, 1] ** 3]),
        rtol=1e-8, atol=1e-8)
    # The same span as the raw powers: with an intercept, the same least-squares fit.
    t = 1.0 + 2.0 * Z[:, 0] - Z[:, 1] ** 3 + 0.1 * rng.normal(size=50)
    small = X[:, :1] * 1e9
    ours = make_pipeline(PolynomialBasis(3), LinearRegression()).fit(small, t)
    raw = make_pipeline(PolynomialBasis(3, standardize=False), LinearRegression()).fit(small, t)
    np.testing.assert_allclose(ours.predict(small), raw.predict(small), atol=1e-9)


def test_gaussian_and_sigmoidal_basis_follow_the_seeds():
    x = np.linspace(-1, 2, 7)[:, None]
    g = GaussianBasis(n_centers=4).fit(x)
    np.testing.assert_allclose(g.centers_[:, 0], np.linspace(-1, 2, 4))
    np.testing.assert_allclose(g.width_, [1.0])
    np.testing.assert_allclose(g.transform(x), np.exp(-(x - g.centers_.T) ** 2 / 2.0))
    s = SigmoidalBasis(centers=[0.0, 1.0], scale=0.5).fit(x)
    np.testing.assert_allclose(s.transform(x), 1.0 / (1.0 + np.exp(-(x - [0.0, 1.0]) / 0.5)))
    q = GaussianBasis(n_centers=2, spacing="quantile").fit(x)
    np.testing.assert_allclose(q.centers_[:, 0], np.quantile(x, [0.25, 0.75]))


def test_multivariate_bases_per_feature_and_radial():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    assert GaussianBasis(n_centers=4).fit_transform(X).shape == (50, 12)
    assert SigmoidalBasis(n_centers=4).fit_transform(X).shape == (50, 12)
    centers = X[:5]
    rbf = GaussianBasis(centers=centers, width=2.0, radial=True).fit(X)
    d2 = ((X[:, None, :] - centers[None]) ** 2).sum(axis=2)
    np.testing.assert_allclose(rbf.transform(X), np.exp(-d2 / 8.0))
    assert list(rbf.get_feature_names_out()) == [f"rbf{i}" for i in range(5)]


@pytest.mark.parametrize("model", [LinearRegression(alpha=1e-3), BayesianLinearRegression()])
def test_bases_in_a_pipeline_fit_a_sine(model):
    x = np.linspace(0, 1, 60)[:, None]
    t = np.sin(2 * np.pi * x[:, 0])
    pipe = make_pipeline(GaussianBasis(n_centers=9), model).fit(x, t)
    assert np.max(np.abs(pipe.predict(x) - t)) < 0.05


def test_bases_in_front_of_a_classifier():
    rng = np.random.default_rng(1)
    x = rng.uniform(-2, 2, size=(300, 1))
    y = (np.abs(x[:, 0]) < 1).astype(int)  # not linearly separable in x
    pipe = make_pipeline(PolynomialBasis(degree=2), LogisticRegression(alpha=1.0)).fit(x, y)
    assert pipe.score(x, y) > 0.95


def test_bad_basis_parameters():
    X = np.zeros((5, 2))
    with pytest.raises(ValueError, match="centers must be"):
        GaussianBasis(centers=np.zeros((3, 4))).fit(X)
    with pytest.raises(ValueError, match="positive"):
        SigmoidalBasis(n_centers=2, scale=[1.0, -1.0]).fit(X)
    with pytest.raises(ValueError, match="degree"):
        PolynomialBasis(degree=-1).fit(X)
    g = GaussianBasis(n_centers=3).fit(X)  # constant features: width 1, finite output
    assert np.all(np.isfinite(g.transform(X)))


def test_lms_divergence_is_named():
    """Too large a step: weights that overflow raise a clear error (never a NaN model,
    nor numpy's overflow warnings), and weights growing without overflow yet are
    warned about as a step too large, not as too few epochs."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3))
    y = X @ [1.0, 2.0, 3.0] + rng.normal(size=40)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match="LMS diverged in epoch .*eta0=100 is too large"):
            LMSRegressor(eta0=100, learning_rate="constant", random_state=0).fit(X, y)
    with pytest.warns(ConvergenceWarning, match="step is too large, reduce eta0"):
        LMSRegressor(eta0=1.9, learning_rate="constant", random_state=0, max_iter=300).fit(X, y)
    with pytest.warns(ConvergenceWarning, match="increase max_iter"):
        LMSRegressor(eta0=0.3, learning_rate="constant", random_state=0, max_iter=5,
                     tol=1e-12).fit(X, y)


def test_lms_stops_at_the_same_epoch_whatever_the_units_of_y():
    """The stopping rule measured the weights' moves against max(1, |W|): y / 1000
    stopped after 2 epochs instead of 16, 4e-3 off. The floor is now y's spread."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = X @ [1.0, -2.0, 0.5] + 0.3 * rng.normal(size=300)
    ref = LMSRegressor(random_state=0).fit(X, y)
    for scale in (1e-6, 1e-3, 1e6):
        m = LMSRegressor(random_state=0).fit(X, y * scale)
        assert m.n_iter_ == ref.n_iter_
        np.testing.assert_allclose(m.coef_ / scale, ref.coef_, rtol=1e-10)


def test_one_centre_and_bad_widths():
    """One centre sat at the column minimum with width 1 in raw units (every value 0 on
    X * 1e6); a per-feature width was silently replaced by its maximum with radial=True;
    a width of the wrong length gave numpy's broadcast error."""
    from problin import GaussianBasis, SigmoidalBasis
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2))
    for make in (GaussianBasis, SigmoidalBasis):
        np.testing.assert_allclose(make(n_centers=1).fit_transform(X * 1e6),
                                   make(n_centers=1).fit_transform(X), rtol=1e-12)
    centre = GaussianBasis(n_centers=1).fit(X).centers_[0]
    np.testing.assert_allclose(centre, (X.min(axis=0) + X.max(axis=0)) / 2)
    with pytest.raises(ValueError, match="one number or one per feature"):
        GaussianBasis(width=[1.0, 2.0, 3.0]).fit(X)
    with pytest.raises(ValueError, match="one number or one per feature"):
        SigmoidalBasis(scale=[1.0, 2.0, 3.0]).fit(X)
    with pytest.raises(ValueError, match="radial=True takes one width"):
        GaussianBasis(width=[1.0, 100.0], radial=True).fit(X)
