"""BayesDecision: prior shift and least expected cost, against closed forms."""
import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.naive_bayes import GaussianNB
from sklearn.utils.estimator_checks import parametrize_with_checks

import problin
from problin import (
    BayesDecision,
    FisherDiscriminant,
    LogisticRegression,
    Perceptron,
    ProbitRegression,
)


def _cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return X[:, [0, 1, 4]], y


def _iris():
    X, y = load_iris(return_X_y=True)
    return X[:, :2], y  # overlapping classes: posteriors away from 0 and 1


@pytest.mark.parametrize("make", [LogisticRegression, ProbitRegression])
def test_no_priors_no_cost_is_the_wrapped_classifier(make):
    X, y = _cancer()
    plain = make().fit(X, y)
    wrapped = BayesDecision(make()).fit(X, y)
    assert np.array_equal(wrapped.predict(X), plain.predict(X))
    np.testing.assert_array_equal(wrapped.predict_proba(X), plain.predict_proba(X))
    # Explicit 0-1 loss and the training priors themselves: the same decisions.
    explicit = BayesDecision(make(), priors=wrapped.training_priors_,
                             cost=1 - np.eye(2)).fit(X, y)
    assert np.array_equal(explicit.predict(X), plain.predict(X))
    np.testing.assert_allclose(explicit.predict_proba(X), plain.predict_proba(X), atol=1e-12)


def test_deployment_priors_reweight_the_posterior():
    X, y = _iris()
    priors = np.array([0.1, 0.2, 0.7])
    model = BayesDecision(LogisticRegression(alpha=1.0), priors=priors).fit(X, y)
    train = np.bincount(y) / len(y)
    np.testing.assert_allclose(model.training_priors_, train)
    p = LogisticRegression(alpha=1.0).fit(X, y).predict_proba(X) * priors / train
    p /= p.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(model.predict_proba(X), p, rtol=1e-10)
    np.testing.assert_allclose(np.exp(model.predict_log_proba(X)), p, rtol=1e-10)
    assert np.array_equal(model.predict(X), np.argmax(p, axis=1))


def test_weighted_class_frequencies_are_the_training_priors():
    X, y = _cancer()
    w = np.where(y == 0, 3.0, 1.0)
    model = BayesDecision(LogisticRegression(), priors=[0.5, 0.5]).fit(X, y, sample_weight=w)
    n0, n1 = 3.0 * np.sum(y == 0), np.sum(y == 1)
    np.testing.assert_allclose(model.training_priors_, [n0 / (n0 + n1), n1 / (n0 + n1)])


@pytest.mark.parametrize("reference", ["gaussian-nb", "fisher"])
def test_prior_shift_of_a_generative_model_equals_refitting_with_those_priors(reference):
    X, y = _iris()
    priors = np.array([0.5, 0.3, 0.2])
    if reference == "gaussian-nb":  # its class_prior_ are the priors its posterior used
        shifted = BayesDecision(GaussianNB(priors=[0.1, 0.1, 0.8]), priors=priors)
        direct = GaussianNB(priors=priors)
    else:
        shifted = BayesDecision(FisherDiscriminant(priors=[0.2, 0.2, 0.6]), priors=priors)
        direct = FisherDiscriminant(priors=priors)
    shifted.fit(X, y)
    direct.fit(X, y)
    np.testing.assert_allclose(shifted.predict_proba(X), direct.predict_proba(X), atol=1e-10)


@pytest.mark.parametrize("name", ["LinearDiscriminantAnalysis", "QuadraticDiscriminantAnalysis",
                                  "GaussianNB", "BernoulliNB"])
def test_prior_shift_of_problins_generative_models_equals_their_own_priors(name):
    import problin
    X, y = _iris()
    priors = np.array([0.5, 0.3, 0.2])
    cls = getattr(problin, name)
    shifted = BayesDecision(cls(), priors=priors).fit(X, y)
    direct = cls(priors=priors).fit(X, y)
    np.testing.assert_allclose(shifted.predict_proba(X), direct.predict_proba(X), atol=1e-12)


def test_class_prior_attribute_of_naive_bayes_is_used():
    X, y = _iris()
    model = BayesDecision(GaussianNB(priors=[0.2, 0.3, 0.5])).fit(X, y)
    np.testing.assert_allclose(model.training_priors_, [0.2, 0.3, 0.5])


def test_least_expected_cost_by_hand():
    X, y = _iris()
    cost = np.array([[0.0, 1.0, 8.0],
                     [2.0, 0.0, 1.0],
                     [5.0, 0.5, 0.0]])  # cost[true, predicted]
    priors = [0.3, 0.3, 0.4]
    model = BayesDecision(LogisticRegression(alpha=1.0), priors=priors, cost=cost).fit(X, y)
    P = model.predict_proba(X)
    risk = np.array([[sum(P[n, k] * cost[k, j] for k in range(3)) for j in range(3)]
                     for n in range(len(y))])
    np.testing.assert_allclose(model.expected_cost(X), risk, rtol=1e-12)
    assert np.array_equal(model.predict(X), np.argmin(risk, axis=1))
    assert not np.array_equal(model.predict(X), np.argmax(P, axis=1))  # the cost matters


