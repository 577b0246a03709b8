"""Gaussian posterior of Bayesian linear regression and the evidence approximation.

Model (K outputs share the noise precision beta and the prior precision alpha):

    t_k | x ~ N(w_k^T phi(x), 1/beta),   w_k ~ N(0, alpha^-1 I)
    S_N^-1 = alpha I + beta Phi^T Phi,    m_N = beta S_N Phi^T t_k

Everything is computed in the eigenbasis of ``Phi^T Phi = Q diag(lambda) Q^T``
(one symmetric eigendecomposition): ``S_N = Q diag(1/(alpha + beta lambda)) Q^T``
needs no inverse, and each re-estimation of alpha and beta costs O(D K).
The evidence approximation (type-II maximum likelihood) iterates the fixed
point of ``ln p(t | alpha, beta)``:

    gamma = sum_i beta lambda_i / (alpha + beta lambda_i)
    alpha = K gamma / sum_k |m_k|^2,     beta = K (N - gamma) / sum_k |t_k - Phi m_k|^2

with vanishing Gamma(1e-12, 1e-12) hyperpriors in the updates (as scikit-learn's
``BayesianRidge``), which keep them finite on degenerate data (a constant or
perfectly fitted target) and move nothing else.

A general Gaussian prior ``w_k ~ N(m_0k, (alpha P)^-1)`` (``P`` positive
definite, ``P = L L^T``) is the same model in the coordinates
``v = L^T (w - m_0)``, where the prior is ``N(0, alpha^-1 I)`` and the data are
``Phi L^-T`` with targets ``t - Phi m_0`` (:func:`general_prior_posterior`):
the posterior ``S_N^-1 = alpha P + beta Phi^T Phi``, ``m_N = S_N (alpha P m_0 +
beta Phi^T t)``, the evidence (the marginal likelihood does not depend on the
coordinates) and both fixed points carry over unchanged, with
``gamma = beta tr(S_N Phi^T Phi)`` and ``alpha = K gamma / sum_k (m_k - m_0k)^T P
(m_k - m_0k)``.
"""
from dataclasses import dataclass

import numpy as np
from scipy import linalg

__all__ = ["GaussianPosterior", "linear_gaussian_posterior", "general_prior_posterior"]

_HYPER = 1e-12  # shape and rate of the vanishing Gamma hyperpriors on alpha and beta
_LOG_2PI = np.log(2.0 * np.pi)


@dataclass
class GaussianPosterior:
    """Posterior ``N(m_N, S_N)``, ``S_N = V diag(1 / (alpha + beta lambda)) V^T``.

    ``V = Q``, the eigenvectors of ``Phi^T Phi`` (eigenvalues ``lambda``), for the
    prior ``N(0, alpha^-1 I)``; ``V = L^-T Q`` for a general prior precision
    ``alpha L L^T`` (``Q``, ``lambda``: the eigenpairs of ``L^-1 Phi^T Phi L^-T``).
    """

    alpha: float
    beta: float
    mean: np.ndarray          # D x K posterior means m_N
    eigvals: np.ndarray       # lambda_i
    eigvecs: np.ndarray       # V
    gamma: float              # effective number of parameters
    log_evidence: float       # ln p(t | alpha, beta), summed over the K outputs
    n_iter: int
    converged: bool

    def cov_factor(self):
        """``F`` with ``S_N = F F^T``."""
        return self.eigvecs / np.sqrt(self.alpha + self.beta * self.eigvals)

    def covariance(self):
        F = self.cov_factor()
        return F @ F.T


def _posterior_in_eigenbasis(lam, Z, Stt, alpha, beta):
    """Posterior means (eigen coordinates), residual sum of squares and sum |m|^2."""
    M = (beta / (alpha + beta * lam))[:, None] * Z
    sse = Stt - 2.0 * float(np.sum(M * Z)) + float(np.sum(lam[:, None] * M * M))
    return M, max(sse, 0.0), float(np.sum(M * M))


