"""Every generative classifier passes scikit-learn's estimator checks."""
from sklearn.utils.estimator_checks import parametrize_with_checks

from problin import (
    BernoulliNB,
    GaussianDiscriminantAnalysis,
    GaussianNB,
    LinearDiscriminantAnalysis,
    MultinomialNB,
    QuadraticDiscriminantAnalysis,
)

ESTIMATORS = [
    GaussianDiscriminantAnalysis(),
    GaussianDiscriminantAnalysis(covariance_type="full", reg_covar=1e-6),
    GaussianDiscriminantAnalysis(covariance_type="diag"),
    GaussianDiscriminantAnalysis(covariance_type="spherical"),
    LinearDiscriminantAnalysis(),
    QuadraticDiscriminantAnalysis(),
    GaussianNB(),
    BernoulliNB(),
    BernoulliNB(alpha=0.5, binarize=1.0),
    MultinomialNB(),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)