def test_a_costly_miss_predicts_the_rare_class_more_often():
    X, y = _cancer()
    plain = BayesDecision(LogisticRegression()).fit(X, y)
    careful = BayesDecision(LogisticRegression(), cost=[[0, 10], [1, 0]]).fit(X, y)
    p0 = plain.predict_proba(X)[:, 0]
    assert np.array_equal(careful.predict(X) == 0, p0 * 10 > (1 - p0))  # threshold 1/11
    assert (careful.predict(X) == 0).sum() > (plain.predict(X) == 0).sum()


def test_zero_deployment_prior_never_predicts_that_class():
    X, y = _iris()
    model = BayesDecision(LogisticRegression(alpha=1.0), priors=[0.5, 0.5, 0.0]).fit(X, y)
    assert not np.any(model.predict(X) == 2)
    assert np.all(model.predict_proba(X)[:, 2] == 0)
    np.testing.assert_allclose(model.predict_proba(X).sum(axis=1), 1.0)


def test_custom_class_order_is_followed():
    X, y = _cancer()
    model = BayesDecision(LogisticRegression(classes=[1, 0]), priors=[0.9, 0.1]).fit(X, y)
    assert model.classes_.tolist() == [1, 0]
    np.testing.assert_allclose(model.training_priors_, [np.mean(y == 1), np.mean(y == 0)])
    log_p = LogisticRegression(classes=[1, 0]).fit(X, y).predict_log_proba(X)
    log_p = log_p + np.log([0.9, 0.1]) - np.log(model.training_priors_)
    np.testing.assert_allclose(model.predict_log_proba(X),
                               log_p - logsumexp(log_p, axis=1, keepdims=True), atol=1e-12)


def test_extreme_posteriors_stay_finite_in_log_space():
    X, y = _cancer()
    model = BayesDecision(LogisticRegression(alpha=1.0), priors=[0.999, 0.001]).fit(X, y)
    far = X * 100.0  # linear predictors of order 1e3: p of the losing class underflows
    log_p = model.predict_log_proba(far)
    assert np.all(np.isfinite(log_p)) and log_p.min() < -500
    eta = model.estimator_.decision_function(far)
    shift = np.log(0.001 / model.training_priors_[1]) - np.log(0.999 / model.training_priors_[0])
    np.testing.assert_allclose(log_p[:, 1] - log_p[:, 0], eta + shift, rtol=1e-9)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(cost=np.ones((3, 3))), ValueError, r"cost has shape \(3, 3\), expected \(2, 2\)"),
    (dict(cost=[[0, np.nan], [1, 0]]), ValueError, "NaN"),
    (dict(cost=[["a", "b"], ["c", "d"]]), TypeError, "numeric"),
    (dict(priors=[1.2, -0.2]), ValueError, "non-negative"),
    (dict(priors=[0.3, 0.3]), ValueError, "sum to 1"),
    (dict(priors=[0.2, 0.3, 0.5]), ValueError, "priors has shape"),
    (dict(priors=[0.5, np.nan]), ValueError, "NaN"),
])
def test_bad_priors_and_costs(kwargs, error, match):
    X, y = _cancer()
    with pytest.raises(error, match=match):
        BayesDecision(LogisticRegression(), **kwargs).fit(X, y)


def test_non_probabilistic_estimator_and_bad_data_are_rejected():
    X, y = _cancer()
    with pytest.raises(ValueError, match="predict_log_proba"):
        BayesDecision(Perceptron()).fit(X, y)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        BayesDecision(LogisticRegression()).fit(Xn, y)
    with pytest.raises(ValueError, match="Unknown label type"):
        BayesDecision(LogisticRegression()).fit(X, X[:, 0])


@parametrize_with_checks([BayesDecision(LogisticRegression()),
                          BayesDecision(LogisticRegression(alpha=1.0), cost=None),
                          # its tags (positive_only, poor_score) are the wrapped model's
                          BayesDecision(problin.MultinomialNB())])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_compare_refuses_a_class_of_one_row():
    """A class with one row is never trained on where it is tested: compare used to score
    it as another class (or fail with an IndexError). A clear error instead."""
    from problin.model_selection import compare_classifiers
    rng = np.random.default_rng(0)
    X = rng.normal(size=(41, 2))
    y = np.array(["cat"] * 20 + ["dog"] * 20 + ["dolphin"])
    with pytest.raises(ValueError, match=r"classes \['dolphin'\] have a single row"):
        compare_classifiers(X, y, ["lda"], cv=5)
    table = compare_classifiers(X[:40], y[:40], ["lda"], cv=5)
    assert np.isfinite(table["log_loss"]).all()


