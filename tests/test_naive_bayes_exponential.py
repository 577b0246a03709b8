"""ExponentialFamilyNB: maximum likelihood per family against closed forms, parity with
GaussianNB and BernoulliNB, posteriors against scipy.stats in log space, the linear
log-odds, streaming, support errors, scikit-learn's estimator checks."""
import mpmath
import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy import stats
from scipy.special import logsumexp
from sklearn.datasets import load_wine
from sklearn.utils.estimator_checks import parametrize_with_checks

from problin import BernoulliNB, GaussianNB
from problin.naive_bayes import ExponentialFamilyNB

MIXED = {0: "gaussian", 1: "bernoulli", 2: "categorical", 3: "poisson", 4: "exponential",
         5: "gamma"}


def _mixed(seed=0, n=90):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = np.column_stack([
        rng.normal(y * 1.5, 1.0 + y),
        rng.random(n) < 0.2 + 0.3 * y,
        rng.integers(0, 3 + y),  # class 2 alone has level 4
        rng.poisson(1.0 + 2.0 * y),
        rng.exponential(1.0 + y),
        rng.gamma(2.0 + y, 1.0),
    ]).astype(float)
    return X, y


def _gamma_shape_mp(x, w):
    """The Gamma's ML shape by mpmath at 40 digits: log a - digamma(a) = s."""
    mpmath.mp.dps = 40
    xs, ws = [mpmath.mpf(float(v)) for v in x], [mpmath.mpf(float(v)) for v in w]
    n = sum(ws)
    s = mpmath.log(sum(a * b for a, b in zip(ws, xs)) / n) \
        - sum(b * mpmath.log(a) for a, b in zip(xs, ws)) / n
    return float(mpmath.findroot(lambda a: mpmath.log(a) - mpmath.digamma(a) - s, 1.0 / s))


def test_each_family_is_its_closed_form_maximum_likelihood():
    X, y = _mixed()
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    nb = ExponentialFamilyNB(MIXED, alpha=0.0).fit(X, y, sample_weight=w)
    for k in range(3):
        xk, wk = X[y == k], w[y == k]
        mean = wk @ xk / wk.sum()
        var = wk @ (xk - mean) ** 2 / wk.sum()
        assert_allclose(nb.params_[0][k], [mean[0], var[0] + nb.epsilon_[0]], rtol=1e-12)
        assert_allclose(nb.params_[1][k], [mean[1]], rtol=1e-12)          # Bernoulli p
        freq = np.bincount(xk[:, 2].astype(int), weights=wk, minlength=5) / wk.sum()
        assert_allclose(nb.params_[2][k], freq, rtol=1e-12)               # categorical
        assert_allclose(nb.params_[3][k], [mean[3]], rtol=1e-12)          # Poisson lambda
        assert_allclose(nb.params_[4][k], [mean[4]], rtol=1e-12)          # exponential mean
        assert_allclose(nb.params_[5][k], [mean[5], _gamma_shape_mp(xk[:, 5], wk)],
                        rtol=1e-12)                                       # Gamma
    assert_allclose(nb.epsilon_[0], 0.1 * sum(
        w[y == k] @ (X[y == k, 0] - w[y == k] @ X[y == k, 0] / w[y == k].sum()) ** 2
        for k in range(3)) / w.sum(), rtol=1e-12)
    # scipy's numerical fit agrees to its own optimiser's tolerance
    a, _, scale = stats.gamma.fit(X[y == 0, 5], floc=0)
    unweighted = ExponentialFamilyNB({0: "gamma"}).fit(X[:, 5:], y)
    assert_allclose(unweighted.params_[0][0], [a * scale, a], rtol=1e-4)


def test_gamma_shape_solves_its_equation_to_rounding_for_every_spread():
    """log a - digamma(a) = s from nearly constant data (s = 1e-10, a = 5e9: both sides
    ~log a, their difference 1e-10) to very skewed data (s = 50), against mpmath."""
    from problin._core.model.feature_families import gamma_shape
    mpmath.mp.dps = 40
    s = np.array([1e-10, 1e-4, 0.02, 1.0, 50.0])
    for v, a in zip(s, gamma_shape(s)):
        ref = mpmath.findroot(lambda x: mpmath.log(x) - mpmath.digamma(x) - mpmath.mpf(v),
                              mpmath.mpf(float(a)))
        assert abs(float(a / ref) - 1.0) < 1e-14, (v, a)


