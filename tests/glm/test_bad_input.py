"""Every public entry point rejects bad input with a clear error naming the problem."""
import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from problin import LogisticRegression, ProbitRegression

RNG = np.random.default_rng(0)
X = RNG.normal(size=(20, 2))
Y = np.arange(20) % 2
MODELS = [LogisticRegression, ProbitRegression]


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("make_input, error, match", [
    (lambda: (np.where(X > 1, np.nan, X), Y), ValueError, "NaN"),
    (lambda: (np.where(X > 1, np.inf, X), Y), ValueError, "infinity"),
    (lambda: (X[:, 0], Y), ValueError, "Expected 2D array"),
    (lambda: (X[:0], Y[:0]), ValueError, "0 sample"),
    (lambda: (X[:, :0], Y), ValueError, "0 feature"),
    (lambda: (X, Y[:-1]), ValueError, "inconsistent numbers of samples"),
    (lambda: (X, np.zeros(20)), ValueError, "only one class"),
    (lambda: (X, np.linspace(0, 1, 20)), ValueError, "Unknown label type: continuous"),
    (lambda: (X, np.where(Y == 1, np.nan, 0.0)), ValueError, "NaN"),
    (lambda: (X, np.array(["a", 1] * 10, dtype=object)), TypeError, "mixes number, str"),
    (lambda: (X, [{}] * 20), ValueError, "Unknown label type"),
    (lambda: (np.array([["a", "b"]] * 20), Y), ValueError, "could not convert string"),
])
def test_fit_rejects_bad_data(model, make_input, error, match):
    Xb, yb = make_input()
    with pytest.raises(error, match=match):
        model().fit(Xb, yb)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("weights, match", [
    (-np.ones(20), "negative"),
    (np.full(20, np.nan), "NaN"),
    (np.ones(19), "shape"),
    (np.zeros(20), "sums to zero"),
    (np.ones((20, 2)), "shape"),
])
def test_fit_rejects_bad_sample_weights(model, weights, match):
    with pytest.raises(ValueError, match=match):
        model().fit(X, Y, sample_weight=weights)


def test_probit_rejects_more_than_two_classes():
    with pytest.raises(ValueError, match="Only binary classification is supported.*3 classes"):
        ProbitRegression().fit(X, np.arange(20) % 3)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("params, match", [
    ({"alpha": -1.0}, "alpha"), ({"solver": "sag"}, "solver"), ({"tol": 0.0}, "tol"),
    ({"max_iter": 0}, "max_iter"), ({"fit_intercept": "yes"}, "fit_intercept"),
])
def test_bad_parameters_are_named(model, params, match):
    with pytest.raises(InvalidParameterError, match=match):
        model(**params).fit(X, Y)


@pytest.mark.parametrize("model", MODELS)
def test_predict_checks_its_input(model):
    fitted = model().fit(X, Y)
    with pytest.raises(ValueError, match="3 features, but .* expecting 2"):
        fitted.predict(np.ones((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        fitted.predict_proba(np.array([[np.nan, 0.0]]))
    with pytest.raises(ValueError, match="Expected 2D array"):
        fitted.decision_function(np.ones(2))
    with pytest.raises(ValueError, match="level"):
        fitted.summary(level=1.5)


@pytest.mark.parametrize("model", MODELS)
def test_unfitted_model_says_so(model):
    from sklearn.exceptions import NotFittedError
    for method in ("predict", "predict_proba", "predict_log_proba", "decision_function"):
        with pytest.raises(NotFittedError):
            getattr(model(), method)(X)
    with pytest.raises(NotFittedError):
        model().summary()


@pytest.mark.parametrize("model, labels", [(LogisticRegression, np.arange(30) % 3),
                                           (LogisticRegression, np.arange(30) % 2),
                                           (ProbitRegression, np.arange(30) % 2)])
def test_a_class_with_zero_total_weight_is_named(model, labels):
    X30 = np.random.default_rng(1).normal(size=(30, 2))
    weights = np.where(labels == 1, 0.0, 1.0)
    with pytest.raises(ValueError, match=r"classes \[1\] have zero total sample weight"):
        model().fit(X30, labels, sample_weight=weights)