def test_training_priors_of_a_pipeline_are_its_last_steps():
    """A pipeline's posteriors come from its last step, and so do the training priors that
    the deployment priors replace (they were the class frequencies: posteriors off by up
    to 0.17 from p pi' / pi)."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from problin import BayesDecision, GaussianNB
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 2)) + np.repeat([[0, 0], [1, 1], [2, 0]], 30, axis=0)
    y = np.repeat([0, 1, 2], 30)
    pipe = make_pipeline(StandardScaler(), GaussianNB(priors=[0.7, 0.2, 0.1]))
    model = BayesDecision(pipe, priors=[0.1, 0.1, 0.8]).fit(X, y)
    np.testing.assert_allclose(model.training_priors_, [0.7, 0.2, 0.1])
    p = model.estimator_.predict_proba(X) * (np.array([0.1, 0.1, 0.8]) / [0.7, 0.2, 0.1])
    np.testing.assert_allclose(model.predict_proba(X), p / p.sum(axis=1, keepdims=True),
                               rtol=1e-12, atol=1e-15)


def test_sample_weight_reaches_a_pipelines_classifier():
    """A Pipeline takes no plain sample_weight (scikit-learn's raw error before): the
    weights go to its last step, whose posteriors are re-weighted, and weight the
    class frequencies."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    X, y = _iris()
    w = np.random.default_rng(1).uniform(0.2, 3.0, y.size)
    pipe = make_pipeline(StandardScaler(), LogisticRegression())
    model = BayesDecision(pipe, priors=[0.2, 0.3, 0.5]).fit(X, y, sample_weight=w)
    by_hand = make_pipeline(StandardScaler(), LogisticRegression()).fit(
        X, y, logisticregression__sample_weight=w)
    np.testing.assert_allclose(model.estimator_.predict_proba(X), by_hand.predict_proba(X),
                               rtol=1e-12)
    counts = np.bincount(y, weights=w)
    np.testing.assert_allclose(model.training_priors_, counts / counts.sum(), rtol=1e-14)


def test_posteriors_that_new_priors_make_undefined_are_an_error():
    """Far from the data GaussianNB gives one class all the probability (the others'
    underflow to exactly 0); deployment priors that give that class 0 leave 0 / 0: a
    clear error naming the rows, not NaN posteriors and an arbitrary decision."""
    from problin import BayesDecision
    from problin import GaussianNB as NB
    X, y = load_iris(return_X_y=True)
    model = BayesDecision(NB(), priors=[0.5, 0.5, 0.0]).fit(X, y)
    rows = np.vstack([X[:2], [[1e200, 0.0, 0.0, 0.0]]])
    with pytest.raises(ValueError, match=r"rows \[2\] of X: every class with a positive"):
        model.predict_proba(rows)
    with pytest.raises(ValueError, match="undefined"):
        model.predict(rows)
    assert np.all(np.isfinite(model.predict_proba(X[:2])))


def test_training_priors_are_found_inside_formulas_and_searches():
    """A Formula's or a grid search's classifier holds the priors behind its posteriors:
    they were missed (the class frequencies were used instead), so deploying a model at
    its own priors moved its probabilities by up to 0.27."""
    import pandas as pd
    from sklearn.model_selection import GridSearchCV
    X, y = _iris()
    priors = [0.6, 0.2, 0.2]
    reference = problin.GaussianNB(priors=priors).fit(X, y).predict_proba(X)
    frame = pd.DataFrame(X, columns=["a", "b"])
    for est, data in ((problin.Formula("a + b", problin.GaussianNB(priors=priors)), frame),
                      (GridSearchCV(problin.GaussianNB(priors=priors),
                                    {"var_smoothing": [0.1]}, cv=3), X)):
        model = BayesDecision(est, priors=priors).fit(data, y)
        np.testing.assert_allclose(model.training_priors_, priors)
        np.testing.assert_allclose(model.predict_proba(data), reference, atol=1e-12)


def test_class_weights_set_the_training_priors():
    """class_weight="balanced" fits the posteriors under equal priors (a dict under the
    frequencies times its weights): the frequencies (0.9, 0.1) were taken instead, so the
    deployment priors (0.9, 0.1) changed nothing."""
    from sklearn.linear_model import LogisticRegression as SkLogistic
    rng = np.random.default_rng(0)
    y = (rng.random(4000) < 0.1).astype(int)
    X = rng.normal(size=(4000, 1)) + y[:, None]
    model = BayesDecision(SkLogistic(class_weight="balanced"), priors=[0.9, 0.1]).fit(X, y)
    np.testing.assert_allclose(model.training_priors_, [0.5, 0.5])
    p = SkLogistic(class_weight="balanced").fit(X, y).predict_proba(X) * [0.9 / 0.5, 0.1 / 0.5]
    np.testing.assert_allclose(model.predict_proba(X), p / p.sum(axis=1, keepdims=True),
                               rtol=1e-12)
    counts = np.bincount(y) * [1.0, 3.0]
    weighted = BayesDecision(SkLogistic(class_weight={0: 1.0, 1: 3.0})).fit(X, y)
    np.testing.assert_allclose(weighted.training_priors_, counts / counts.sum())
