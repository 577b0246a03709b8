"""Gaussian posterior of Bayesian linear regression and the evidence approximation.

Model (K outputs share the noise precision beta and the prior precision alpha):

    t_k | x ~ N(w_k^T phi(x), 1/beta),   w_k ~ N(0, alpha^-1 I)
    S_N^-1 = alpha I + beta Phi^T Phi,    m_N = beta S_N Phi^T t_k

Everything is computed from the triangular factor of the data
(``[Phi, T] = Q [[R, r], [0, r_tt]]``, :mod:`problin._core.moments.tsqr`) in the basis of
its singular value decomposition ``R = U diag(s) V^T``: ``Phi^T Phi = V
diag(lambda) V^T`` with ``lambda = s^2`` (accurate down to the smallest
singular values, where an eigendecomposition of ``Phi^T Phi`` would lose them
to rounding), ``S_N = V diag(1/(alpha + beta lambda)) V^T`` needs no inverse,
and with ``z = U^T r`` the posterior mean is ``m_N = V (beta s z / (alpha + beta
lambda))`` and the residual ``|t - Phi m_N|^2 = sum (alpha z / (alpha + beta
lambda))^2 + |r_tt|^2``, a sum of squares with no cancellation. Each
re-estimation of alpha and beta costs O(D K).
The evidence approximation (type-II maximum likelihood) iterates the fixed
point of ``ln p(t | alpha, beta)``:

    gamma = sum_i beta lambda_i / (alpha + beta lambda_i)
    alpha = K gamma / sum_k |m_k|^2,     beta = K (N - gamma) / sum_k |t_k - Phi m_k|^2

with vanishing Gamma(1e-12, 1e-12) hyperpriors in the updates (as scikit-learn's
``BayesianRidge``), which keep them finite on degenerate data (a constant or
perfectly fitted target) and move nothing else. Once the relative changes
fall below ``tol`` the iteration goes on while they keep shrinking, to a
thousandth of ``tol``: a fixed point reached from slightly different data
(another chunking of the rows) is then the same to well within ``tol``.

A general Gaussian prior ``w_k ~ N(m_0k, (alpha P)^-1)`` (``P`` positive
definite, ``P = L L^T``) is the same model in the coordinates
``v = L^T (w - m_0)``, where the prior is ``N(0, alpha^-1 I)`` and the data are
``Phi L^-T`` (factor ``R L^-T``) with targets ``t - Phi m_0`` (``r - R m_0``)
(:func:`general_prior_posterior`):
the posterior ``S_N^-1 = alpha P + beta Phi^T Phi``, ``m_N = S_N (alpha P m_0 +
beta Phi^T t)``, the evidence (the marginal likelihood does not depend on the
coordinates) and both fixed points carry over unchanged, with
``gamma = beta tr(S_N Phi^T Phi)`` and ``alpha = K gamma / sum_k (m_k - m_0k)^T P
(m_k - m_0k)``.
"""
from dataclasses import dataclass

import numpy as np
from scipy import linalg
from scipy.linalg import lapack

from ..linalg import resolved_directions

__all__ = ["GaussianPosterior", "linear_gaussian_posterior", "general_prior_posterior"]

# Shape of the vanishing Gamma hyperpriors on alpha and beta; their rates are
# this times the squared units of |w| and of the residuals (see _hyper_rates),
# so that the evidence's fixed point moves with the units of the data.
_HYPER = 1e-12
_LOG_2PI = np.log(2.0 * np.pi)
_EPS = np.finfo(np.float64).eps
_JACOBI_MAX = 500  # columns up to which the SVD is one-sided Jacobi (see _graded_svd)


