"""Perceptron: blocked updates equal the per-sample loop; convergence, the tolerance
stop (scikit-learn's ``tol``/``n_iter_no_change``) and the failure to converge."""
import warnings

import numpy as np
import pytest
from sklearn.utils import check_random_state
from sklearn.utils.estimator_checks import parametrize_with_checks

from problin import ConvergenceWarning, Perceptron


def naive_perceptron(X, y, *, max_iter=1000, shuffle=True, random_state=None, eta0=1.0,
                     tol=1e-3, n_iter_no_change=5):
    """Rosenblatt's algorithm (Bishop 2006, §4.1.7), one sample at a time in plain
    Python, on the standardised columns ``(x - mean) / std``, with scikit-learn's
    stopping rule on the epoch's mean perceptron criterion; the weights ``[b, w]``
    mapped back to raw units (the reference)."""
    mean, std = X.mean(axis=0), X.std(axis=0)
    W, epochs, converged = _naive_perceptron((X - mean) / std, y, max_iter=max_iter,
                                             shuffle=shuffle, random_state=random_state,
                                             eta0=eta0, tol=tol,
                                             n_iter_no_change=n_iter_no_change)
    W = np.atleast_2d(W)
    coef = W[:, 1:] / std
    Theta = np.column_stack([W[:, 0] - coef @ mean, coef])
    return Theta, epochs, converged


def _naive_perceptron(X, y, *, max_iter, shuffle, random_state, eta0, tol, n_iter_no_change):
    classes = np.unique(y)
    t = np.searchsorted(classes, y)
    Phi = np.column_stack([np.ones(len(y)), X])
    rng = check_random_state(random_state)
    binary = classes.size == 2
    W = np.zeros(Phi.shape[1]) if binary else np.zeros((classes.size, Phi.shape[1]))
    best, no_improvement = np.inf, 0
    for epoch in range(1, max_iter + 1):
        order = rng.permutation(len(y)) if shuffle else np.arange(len(y))
        mistakes, loss = 0, 0.0
        for n in order:
            if binary:
                tn = 2.0 * t[n] - 1.0
                if tn * (W @ Phi[n]) <= 0:
                    loss -= tn * (W @ Phi[n])
                    W = W + eta0 * tn * Phi[n]
                    mistakes += 1
            else:
                s = W @ Phi[n]
                own = s[t[n]]
                s[t[n]] = -np.inf
                j = int(np.argmax(s))
                if s[j] >= own:
                    loss += s[j] - own
                    W[t[n]] += eta0 * Phi[n]
                    W[j] -= eta0 * Phi[n]
                    mistakes += 1
        if mistakes == 0:
            return W, epoch, True
        if tol is not None:  # sklearn.linear_model._sgd_fast, on the mean loss
            no_improvement = no_improvement + 1 if loss / len(y) > best - tol else 0
            best = min(best, loss / len(y))
            if no_improvement >= n_iter_no_change:
                return W, epoch, False
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
@pytest.mark.parametrize("tol", [None, 1e-3, 0.05])
def test_blocked_updates_equal_the_per_sample_loop(k, shuffle, tol):
    X, y = separable(n=700, k=k, margin=0.05, seed=k)  # > 2 blocks, many mistakes
    model = Perceptron(shuffle=shuffle, random_state=3, max_iter=50, tol=tol)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    W, n_iter, converged = naive_perceptron(X, y, shuffle=shuffle, random_state=3, max_iter=50,
                                            tol=tol)
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
        model = Perceptron(max_iter=25, random_state=0, tol=None).fit(X, y)
    assert not model.converged_ and model.n_iter_ == 25
    assert np.all(model.history_ > 0)
    assert np.all(np.isfinite(model.coef_))


def overlapping(n=6000, d=12, seed=0):
    """Two classes that no hyperplane separates (a noisy linear rule)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, (X[:, 0] + X[:, 1] + rng.normal(size=n) > 0).astype(int)


@pytest.mark.parametrize("k", [2, 3])
def test_tol_stops_early_on_data_that_are_not_separable(k):
    X, y = overlapping(seed=k)
    if k == 3:
        y = y + (X[:, 2] + np.random.default_rng(9).normal(size=len(y)) > 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # a tol stop does not warn
        model = Perceptron(random_state=0).fit(X, y)
    assert not model.converged_ and model.n_iter_ < 50  # of max_iter=1000
    assert model.loss_curve_.shape == model.history_.shape == (model.n_iter_,)
    # the rule: the last n_iter_no_change epochs did not beat the best before them by tol
    best = model.loss_curve_[:-5].min()
    assert np.all(model.loss_curve_[-5:] > best - 1e-3)
    assert k == 3 or model.score(X, y) > 0.6
    bigger = Perceptron(random_state=0, n_iter_no_change=10).fit(X, y)
    assert bigger.n_iter_ > model.n_iter_


def test_tol_none_runs_max_iter_epochs():
    X, y = overlapping(n=1000)
    with pytest.warns(ConvergenceWarning, match="not linearly separable"):
        model = Perceptron(random_state=0, tol=None, max_iter=40).fit(X, y)
    assert model.n_iter_ == 40 and model.history_.size == 40 and not model.converged_


def test_where_the_stop_does_not_trigger_the_fit_is_unchanged():
    # Separable data converge before any n_iter_no_change epochs without progress:
    # the tolerance changes nothing, bit for bit.
    for k in (2, 3):
        X, y = separable(k=k, seed=20 + k)
        a = Perceptron(random_state=0).fit(X, y)
        b = Perceptron(random_state=0, tol=None).fit(X, y)
        assert a.converged_ and b.converged_ and a.n_iter_ == b.n_iter_
        np.testing.assert_array_equal(a.coef_, b.coef_)
        np.testing.assert_array_equal(a.intercept_, b.intercept_)
        np.testing.assert_array_equal(a.loss_curve_, b.loss_curve_)
    # on data that do not separate, tol=None and a stop that never comes agree too
    X, y = overlapping(n=800)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = Perceptron(random_state=1, max_iter=30, n_iter_no_change=1000).fit(X, y)
        b = Perceptron(random_state=1, max_iter=30, tol=None).fit(X, y)
    assert a.n_iter_ == b.n_iter_ == 30
    np.testing.assert_array_equal(a.coef_, b.coef_)


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
    (dict(tol=-1.0), ValueError), (dict(tol="small"), ValueError),
    (dict(n_iter_no_change=0), ValueError),
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
