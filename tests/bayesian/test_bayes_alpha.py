"""alpha=None (MacKay's re-estimation) and the Laplace evidence, checked by brute force."""
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import optimize
from scipy.special import log_softmax, softmax
from sklearn.datasets import load_iris, load_wine
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from tests.glm.conftest import synthetic_logit

from problin import BayesianLogisticRegression, LogisticRegression
from problin.exceptions import ConvergenceWarning


def _softmax_problem(n=40, seed=3):
    """Three overlapping classes, two features: a finite, well-posed MAP."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    logits = np.column_stack([np.zeros(n), 1.5 * X[:, 0], -X[:, 0] + X[:, 1]])
    y = np.array([rng.choice(3, p=softmax(row)) for row in logits])
    return X, y


def _brute_force_log_evidence(X, y, alpha, intercept_alpha):
    """``ln p(t | w) + ln N(w | 0, P^-1) + (P/2) ln 2 pi - ln|H| / 2`` at the MAP, from
    scratch: all K blocks with their own (proper) prior, the MAP by BFGS, ``H`` by
    central differences of the analytic gradient.

    The intercepts' prior is on the intercepts at the centre of the data (the
    column means: the model's sample is every row here), so the problem is
    solved on centred columns and the MAP mapped back (``b = b_c - mean^T w``;
    the map has unit determinant, so the evidence is the same)."""
    mean = X.mean(axis=0)
    K, Phi = 3, np.column_stack([np.ones(len(X)), X - mean])
    p = Phi.shape[1]
    prec = np.tile(np.r_[intercept_alpha, np.full(p - 1, alpha)], K)
    T = np.eye(K)[y]

    def neg_log_post(theta):
        A = Phi @ theta.reshape(K, p).T
        value = -np.sum(T * log_softmax(A, axis=1)) + 0.5 * prec @ theta ** 2
        grad = ((softmax(A, axis=1) - T).T @ Phi).ravel() + prec * theta
        return value, grad

    res = optimize.minimize(neg_log_post, np.zeros(K * p), jac=True, method="BFGS",
                            options={"gtol": 1e-11, "maxiter": 10000})
    theta, h = res.x, 1e-5
    H = np.array([(neg_log_post(theta + h * e)[1] - neg_log_post(theta - h * e)[1]) / (2 * h)
                  for e in np.eye(K * p)])
    H = 0.5 * (H + H.T)
    A = Phi @ theta.reshape(K, p).T
    log_lik = np.sum(T * log_softmax(A, axis=1))
    log_prior = 0.5 * np.sum(np.log(prec / (2 * np.pi))) - 0.5 * prec @ theta ** 2
    logdet = np.linalg.slogdet(H)[1]
    Theta = theta.reshape(K, p).copy()
    Theta[:, 0] -= Theta[:, 1:] @ mean
    return log_lik + log_prior + 0.5 * K * p * np.log(2 * np.pi) - 0.5 * logdet, Theta.ravel()


@pytest.mark.parametrize("alpha", [0.01, 0.3, 1.0, 10.0])
def test_softmax_laplace_evidence_equals_brute_force(alpha):
    X, y = _softmax_problem()
    model = BayesianLogisticRegression(alpha=alpha, intercept_alpha=0.5).fit(X, y)
    expected, theta = _brute_force_log_evidence(X, y, alpha, 0.5)
    assert_allclose(model.posterior_mean_, theta, atol=1e-5)
    assert model.log_evidence_ == pytest.approx(expected, abs=1e-6)


def test_alpha_none_is_at_the_brute_force_evidence_maximum():
    X, y = _softmax_problem()
    grid = np.geomspace(1e-3, 1e2, 31)
    brute = [_brute_force_log_evidence(X, y, a, 0.5)[0] for a in grid]
    ours = [BayesianLogisticRegression(alpha=a, intercept_alpha=0.5).fit(X, y).log_evidence_
            for a in grid]
    assert_allclose(ours, brute, atol=1e-6)
    best = int(np.argmax(brute))
    assert 0 < best < grid.size - 1  # an interior maximum
    model = BayesianLogisticRegression(alpha=None, intercept_alpha=0.5).fit(X, y)
    # MacKay's fixed point neglects the change of the data Hessian along w_MAP: on
    # 40 rows it lands 1.7 x from the maximiser, 0.08 nats below the maximum (far
    # below the 1 nat that would make one alpha notably more probable than another)
    assert abs(np.log(model.alpha_ / grid[best])) < np.log(2.0)
    assert model.log_evidence_ > max(brute) - 0.25


def _reestimate(model):
    """MacKay's ``gamma / |w|^2`` over the weights (intercepts left out)."""
    p = model.posterior_mean_.size // model._n_blocks
    mask = np.tile(np.arange(p) > 0, model._n_blocks)
    w = model.posterior_mean_[mask]
    gamma = mask.sum() - model.alpha_ * np.trace(model.posterior_cov_[np.ix_(mask, mask)])
    return gamma / (w @ w)


