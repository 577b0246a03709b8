"""GLM regressors against glum's ``GeneralizedLinearRegressor`` (an independent IRLS).

glum minimises ``sum_i w_i d(y_i, mu_i) / (2 sum_i w_i) + alpha_glum |w|^2 / 2`` (the
intercept unpenalised, ``l1_ratio=0``); problin ``sum_i s_i d(y_i, mu_i) / 2 + alpha |w|^2 / 2``:
``alpha = alpha_glum * sum_i s_i``, the same mapping as scikit-learn's (with unit weights,
``alpha_glum * n``). Coefficients to 1e-8 at glum's tight gradient tolerance, with and
without the penalty, sample weights and an offset; the Poisson standard errors (canonical
link, dispersion 1) to 1e-6, up to glum's degrees-of-freedom factor n / (n - p).
"""
import numpy as np
import pytest

import problin

glum = pytest.importorskip("glum")  # (the test extra installs it: pyproject.toml)


def _data(family: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = 300
    X = rng.normal(size=(n, 4)) * [1.0, 3.0, 0.5, 10.0] + [0.0, 5.0, -1.0, 100.0]
    offset = rng.normal(scale=0.2, size=n)
    eta = 0.3 + (X - X.mean(0)) / X.std(0) @ np.array([0.5, -0.3, 0.2, 0.0]) + offset
    mu = np.exp(eta)
    y = {"poisson": lambda: rng.poisson(mu).astype(float),
         "gamma": lambda: rng.gamma(2.0, mu / 2.0),
         "tweedie": lambda: rng.poisson(mu) * rng.gamma(3.0, 1.0 / 3.0, size=n)}[family]()
    weights = rng.integers(1, 4, size=n).astype(float)
    return X, y, weights, offset


ESTIMATORS = {"poisson": (problin.PoissonRegression, "poisson"),
              "gamma": (problin.GammaRegression, "gamma"),
              "tweedie": (lambda **kw: problin.TweedieRegression(power=1.5, **kw),
                          glum.TweedieDistribution(1.5) if glum else None)}


@pytest.mark.parametrize("family", sorted(ESTIMATORS))
@pytest.mark.parametrize("alpha", [0.0, 30.0])
def test_coefficients_match_glum(family: str, alpha: float) -> None:
    X, y, w, offset = _data(family)
    make, glum_family = ESTIMATORS[family]
    ours = make(alpha=alpha).fit(X, y, sample_weight=w, offset=offset)
    theirs = glum.GeneralizedLinearRegressor(
        family=glum_family, link="log", alpha=alpha / w.sum(), l1_ratio=0.0,
        gradient_tol=1e-12, max_iter=1000).fit(X, y, sample_weight=w, offset=offset)
    np.testing.assert_allclose(ours.coef_, theirs.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(ours.intercept_, theirs.intercept_, rtol=1e-8, atol=1e-10)


def test_poisson_standard_errors_match_glum() -> None:
    X, y, w, offset = _data("poisson", seed=1)
    ours = problin.PoissonRegression().fit(X, y, offset=offset)
    theirs = glum.GeneralizedLinearRegressor(
        family="poisson", link="log", alpha=0.0, gradient_tol=1e-12, max_iter=1000
    ).fit(X, y, offset=offset)
    cov = theirs.covariance_matrix(X, y, offset=offset, robust=False, expected_information=True,
                                  dispersion=1.0)  # (glum estimates it by default)
    # glum's non-robust covariance carries the degrees-of-freedom factor n / (n - p) even
    # at a given dispersion; problin's is statsmodels' GLM and R's glm (no factor).
    n, k = X.shape[0], X.shape[1] + 1
    np.testing.assert_allclose(ours.covariance_ * n / (n - k), cov, rtol=1e-6)
