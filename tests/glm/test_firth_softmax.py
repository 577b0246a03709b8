"""Firth's penalty for the softmax (``LogisticRegression(penalty="firth")`` with K > 2
classes, the Jeffreys prior ``1/2 log |I|`` of the K - 1 contrasts): estimates and
standard errors (``I(theta_hat)^-1``, as R's brglm2 reports) against an independent
50-digit mpmath maximisation of the penalised log-likelihood written out directly;
finite estimates with a vanishing penalised gradient on separated classes; a softmax of
two classes equals the binary penalty; one clear error for FLIC/FLAC with K > 2.
"""
import warnings

import mpmath as mp
import numpy as np
import pytest
from scipy import linalg, optimize

from problin import LogisticRegression
from problin._core.model.design import Design
from problin._core.model.family_softmax import CategoricalSoftmax
from problin._core.model.families import class_family
from problin._core.model.objective import GLMObjective
from problin._core.model.objective_softmax import SoftmaxObjective
from problin._core.model.penalty_firth import JEFFREYS

DPS = 50


def _three_classes(seed: int = 1, n: int = 30):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    eta = np.column_stack([np.zeros(n), 0.5 + X @ [1.0, -0.5], -0.3 + X @ [-0.8, 1.2]])
    prob = np.exp(eta)
    prob /= prob.sum(axis=1, keepdims=True)
    return X, (prob.cumsum(axis=1) < rng.uniform(size=(n, 1))).sum(axis=1)


def _information_numpy(Z, P):
    """``sum_i (diag(p_i) - p_i p_i^T) (x) z_i z_i^T`` (float64, a start only)."""
    W = P[:, :, None] * (np.eye(P.shape[1]) - P[:, None, :])
    return np.einsum("iab,ij,ik->ajbk", W, Z, Z).reshape(P.shape[1] * Z.shape[1], -1)


def _penalised_numpy(beta, Z, t, M):
    eta = np.column_stack([np.zeros(len(t)), Z @ beta.reshape(M, -1).T])
    logp = eta - np.logaddexp.reduce(eta, axis=1, keepdims=True)
    logdet = np.linalg.slogdet(_information_numpy(Z, np.exp(logp[:, 1:])))[1]
    return float(logp[np.arange(len(t)), t].sum() + 0.5 * logdet)


def _penalised_mp(beta, Z, t, M):
    """``l(beta) + 1/2 log |I(beta)|`` at DPS digits, term by term."""
    p = len(Z[0])
    info = mp.zeros(M * p, M * p)
    loglik = mp.mpf(0)
    pairs = [(j, l) for j in range(p) for l in range(j, p)]
    for z, k in zip(Z, t):
        logits = [mp.mpf(0)] + [mp.fsum(beta[a * p + j] * z[j] for j in range(p))
                                for a in range(M)]
        total = mp.fsum(mp.exp(v) for v in logits)
        prob = [mp.exp(v) / total for v in logits[1:]]
        loglik += logits[k] - mp.log(total)
        zz = {(j, l): z[j] * z[l] for j, l in pairs}
        for a in range(M):
            for b in range(a, M):
                w = (prob[a] if a == b else 0) - prob[a] * prob[b]
                for (j, l), v in zz.items():
                    info[a * p + j, b * p + l] += w * v
                    if a != b:
                        info[a * p + l, b * p + j] += w * v if j != l else 0
    for r in range(M * p):  # the lower triangle from the upper, by symmetry
        for c in range(r):
            info[r, c] = info[c, r]
    return loglik + mp.log(mp.det(info)) / 2, info


def _gradient_mp(beta, Z, t, M, step=mp.mpf("1e-20")):
    """Central differences of ``_penalised_mp`` (error ~1e-40, rounding ~1e-30)."""
    grad = []
    for j in range(len(beta)):
        up, down = list(beta), list(beta)
        up[j] += step
        down[j] -= step
        grad.append((_penalised_mp(up, Z, t, M)[0] - _penalised_mp(down, Z, t, M)[0])
                    / (2 * step))
    return np.array(grad, dtype=object)


