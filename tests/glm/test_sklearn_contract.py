"""Every GLM estimator passes scikit-learn's estimator checks."""
import numpy as np
from sklearn.utils.estimator_checks import parametrize_with_checks

from problin import (
    BinomialRegression,
    GammaRegression,
    LogisticRegression,
    NegativeBinomialRegression,
    OrdinalRegression,
    PoissonRegression,
    ProbitRegression,
    TweedieRegression,
)


class ProportionsBinomial(BinomialRegression):
    """``BinomialRegression`` on scikit-learn's generic regression targets mapped into
    (0, 1) by the training targets' range, ``y -> (y - min + 1) / (max - min + 2)``:
    no scikit-learn tag says that targets are proportions (``positive_only`` is the
    only range it knows), and its checks draw targets anywhere. Everything else (fit,
    weights, sparse input, predict, pickling, errors) is BinomialRegression's."""

    def _proportions(self, y, reset=False):
        values = np.asarray(y)
        if values.dtype.kind == "c":
            return y  # (BinomialRegression's own error)
        try:
            values = values.astype(np.float64)
        except (TypeError, ValueError):
            return y
        if values.size == 0 or not np.all(np.isfinite(values)):
            return y
        if reset:
            self._range = float(values.min()), float(values.max())
        low, high = self._range
        return (values - low + 1.0) / (high - low + 2.0)

    def fit(self, X, y, sample_weight=None):
        return super().fit(X, self._proportions(y, reset=True), sample_weight)

    def score(self, X, y, sample_weight=None):
        return super().score(X, self._proportions(y), sample_weight)


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
    ProportionsBinomial(),
    OrdinalRegression(),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)
