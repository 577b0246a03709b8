"""The negative binomial NB2's ``alpha`` by maximum likelihood, jointly with the means.

With ``k = 1 / alpha`` the row log-likelihood is (Hilbe 2011, §8.2; Cameron & Trivedi
2013, §3.3)

    l = lgamma(y + k) - lgamma(k) - lgamma(y + 1) + y log(alpha mu) - (y + k) log1p(alpha mu),

and its derivatives in ``alpha`` at fixed ``mu``, with ``A = psi(k) - psi(y + k) +
log1p(alpha mu)``:

    dl/dalpha   = A / alpha² + (y - mu) / (alpha (1 + alpha mu)),
    d²l/dalpha² = (psi'(y + k) - psi'(k)) / alpha⁴ + mu / (alpha² (1 + alpha mu))
                  - 2 A / alpha³ - (y - mu)(1 + 2 alpha mu) / (alpha (1 + alpha mu))²,

and across to the linear predictor ``d²l / d eta d alpha = -(y - mu) mu' / (1 + alpha mu)²``
(``mu' = d mu / d eta``; zero in expectation, so ``alpha`` and the coefficients are
orthogonal under the Fisher information and alternating between them converges fast).

The fit alternates: the coefficients by the Newton engine with ``alpha`` fixed (the
``ExponentialFamily(NegativeBinomial(alpha), link)``), then ``alpha`` by a safeguarded
Newton iteration in ``log alpha`` at fixed means (:func:`update_alpha`), until ``alpha``
moves by less than its tolerance (:func:`fit_alpha`). The standard errors are those of
the joint observed information of ``(beta, alpha)``, as statsmodels'
``NegativeBinomial``: from the covariance of ``beta`` at fixed ``alpha`` by a rank-one
update (:func:`joint_covariance`), no inverse formed.

Everything ``alpha`` needs of the rows is a sum over them of per-row terms in ``y``,
``mu`` and the weights (:func:`alpha_sums`, :func:`overdispersion_sums`,
:func:`joint_sums`: row sums of :mod:`~problin._core.model.fitted_rows`), which the
caller's data source reduces: all rows at once in memory, dense or sparse, one pass
over the chunks of a Dask array, by the same functions.
"""
import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special

from ..types import FloatArray
from .fitted_rows import FittedRows, SumRows

__all__ = ["AlphaFit", "nb2_log_likelihood", "alpha_derivatives", "cross_derivative",
           "alpha_sums", "overdispersion_sums", "joint_sums", "moment_alpha", "update_alpha",
           "fit_alpha", "joint_covariance", "ALPHA_FLOOR", "ALPHA_CEILING"]

#: Below this ``alpha`` the data show no overdispersion to estimate: the likelihood
#: rises towards the Poisson limit ``alpha -> 0`` and the fit reports that it did not
#: converge (the estimator warns with the value).
ALPHA_FLOOR = 1e-8
#: Above this the likelihood still rises with ``alpha`` (all counts zero at their means:
#: a fit at the boundary, or a few huge counts among zeros): the fit stops there and
#: reports that it did not converge, its statistics finite (at 2e51 they were not).
ALPHA_CEILING = 1e8
_MAX_LOG_STEP = 2.0  # a Newton step in log alpha moves alpha by at most e² ~ 7.4 times


@dataclass(frozen=True)
class AlphaFit:
    """``alpha`` and how it was found: ``converged``, iterations, the summed
    log-likelihood there and its derivative in ``alpha``, and a message saying why
    the search stopped."""

    alpha: float
    converged: bool
    n_iter: int
    log_likelihood: float
    score: float
    message: str


def _w(weights: FloatArray | None, n: int) -> FloatArray:
    return np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)


def nb2_log_likelihood(y: FloatArray, mu: FloatArray, alpha: float,
                       weights: FloatArray | None = None) -> float:
    """``sum_i w_i l_i``: the NB2 log-likelihood with every constant (``weights``:
    frequency weights)."""
    k = 1.0 / alpha
    ll = (special.gammaln(y + k) - special.gammaln(k) - special.gammaln(y + 1.0)
          + special.xlogy(y, alpha * mu) - (y + k) * np.log1p(alpha * mu))
    return float(np.sum(_w(weights, y.size) * ll))


def alpha_derivatives(y: FloatArray, mu: FloatArray, alpha: float,
                      weights: FloatArray | None = None) -> tuple[float, float, float]:
    """``(l, dl/dalpha, d²l/dalpha²)`` summed over the rows (weights: frequencies)."""
    y, mu = np.asarray(y, dtype=np.float64), np.asarray(mu, dtype=np.float64)
    w = _w(weights, y.size)
    k = 1.0 / alpha
    am = alpha * mu
    q = 1.0 / (1.0 + am)
    # psi(y + k) - psi(k) = sum_{j < y} 1 / (k + j) for integer y; by digamma (any y >= 0)
    a = np.log1p(am) - (special.digamma(y + k) - special.digamma(k))
    r = y - mu
    score = a * k * k + r * q * k
    second = ((special.polygamma(1, y + k) - special.polygamma(1, k)) * k ** 4
              + mu * q * k * k - 2.0 * a * k ** 3 - r * (1.0 + 2.0 * am) * np.square(q * k))
    return (nb2_log_likelihood(y, mu, alpha, w), float(np.sum(w * score)),
            float(np.sum(w * second)))


