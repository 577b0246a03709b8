"""Gaussian posteriors of logistic models: Laplace, evidence, predictive integrals, variational.

Model: ``t_n ~ Bernoulli(sigma(a_n))``, ``a_n = phi_n^T w``, prior ``w ~ N(m_0, P^-1)``
(``m_0 = 0`` unless given; Bishop 2006, eq. 4.140).

* **Laplace.** ``q(w) = N(w_MAP, H^-1)``, ``H = Phi^T V Phi + P`` the Hessian of
  ``f(w) = -ln p(t | w) - ln N(w | m_0, P^-1)`` (up to its constant) at the MAP;
  the evidence ``ln p(t) ~ -f(w_MAP) + 1/2 ln|P| - 1/2 ln|H|``.
* **Predictive.** The activation ``a = phi^T w`` is Gaussian under ``q``
  (mean ``mu_a = phi^T m``, variance ``sigma_a^2 = phi^T S phi``) and
  ``p(C_1 | phi) = int sigma(a) N(a | mu_a, sigma_a^2) da ~ sigma(kappa(sigma_a^2) mu_a)``,
  ``kappa(s) = (1 + pi s / 8)^-1/2`` (MacKay's probit approximation).
* **Variational (Jaakkola & Jordan 2000).** ``sigma(a) >= sigma(xi) exp((a - xi)/2 -
  lambda(xi)(a^2 - xi^2))``, ``lambda(xi) = tanh(xi/2) / (4 xi)``, a Gaussian in ``w``;
  each sweep updates ``q(w)`` in closed form, then ``xi_n^2 = E[a_n^2]`` (and ``alpha``)
  and never lowers the bound.

Pure functions of a :class:`~problin._core.model.design.Design` and arrays; nothing
here imports an estimator. Covariances come from Cholesky factors, never ``inv``.
"""
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from scipy import special

from ..blocks import block_rows, iter_blocks
from ..linalg import cholesky
from ..numerics import log_sigmoid, log_softmax
from ..types import Matrix

__all__ = ["gaussian_from_precision", "laplace_log_evidence", "upper_factor",
           "activation_moments", "probit_kappa", "moderated_log_proba",
           "draw_gaussian", "mackay_alpha", "jj_lambda", "VariationalPosterior",
           "jaakkola_jordan", "general_jaakkola_jordan"]

_LOG_2PI = np.log(2.0 * np.pi)
_EPS = np.finfo(np.float64).eps


def gaussian_from_precision(H: np.ndarray) -> tuple[np.ndarray, float]:
    """``(S, ln|H|)``: the covariance ``S = H^-1`` and log-determinant of a precision ``H``.

    Cholesky with jitter (``linalg.cholesky``), inverse from the factor (LAPACK ``potri``).
    """
    chol = cholesky(H)
    return chol.inverse(), chol.logdet()


def laplace_log_evidence(f_map: float, prior_diag: np.ndarray, hessian_logdet: float) -> float:
    """Laplace approximation ``ln p(t) ~ -f(w_MAP) + ln|P| / 2 - ln|H| / 2``.

    ``f`` is the negative log-likelihood plus ``(w - m_0)^T P (w - m_0) / 2`` for the
    prior precision ``prior_diag`` (a diagonal, or a dense positive definite ``P``):
    the prior's ``-D/2 ln 2 pi`` and the Gaussian integral's ``+D/2 ln 2 pi`` cancel.
    Zero diagonal entries are flat (improper) priors of unit density: each adds
    ``ln(2 pi) / 2`` instead.
    """
    d = np.asarray(prior_diag, dtype=np.float64)
    if d.ndim == 2:
        return float(-f_map + 0.5 * cholesky(d).logdet() - 0.5 * hessian_logdet)
    flat = d <= 0
    logdet = float(np.sum(np.log(d[~flat]))) + float(np.sum(flat)) * _LOG_2PI
    return float(-f_map + 0.5 * logdet - 0.5 * hessian_logdet)


