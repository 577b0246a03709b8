"""``partial_fit`` of LogisticRegression (binary, softmax) and ProbitRegression: stochastic
Newton steps on a stream (issue 37, item 3).

The recursion is checked against an independent transcription of the documented
algorithm (Bercu, Godichon-Baggioni & Portier 2020: the summed curvature held as a
matrix and solved at every row, where the library keeps its inverse by Sherman-Morrison),
the stream's estimate against the batch maximum-likelihood fit (within 2 of its
standard errors; with 20 correlated columns too), and the stream's state against any
chunking (bit for bit). The 1,000,000-row checks are ``bench/bench_partial_fit.py``.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import expit, ndtr, softmax

from problin import LogisticRegression, ProbitRegression

RNG = np.random.default_rng(37)
N = 2000
X = RNG.normal(size=(N, 2)) * [2.0, 0.5] + [10.0, -3.0]  # units and offsets differ
Z = (X - [10.0, -3.0]) / [2.0, 0.5]
Y_BIN = (RNG.random(N) < expit(0.4 + Z @ [0.7, -0.6])).astype(int)
_P3 = softmax(np.c_[np.zeros(N), 0.5 + Z @ [0.8, -0.5], -0.3 + Z @ [-0.4, 0.9]], axis=1)
Y_3 = (_P3.cumsum(axis=1) < RNG.random((N, 1))).sum(axis=1)
MODELS = {"logit": (LogisticRegression, Y_BIN), "probit": (ProbitRegression, Y_BIN),
          "softmax": (LogisticRegression, Y_3)}


def _stream(est, X, y, cuts, **kwargs):
    model = est()
    bounds = [0, *sorted(set(cuts)), X.shape[0]]
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        if hi > lo:
            model.partial_fit(X[lo:hi], y[lo:hi], classes=np.unique(y), **kwargs)
    return model


def _reference_logit(X, y, warmup_per_column=10, floor=0.25 * 0.01, power=0.49, share=0.1):
    """The documented algorithm, transcribed directly: the first ``W = 10 (D + 1)`` rows
    fix the standardisation (their mean and population standard deviation) and give the
    start, one Newton step from zero with ``(1/4) (sum v v^T + I)``, ``v = [1, z]``, of
    which ``S`` keeps a tenth; then every row adds its curvature ``h = max(p (1 - p),
    floor / n^power)`` to ``S`` and steps ``theta <- theta + S^-1 (y - p - h' l / 2) v``
    with ``h' = p (1 - p) (1 - 2 p)`` and the leverage ``l = v^T S_prev^-1 v`` (``S``
    solved, not inverted by updates). Returns the raw ``[b, w]``."""
    n, D = X.shape
    W = warmup_per_column * (D + 1)
    c, s = X[:W].mean(axis=0), X[:W].std(axis=0)
    V = np.c_[np.ones(n), (X - c) / s]
    S = 0.25 * (V[:W].T @ V[:W] + np.eye(D + 1))
    theta = np.linalg.solve(S, V[:W].T @ (y[:W] - 0.5))
    S *= share
    for k in range(W, n):
        p = expit(V[k] @ theta)
        leverage = V[k] @ np.linalg.solve(S, V[k])
        S += max(p * (1 - p), floor / (k + 1) ** power) * np.outer(V[k], V[k])
        remainder = 0.5 * p * (1 - p) * (1 - 2 * p) * leverage
        theta = theta + np.linalg.solve(S, V[k] * (y[k] - p - remainder))
    return np.r_[theta[0] - (theta[1:] / s) @ c, theta[1:] / s]


def test_the_recursion_is_the_documented_stochastic_newton_algorithm():
    model = LogisticRegression().partial_fit(X[:300], Y_BIN[:300])
    expected = _reference_logit(X[:300], Y_BIN[:300])
    np.testing.assert_allclose(np.r_[model.intercept_, model.coef_[0]], expected, rtol=1e-9)
    assert model.t_ == 300 and model.n_iter_ == 300 and model.solver_ == "sgd"


def test_twenty_correlated_columns_converge_to_the_mle():
    # (first-order steps were 6-33 standard errors off here at 200,000 rows)
    rng = np.random.default_rng(20)
    n, D = 6000, 20
    Xw = (rng.normal(size=(n, D)) + rng.normal(size=(n, 1))) * np.geomspace(1e-2, 1e2, D)
    y = (rng.random(n) < expit(0.3 + (Xw / np.geomspace(1e-2, 1e2, D)) @ rng.normal(0, 0.3, D))
         ).astype(int)
    stream = _stream(LogisticRegression, Xw, y, range(1000, n, 1000))
    batch = LogisticRegression().fit(Xw, y)
    z = (np.r_[stream.intercept_, stream.coef_[0]]
         - np.r_[batch.intercept_, batch.coef_[0]]) / np.sqrt(np.diag(batch.covariance_))
    assert np.max(np.abs(z)) < 2.0, z


@pytest.mark.parametrize("name", MODELS)
def test_the_stream_is_within_two_standard_errors_of_the_mle(name):
    est, y = MODELS[name]
    stream = _stream(est, X, y, range(500, N, 500))
    batch = est().fit(X, y)
    se = np.sqrt(np.diag(batch.covariance_))
    first = 1 if name == "softmax" else 0  # (the reference class's zero block)
    z = (np.c_[stream.intercept_, stream.coef_][first:].ravel()
         - np.c_[batch.intercept_, batch.coef_][first:].ravel()) / se
    assert np.max(np.abs(z)) < 2.0, z
    # ... and the fitted attributes predict as a fit's do
    eta = stream.intercept_ + X[:5] @ stream.coef_.T
    proba = {"logit": lambda: np.c_[expit(-eta), expit(eta)],
             "probit": lambda: np.c_[ndtr(-eta), ndtr(eta)],
             "softmax": lambda: softmax(eta, axis=1)}[name]()
    np.testing.assert_allclose(stream.predict_proba(X[:5]), proba, rtol=1e-12)
    np.testing.assert_array_equal(stream.predict(X[:5]), stream.classes_[proba.argmax(1)])


@settings(max_examples=10, deadline=None)
@given(name=st.sampled_from(sorted(MODELS)),
       cuts=st.lists(st.integers(1, 99), max_size=6))
def test_any_chunking_gives_the_same_stream_bit_for_bit(name, cuts):
    est, y = MODELS[name]
    whole = _stream(est, X[:100], y[:100], [])
    chunked = _stream(est, X[:100], y[:100], cuts)
    np.testing.assert_array_equal(chunked.coef_, whole.coef_)
    np.testing.assert_array_equal(chunked.intercept_, whole.intercept_)


def test_the_stream_does_not_depend_on_the_columns_units_or_offsets():
    a = _stream(LogisticRegression, X[:500], Y_3[:500], [200])
    scale, shift = np.array([1e-3, -250.0]), np.array([7.0, 1e4])
    b = _stream(LogisticRegression, X[:500] * scale + shift, Y_3[:500], [200])
    np.testing.assert_allclose(b.coef_ * scale, a.coef_, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(b.predict_proba(X[:50] * scale + shift),
                               a.predict_proba(X[:50]), rtol=1e-8)


def test_weights_scale_a_rows_step_and_a_zero_weight_skips_it():
    w = RNG.integers(0, 3, 300).astype(float)
    weighted = LogisticRegression().partial_fit(X[:300], Y_BIN[:300], sample_weight=w)
    kept = w > 0
    dropped = LogisticRegression().partial_fit(X[:300][kept], Y_BIN[:300][kept],
                                               sample_weight=w[kept])
    np.testing.assert_array_equal(weighted.coef_, dropped.coef_)
    quadrupled = LogisticRegression().partial_fit(X[:300], Y_BIN[:300], sample_weight=4 * w)
    np.testing.assert_array_equal(quadrupled.coef_, weighted.coef_)


def test_fit_starts_over_and_partial_fit_after_fit_starts_a_new_stream():
    fresh = LogisticRegression().partial_fit(X[:200], Y_BIN[:200])
    model = LogisticRegression().partial_fit(X[200:400], Y_BIN[200:400]).fit(X, Y_BIN)
    np.testing.assert_array_equal(model.coef_, LogisticRegression().fit(X, Y_BIN).coef_)
    model.partial_fit(X[:200], Y_BIN[:200])
    np.testing.assert_array_equal(model.coef_, fresh.coef_)


def test_the_covariance_is_computed_on_request_at_the_streamed_estimate():
    model = LogisticRegression().partial_fit(X[:1000], Y_BIN[:1000])
    assert model.covariance_ is None
    with pytest.raises(ValueError, match="partial_fit.*compute_covariance"):
        model.summary()
    model.compute_covariance(X[:1000], Y_BIN[:1000])
    Phi = np.c_[np.ones(1000), X[:1000]]
    p = expit(Phi @ np.r_[model.intercept_, model.coef_[0]])
    expected = np.linalg.inv(Phi.T @ (Phi * (p * (1 - p))[:, None]))
    np.testing.assert_allclose(model.covariance_, expected, rtol=1e-8)
    assert list(model.summary().index) == ["intercept", "x0", "x1"]


def test_bad_batches_are_refused_and_leave_the_model():
    with pytest.raises(ValueError, match="only one class \\(\\[1\\]\\).*classes="):
        LogisticRegression().partial_fit(X[:5], np.ones(5, int))
    model = LogisticRegression().partial_fit(X[:50], Y_BIN[:50])
    before = model.coef_.copy()
    with pytest.raises(ValueError, match="labels \\[7\\] that are not among"):
        model.partial_fit(X[:3], np.array([0, 7, 1]))
    with pytest.raises(ValueError, match="3 features"):
        model.partial_fit(np.c_[X[:3], X[:3, :1]], Y_BIN[:3])
    np.testing.assert_array_equal(model.coef_, before)
    assert model.t_ == 50
    with pytest.raises(AttributeError, match="penalty='firth'.*needs fit"):
        LogisticRegression(penalty="firth").partial_fit(X[:50], Y_BIN[:50])
    with pytest.raises(AttributeError, match="alpha=1.0"):
        ProbitRegression(alpha=1.0).partial_fit(X[:50], Y_BIN[:50])
    with pytest.raises(AttributeError, match="prior_precision needs fit"):
        LogisticRegression(prior_precision=[1.0, 1.0, 1.0]).partial_fit(X[:50], Y_BIN[:50])
    with pytest.raises(ValueError, match="binary model.*3 classes"):
        ProbitRegression().partial_fit(X[:50], Y_3[:50])


def test_a_saved_stream_continues_after_loading(tmp_path):
    from problin.io import load, save

    model = _stream(LogisticRegression, X[:150], Y_3[:150], [])
    save(model, tmp_path / "stream.json")
    loaded = load(tmp_path / "stream.json")
    np.testing.assert_array_equal(loaded.predict_proba(X[:5]), model.predict_proba(X[:5]))
    loaded.partial_fit(X[150:200], Y_3[150:200])
    np.testing.assert_array_equal(
        loaded.coef_, _stream(LogisticRegression, X[:200], Y_3[:200], [150]).coef_)


def test_without_an_intercept_the_columns_are_scaled_by_their_root_mean_square():
    # (columns near zero: far from it, a model through the origin is ill-conditioned and
    # first-order steps converge slowly along the columns' common direction)
    W = Z * [2.0, 0.5] + [0.5, 0.1]
    y = (RNG.random(N) < expit(W @ [0.7, -0.6])).astype(int)
    stream = _stream(lambda: LogisticRegression(fit_intercept=False), W, y, [700])
    batch = LogisticRegression(fit_intercept=False).fit(W, y)
    z = (stream.coef_ - batch.coef_)[0] / np.sqrt(np.diag(batch.covariance_))
    assert np.max(np.abs(z)) < 2.0, z
    assert stream.intercept_.tolist() == [0.0]
    scaled = _stream(lambda: LogisticRegression(fit_intercept=False), W * [-1e3, 0.1], y, [700])
    np.testing.assert_allclose(scaled.coef_ * [-1e3, 0.1], stream.coef_, rtol=1e-9)


def test_a_stream_saved_by_the_averaged_gradient_version_upgrades_to_newton_steps():
    from problin._core.solvers.stochastic import StochasticState, raw_parameters
    from problin.io._schema import record_schema

    rng = np.random.default_rng(5)
    average = rng.normal(size=(2, 3))  # (softmax, 2 columns: raw [b, w] per free class)
    old = {"theta": average + 0.1, "average": average, "rows": 400, "weight": 400.0,
           "mean": np.array([10.0, -3.0]), "m2": 400.0 * np.array([4.0, 0.25]),
           "intercept": True, "information": 0.2}
    state = StochasticState(**record_schema("problin.StochasticState").from_file(1, old))
    np.testing.assert_allclose(raw_parameters(state), average, rtol=1e-14)  # (the estimate)
    np.testing.assert_array_equal(state.scale, [2.0, 0.5])
    np.testing.assert_allclose(state.inverse, np.eye(6) / 80.0, rtol=1e-15)