def cross_derivative(y: FloatArray, mu: FloatArray, dmu_deta: FloatArray,
                     alpha: float) -> FloatArray:
    """Per row ``d²l / d eta d alpha = -(y - mu) mu' / (1 + alpha mu)²``: the joint
    Hessian's ``(beta, alpha)`` block is ``X^T (w * this)``."""
    q = 1.0 / (1.0 + alpha * np.asarray(mu, dtype=np.float64))
    return -(np.asarray(y, dtype=np.float64) - mu) * dmu_deta * q * q


def alpha_sums(rows: FittedRows, alpha: float) -> tuple[float, float, float]:
    """A :data:`~problin._core.model.fitted_rows.RowSum`: ``(l, dl/dalpha,
    d²l/dalpha²)`` of these rows (:func:`alpha_derivatives`)."""
    return alpha_derivatives(rows.y, rows.mu, alpha, rows.weights)


def overdispersion_sums(rows: FittedRows) -> tuple[float, float]:
    """A row sum: ``(sum w ((y - mu)² - y) / mu², sum w)``, twice the score of
    ``alpha`` at ``alpha -> 0`` and the weights' total (:func:`moment_alpha`)."""
    w = _w(rows.weights, rows.y.size)
    excess = (np.square(rows.y - rows.mu) - rows.y) / np.square(rows.mu)
    return float(np.sum(w * excess)), float(np.sum(w))


def _opening_sums(rows: FittedRows, alpha: float) -> tuple[float, float, float, float]:
    """Where :func:`update_alpha` starts, in one reduction: the score at ``alpha -> 0``
    (twice it) and the derivatives at ``alpha``."""
    return (overdispersion_sums(rows)[0],) + alpha_sums(rows, alpha)


def joint_sums(rows: FittedRows, alpha: float) -> tuple[FloatArray, float]:
    """A row sum: the joint information's ``(c, d)`` of :func:`joint_covariance`,
    ``c = -[1, X]^T (w d²l/deta dalpha)`` and ``d = -d²l/dalpha²``."""
    w = _w(rows.weights, rows.y.size)
    cross = rows.rmatvec(w * cross_derivative(rows.y, rows.mu, rows.slope, alpha))
    return -cross, -alpha_derivatives(rows.y, rows.mu, alpha, rows.weights)[2]


def _floats(parts: tuple[float | FloatArray, ...]) -> tuple[float, ...]:
    return tuple(float(p) for p in parts)


def moment_alpha(sums: SumRows, df_resid: float | None = None) -> float:
    """A start value: the moment estimate ``sum w ((y - mu)² - y) / mu² / df`` (Cameron &
    Trivedi 2013, §3.2), at least 0.01, from the rows at a Poisson fit's means (``sums``
    reduces :func:`overdispersion_sums` over them)."""
    excess, total = _floats(sums(overdispersion_sums))
    df = total if df_resid is None else df_resid
    est = excess / max(df, 1.0)
    return est if est > 0.01 and np.isfinite(est) else 0.01


