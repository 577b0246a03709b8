"""scikit-learn's estimator checks and clear errors on bad input."""
import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import parametrize_with_checks

from problin import BayesianLogisticRegression

ESTIMATORS = [
    BayesianLogisticRegression(),
    BayesianLogisticRegression(alpha=None, intercept_alpha=0.0),
    BayesianLogisticRegression(inference="variational"),
    BayesianLogisticRegression(inference="mcmc", n_samples=40, n_chains=2, random_state=0,
                               progress=False),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    import warnings

    from problin import ConvergenceWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # R-hat of 40 draws
        check(estimator)


RNG = np.random.default_rng(0)
X = RNG.normal(size=(20, 2))
Y = np.arange(20) % 2


@pytest.mark.parametrize("inference", ["laplace", "variational", "mcmc"])
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
def test_fit_rejects_bad_data(inference, make_input, error, match):
    Xb, yb = make_input()
    with pytest.raises(error, match=match):
        BayesianLogisticRegression(inference=inference, n_samples=10).fit(Xb, yb)


@pytest.mark.parametrize("weights, match", [
    (-np.ones(20), "negative"), (np.full(20, np.nan), "NaN"), (np.ones(19), "shape"),
    (np.zeros(20), "sums to zero"), (np.where(Y == 1, 0.0, 1.0), "zero total sample weight"),
])
def test_fit_rejects_bad_sample_weights(weights, match):
    with pytest.raises(ValueError, match=match):
        BayesianLogisticRegression().fit(X, Y, sample_weight=weights)


@pytest.mark.parametrize("alpha", [0, 0.0, -1.0])
def test_alpha_must_be_positive_with_an_explanation(alpha):
    with pytest.raises(InvalidParameterError, match=r"'alpha' parameter .* must be > 0.*"
                                                    r"LogisticRegression\(alpha=0\)"):
        BayesianLogisticRegression(alpha=alpha).fit(X, Y)


@pytest.mark.parametrize("params, match", [
    ({"n_samples": 0}, "n_samples"), ({"n_chains": 0}, "n_chains"),
    ({"inference": "nuts"}, "inference"), ({"intercept_alpha": -1.0}, "intercept_alpha"),
    ({"tol": 0.0}, "tol"), ({"max_iter": 0}, "max_iter"), ({"alpha": "big"}, "alpha"),
    ({"inference": "variational", "alpha_prior": (1.0, -1.0)}, "alpha_prior"),
    ({"inference": "variational", "alpha_prior": 3.0}, "alpha_prior"),
    ({"alpha_prior": (1.0, 1.0)}, "needs inference='variational'"),
])
def test_bad_parameters_are_named(params, match):
    with pytest.raises(ValueError, match=match):
        BayesianLogisticRegression(**params).fit(X, Y)


@pytest.mark.parametrize("inference", ["variational", "mcmc"])
def test_multiclass_needs_laplace(inference):
    with pytest.raises(ValueError, match=f"Only binary classification is supported with "
                                         f"inference='{inference}': y has 3 classes. Use "
                                         "inference='laplace'"):
        BayesianLogisticRegression(inference=inference).fit(X, np.arange(20) % 3)


def test_predict_checks_its_input():
    model = BayesianLogisticRegression().fit(X, Y)
    with pytest.raises(ValueError, match="3 features, but .* expecting 2"):
        model.predict(np.ones((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        model.predict_proba(np.array([[np.nan, 0.0]]))
    with pytest.raises(ValueError, match="method must be one of"):
        model.predict_proba(X, method="exact")
    with pytest.raises(ValueError, match="level"):
        model.summary(level=1.5)


def test_unfitted_model_says_so():
    model = BayesianLogisticRegression()
    for method in ("predict", "predict_proba", "predict_log_proba", "decision_function",
                   "predict_activation"):
        with pytest.raises(NotFittedError):
            getattr(model, method)(X)
    with pytest.raises(NotFittedError):
        model.summary()


def test_extreme_activations_stay_finite_in_log_space():
    model = BayesianLogisticRegression(alpha=1e-3).fit(X, Y)
    far = np.array([[1e4, -1e4], [-1e4, 1e4]])
    for method in ("moderated", "map", "sample"):
        log_p = model.predict_log_proba(far, method=method)
        assert np.all(np.isfinite(log_p)) and np.all(log_p <= 0)