def test_gaussian_and_bernoulli_columns_equal_gaussian_nb_and_bernoulli_nb():
    X, y = load_wine(return_X_y=True)
    for smoothing in (0.1, 1e-9):
        ours = ExponentialFamilyNB(var_smoothing=smoothing).fit(X, y)
        ref = GaussianNB(var_smoothing=smoothing).fit(X, y)
        assert_allclose(ours.predict_log_proba(X), ref.predict_log_proba(X), rtol=1e-10,
                        atol=1e-10)
        assert_allclose(np.stack([p[:, 1] for p in ours.params_], axis=1), ref.var_,
                        rtol=1e-12)
    B = (X > np.median(X, axis=0)).astype(float)
    for alpha in (1.0, 0.3):
        ours = ExponentialFamilyNB(default="bernoulli", alpha=alpha).fit(B, y)
        ref = BernoulliNB(alpha=alpha, binarize=None).fit(B, y)
        assert_allclose(ours.predict_log_proba(B), ref.predict_log_proba(B), rtol=1e-10,
                        atol=1e-10)
        assert_allclose(np.log(np.stack([p[:, 0] for p in ours.params_], axis=1)),
                        ref.feature_log_prob_, rtol=1e-13)


def test_mixed_posteriors_equal_a_direct_log_space_computation():
    X, y = _mixed(2)
    nb = ExponentialFamilyNB(MIXED).fit(X, y)
    T, _ = _mixed(3, n=30)
    T[0, 2] = 4  # a level class 0 and 1 never saw: probability 0 there (alpha smooths
    # only the levels seen, 0..4 here: every class saw level 4 as "seen by the model")
    jll = np.empty((len(T), 3))
    for k in range(3):
        p = [q[k] for q in nb.params_]
        jll[:, k] = (np.log(np.mean(y == k))
                     + stats.norm.logpdf(T[:, 0], p[0][0], np.sqrt(p[0][1]))
                     + stats.bernoulli.logpmf(T[:, 1], p[1][0])
                     + np.log(p[2][T[:, 2].astype(int)])
                     + stats.poisson.logpmf(T[:, 3], p[3][0])
                     + stats.expon.logpdf(T[:, 4], scale=p[4][0])
                     + stats.gamma.logpdf(T[:, 5], p[5][1], scale=p[5][0] / p[5][1]))
    assert_allclose(nb.predict_log_proba(T), jll - logsumexp(jll, axis=1, keepdims=True),
                    rtol=1e-12, atol=1e-12)
    assert_allclose(nb.score_samples(T), logsumexp(jll, axis=1), rtol=1e-12)