def update_alpha(sums: SumRows, alpha0: float, max_iter: int = 100,
                 tol: float = 1e-10) -> AlphaFit:
    """The ``alpha`` maximising the NB2 likelihood at fixed means: Newton's method in
    ``t = log alpha`` (``dl/dt = alpha l'``, ``d²l/dt² = alpha l' + alpha² l''``), a
    step of at most 2 in ``t``, an ascent step of that size where the curvature is not
    negative, halved until the likelihood does not fall. Every evaluation is one
    reduction over the rows (``sums``: in memory, or a pass over Dask chunks) of a row
    sum of this module. Converged when a Newton step moves ``t`` by less than ``tol``;
    not converged (``alpha`` reported as found) where the score at ``alpha -> 0`` is not
    positive (``alpha = 0`` reported: no overdispersion, the Poisson limit), where
    ``alpha`` falls below ``ALPHA_FLOOR``, or where the iterations run out."""
    if not (alpha0 > 0 and np.isfinite(alpha0)):
        raise ValueError(f"the start value of alpha must be positive and finite, got {alpha0!r}")
    # dl/dalpha at alpha -> 0 is sum w ((y - mu)² - y) / (2 mu²) (the score test of
    # overdispersion, Cameron & Trivedi 2013, §5.2): not positive, the likelihood is
    # highest at the Poisson limit (and the derivatives in alpha lose ~eps/alpha² of
    # their digits on the way there).
    excess, ll, s, s2 = _floats(sums(functools.partial(_opening_sums, alpha=alpha0)))
    boundary = excess / 2.0
    if not boundary > 0:
        at_floor = _floats(sums(functools.partial(alpha_sums, alpha=ALPHA_FLOOR)))[0]
        return AlphaFit(0.0, False, 0, at_floor, boundary,
                        "alpha tends to 0: no overdispersion (the Poisson limit; the "
                        f"score at alpha = 0 is {boundary:.4g})")
    t = float(np.log(alpha0))
    for it in range(1, max_iter + 1):
        alpha = float(np.exp(t))
        grad, curv = alpha * s, alpha * s + alpha * alpha * s2
        newton = curv < 0 and np.isfinite(curv)
        step = -grad / curv if newton else float(np.sign(grad)) * _MAX_LOG_STEP
        step = float(np.clip(step, -_MAX_LOG_STEP, _MAX_LOG_STEP))
        if newton and abs(step) < tol:
            return AlphaFit(alpha, True, it, ll, s, "converged")
        full = step
        for _ in range(60):
            trial = float(np.exp(t + step))
            new = _floats(sums(functools.partial(alpha_sums, alpha=trial)))
            # A step is taken where the likelihood rises or, for a Newton step, where the
            # score falls in size: near the maximum the rise (~ step² |curv| / 2) is
            # below the likelihood's rounding, which decides nothing there (a tie taken
            # as a rise stalled the iteration for its 100 steps), and the score keeps
            # its digits.
            if new[0] > ll or (newton and abs(trial * new[1]) < abs(grad)):
                break
            step *= 0.5
        else:
            converged = newton and abs(full) < 1e-6
            return AlphaFit(alpha, converged, it, ll, s,
                            "converged (the likelihood is flat at its rounding)" if converged
                            else "no step increased the likelihood")
        t += step
        ll, s, s2 = new
        if np.exp(t) < ALPHA_FLOOR:
            return AlphaFit(float(np.exp(t)), False, it, ll, s,
                            "alpha tends to 0: no overdispersion (the Poisson limit)")
        if np.exp(t) > ALPHA_CEILING:
            return AlphaFit(ALPHA_CEILING, False, it, ll, s, "alpha tends to infinity "
                            f"(stopped at {ALPHA_CEILING:g}: the counts are all at or near 0)")
    return AlphaFit(float(np.exp(t)), False, max_iter, ll, s,
                    f"not converged in {max_iter} iterations")


def fit_alpha(fit_means: Callable[[float], SumRows], alpha0: float, max_iter: int = 100,
              tol: float = 1e-10) -> AlphaFit:
    """NB2's joint maximum likelihood by alternation: ``fit_means(alpha)`` fits the means
    with ``alpha`` fixed (the estimator's Newton solve, warm-started from its previous
    solution) and returns the reduction over the rows at those means; then
    :func:`update_alpha` there; until ``log alpha`` moves by less than ``tol``.
    ``n_iter`` counts the alternations."""
    alpha = alpha0
    for it in range(1, max_iter + 1):
        found = update_alpha(fit_means(alpha), alpha, tol=tol)
        if not found.converged:  # (alpha = 0 at the Poisson limit: no log of it)
            return AlphaFit(found.alpha, False, it, found.log_likelihood, found.score,
                            found.message)
        moved = abs(np.log(found.alpha) - np.log(alpha))
        alpha = found.alpha
        if moved < tol:
            return AlphaFit(alpha, True, it, found.log_likelihood, found.score, "converged")
    return AlphaFit(alpha, False, max_iter, found.log_likelihood, found.score,
                    f"alpha and the coefficients did not settle in {max_iter} alternations")


def joint_covariance(cov_beta: FloatArray, cross: FloatArray, second: float
                     ) -> tuple[FloatArray, FloatArray, float]:
    """The covariance of ``(beta, alpha)`` from the joint observed information

        [[H, c], [c^T, d]],   H = -d²l/dbeta², c = -X^T (w d²l/deta dalpha), d = -d²l/dalpha²,

    given ``cov_beta = H^-1`` (the covariance at fixed ``alpha``): with ``u = H^-1 c`` and
    the Schur complement ``s = d - c^T u``, ``Cov(beta) = H^-1 + u u^T / s``,
    ``Cov(beta, alpha) = -u / s``, ``Var(alpha) = 1 / s``. ``cross`` is ``c`` (``X^T`` times
    the weighted negative cross derivatives), ``second`` is ``d``. A Schur complement
    that is not positive (the joint information is not positive definite) gives
    ``Var(alpha) = inf``."""
    u = cov_beta @ cross
    s = float(second - cross @ u)
    if not s > 0:
        return cov_beta, np.full_like(u, np.nan), np.inf
    return cov_beta + np.outer(u, u) / s, -u / s, 1.0 / s