def upper_factor(S: np.ndarray) -> np.ndarray:
    """``U`` with ``S = U^T U`` (Cholesky with jitter; a zero matrix gives zero)."""
    if not np.any(S):
        return np.zeros_like(S)
    return np.triu(cholesky(S).factor[0])


def _dense_design_block(Xb: Matrix, intercept: bool) -> np.ndarray:
    Xb = Xb.toarray() if hasattr(Xb, "toarray") else np.asarray(Xb, dtype=np.float64)
    return np.column_stack([np.ones(Xb.shape[0]), Xb]) if intercept else Xb


def activation_moments(X: Matrix, intercept: bool, mean: np.ndarray, cov: np.ndarray,
                       n_blocks: int = 1, full: bool = False,
                       block: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """Mean and covariance of the activations ``a_k = [1, x]^T w_k`` under ``N(mean, cov)``.

    ``mean`` stacks ``n_blocks`` parameter blocks ``[intercept, coef...]``
    (class-major) and ``cov`` is their joint covariance. Returns the means
    ``(n, n_blocks)`` and the variances ``(n, n_blocks)`` -- with ``full``,
    the covariances ``(n, n_blocks, n_blocks)``, ``phi^T S_kj phi`` -- computed
    by row blocks (no n x n matrix; no temporary beyond a block). ``block``
    maps each row block of ``X`` first (a design's standardisation).
    """
    p = mean.size // n_blocks
    M = mean.reshape(n_blocks, p)
    n = X.shape[0]
    mu = np.empty((n, n_blocks))
    var = np.empty((n, n_blocks, n_blocks) if full else (n, n_blocks))
    for start, stop, Xb in iter_blocks(X, rows=block_rows(n_blocks * p)):
        Phi = _dense_design_block(Xb if block is None else block(Xb), intercept)
        mu[start:stop] = Phi @ M.T
        for k in range(n_blocks):
            PS = Phi @ cov[k * p:(k + 1) * p]  # rows x (n_blocks p): phi^T S_k.
            for j in (range(k, n_blocks) if full else (k,)):
                v = np.einsum("ij,ij->i", PS[:, j * p:(j + 1) * p], Phi)
                if full:
                    var[start:stop, k, j] = var[start:stop, j, k] = v
                else:
                    var[start:stop, k] = np.maximum(v, 0.0)  # rounding of ~0 variances
    return mu, var


def probit_kappa(var: Any) -> np.ndarray:
    """``kappa(sigma^2) = (1 + pi sigma^2 / 8)^-1/2``: ``int sigma(a) N(a|mu, sigma^2) da ~
    sigma(kappa mu)`` (matching the probit ``Phi(sqrt(pi/8) a)`` to the logistic)."""
    return 1.0 / np.sqrt(1.0 + (np.pi / 8.0) * np.asarray(var, dtype=np.float64))


def moderated_log_proba(mu: np.ndarray, var: np.ndarray) -> np.ndarray:
    """Log predictive probabilities from activation moments.

    Binary (``mu``, ``var`` of shape ``(n, 1)``): ``[ln sigma(-kappa mu),
    ln sigma(kappa mu)]``, ``kappa = kappa(var)``. Softmax (``mu`` ``(n, K)``,
    ``var`` the activation covariances ``(n, K, K)``): the probit approximation
    on every pairwise log-odds ``a_k - a_j`` (Daunizeau 2017),
    ``p_k ~ 1 / sum_j exp(-kappa(V_kj) (mu_k - mu_j))``,
    ``V_kj = var(a_k - a_j)``, renormalised; for K = 2 it is the binary formula.
    """
    if mu.shape[1] == 1:
        z = probit_kappa(var[:, 0]) * mu[:, 0]
        return np.column_stack([log_sigmoid(-z), log_sigmoid(z)])
    d = np.einsum("nkk->nk", var)
    V = np.maximum(d[:, :, None] + d[:, None, :] - var - np.swapaxes(var, 1, 2), 0.0)
    logits = -probit_kappa(V) * (mu[:, :, None] - mu[:, None, :])  # n x k x j
    log_p = -special.logsumexp(logits, axis=2)
    return log_softmax(log_p, axis=1)


def draw_gaussian(mean: np.ndarray, cov: np.ndarray, n_draws: int,
                  rng: np.random.Generator) -> np.ndarray:
    """``n_draws`` draws of ``N(mean, cov)`` as rows: ``mean + z U`` with ``cov = U^T U``."""
    Z = rng.standard_normal((n_draws, mean.size))
    return mean + Z @ upper_factor(cov)


def mackay_alpha(reestimate: Callable[[float], float], alpha0: float = 1.0, *,
                 bounds: tuple[float, float] = (1e-8, 1e8), tol: float = 1e-6,
                 max_iter: int = 100) -> tuple[float, bool]:
    """Fixed point ``alpha = gamma(alpha) / |w_MAP(alpha)|^2`` of MacKay's re-estimation.

    ``reestimate(alpha)`` fits at ``alpha`` and returns ``gamma / |w|^2``, with
    ``gamma = D - alpha tr(S_ww)`` the effective number of well-determined
    weights (MacKay 1992; Bishop 2006, eq. 3.92 and §5.7). The fixed point is the
    stationary point of the Laplace evidence when the data Hessian's change
    with ``w_MAP`` is neglected (exact for a Gaussian likelihood).

    The search runs on ``h(s) = ln reestimate(e^s) - s``, ``s = ln alpha``:
    secant steps, kept in the direction of the plain fixed-point step ``h``
    and at most ``8 |h|`` long, bisection once a sign change brackets the
    root. Converges (``|h| <= tol``) in a handful of fits where the plain
    iteration takes dozens. Returns ``(alpha, converged)``; not converged also
    when the iteration leaves ``bounds`` (no finite fixed point: e.g. features
    that carry no information send ``alpha`` to infinity).
    """
    lo, hi = np.log(bounds[0]), np.log(bounds[1])
    s = float(np.clip(np.log(alpha0), lo, hi))
    prev = None
    below = above = None  # points with h > 0 (root above them) and h < 0
    for _ in range(max_iter):
        target = reestimate(float(np.exp(s)))
        if not (np.isfinite(target) and target > 0):
            return float(np.exp(s)), False
        h = float(np.log(target)) - s
        if abs(h) <= tol:
            return float(np.exp(s)), True
        if h > 0:
            below = s if below is None else max(below, s)
        else:
            above = s if above is None else min(above, s)
        step = h
        if prev is not None and h != prev[1]:
            secant = -h * (s - prev[0]) / (h - prev[1])
            if secant * h > 0:
                step = float(np.sign(h)) * min(abs(secant), 8.0 * abs(h))
        prev = (s, h)
        new = s + step
        if below is not None and above is not None and not min(below, above) < new \
                < max(below, above):
            new = 0.5 * (below + above)
        if (new >= hi and s >= hi) or (new <= lo and s <= lo):
            return float(np.exp(s)), False  # pushed against a bound
        s = float(np.clip(new, lo, hi))
    return float(np.exp(s)), False


def jj_lambda(xi: np.ndarray) -> np.ndarray:
    """``lambda(xi) = (sigma(xi) - 1/2) / (2 xi) = tanh(xi / 2) / (4 xi)``; ``1/8`` at 0."""
    xi = np.abs(np.asarray(xi, dtype=np.float64))
    small = xi < 1e-6
    safe = np.where(small, 1.0, xi)
    return np.where(small, 0.125 - xi * xi / 96.0, np.tanh(safe / 2.0) / (4.0 * safe))


@dataclass
class VariationalPosterior:
    """Result of :func:`jaakkola_jordan`: ``q(w) = N(mean, cov)`` and the bound per sweep."""

    mean: np.ndarray
    cov: np.ndarray
    prior_diag: np.ndarray     # E_q[P] at the end (the alpha used / its posterior mean)
    elbo: float
    history: list = field(default_factory=list)
    n_iter: int = 0
    converged: bool = False
    gamma_shape: float | None = None   # q(alpha) = Gamma(shape, rate) with a hyperprior
    gamma_rate: float | None = None
    alpha: float | None = None         # the scale of a general prior's precision


def _row_quadratics(design: Any, mean: np.ndarray,
                    cov: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``E[a_n] = phi_n^T m`` and ``E[a_n^2] = phi_n^T (S + m m^T) phi_n``."""
    block, params = design.kernel()  # the design's (standardised) coordinates
    mu, var = activation_moments(design.X, design.intercept, params(mean),
                                 params(cov, cov=True), block=block)
    return mu[:, 0], var[:, 0] + mu[:, 0] ** 2


class BoundTerms(Protocol):
    """What :func:`jaakkola_jordan` reads from the rows (:class:`JJTerms`, or
    ``problin._dask.bayes.DaskJJTerms``): ``at`` returns the state that
    ``curvature`` and ``bound`` take."""

    def linear(self) -> np.ndarray: ...

    def at(self, mean: np.ndarray, cov: np.ndarray) -> Any: ...

    def curvature(self, xi: Any) -> np.ndarray: ...

    def bound(self, xi: Any) -> float: ...


class JJTerms:
    """What :func:`jaakkola_jordan` reads from the rows: ``Phi^T (s (t - 1/2))``, and
    at each ``q(w) = N(m, S)`` the tight ``xi_n = sqrt(phi_n^T (S + m m^T) phi_n)``
    (the bound's ``lambda(xi)(E a^2 - xi^2)`` term is then 0), from which the
    curvature ``2 Phi^T diag(s lambda(xi)) Phi`` and the bound's data term
    ``sum_n s_n (ln sigma(xi_n) - xi_n / 2)`` follow."""

    def __init__(self, design: Any, y: np.ndarray, sample_weight: np.ndarray | None) -> None:
        self.design, self.y = design, np.asarray(y, dtype=np.float64)
        self.sw = np.ones_like(self.y) if sample_weight is None else sample_weight

    def linear(self) -> np.ndarray:
        return self.design.rmatvec(self.sw * (self.y - 0.5))

    def at(self, mean: np.ndarray, cov: np.ndarray) -> np.ndarray:
        return np.sqrt(_row_quadratics(self.design, mean, cov)[1])

    def curvature(self, xi: np.ndarray) -> np.ndarray:
        return self.design.gram(2.0 * self.sw * jj_lambda(xi))

    def bound(self, xi: np.ndarray) -> float:
        return float(self.sw @ (log_sigmoid(xi) - xi / 2))


def _gamma_terms(shape: float, rate: float, a0: float, b0: float) -> float:
    """``E[ln p(alpha)] - E[ln q(alpha)]``, ``q = Gamma(shape, rate)``, prior ``Gamma(a0, b0)``."""
    e_log = special.digamma(shape) - np.log(rate)
    e_alpha = shape / rate
    prior = a0 * np.log(b0) - special.gammaln(a0) + (a0 - 1) * e_log - b0 * e_alpha
    entropy = shape - np.log(rate) + special.gammaln(shape) + (1 - shape) * special.digamma(shape)
    return float(prior + entropy)


def jaakkola_jordan(terms: "BoundTerms", prior_diag: np.ndarray, weight_mask: np.ndarray, *,
                    mean0: np.ndarray, cov0: np.ndarray, estimate_alpha: bool = False,
                    hyperprior: tuple[float, float] | None = None, tol: float = 1e-10,
                    max_iter: int = 500,
                    prior_shape: np.ndarray | None = None) -> VariationalPosterior:
    """Variational Bayes for binary logistic regression with the Jaakkola-Jordan bound.

    Coordinate ascent on ``L(q, xi, alpha)``; each step maximises ``L`` in one
    block, so the recorded ``L`` (after every sweep) never decreases:

    1. ``q(w) = N(m, S)``: ``S^-1 = E[P] + 2 Phi^T diag(s lambda(xi)) Phi``,
       ``m = S Phi^T (s (t - 1/2))`` (Bishop 2006, §10.6.1);
    2. ``xi_n^2 = phi_n^T (S + m m^T) phi_n`` (§10.6.2);
    3. ``alpha`` (the precision on the entries ``weight_mask``, shared):
       ``alpha = D / E|w|^2`` (``estimate_alpha``: type-II maximum of the
       bound), or ``q(alpha) = Gamma(a0 + D/2, b0 + E|w|^2 / 2)`` with a
       ``hyperprior = (a0, b0)`` (shape, rate), whose mean ``E[alpha]`` then
       enters step 1.

    ``L = sum_n s_n [ln sigma(xi_n) + (t_n - 1/2) E a_n - xi_n / 2 - lambda(xi_n)(E a_n^2 -
    xi_n^2)] + E ln N(w | 0, P^-1) + H[q(w)]`` (+ the Gamma terms). Iteration
    stops when ``L`` rises by less than ``tol`` nats over a sweep (or by less
    than its rounding error), a scale-free test like Newton's decrement.

    ``prior_shape``: the precision on the weights is ``alpha * prior_shape``
    (standardised coordinates: ``1 / s_j^2``, so that ``alpha`` is the
    precision of the raw weights and ``E|w|^2`` is theirs); ``prior_diag``'s
    weight entries are then ``alpha * prior_shape`` too.

    ``terms``: what the sweeps read from the rows, :class:`JJTerms` in memory
    (``problin._dask.bayes.DaskJJTerms`` on Dask: one distributed pass per sweep).

    A prior with a mean and a dense precision: :func:`general_jaakkola_jordan`.
    """
    b = terms.linear()
    d = float(weight_mask.sum())
    shape_w = np.ones(len(prior_diag)) if prior_shape is None else \
        np.asarray(prior_shape, dtype=np.float64)
    P = np.asarray(prior_diag, dtype=np.float64).copy()
    mean, cov = np.asarray(mean0, dtype=np.float64), np.asarray(cov0, dtype=np.float64)
    proper = P > 0  # zero: a flat prior (no term in the bound)
    e_log_p = np.log(np.where(proper, P, 1.0))
    shape: float | None = None
    rate: float | None = None
    xi = terms.at(mean, cov)
    history, converged, n_iter = [], False, 0
    for n_iter in range(1, max_iter + 1):
        cov, logdet_h = gaussian_from_precision(_diag_plus(terms.curvature(xi), P))
        mean = cov @ b
        xi = terms.at(mean, cov)
        Ew2 = mean ** 2 + np.diag(cov)
        raw_w2 = float((shape_w * Ew2)[weight_mask].sum())  # E|w|^2 of the raw weights
        if hyperprior is not None:
            a0, b0 = hyperprior
            shape, rate = a0 + d / 2, b0 + raw_w2 / 2
            gamma_terms = _gamma_terms(shape, rate, a0, b0)
            P[weight_mask] = shape / rate * shape_w[weight_mask]
            e_log_p[weight_mask] = special.digamma(shape) - np.log(rate) + \
                np.log(shape_w[weight_mask])
        elif estimate_alpha:
            P[weight_mask] = d / raw_w2 * shape_w[weight_mask]
            e_log_p[weight_mask] = np.log(P[weight_mask])
        data = terms.bound(xi) + float(b @ mean)
        prior = 0.5 * float(np.sum(e_log_p[proper])) - 0.5 * float(P @ Ew2) \
            - 0.5 * float(proper.sum()) * _LOG_2PI
        entropy = -0.5 * logdet_h + 0.5 * P.size * (1.0 + _LOG_2PI)
        elbo = data + prior + entropy
        if hyperprior is not None:
            elbo += gamma_terms
        history.append(elbo)
        if n_iter > 1 and abs(elbo - history[-2]) <= max(tol, 64 * _EPS * abs(elbo)):
            converged = True
            break
    return VariationalPosterior(mean, cov, P, float(history[-1]), history, n_iter, converged,
                                shape, rate)


def general_jaakkola_jordan(terms: "BoundTerms", base: np.ndarray, m0: np.ndarray,
                            alpha: float, *, mean0: np.ndarray, cov0: np.ndarray,
                            estimate_alpha: bool = False,
                            hyperprior: tuple[float, float] | None = None, tol: float = 1e-10,
                            max_iter: int = 500) -> VariationalPosterior:
    """:func:`jaakkola_jordan` under a general prior ``N(m_0, (alpha P)^-1)``: ``P`` =
    ``base`` dense positive definite, ``alpha`` its scale (all ``D`` parameters).

    The sweeps (Bishop 2006, eqs. 10.156-10.157 with ``S_0^-1 = alpha P``):
    ``S^-1 = alpha P + 2 Phi^T diag(s lambda(xi)) Phi``,
    ``m = S (Phi^T (s (t - 1/2)) + alpha P m_0)``; ``alpha = D / E[r^T P r]``,
    ``E[r^T P r] = tr(P S) + (m - m_0)^T P (m - m_0)`` (``estimate_alpha``), or
    ``q(alpha) = Gamma(a0 + D/2, b0 + E[r^T P r] / 2)`` (``hyperprior``). The prior's
    term is ``D/2 E[ln alpha] + ln|P| / 2 - E[alpha] E[r^T P r] / 2 - D/2 ln 2 pi``.
    """
    base = np.asarray(base, dtype=np.float64)
    m0 = np.asarray(m0, dtype=np.float64)
    d = base.shape[0]
    linear = terms.linear()
    base_m0 = base @ m0
    log_base = cholesky(base).logdet()
    e_alpha, e_log_alpha = float(alpha), float(np.log(alpha))
    mean, cov = np.asarray(mean0, dtype=np.float64), np.asarray(cov0, dtype=np.float64)
    shape: float | None = None
    rate: float | None = None
    gamma_terms = 0.0
    xi = terms.at(mean, cov)
    history, converged, n_iter = [], False, 0
    for n_iter in range(1, max_iter + 1):
        cov, logdet_h = gaussian_from_precision(terms.curvature(xi) + e_alpha * base)
        mean = cov @ (linear + e_alpha * base_m0)
        xi = terms.at(mean, cov)
        r = mean - m0
        q = float(np.sum(base * cov)) + float(r @ base @ r)  # E[(w - m0)^T P (w - m0)]
        if hyperprior is not None:
            a0, b0 = hyperprior
            shape, rate = a0 + d / 2, b0 + q / 2
            gamma_terms = _gamma_terms(shape, rate, a0, b0)
            e_alpha, e_log_alpha = shape / rate, float(special.digamma(shape) - np.log(rate))
        elif estimate_alpha:
            e_alpha = d / q
            e_log_alpha = float(np.log(e_alpha))
        data = terms.bound(xi) + float(linear @ mean)
        prior = 0.5 * (d * e_log_alpha + log_base) - 0.5 * e_alpha * q - 0.5 * d * _LOG_2PI
        entropy = -0.5 * logdet_h + 0.5 * d * (1.0 + _LOG_2PI)
        elbo = data + prior + entropy + gamma_terms
        history.append(elbo)
        if n_iter > 1 and abs(elbo - history[-2]) <= max(tol, 64 * _EPS * abs(elbo)):
            converged = True
            break
    return VariationalPosterior(mean, cov, e_alpha * base, float(history[-1]), history,
                                n_iter, converged, shape, rate, alpha=e_alpha)


def _diag_plus(H: np.ndarray, d: np.ndarray) -> np.ndarray:
    H = H.copy()
    H[np.diag_indices_from(H)] += d
    return H
