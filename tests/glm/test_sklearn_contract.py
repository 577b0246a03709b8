"""Every GLM estimator passes scikit-learn's estimator checks."""
from sklearn.utils.estimator_checks import parametrize_with_checks

from problin import (
    GammaRegression,
    LogisticRegression,
    NegativeBinomialRegression,
    PoissonRegression,
    ProbitRegression,
    TweedieRegression,
)

ESTIMATORS = [
    LogisticRegression(),
    LogisticRegression(alpha=1.0, solver="gradient"),
    LogisticRegression(alpha=5.0, solver="coordinate"),
    ProbitRegression(),
    ProbitRegression(alpha=1.0, information="expected"),
    PoissonRegression(),
    GammaRegression(alpha=1.0),
    TweedieRegression(power=1.5, solver="lbfgs"),
    NegativeBinomialRegression(nb_alpha=0.5),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)