def test_log_odds_are_linear_in_the_sufficient_statistics():
    """p(x | C_k) = h(x) exp(eta_k^T T(x) - A_k) with h shared: a_1 - a_0 is exactly
    (eta_1 - eta_0)^T T(x) + const, with the natural parameters' differences as slopes:
    log(lambda_1/lambda_0) per count, the logit difference per 0/1 value, the rate
    difference per positive value, and (x, log x) for the Gamma."""
    X, y = _mixed(4)
    X, y = X[y < 2], y[y < 2]
    cols = {1: "bernoulli", 3: "poisson", 4: "exponential", 5: "gamma"}
    Xs = X[:, [1, 3, 4, 5]]
    nb = ExponentialFamilyNB({i: d for i, d in enumerate(cols.values())}).fit(Xs, y)
    T, _ = _mixed(5, n=40)
    T = T[:, [1, 3, 4, 5]]
    a = nb.predict_log_proba(T)
    odds = a[:, 1] - a[:, 0]
    (p0, p1), (l0, l1), (m0, m1) = (nb.params_[i][:, 0] for i in range(3))
    (g0, k0), (g1, k1) = nb.params_[3]
    slope = np.array([np.log(p1 / (1 - p1)) - np.log(p0 / (1 - p0)), np.log(l1 / l0),
                      1 / m0 - 1 / m1, k0 / g0 - k1 / g1, k1 - k0])
    stats_ = np.column_stack([T[:, 0], T[:, 1], T[:, 2], T[:, 3], np.log(T[:, 3])])
    resid = odds - stats_ @ slope
    assert np.ptp(resid) < 1e-11 * np.abs(odds).max()  # a constant: linear exactly
    # Gaussian columns: linear in x where the classes share the variance
    rng = np.random.default_rng(6)
    G = rng.normal(size=(50, 2))
    G = np.vstack([G, G + [1.0, -2.0]])
    lab = np.repeat([0, 1], 50)
    lp = ExponentialFamilyNB().fit(G, lab).predict_log_proba(T[:, :2])
    design = np.column_stack([np.ones(len(T)), T[:, :2]])
    coef = np.linalg.lstsq(design, lp[:, 1] - lp[:, 0], rcond=None)[0]
    assert_allclose(design @ coef, lp[:, 1] - lp[:, 0], atol=1e-11)


def test_partial_fit_over_chunks_equals_fit():
    X, y = _mixed(7)
    w = np.random.default_rng(8).uniform(0.2, 3.0, len(y))
    order = np.argsort(X[:, 2], kind="stable")  # categorical levels arrive late
    X, y, w = X[order], y[order], w[order]
    full = ExponentialFamilyNB(MIXED).fit(X, y, sample_weight=w)
    stream = ExponentialFamilyNB(MIXED)
    for chunk in np.array_split(np.arange(len(y)), 5):
        stream.partial_fit(X[chunk], y[chunk], classes=[0, 1, 2], sample_weight=w[chunk])
    for a, b in zip(stream.params_, full.params_):
        assert_allclose(a, b, rtol=1e-12)
    assert_allclose(stream.predict_log_proba(X), full.predict_log_proba(X), rtol=1e-11,
                    atol=1e-11)


def test_zero_probability_rows_are_defined_never_nan():
    X = np.array([[0.0, 1], [0, 2], [0, 0], [3, 1], [5, 0], [4, 2]])
    y = np.array([0, 0, 0, 1, 1, 1])
    nb = ExponentialFamilyNB({0: "poisson", 1: "categorical"}).fit(X, y)
    p = nb.predict_proba([[2.0, 1], [0, 1], [2, 7]])
    assert_allclose(p[0], [0.0, 1.0])  # class 0 saw only zero counts: lambda = 0
    assert np.all(np.isfinite(p)) and np.all(p[1] > 0)
    assert_allclose(p[2], [0.0, 1.0])  # level 7 unseen by both: it moves nothing
    assert np.isneginf(nb.score_samples([[2.0, 7]])[0])


def test_a_stream_predicts_a_class_only_once_it_has_samples():
    X, y = _mixed(11)
    stream = ExponentialFamilyNB(MIXED, priors=[0.2, 0.3, 0.5])
    stream.partial_fit(X[y == 0], y[y == 0], classes=[0, 1, 2])
    assert_allclose(stream.predict_proba(X)[:, 0], 1.0)
    stream.partial_fit(X[y > 0], y[y > 0])
    full = ExponentialFamilyNB(MIXED, priors=[0.2, 0.3, 0.5]).fit(X, y)
    assert_allclose(stream.predict_log_proba(X), full.predict_log_proba(X), rtol=1e-11,
                    atol=1e-11)