@pytest.mark.parametrize("data", ["binary", "softmax"])
def test_alpha_none_is_the_fixed_point_near_the_evidence_maximum(data):
    X, y = synthetic_logit(n=300, d=5, seed=4) if data == "binary" else _softmax_problem()
    model = BayesianLogisticRegression(alpha=None).fit(X, y)
    assert model.converged_
    assert _reestimate(model) == pytest.approx(model.alpha_, rel=1e-5)
    # on data that are not separable, close to the evidence's maximum
    grid = model.alpha_ * np.geomspace(0.01, 100, 41)
    values = [BayesianLogisticRegression(alpha=a).fit(X, y).log_evidence_ for a in grid]
    assert model.log_evidence_ > max(values) - (0.01 if data == "binary" else 0.25)
    again = BayesianLogisticRegression(alpha=model.alpha_).fit(X, y)
    assert_allclose(again.posterior_mean_, model.posterior_mean_, atol=1e-8)


def test_alpha_none_needs_few_fits(monkeypatch):
    from problin.bayesian import _fit
    calls = []
    laplace = _fit.laplace
    monkeypatch.setattr(_fit, "laplace", lambda *a, **k: calls.append(1) or laplace(*a, **k))
    X, y = load_iris(return_X_y=True)
    BayesianLogisticRegression(alpha=None).fit(StandardScaler().fit_transform(X), y)
    assert len(calls) <= 10


@pytest.mark.parametrize("load, limit", [(load_iris, 0.2), (load_wine, 0.25)])
def test_multiclass_alpha_none_cross_validates(load, limit):
    """Wine is linearly separable: the exact maximiser of the Laplace evidence runs to
    alpha -> 0, where the Laplace posterior predicts ~1/3 everywhere (log-loss ln 3)."""
    X, y = load(return_X_y=True)
    model = make_pipeline(StandardScaler(), BayesianLogisticRegression(alpha=None))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        proba = cross_val_predict(model, X, y, method="predict_proba",
                                  cv=StratifiedKFold(5, shuffle=True, random_state=0))
    log_loss = -np.mean(np.log(proba[np.arange(y.size), y]))
    assert log_loss < limit
    fitted = model.fit(X, y)[-1]
    assert 1e-3 < fitted.alpha_ < 1e2


def test_uninformative_features_send_alpha_to_the_bound_with_a_warning():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(200, 2)), rng.integers(0, 2, 200)  # noise: no fixed point
    with pytest.warns(ConvergenceWarning, match="no fixed point"):
        model = BayesianLogisticRegression(alpha=None).fit(X, y)
    # the bound, 1e8 as the precision of weights on unit-spread columns: alpha_
    # times the geometric mean of 1 / s_j^2 (every row is the sample here)
    unit = np.exp(np.mean(np.log(1.0 / X.std(axis=0) ** 2)))
    assert model.alpha_ == pytest.approx(1e8 / unit)
    X[:] = 1.0  # constant columns: w_MAP = 0 exactly, the re-estimate is undefined
    with pytest.warns(ConvergenceWarning, match="no fixed point"):
        model = BayesianLogisticRegression(alpha=None).fit(X, np.tile([0, 1], 100))
    assert_allclose(model.predict_proba(X[:3]), 0.5)


def test_mackay_alpha_search_on_known_maps():
    from problin._core.bayes.logistic import mackay_alpha
    calls = []

    def sqrt_map(alpha):  # fixed point 9, plain iteration halves ln(alpha / 9) per step
        calls.append(alpha)
        return 3.0 * np.sqrt(alpha)

    alpha, converged = mackay_alpha(sqrt_map, 1e-6)
    assert converged and alpha == pytest.approx(9.0, rel=1e-6) and len(calls) <= 10
    assert mackay_alpha(lambda a: 2.0 * a, bounds=(1e-3, 1e3)) == (pytest.approx(1e3), False)
    assert mackay_alpha(lambda a: 0.5 * a, bounds=(1e-3, 1e3)) == (pytest.approx(1e-3), False)
    assert mackay_alpha(lambda a: np.inf) == (1.0, False)


def test_softmax_posterior_covariance_holds_the_centred_intercepts_sum():
    """As documented: the mean's raw intercepts sum to zero (its slopes too), and
    posterior_cov_ gives no variance to the sum of the intercepts at the data's centre,
    sum_k (b_k + c^T w_k) (so it maps with the columns' offsets), unlike
    LogisticRegression(alpha)'s covariance_, which holds the raw sum."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2)) + [100.0, 0.0]
    y = np.digitize(X[:, 0] - 100 + 0.5 * rng.normal(size=200), [-0.5, 0.5])
    model = BayesianLogisticRegression(alpha=1.5).fit(X, y)
    K, p = 3, 3
    assert abs(model.intercept_.sum()) < 1e-10 and np.allclose(model.coef_.sum(axis=0), 0,
                                                                atol=1e-10)
    centred, raw = np.zeros(K * p), np.zeros(K * p)
    for k in range(K):
        centred[k * p] = raw[k * p] = 1.0
        centred[k * p + 1:(k + 1) * p] = X.mean(axis=0)
    V = model.posterior_cov_
    assert abs(centred @ V @ centred) <= 1e-9 * np.trace(V)
    assert raw @ V @ raw > 1.0  # the raw sum varies: the convention differs from...
    lr = LogisticRegression(alpha=1.5).fit(X, y)
    assert abs(raw @ lr.covariance_ @ raw) <= 1e-9 * np.trace(lr.covariance_)  # ...this one
    assert_allclose(np.diag(V)[1::p], np.diag(lr.covariance_)[1::p], rtol=1e-6)  # slopes