@dataclass
class GaussianPosterior:
    """Posterior ``N(m_N, S_N)``, ``S_N = V diag(1 / (alpha + beta lambda)) V^T``.

    ``V``, the right singular vectors of the data's factor ``R`` (``lambda`` the
    squared singular values), for the prior ``N(0, alpha^-1 I)``; ``V = L^-T Q``
    for a general prior precision ``alpha L L^T`` (``Q``, ``lambda``: those of ``R L^-T``).
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

    def cov_factor(self) -> np.ndarray:
        """``F`` with ``S_N = F F^T``."""
        return self.eigvecs / np.sqrt(self.alpha + self.beta * self.eigvals)

    def covariance(self) -> np.ndarray:
        F = self.cov_factor()
        return F @ F.T


def _spectrum(R: np.ndarray, r: np.ndarray,
              spreads: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(s, V, z)``: singular values and right vectors of ``R`` (D x D) and ``z = U^T r``.

    Zero columns (constant features) are left out of the SVD and get ``s = 0``
    and exactly their unit vector; singular values below the rounding of the
    data along their direction ``v`` are zero (``spreads``: each column's data
    relative to its centred size; the rounding along ``v`` is ``|spreads * v|``, so
    that a column far from zero is rounded more in its own direction only).
    """
    d = R.shape[0]
    live = np.flatnonzero(np.any(R != 0.0, axis=0))
    dead = np.setdiff1d(np.arange(d), live)
    s, V = np.zeros(d), np.zeros((d, d))
    V[dead, np.arange(live.size, d)] = 1.0
    if not live.size:
        return s, V, np.array(r, dtype=np.float64)
    U, sl, Vt = _graded_svd(R[:, live])
    # R is not equilibrated (see _graded_svd): the rounding along v is that of the
    # columns v combines, each at its own norm, |spreads * norms * v|, not at the
    # largest singular value's (a column of 1e-6 spread at 1e4, 5.6 digits, fell
    # below the rounding of a unit column beside it and was dropped).
    norms = np.sqrt(np.einsum("ij,ij->j", R[:, live], R[:, live]))
    rounding = norms / sl[0] if sl[0] > 0 else np.ones(live.size)
    if spreads is not None:
        rounding = rounding * spreads[live]
    sl[~resolved_directions(sl, Vt, rounding, d)] = 0.0
    s[:live.size] = sl
    V[np.ix_(live, np.arange(live.size))] = Vt.T
    return s, V, U.T @ r  # components of z beyond the live ones meet s = 0


