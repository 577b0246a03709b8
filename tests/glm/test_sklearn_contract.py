"""Every GLM estimator passes scikit-learn's estimator checks."""
from sklearn.utils.estimator_checks import parametrize_with_checks

from problin import LogisticRegression, ProbitRegression

ESTIMATORS = [
    LogisticRegression(),
    LogisticRegression(alpha=1.0, solver="gradient"),
    LogisticRegression(alpha=5.0, solver="coordinate"),
    ProbitRegression(),
    ProbitRegression(alpha=1.0, information="expected"),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)
