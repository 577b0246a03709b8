"""Every generative classifier passes scikit-learn's estimator checks."""
from sklearn.utils.estimator_checks import parametrize_with_checks

from problin import (BernoulliNB, GaussianDiscriminantAnalysis, GaussianNB,
                     LinearDiscriminantAnalysis, MultinomialNB, QuadraticDiscriminantAnalysis)

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

# That check fits 15 samples of 30 features: the tied and per-class covariances
# are singular, so they get jitter, and comparing weighted with repeated fits
# then measures rounding amplified by ~1e12. The invariance itself is tested on
# well-posed data (test_gaussian_properties, test_naive_bayes).
SINGULAR = {"check_sample_weight_equivalence_on_dense_data":
            "15 samples x 30 features: singular covariances, jitter amplifies rounding"}


def _expected_failures(estimator):
    singular_kind = getattr(estimator, "covariance_type", None) == "tied" or (
        isinstance(estimator, (LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis)))
    return SINGULAR if singular_kind else {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failures)
def test_sklearn_compatible(estimator, check):
    check(estimator)
