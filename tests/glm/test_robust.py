"""Robust (HC0-HC3) and cluster covariances of the GLMs against statsmodels."""
import numpy as np
import pytest
import statsmodels.api as sm
import statsmodels.stats.sandwich_covariance as sw
from numpy.testing import assert_allclose
from scipy import stats

from problin import LogisticRegression, ProbitRegression
from tests.glm._datasets15 import BINARY, SOFTMAX, design, weights

DISCRETE = {LogisticRegression: sm.Logit, ProbitRegression: sm.Probit}


def _groups(name, X):
    if name == "fair":
        return X["age"].to_numpy()
    if name == "anes96-vote" or name == "anes96-party":
        return X["educ"].to_numpy()
    return np.arange(len(X)) % 9


def _ref(model, X, y, **kw):
    return DISCRETE[model](y, design(X)).fit(method="newton", tol=1e-14, maxiter=100, disp=0,
                                             **kw)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("model", [LogisticRegression, ProbitRegression])
def test_hc0_and_cluster_match_statsmodels(model, name):
    X, y = BINARY[name]()
    ours = model(cov_type="HC0").fit(X, y)
    ref = _ref(model, X, y, cov_type="HC0")
    assert_allclose(ours.covariance_, ref.cov_params(), rtol=1e-6, atol=1e-14)
    assert_allclose(ours.summary()["std_err"], ref.bse, rtol=1e-6)
    g = _groups(name, X)
    ours = model(cov_type="cluster").fit(X, y, groups=g)
    ref = _ref(model, X, y, cov_type="cluster", cov_kwds={"groups": g})
    assert_allclose(ours.covariance_, ref.cov_params(), rtol=1e-6, atol=1e-14)
    assert_allclose(ours.summary()["std_err"], ref.bse, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("model", [LogisticRegression, ProbitRegression])
def test_hc1_is_hc0_with_the_degrees_of_freedom_factor(model, name):
    X, y = BINARY[name]()
    ours = model(cov_type="HC1").fit(X, y)
    ref = _ref(model, X, y)
    assert_allclose(ours.covariance_, sw.cov_white_simple(ref, use_correction=True),
                    rtol=1e-6, atol=1e-14)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("cov_type,power", [("HC2", 1), ("HC3", 2)])
def test_hc2_hc3_logit_use_the_glm_leverage(cov_type, power, name):
    X, y = BINARY[name]()
    ours = LogisticRegression(cov_type=cov_type).fit(X, y)
    glm = sm.GLM(y, design(X), family=sm.families.Binomial()).fit(tol=1e-14)
    h = glm.get_influence().hat_matrix_diag
    S = glm.model.score_obs(glm.params) / (1 - h)[:, None] ** (power / 2)
    bread = glm.cov_params()
    assert_allclose(ours.covariance_, bread @ (S.T @ S) @ bread, rtol=1e-6, atol=1e-14)


@pytest.mark.parametrize("cov_type", ["HC2", "HC3"])
def test_hc2_hc3_probit_use_the_observed_curvature(cov_type):
    X, y = BINARY["spector"]()
    ours = ProbitRegression(cov_type=cov_type).fit(X, y)
    ref = _ref(ProbitRegression, X, y)
    Z = design(X)
    S = ref.model.score_obs(ref.params)
    B = ref.cov_params()
    # the observed information per row: -d^2 log p_i / d eta^2 (from the row Hessians)
    eta = Z @ ref.params
    q = 2 * y - 1
    lam = q * stats.norm.pdf(q * eta) / stats.norm.cdf(q * eta)
    c = lam * (lam + eta)
    h = c * np.einsum("ij,jk,ik->i", Z, B, Z)
    S = S / (1 - h)[:, None] ** (0.5 if cov_type == "HC2" else 1.0)
    assert_allclose(ours.covariance_, B @ (S.T @ S) @ B, rtol=1e-6, atol=1e-14)


@pytest.mark.parametrize("name", sorted(SOFTMAX))
def test_softmax_hc0_and_cluster_match_mnlogit(name):
    X, y = SOFTMAX[name]()
    ours = LogisticRegression(cov_type="HC0").fit(X, y)
    ref = sm.MNLogit(y, design(X)).fit(method="newton", tol=1e-14, maxiter=200, disp=0,
                                       cov_type="HC0")
    assert_allclose(ours.covariance_, ref.cov_params(), rtol=1e-6, atol=1e-14)
    g = _groups(name, X)
    ours = LogisticRegression(cov_type="cluster").fit(X, y, groups=g)
    ref = sm.MNLogit(y, design(X)).fit(method="newton", tol=1e-14, maxiter=200, disp=0,
                                       cov_type="cluster", cov_kwds={"groups": g})
    assert_allclose(ours.covariance_, ref.cov_params(), rtol=1e-6, atol=1e-14)
    assert_allclose(ours.summary()["std_err"], np.asarray(ref.bse).T.ravel(), rtol=1e-6)


@pytest.mark.parametrize("cov_type", ["HC0", "HC1", "HC2", "HC3", "cluster"])
@pytest.mark.parametrize("model", [LogisticRegression, ProbitRegression])
def test_frequency_weights_are_duplicated_rows(model, cov_type):
    X, y = BINARY["spector"]()
    w = weights(len(y))
    g = np.arange(len(y)) % 5
    kw = {"groups": g} if cov_type == "cluster" else {}
    ours = model(cov_type=cov_type).fit(X, y, sample_weight=w, **kw)
    rows = np.repeat(np.arange(len(y)), w.astype(int))
    kw = {"groups": g[rows]} if cov_type == "cluster" else {}
    dup = model(cov_type=cov_type).fit(X.iloc[rows], y[rows], **kw)
    assert_allclose(ours.covariance_, dup.covariance_, rtol=1e-8)


def test_default_covariance_is_unchanged():
    X, y = BINARY["fair"]()
    a = LogisticRegression().fit(X, y)
    b = LogisticRegression(cov_type="nonrobust").fit(X, y)
    assert_allclose(a.covariance_, b.covariance_, rtol=0)
    assert_allclose(a.covariance_, _ref(LogisticRegression, X, y).cov_params(), rtol=1e-6)


def test_bad_groups_fail_clearly():
    X, y = BINARY["spector"]()
    with pytest.raises(ValueError, match="needs the cluster of every row"):
        LogisticRegression(cov_type="cluster").fit(X, y)
    with pytest.raises(ValueError, match="one label per row"):
        LogisticRegression(cov_type="cluster").fit(X, y, groups=np.arange(5))
    with pytest.raises(ValueError, match="at least two clusters.*holds 1"):
        LogisticRegression(cov_type="cluster").fit(X, y, groups=np.zeros(len(y)))
    with pytest.raises(ValueError, match="only used with cov_type='cluster'"):
        LogisticRegression(cov_type="HC0").fit(X, y, groups=np.arange(len(y)))
    with pytest.raises(ValueError, match="cov_type"):
        LogisticRegression(cov_type="HC9").fit(X, y)


def test_softmax_leverage_covariances_are_refused():
    X, y = SOFTMAX["wine"]()
    with pytest.raises(ValueError, match="leverage"):
        LogisticRegression(cov_type="HC3").fit(X, y)


@pytest.mark.parametrize("cov_type", ["HC0", "HC3", "cluster"])
def test_robust_covariance_of_slopes_ignores_column_shifts(cov_type):
    X, y = BINARY["spector"]()
    g = np.arange(len(y)) % 6
    kw = {"groups": g} if cov_type == "cluster" else {}
    a = LogisticRegression(cov_type=cov_type).fit(X, y, **kw)
    b = LogisticRegression(cov_type=cov_type).fit(X + np.array([1e6, -3e5, 0.0]), y, **kw)
    assert_allclose(b.covariance_[1:, 1:], a.covariance_[1:, 1:], rtol=1e-6)


def test_penalised_sandwich_uses_the_penalised_bread():
    X, y = BINARY["breast-cancer"]()
    alpha = 2.0
    model = LogisticRegression(alpha=alpha, cov_type="HC0").fit(X, y)
    Z = design(X)
    theta = np.concatenate([model.intercept_, model.coef_.ravel()])
    p = 1 / (1 + np.exp(-(Z @ theta)))
    H = Z.T @ (Z * (p * (1 - p))[:, None]) + np.diag([0.0] + [alpha] * (Z.shape[1] - 1))
    B = np.linalg.inv(H)
    S = Z * (p - y)[:, None]
    assert_allclose(model.covariance_, B @ (S.T @ S) @ B, rtol=1e-6)


@pytest.mark.parametrize("model, classes", [(LogisticRegression, 2), (LogisticRegression, 3),
                                            (ProbitRegression, 2)])
def test_clusters_of_zero_weight_are_no_clusters(model, classes):
    """Clusters whose rows all have weight 0 counted in the factor G / (G - 1): standard
    errors 2.3 % below those of the fit with the rows dropped (G = 12 for 8). Now equal,
    as for least squares."""
    rng = np.random.default_rng(0)
    n = 480
    X = rng.normal(size=(n, 2))
    groups = np.repeat(np.arange(12), n // 12)
    eta = X @ [1.0, -0.5] + rng.normal(size=12)[groups]
    y = (np.digitize(eta + rng.logistic(size=n), [-1.0, 1.0]) if classes == 3
         else (eta + rng.logistic(size=n) > 0).astype(int))
    w = np.where(groups >= 8, 0.0, 1.0)
    a = model(cov_type="cluster").fit(X, y, sample_weight=w, groups=groups)
    keep = w > 0
    b = model(cov_type="cluster").fit(X[keep], y[keep], groups=groups[keep])
    np.testing.assert_allclose(a.covariance_, b.covariance_, rtol=1e-9)
