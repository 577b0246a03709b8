"""Perceptron: blocked updates equal the per-sample loop; convergence and its failure."""
import warnings

import numpy as np
import pytest
from sklearn.utils import check_random_state
from sklearn.utils.estimator_checks import parametrize_with_checks

from problin import ConvergenceWarning, Perceptron


def naive_perceptron(X, y, *, max_iter=1000, shuffle=True, random_state=None, eta0=1.0):
    """Rosenblatt's algorithm (Bishop 2006, §4.1.7), one sample at a time in plain
    Python, on the standardised columns ``(x - mean) / std``; the weights ``[b, w]``
    mapped back to raw units (the reference)."""
    mean, std = X.mean(axis=0), X.std(axis=0)
    W, epochs, converged = _naive_perceptron((X - mean) / std, y, max_iter=max_iter,
                                             shuffle=shuffle, random_state=random_state,
                                             eta0=eta0)
    W = np.atleast_2d(W)
    coef = W[:, 1:] / std
    Theta = np.column_stack([W[:, 0] - coef @ mean, coef])
    return Theta, epochs, converged


def _naive_perceptron(X, y, *, max_iter, shuffle, random_state, eta0):
    classes = np.unique(y)
    t = np.searchsorted(classes, y)
    Phi = np.column_stack([np.ones(len(y)), X])
    rng = check_random_state(random_state)
    binary = classes.size == 2
    W = np.zeros(Phi.shape[1]) if binary else np.zeros((classes.size, Phi.shape[1]))
    for epoch in range(1, max_iter + 1):
        order = rng.permutation(len(y)) if shuffle else np.arange(len(y))
        mistakes = 0
        for n in order:
            if binary:
                tn = 2.0 * t[n] - 1.0
                if tn * (W @ Phi[n]) <= 0:
                    W = W + eta0 * tn * Phi[n]
                    mistakes += 1
            else:
                s = W @ Phi[n]
                own = s[t[n]]
                s[t[n]] = -np.inf
                j = int(np.argmax(s))
                if s[j] >= own:
                    W[t[n]] += eta0 * Phi[n]
                    W[j] -= eta0 * Phi[n]
                    mistakes += 1
        if mistakes == 0:
            return W, epoch, True
    return W, max_iter, False


def separable(n=600, d=3, k=2, margin=0.5, seed=0):
    """Linearly separable classes (by argmax of K random linear scores) with a margin."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(d, k))
    X = rng.normal(size=(4 * n, d))
    S = X @ A
    top = np.sort(S, axis=1)
    keep = top[:, -1] - top[:, -2] > margin
    return X[keep][:n], np.argmax(S[keep][:n], axis=1)


XOR = (np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, 0.0]]), np.array([0, 0, 1, 1]))


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("shuffle", [True, False])
def test_blocked_updates_equal_the_per_sample_loop(k, shuffle):
    X, y = separable(n=700, k=k, margin=0.05, seed=k)  # > 2 blocks, many mistakes
    model = Perceptron(shuffle=shuffle, random_state=3, max_iter=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    W, n_iter, converged = naive_perceptron(X, y, shuffle=shuffle, random_state=3, max_iter=50)
    Theta = np.column_stack([model.intercept_, model.coef_])
    np.testing.assert_allclose(Theta, W, rtol=1e-12, atol=1e-12 * np.abs(W).max())
    assert (model.n_iter_, model.converged_) == (n_iter, converged)


@pytest.mark.parametrize("k", [2, 4])
def test_converges_on_separable_data_and_separates_it(k):
    X, y = separable(k=k, seed=10 + k)
    model = Perceptron(random_state=0).fit(X, y)
    assert model.converged_ and model.n_iter_ < 1000
    assert model.history_[-1] == 0 and model.history_.size == model.n_iter_
    scores = X @ model.coef_.T + model.intercept_
    if k == 2:
        t = np.where(y == model.classes_[1], 1.0, -1.0)
        assert np.all(t * scores[:, 0] > 0)  # the hyperplane separates every row
    else:
        own = scores[np.arange(len(y)), y]
        scores[np.arange(len(y)), y] = -np.inf
        assert np.all(own > scores.max(axis=1))
    assert np.array_equal(model.predict(X), y)


def test_xor_stops_after_max_iter_with_a_warning():
    X, y = XOR
    with pytest.warns(ConvergenceWarning, match="not linearly separable"):
        model = Perceptron(max_iter=25, random_state=0).fit(X, y)
    assert not model.converged_ and model.n_iter_ == 25
    assert np.all(model.history_ > 0)
    assert np.all(np.isfinite(model.coef_))


def test_deterministic_given_random_state():
    X, y = separable(k=3, margin=0.01, seed=5)
    fits = []
    for _ in range(2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fits.append(Perceptron(random_state=7, max_iter=20).fit(X, y))
    assert np.array_equal(fits[0].coef_, fits[1].coef_)
    assert np.array_equal(fits[0].history_, fits[1].history_)


def test_eta0_scales_the_weights_but_not_the_predictions():
    X, y = separable(seed=4)
    a = Perceptron(random_state=1).fit(X, y)
    b = Perceptron(random_state=1, eta0=0.25).fit(X, y)
    np.testing.assert_allclose(b.coef_, 0.25 * a.coef_)
    assert np.array_equal(a.predict(X), b.predict(X))


def test_string_labels_and_decision_function_sign():
    X, y = separable(seed=6)
    names = np.array(["no", "yes"])[y]
    model = Perceptron(random_state=0).fit(X, names)
    assert model.classes_.tolist() == ["no", "yes"]
    assert np.array_equal(model.decision_function(X) > 0, names == "yes")


def test_without_intercept_the_hyperplane_passes_through_the_origin():
    X, y = separable(seed=8)  # the true boundaries pass through 0
    model = Perceptron(fit_intercept=False, random_state=0).fit(X, y)
    assert model.converged_ and np.all(model.intercept_ == 0)


@pytest.mark.parametrize("params, error", [
    (dict(max_iter=0), ValueError), (dict(eta0=0.0), ValueError), (dict(shuffle="yes"), ValueError),
])
def test_bad_parameters(params, error):
    with pytest.raises(error):
        Perceptron(**params).fit(*XOR)


def test_bad_input():
    X, y = XOR
    with pytest.raises(ValueError, match="NaN"):
        Perceptron().fit(np.array([[0.0, np.nan], [1, 1], [0, 1], [1, 0]]), y)
    with pytest.raises(ValueError, match="one class"):
        Perceptron().fit(X, np.zeros(4))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        Perceptron().fit(X, y[:3])


@parametrize_with_checks([Perceptron(random_state=0, max_iter=100),
                          Perceptron(shuffle=False, max_iter=50)])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def test_weights_transform_with_the_units_of_the_columns():
    # Standardised updates: scaling a column by c divides its weight by c and a
    # shift moves only the intercept; the mistakes made are the same.
    X, y = separable(n=300, k=3, margin=0.05, seed=12)
    c, s = np.array([1e-6, 1.0, 1e9]), np.array([3.0, -1e5, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = Perceptron(random_state=2, max_iter=20).fit(X, y)
        b = Perceptron(random_state=2, max_iter=20).fit(c * (X + s), y)
    np.testing.assert_array_equal(a.history_, b.history_)
    np.testing.assert_allclose(b.coef_ * c, a.coef_, rtol=1e-9)
    np.testing.assert_allclose(b.intercept_, a.intercept_ - a.coef_ @ s, rtol=1e-9,
                               atol=1e-9 * np.abs(a.coef_ @ s).max())