def _hessian_numpy(beta, Z, t, M, h=1e-3):
    """Central second differences of ``_penalised_numpy`` (relative error ~1e-6)."""
    E = h * np.eye(len(beta))
    return np.array([[(_penalised_numpy(beta + a + b, Z, t, M)
                       - _penalised_numpy(beta + a - b, Z, t, M)
                       - _penalised_numpy(beta - a + b, Z, t, M)
                       + _penalised_numpy(beta - a - b, Z, t, M)) / (4 * h * h)
                      for b in E] for a in E])


def _firth_mp(X, t):
    """The penalised maximum: a float64 quasi-Newton start (scipy, finite differences),
    then Newton steps with the 50-digit gradient and a float64 finite-difference Hessian
    (its 1e-6 error only slows the steps' contraction), to a step below 1e-18."""
    with mp.workdps(DPS):
        Zf = np.column_stack([np.ones(len(t)), X])
        M = int(t.max())
        start = optimize.minimize(lambda b: -_penalised_numpy(b, Zf, t, M),
                                  np.zeros(M * Zf.shape[1]), method="BFGS",
                                  options={"gtol": 1e-9}).x
        hess = _hessian_numpy(start, Zf, t, M)
        Z = [[mp.mpf(float(v)) for v in row] for row in Zf]
        beta = [mp.mpf(float(b)) for b in start]
        for _ in range(8):
            grad = _gradient_mp(beta, Z, t, M)
            step = mp.lu_solve(mp.matrix(hess.tolist()), mp.matrix(list(grad)))
            beta = [b - s for b, s in zip(beta, step)]
            if max(abs(s) for s in step) < mp.mpf("1e-18"):
                break
        cov = _penalised_mp(beta, Z, t, M)[1] ** -1
        return ([float(b) for b in beta],
                np.sqrt([float(cov[j, j]) for j in range(len(beta))]))


def _params(model):
    return np.column_stack([model.intercept_, model.coef_])[1:].ravel()


def _summary_se(model):
    return model.summary()["std_err"].to_numpy()


def test_firth_softmax_equals_mpmath():
    X, t = _three_classes()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = LogisticRegression(penalty="firth").fit(X, t)
    beta, se = _firth_mp(X, t)
    np.testing.assert_allclose(_params(model), beta, rtol=0, atol=1e-7)
    np.testing.assert_allclose(_summary_se(model), se, rtol=1e-7)
    text = " ".join(str(model.summary_text()).split())
    assert model.converged_ and "Firth" in text and "separated" not in text  # (overlap)


