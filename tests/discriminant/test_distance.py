"""signed_distance(X): the distance from a point to a two-class linear decision boundary,
``y(x) / |w|`` (Bishop 2006 eq. 4.7; issue 37, item 4), checked geometrically: the
point moved back along the unit normal by its distance lies on the boundary."""
import numpy as np
import pytest
from sklearn.base import clone

from problin import (
    FisherDiscriminant,
    LeastSquaresClassifier,
    LinearDiscriminantAnalysis,
    LogisticRegression,
    Perceptron,
    ProbitRegression,
    QuadraticDiscriminantAnalysis,
)

RNG = np.random.default_rng(7)
X = np.r_[RNG.normal(size=(40, 3)), RNG.normal(size=(60, 3)) + [1.5, -1.0, 0.5]]
X = X * [1.0, 30.0, 0.01] + [0.0, 500.0, 2.0]
Y = np.r_[np.zeros(40, int), np.ones(60, int)]
LINEAR = [FisherDiscriminant(), FisherDiscriminant(within="sum"), LinearDiscriminantAnalysis(),
          LeastSquaresClassifier(), Perceptron(), LogisticRegression(), ProbitRegression()]


def _normal(model):
    coef = model.coef_
    return coef[0] if coef.shape[0] == 1 else coef[1] - coef[0]


@pytest.mark.parametrize("est", LINEAR, ids=lambda e: f"{type(e).__name__}")
def test_the_signed_distance_is_the_euclidean_distance_to_the_boundary(est):
    model = clone(est).fit(X, Y)
    r = model.signed_distance(X[:10])
    w = _normal(model)
    unit = w / np.sqrt(np.sum(w * w))
    on_boundary = X[:10] - r[:, None] * unit
    scale = np.abs(model.decision_function(X[:10])).max()
    np.testing.assert_allclose(model.decision_function(on_boundary), 0.0, atol=1e-9 * scale)
    # the nearest boundary point: any other has a larger distance
    other = on_boundary + np.cross(unit, [1.0, 0.0, 0.0])
    assert np.all(np.linalg.norm(X[:10] - other, axis=1) > np.abs(r))
    # positive on the side of classes_[1]
    np.testing.assert_array_equal(r > 0, model.predict(X[:10]) == model.classes_[1])


def test_the_distance_of_a_logistic_model_by_hand():
    model = LogisticRegression().fit(X, Y)
    w, b = model.coef_[0], model.intercept_[0]
    np.testing.assert_allclose(model.signed_distance(X), (X @ w + b) / np.linalg.norm(w),
                               rtol=1e-9)


def test_more_than_two_classes_and_quadratic_boundaries_have_no_distance():
    y3 = np.r_[Y[:70], np.full(30, 2)]
    with pytest.raises(ValueError, match="two-class model.*3 classes"):
        LogisticRegression().fit(X, y3).signed_distance(X)
    assert not hasattr(QuadraticDiscriminantAnalysis(), "signed_distance")
