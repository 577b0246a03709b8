"""Every regression estimator and basis transformer passes scikit-learn's checks."""
from sklearn.utils.estimator_checks import parametrize_with_checks

from problin import (
    BayesianLinearRegression,
    GaussianBasis,
    LinearRegression,
    LMSRegressor,
    PolynomialBasis,
    SigmoidalBasis,
)

ESTIMATORS = [
    LinearRegression(),
    LinearRegression(alpha=1.0),
    LinearRegression(alpha=1.0, q=1.0),
    LinearRegression(alpha=1.0, q=1.5),
    LinearRegression(alpha=1.0, q=3.0, fit_intercept=False),
    LMSRegressor(random_state=0),
    BayesianLinearRegression(),
    BayesianLinearRegression(alpha=1.0, beta=2.0, fit_intercept=False),
    PolynomialBasis(),
    GaussianBasis(n_centers=3),
    GaussianBasis(n_centers=3, spacing="quantile", radial=True),
    SigmoidalBasis(n_centers=3),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)