def linear_gaussian_posterior(G, C, Stt, n, *, alpha=None, beta=None, tol=1e-10,
                              max_iter=1000):
    """Posterior for data with ``Phi^T Phi = G``, ``Phi^T T = C``, ``trace(T^T T) = Stt``.

    ``n`` is the (weighted) number of samples. ``alpha``/``beta`` given are
    kept fixed; ``None`` ones are estimated by the evidence approximation
    (started, as scikit-learn, from ``alpha = 1`` and ``beta = 1 / var(t)``,
    with ``var(t)`` taken as ``Stt / (n K)``). Iteration stops when neither
    changes by more than ``tol`` relative.
    """
    lam, Q = linalg.eigh(G, check_finite=False)
    # PSD: eigenvalues within rounding of zero are zero (data span fewer
    # directions than D); left at ~1e-16 they would matter once beta is huge.
    lam[lam <= lam.size * np.finfo(np.float64).eps * max(float(lam[-1]), 0.0)] = 0.0
    Z = Q.T @ C
    Z[lam == 0.0] = 0.0  # Phi^T t lies in the span of the data: no null-space part
    d, k = Z.shape
    a = 1.0 if alpha is None else float(alpha)
    b = 1.0 / (Stt / (n * k) + np.finfo(np.float64).eps) if beta is None else float(beta)
    n_iter, converged = 0, True
    if alpha is None or beta is None:
        converged = False
        for n_iter in range(1, max_iter + 1):
            M, sse, mm = _posterior_in_eigenbasis(lam, Z, Stt, a, b)
            gamma = float(np.sum(b * lam / (a + b * lam)))
            a_new = a if alpha is not None else (k * gamma + 2 * _HYPER) / (mm + 2 * _HYPER)
            b_new = b if beta is not None else \
                (k * (n - gamma) + 2 * _HYPER) / (sse + 2 * _HYPER)
            change = max(abs(a_new - a) / a, abs(b_new - b) / b)
            a, b = a_new, b_new
            if change <= tol:
                converged = True
                break
    M, sse, mm = _posterior_in_eigenbasis(lam, Z, Stt, a, b)
    gamma = float(np.sum(b * lam / (a + b * lam)))
    log_evidence = k * (0.5 * d * np.log(a) + 0.5 * n * np.log(b) - 0.5 * n * _LOG_2PI
                        - 0.5 * float(np.sum(np.log(a + b * lam)))) \
        - 0.5 * b * sse - 0.5 * a * mm
    return GaussianPosterior(a, b, Q @ M, lam, Q, gamma, float(log_evidence), n_iter, converged)


def general_prior_posterior(G, C, Stt, n, prior_mean, prior_chol, *, alpha=None, beta=None,
                            tol=1e-10, max_iter=1000):
    """Posterior under the prior ``w_k ~ N(m_0k, (alpha L L^T)^-1)``.

    ``prior_mean`` is ``D x K`` (one column per output), ``prior_chol`` the lower
    Cholesky factor ``L`` of the precision shape ``P`` (a 1-D array: the square
    roots of a diagonal ``P``). ``alpha`` scales ``P`` (``None``: estimated by the
    evidence), ``beta`` as in :func:`linear_gaussian_posterior`.
    """
    M0 = prior_mean
    GM0 = G @ M0
    # the data with targets t - Phi m_0, in the coordinates v = L^T (w - m_0)
    Stt0 = Stt - 2.0 * float(np.sum(M0 * C)) + float(np.sum(M0 * GM0))
    Gw, Cw = _whiten(G, prior_chol), _whiten_rows(C - GM0, prior_chol)
    post = linear_gaussian_posterior(Gw, Cw, max(Stt0, 0.0), n, alpha=alpha, beta=beta,
                                     tol=tol, max_iter=max_iter)
    post.mean = M0 + _unwhiten(post.mean, prior_chol)  # w = m_0 + L^-T v
    post.eigvecs = _unwhiten(post.eigvecs, prior_chol)
    return post


def _whiten_rows(A, L):
    """``L^-1 A``."""
    if L.ndim == 1:
        return A / L.reshape(-1, *([1] * (A.ndim - 1)))
    return linalg.solve_triangular(L, A, lower=True, check_finite=False)


def _whiten(G, L):
    """``L^-1 G L^-T`` (symmetric)."""
    W = _whiten_rows(_whiten_rows(G, L).T, L)
    return 0.5 * (W + W.T)


def _unwhiten(A, L):
    """``L^-T A``."""
    if L.ndim == 1:
        return A / L.reshape(-1, *([1] * (A.ndim - 1)))
    return linalg.solve_triangular(L, A, lower=True, trans="T", check_finite=False)
