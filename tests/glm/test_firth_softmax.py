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
from scipy import optimize

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
    for z, k in zip(Z, t):
        logits = [mp.mpf(0)] + [mp.fsum(beta[a * p + j] * z[j] for j in range(p))
                                for a in range(M)]
        total = mp.fsum(mp.exp(v) for v in logits)
        prob = [mp.exp(v) / total for v in logits[1:]]
        loglik += logits[k] - mp.log(total)
        for a in range(M):
            for b in range(M):
                w = (prob[a] if a == b else 0) - prob[a] * prob[b]
                for j in range(p):
                    for l in range(p):
                        info[a * p + j, b * p + l] += w * z[j] * z[l]
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


def _firth_mp(X, t):
    """The penalised maximum: a float64 quasi-Newton start (scipy, finite differences),
    then Newton steps with the 50-digit gradient and a float64 finite-difference Hessian
    (its 1e-8 error only slows the steps' contraction), to a step below 1e-25."""
    with mp.workdps(DPS):
        Zf = np.column_stack([np.ones(len(t)), X])
        M = int(t.max())
        start = optimize.minimize(lambda b: -_penalised_numpy(b, Zf, t, M),
                                  np.zeros(M * Zf.shape[1]), method="BFGS",
                                  options={"gtol": 1e-9}).x
        hess = optimize.approx_fprime(start, lambda b: optimize.approx_fprime(
            b, lambda c: _penalised_numpy(c, Zf, t, M), 1e-5), 1e-4)
        hess = 0.5 * (hess + hess.T)
        Z = [[mp.mpf(float(v)) for v in row] for row in Zf]
        beta = [mp.mpf(float(b)) for b in start]
        for _ in range(8):
            grad = _gradient_mp(beta, Z, t, M)
            step = mp.lu_solve(mp.matrix(hess.tolist()), mp.matrix(list(grad)))
            beta = [b - s for b, s in zip(beta, step)]
            if max(abs(s) for s in step) < mp.mpf("1e-25"):
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
    assert model.converged_ and "Firth" in str(model.summary_text())