def test_far_rows_are_gaussian_nbs_exact_posteriors():
    """The Gaussian columns are GaussianNB's model: rows at 1e20..1e300 (where the
    quadratic scores overflow or drown the linear log-odds) get its exact posteriors
    (tests/test_extreme_values.py checks those against 700 digits); a far row whose
    Gaussian columns favour a class another column rules out goes to the others."""
    X, y = _mixed(12)
    far = np.array([[1e200, 0.0], [-1e300, 1.0], [1e20, -1e20], [3e16, 2.0]])
    ours = ExponentialFamilyNB().fit(X[:, :1].repeat(2, axis=1) + X[:, 3:4], y)
    ref = GaussianNB().fit(X[:, :1].repeat(2, axis=1) + X[:, 3:4], y)
    np.testing.assert_array_equal(ours.predict_log_proba(far), ref.predict_log_proba(far))
    mixed = ExponentialFamilyNB({1: "poisson"}).fit(X[:, [0, 3]], y)
    p = mixed.predict_proba(np.array([[1e200, 0.0], [-1e200, 3.0]]))
    assert not np.isnan(p).any()
    assert_allclose(p.sum(axis=1), 1.0)
    lone = ExponentialFamilyNB({1: "poisson"}).fit([[0.0, 0], [1, 0], [5, 2], [9, 3]],
                                                   [0, 0, 1, 1])
    # At +-1e200 the Gaussian column favours class 1 (the wider) beyond the float range;
    # near the data (0.5) a count of 1, impossible in class 0 (lambda = 0), decides.
    far_rows = [[1e200, 0.0], [-1e200, 1.0], [0.5, 1.0]]
    assert_allclose(lone.predict_proba(far_rows), [[0, 1], [0, 1], [0, 1]])
    narrow = ExponentialFamilyNB({1: "poisson"}).fit([[0.0, 0], [4, 0], [5, 2], [5.5, 3]],
                                                     [0, 0, 1, 1])
    # Class 0 is the wider now: at 1e200 its Gaussian score exceeds class 1's by ~1e400,
    # but the count 1 rules class 0 out: class 1, not NaN.
    assert_allclose(narrow.predict_proba([[1e200, 1.0]]), [[0, 1]])


@pytest.mark.parametrize(("family", "value", "message"), [
    ("poisson", -1.0, "counts x >= 0"), ("gamma", 0.0, "x > 0"),
    ("exponential", -2.0, "x > 0"), ("bernoulli", 2.0, "0 and 1"),
    ("categorical", 1.5, "integers")])
def test_values_outside_the_support_name_the_column_and_rows(family, value, message):
    frame = pd.DataFrame({"age": [30.0, 40, 50, 60], "visits": [1.0, 1, 1, 1]})
    bad = frame.copy()
    bad.loc[2, "visits"] = value
    model = ExponentialFamilyNB({"visits": family})
    with pytest.raises(ValueError, match=rf"column 'visits' \(index 1\) is modelled as "
                                         rf"{family}.*{message}.*x\[2\] = {value:g}"):
        model.fit(bad, [0, 1, 0, 1])
    model.fit(frame, [0, 1, 0, 1])
    with pytest.raises(ValueError, match=r"column 'visits'.*x\[2\]"):
        model.predict(bad)


def test_bad_distribution_specifications():
    X, y = _mixed(9, n=12)
    with pytest.raises(ValueError, match="unknown distribution 'beta'.*gaussian"):
        ExponentialFamilyNB({0: "beta"}).fit(X, y)
    with pytest.raises(ValueError, match="names column 9, which X does not have"):
        ExponentialFamilyNB({9: "poisson"}).fit(X, y)
    with pytest.raises(ValueError, match="names column 'visits'"):
        ExponentialFamilyNB({"visits": "poisson"}).fit(X, y)
    with pytest.raises(ValueError, match="lists 2 families for 6 columns"):
        ExponentialFamilyNB(["poisson", "gamma"]).fit(X, y)


def test_a_model_file_round_trip_predicts_the_same(tmp_path):
    import problin
    X, y = _mixed(10)
    model = ExponentialFamilyNB([MIXED[j] for j in range(6)]).fit(X, y)
    problin.save(model, tmp_path / "m.problin")
    loaded = problin.load(tmp_path / "m.problin")
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    loaded.partial_fit(X[:9], y[:9])  # the statistics came back too
    model.partial_fit(X[:9], y[:9])
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))


@parametrize_with_checks([ExponentialFamilyNB()])
def test_sklearn_compatible(estimator, check):
    check(estimator)