def test_firth_softmax_separated_is_finite():
    """Classes separated by x0 (ordered thresholds), alone and with a noise column: finite
    estimates, the 50-digit penalised gradient below 1e-8, no SeparationWarning but the
    summary's note, and the standard errors of ``I(theta_hat)^-1``."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(24, 2))
    t = np.digitize(X[:, 0], [-0.4, 0.4])
    for Xs in (X[:, :1], X):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            model = LogisticRegression(penalty="firth").fit(Xs, t)
        params = _params(model)
        assert np.all(np.isfinite(params)) and np.abs(params).max() < 30
        # the reported covariance is I^-1 at the estimate, also after exact-Hessian steps
        Z = np.column_stack([np.ones(len(t)), Xs])
        eta = np.column_stack([np.zeros(len(t)), Z @ params.reshape(2, -1).T])
        prob = np.exp(eta - np.logaddexp.reduce(eta, axis=1, keepdims=True))[:, 1:]
        cov = np.linalg.inv(_information_numpy(Z, prob))
        np.testing.assert_allclose(_summary_se(model), np.sqrt(np.diag(cov)), rtol=1e-7)
        with mp.workdps(DPS):
            Z = [[mp.mpf(1)] + [mp.mpf(float(v)) for v in row] for row in Xs]
            grad = _gradient_mp([mp.mpf(float(b)) for b in params], Z, t, 2)
        assert max(abs(float(g)) for g in grad) < 1e-8
        # class 0 (x0 < -0.4) is separated from the others: the summary's note
        assert ("The data are (quasi-)separated: maximum-likelihood estimates do not exist"
                in " ".join(str(model.summary_text()).split()))


def test_firth_softmax_two_classes_is_binary():
    """A softmax of two classes (one contrast block) has the binary logit's Jeffreys
    penalty: value and gradient at any theta, standardised columns and weights."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3)) * [1.0, 5.0, 0.2] + [0.0, 3.0, -1.0]
    t = (X[:, 0] + rng.logistic(size=40) > 0).astype(np.intp)
    sw = rng.uniform(0.5, 2.0, size=40)
    design = Design.standardised(X, True, sample_weight=sw, centre="always")
    theta = rng.normal(size=4)
    binary = class_family(LogisticRegression()._family, 2, True)
    penalties = (JEFFREYS.bind(design, binary, t.astype(float), sw, None),
                 JEFFREYS.bind_classes(design, CategoricalSoftmax(2), t, sw))
    values = [pen.value(theta) for pen in penalties]
    grads = [pen.gradient(theta) for pen in penalties]
    np.testing.assert_allclose(values[1], values[0], rtol=1e-12)
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-10, atol=1e-14)
    # the penalised objectives too (so their minimisers coincide)
    objectives = (GLMObjective(design, binary, t.astype(float), sw, information="expected",
                               penalty=penalties[0]),
                  SoftmaxObjective(design, CategoricalSoftmax(2), t, sw, penalty=penalties[1]))
    (f0, g0), (f1, g1) = (obj.value_grad(theta, obj.linear_predictor(theta))
                          for obj in objectives)
    np.testing.assert_allclose([f1, *g1], [f0, *g0], rtol=1e-10, atol=1e-13)


def test_firth_softmax_weights_are_frequencies():
    X, t = _three_classes(3, 18)
    w = np.arange(18) % 3 + 1.0
    weighted = LogisticRegression(penalty="firth").fit(X, t, sample_weight=w)
    rows = np.repeat(np.arange(18), w.astype(int))
    repeated = LogisticRegression(penalty="firth").fit(X[rows], t[rows])
    np.testing.assert_allclose(_params(weighted), _params(repeated), atol=1e-9)


@pytest.mark.parametrize("penalty", ["flic", "flac"])
def test_calibrated_firth_refuses_classes(penalty):
    X, t = _three_classes()
    with pytest.raises(ValueError, match="more than two classes use penalty='firth'"):
        LogisticRegression(penalty=penalty).fit(X, t)


@pytest.mark.parametrize("n_classes, sparse", [(3, False), (4, True)])
def test_firth_softmax_exact_hessian(n_classes, sparse):
    """The penalty's exact Hessian (the steps' once the held one fails, as on separated
    data) equals central differences of its gradient; dense standardised and sparse rows."""
    import scipy.sparse as sps
    rng = np.random.default_rng(n_classes)
    X = rng.normal(size=(50, 3)) * [1.0, 3.0, 0.5] + 1.0
    t, sw = rng.integers(0, n_classes, 50), rng.uniform(0.5, 2.0, 50)
    design = Design(sps.csr_matrix(X), True) if sparse else Design.standardised(
        X, True, sample_weight=sw, centre="always")
    family = CategoricalSoftmax(n_classes)
    penalty = JEFFREYS.bind_classes(design, family, t, sw)
    theta = rng.normal(size=penalty.rows.n_params) * 0.5
    rows = penalty.rows  # the exact Hessian, as the steps ask once the held one fails
    R = np.linalg.cholesky(rows.information(theta)).T
    exact = rows.adjustment(theta, linalg.solve_triangular(R, np.eye(theta.size)), 0.5,
                            curvature=True, exact=True)[1]
    step = 1e-6
    numeric = [(JEFFREYS.bind_classes(design, family, t, sw).gradient(theta + e)
                - JEFFREYS.bind_classes(design, family, t, sw).gradient(theta - e)) / (2 * step)
               for e in step * np.eye(theta.size)]
    np.testing.assert_allclose(exact, numeric, rtol=0, atol=1e-7)