def _graded_svd(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Full SVD ``(U, s, V^T)`` of a tall ``A``, accurate for graded columns.

    The columns of ``R`` carry the units of the features (1 next to 1e7 for
    ``x`` and ``x^5``), and the prior ``alpha I`` is not invariant to them, so
    the SVD cannot be taken of equilibrated columns. Divide and conquer is
    accurate only to ``eps`` times the largest singular value: the small ones,
    which decide the posterior of the poorly determined directions, would
    change with the rounding of the rows (the chunking). Preconditioned
    one-sided Jacobi (LAPACK ``dgejsv``) is accurate to ``eps`` times the
    condition number of the *column-scaled* matrix instead. It costs about
    five times as much, so beyond ``_JACOBI_MAX`` columns (0.3 s at 500)
    divide and conquer is used (still better than an eigendecomposition of
    ``Phi^T Phi``: ``s^2`` to ``eps s s_max``, not ``eps s_max^2``).
    """
    if A.shape[1] <= _JACOBI_MAX:
        sva, U, V, work, _, info = lapack.dgejsv(A, joba=0, jobu=1, jobv=0)
        if info == 0 and work[0] > 0:
            return U, sva * (work[1] / work[0]), V.T
    try:  # pragma: no cover - Jacobi's rare failures
        return linalg.svd(A, check_finite=False)
    except linalg.LinAlgError:  # pragma: no cover
        return linalg.svd(A, check_finite=False, lapack_driver="gesvd")


def _posterior_in_eigenbasis(s: np.ndarray, z: np.ndarray, residual: float, alpha: float,
                             beta: float) -> tuple[np.ndarray, float, float]:
    """Posterior means (eigen coordinates), residual sum of squares and sum |m|^2."""
    denom = alpha + beta * s * s
    M = (beta * s / denom)[:, None] * z
    miss = (alpha / denom)[:, None] * z  # what the posterior mean leaves of z
    return M, float(np.sum(miss * miss)) + residual, float(np.sum(M * M))


def linear_gaussian_posterior(R: np.ndarray, r: np.ndarray, residual: float, n: float, *,
                              alpha: float | None = None, beta: float | None = None,
                              tol: float = 1e-10, max_iter: int = 1000,
                              spreads: np.ndarray | None = None) -> GaussianPosterior:
    """Posterior for data with factors ``Phi^T Phi = R^T R``, ``Phi^T T = R^T r``.

    ``residual`` is ``|T|^2 - |r|^2``, what no weights can fit (``|r_tt|^2``),
    and ``n`` the (weighted) number of samples. ``alpha``/``beta`` given are
    kept fixed; ``None`` ones are estimated by the evidence approximation
    (started, as scikit-learn, from ``alpha = 1`` and ``beta = 1 / var(t)``,
    with ``var(t)`` taken as ``|T|^2 / (n K)``). Iteration stops when neither
    changes by more than ``tol`` relative (and then polishes, see above).
    """
    s, V, z = _spectrum(R, r, spreads)
    lam = s * s
    d, k = z.shape
    Stt = float(np.sum(r * r)) + residual
    a = 1.0 if alpha is None else float(alpha)
    b = 1.0 / (Stt / (n * k) + _EPS) if beta is None else float(beta)
    n_iter, converged = 0, True
    if alpha is None or beta is None:
        converged, last = False, np.inf
        rate_a, rate_b = _hyper_rates(R, Stt, n, k)
        for n_iter in range(1, max_iter + 1):
            M, sse, mm = _posterior_in_eigenbasis(s, z, residual, a, b)
            gamma = float(np.sum(b * lam / (a + b * lam)))
            a_new = a if alpha is not None else (k * gamma + 2 * _HYPER) / (mm + 2 * rate_a)
            # (n - gamma: the weight left for the noise. Total weights below the
            # number of well-determined directions, 1e-8 say, left it negative: a
            # negative precision, NaN evidence. None left: the hyperprior decides.)
            b_new = b if beta is not None else \
                (k * max(n - gamma, 0.0) + 2 * _HYPER) / (sse + 2 * rate_b)
            change = max(abs(a_new - a) / a, abs(b_new - b) / b)
            a, b = a_new, b_new
            converged = converged or change <= tol
            # polish: on while the steps still shrink, to a thousandth of tol
            if converged and (change <= 1e-3 * tol or change >= last):
                break
            last = change if converged else np.inf
    M, sse, mm = _posterior_in_eigenbasis(s, z, residual, a, b)
    gamma = float(np.sum(b * lam / (a + b * lam)))
    log_evidence = k * (0.5 * d * np.log(a) + 0.5 * n * np.log(b) - 0.5 * n * _LOG_2PI
                        - 0.5 * float(np.sum(np.log(a + b * lam)))) \
        - 0.5 * b * sse - 0.5 * a * mm
    return GaussianPosterior(a, b, V @ M, lam, V, gamma, float(log_evidence), n_iter, converged)


def _hyper_rates(R: np.ndarray, Stt: float, n: float, k: int) -> tuple[float, float]:
    """Rates of the hyperpriors on ``alpha`` and ``beta``: ``_HYPER`` times the
    squared unit of the weights (``var(t) / var(x)``, geometric mean over the
    columns of ``R^T R / n``) and of the residuals (``var(t)``). Scale-free:
    in raw units a fixed rate of 1e-12 is negligible next to ``|w|^2`` only
    while the weights are not themselves tiny (columns in large units)."""
    var_t = Stt / (n * k) if n * k > 0 and Stt > 0 else 1.0
    col = np.einsum("ij,ij->j", R, R) / max(n, 1e-300)
    col = col[col > 0]
    var_x = float(np.exp(np.mean(np.log(col)))) if col.size else 1.0
    return _HYPER * var_t / var_x, _HYPER * var_t


def general_prior_posterior(R: np.ndarray, r: np.ndarray, residual: float, n: float,
                            prior_mean: np.ndarray, prior_chol: np.ndarray, *,
                            alpha: float | None = None, beta: float | None = None,
                            tol: float = 1e-10, max_iter: int = 1000,
                            spreads: np.ndarray | None = None) -> GaussianPosterior:
    """Posterior under the prior ``w_k ~ N(m_0k, (alpha L L^T)^-1)``.

    ``prior_mean`` is ``D x K`` (one column per output), ``prior_chol`` the lower
    Cholesky factor ``L`` of the precision shape ``P`` (a 1-D array: the square
    roots of a diagonal ``P``). ``alpha`` scales ``P`` (``None``: estimated by the
    evidence), ``beta`` as in :func:`linear_gaussian_posterior`.
    """
    M0 = prior_mean
    # the data with targets t - Phi m_0, in the coordinates v = L^T (w - m_0):
    # factor R L^-T (its transpose is L^-1 R^T), right-hand side r - R m_0
    Rw = _whiten_rows(R.T, prior_chol).T
    if spreads is not None and np.ndim(prior_chol) == 2:
        # A full L mixes the columns: their rounding, at most the largest, in every one.
        spreads = np.full(spreads.size, float(np.max(spreads, initial=1.0)))
    post = linear_gaussian_posterior(Rw, r - R @ M0, residual, n, alpha=alpha, beta=beta,
                                     tol=tol, max_iter=max_iter, spreads=spreads)
    post.mean = M0 + _unwhiten(post.mean, prior_chol)  # w = m_0 + L^-T v
    post.eigvecs = _unwhiten(post.eigvecs, prior_chol)
    return post


def _whiten_rows(A: np.ndarray, L: np.ndarray) -> np.ndarray:
    """``L^-1 A``."""
    if L.ndim == 1:
        return A / L.reshape(-1, *([1] * (A.ndim - 1)))
    return linalg.solve_triangular(L, A, lower=True, check_finite=False)


def _unwhiten(A: np.ndarray, L: np.ndarray) -> np.ndarray:
    """``L^-T A``."""
    if L.ndim == 1:
        return A / L.reshape(-1, *([1] * (A.ndim - 1)))
    return linalg.solve_triangular(L, A, lower=True, trans="T", check_finite=False)
