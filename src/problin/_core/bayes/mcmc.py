"""Exact posterior sampling of logistic regression, and convergence diagnostics.

**Sampler: adaptive independence Metropolis-Hastings.** Proposals come from a
multivariate t distribution (``nu`` degrees of freedom) centred at the Laplace
mean with the Laplace covariance inflated by ``scale^2``; a proposal ``w'`` is
accepted with probability ``min(1, r(w') / r(w))``, ``r = pi / q`` (Tierney
1994). The t's polynomial tails dominate the posterior's Gaussian ones, so
``r`` is bounded and the chain is uniformly ergodic (Mengersen & Tweedie
1996). Because proposals do not depend on the chain's state, all of them are
drawn up front and the log posterior is evaluated for a batch of proposals
at once: one ``X W`` product (a GEMM) and one pass of softplus per row block.
After ``n_warmup`` steps per chain the proposal is re-centred and re-scaled on
the importance-weighted moments of the warm-up proposals (which corrects the
Laplace approximation's skew-blind mean and covariance); the kept draws all
use that fixed proposal. Where that proposal is accepted too rarely (the
posterior is far from Gaussian) the caller switches to ``hmc.hmc_sampler``.

**Diagnostics** (Vehtari, Gelman, Simpson, Carpenter & Buerkner 2021,
"Rank-normalization, folding, and localization: an improved R-hat"):
rank-normalised split R-hat (the maximum of the bulk and folded versions) and
bulk effective sample size (Geyer's initial monotone sequence on the
combined-chain autocorrelations of the split, rank-normalised draws).
"""
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import special, stats
from scipy.linalg import solve_triangular

from ..blocks import iter_blocks, reduce_row_ranges
from ..linalg import column_sums

__all__ = ["LogitLogPosterior", "independence_sampler", "rank_normalise", "split_chains",
           "rhat", "ess_bulk"]

_BATCH = 256          # proposals per log-posterior evaluation
_BLOCK_BYTES = 1 << 20


class LogitLogPosterior:
    """``ln p(w | t) + const = sum_n s_n [t_n a_n - softplus(a_n)] - (w - m)^T P (w - m) / 2``,
    ``a_n = [1, x_n]^T w``, evaluated for many ``w`` at once (``prior``: the
    precision ``P``, None for a flat prior; ``prior_mean``: ``m``, None for zero).

    ``sum_n s_n t_n a_n = w^T Phi^T (s t)`` is one product with a vector
    formed once; only the softplus needs each row, for each ``w``.
    """

    def __init__(self, design: Any, y: np.ndarray, sample_weight: np.ndarray | None,
                 prior: Any, prior_mean: np.ndarray | None = None) -> None:
        self.design, self.prior, self.prior_mean = design, prior, prior_mean
        y = np.asarray(y, dtype=np.float64)
        self.sw = np.ones_like(y) if sample_weight is None else np.asarray(sample_weight)
        self.linear = design.rmatvec(self.sw * y)

    def _data_terms(self, W: np.ndarray, grad: bool) -> Any:
        return softplus_terms(self.design, self.sw, W, grad)

    def _prior_terms(self, W: np.ndarray) -> tuple[Any, Any]:
        """``(r^T P r, P r)``, ``r = w - m``, for each row of ``W``."""
        P = self.prior
        if P is None:
            return 0.0, 0.0
        R = W if self.prior_mean is None else W - self.prior_mean
        if P.rank_one:
            PR = np.array([P.matvec(r) for r in R])
        elif P.diag is not None:
            PR = R * P.diag
        else:  # (a dense P is symmetric: one product for the batch)
            PR = R @ P.dense_matrix
        return np.einsum("bi,bi->b", R, PR), PR

    def __call__(self, W: np.ndarray) -> np.ndarray:
        """Log posterior (unnormalised) at each row of ``W`` (B x p)."""
        W = np.atleast_2d(W)
        quad, _ = self._prior_terms(W)
        return W @ self.linear - self._data_terms(W, False) - 0.5 * quad

    def value_and_grad(self, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Log posterior and its gradient (rows) at each row of ``W``."""
        W = np.atleast_2d(W)
        quad, PW = self._prior_terms(W)
        total, G = self._data_terms(W, True)
        return W @ self.linear - total - 0.5 * quad, self.linear - G - PW


def softplus_terms(design: Any, sw: np.ndarray, W: np.ndarray, grad: bool) -> Any:
    """``sum_n s_n softplus(a_n)`` for each row of ``W`` and, with ``grad``,
    ``Phi^T (s sigma(a))`` (rows): one pass over X by row blocks, in threads."""
    off = int(design.intercept)
    block, params = design.kernel()  # W in the design's (standardised) coordinates
    W = params(W)
    Wt = np.ascontiguousarray(W[:, off:].T)
    shift = W[:, 0] if off else 0.0
    X = design.X
    rows = max(64, _BLOCK_BYTES // (8 * W.shape[0]))

    def work(lo: int, hi: int) -> Any:
        G: Any
        acc, G = np.zeros(W.shape[0]), np.zeros(W.shape) if grad else None
        for _, _, Xb, sb in iter_blocks(X, sw, rows=rows, start=lo, stop=hi):
            Xb = block(Xb)
            A = np.asarray(Xb @ Wt)
            A += shift
            if grad:
                R = special.expit(A) * sb[:, None]
                G[:, off:] += np.asarray(Xb.T @ R).T
                if off:
                    G[:, 0] += column_sums(R)
            # softplus(a) = max(a, 0) + log1p(exp(-|a|)), in place
            pos = np.maximum(A, 0.0)
            np.abs(A, out=A)
            np.negative(A, out=A)
            np.exp(A, out=A)
            np.log1p(A, out=A)
            A += pos
            acc += sb @ A
        return (acc, G) if grad else acc

    out = reduce_row_ranges(work, X.shape[0], rows)
    return (out[0], params(out[1])) if grad else out  # (the map is diagonal)


def _default_nu(p: int) -> float:
    """Degrees of freedom of the t proposal for ``p`` parameters: ``10 p``.

    A t's squared radius over ``p`` is ``F(p, nu)``-distributed, of relative variance
    about ``2/p + 2/nu`` against the Gaussian's ``2/p``: with ``nu`` fixed, the extra
    spread of the proposal's density ratio grows with ``p`` until independence
    proposals are mostly refused (measured at p = 31: acceptance 0.31 with nu = 10, 0.92
    with 10 p). The tails stay polynomial, so the chain stays uniformly ergodic.
    """
    return 10.0 * max(1, p)


def _t_draws(loc: np.ndarray, U: np.ndarray, nu: float, n: int,
             rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` multivariate-t draws (rows), scale matrix ``U^T U``, and their log density
    up to a constant."""
    Z = rng.standard_normal((n, loc.size))
    g = rng.chisquare(nu, size=n) / nu
    W = loc + (Z / np.sqrt(g)[:, None]) @ U
    return W, _t_logpdf(W, loc, U, nu)


def _t_logpdf(W: np.ndarray, loc: np.ndarray, U: np.ndarray, nu: float) -> np.ndarray:
    R = solve_triangular(U, (W - loc).T, trans="T", lower=False, check_finite=False)
    return -0.5 * (nu + loc.size) * np.log1p(np.einsum("ij,ij->j", R, R) / nu)


def _weighted_moments(W: np.ndarray, log_w: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Self-normalised importance-sampling mean and covariance, and the weights' ESS."""
    w = np.exp(log_w - log_w.max())
    w /= w.sum()
    mean = w @ W
    C = W - mean
    return mean, (C * w[:, None]).T @ C, 1.0 / float(w @ w)


def _metropolis(log_r: np.ndarray, log_u: np.ndarray,
                cur: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, int]:
    """Independence MH over proposals ``log_r`` (chains x T) from states ``cur``
    (a ``(index, log r)`` pair per chain; index -1: the previous phase's state).
    Returns the state index after every step and the number of acceptances."""
    idx, lr = cur
    chains, T = log_r.shape
    out = np.empty((chains, T), dtype=np.intp)
    accepted = 0
    for t in range(T):
        acc = log_u[:, t] < log_r[:, t] - lr
        idx = np.where(acc, t, idx)
        lr = np.where(acc, log_r[:, t], lr)
        out[:, t] = idx
        accepted += int(acc.sum())
    return out, accepted


def _evaluate(log_target: Callable[[np.ndarray], np.ndarray], W: np.ndarray,
              progress: Callable[..., Any] | None) -> np.ndarray:
    values = np.empty(W.shape[0])
    for lo in range(0, W.shape[0], _BATCH):
        values[lo:lo + _BATCH] = log_target(W[lo:lo + _BATCH])
        if progress is not None:
            progress(min(_BATCH, W.shape[0] - lo))
    return values


def independence_sampler(log_target: Callable[[np.ndarray], np.ndarray], loc: np.ndarray,
                         cov_factor: np.ndarray, *, n_chains: int, n_draws: int, n_warmup: int,
                         rng: np.random.Generator, nu: float | None = None,
                         warmup_scale: float = 1.3,
                         scale: float = 1.0, min_acceptance: float = 0.0,
                         progress: Callable[..., Any] | None = None
                         ) -> tuple[np.ndarray | None, float]:
    """Adaptive independence Metropolis-Hastings (see the module docstring).

    ``log_target(W)`` gives the unnormalised log posterior at each row of
    ``W``; ``loc`` and ``cov_factor`` (``U`` with ``S = U^T U``) describe the
    initial proposal's centre and covariance. Each chain starts at a draw of
    the (overdispersed) proposal. ``progress(k)`` is called after each batch
    of ``k`` proposals. Returns ``(samples, acceptance_rate)`` with samples
    of shape ``(n_chains, n_draws, p)``; ``(None, acceptance rate)`` when the
    adapted proposal's acceptance is below ``min_acceptance`` (a posterior too
    far from the proposal for this sampler to mix). ``nu``: the t's degrees of
    freedom, by default ``10 p`` (:func:`_default_nu`).
    """
    p = loc.size
    if nu is None:
        nu = _default_nu(p)
    # 1. warm-up with the Laplace proposal
    Wp, log_q = _t_draws(loc, warmup_scale * cov_factor, nu, n_chains * (n_warmup + 1), rng)
    log_pi = _evaluate(log_target, Wp, progress)
    log_r = (log_pi - log_q).reshape(n_chains, n_warmup + 1)
    log_u = np.log(rng.random((n_chains, n_warmup + 1)))
    # r = 0 before the first step: each chain starts at its first proposal.
    states, _ = _metropolis(log_r, log_u, (np.zeros(n_chains, np.intp),
                                           np.full(n_chains, -np.inf)))
    # (The warm-up's own acceptance says little: its proposal is deliberately wider than
    # the posterior, and in 30 dimensions that alone brings it near 0.2. The adapted
    # proposal's acceptance, below, decides whether this sampler mixes.)
    last = np.arange(n_chains) * (n_warmup + 1) + states[:, -1]
    # 2. adapt: importance-weighted moments of every warm-up proposal
    mean, cov, ess = _weighted_moments(Wp, log_pi - log_q)
    if ess >= 10 * p:
        try:
            cov_factor = np.linalg.cholesky(cov).T
            loc = mean
        except np.linalg.LinAlgError:
            pass
    U = scale * cov_factor
    current = Wp[last]
    lr_current = log_pi[last] - _t_logpdf(current, loc, U, nu)
    # 3. sampling with the adapted, fixed proposal
    Wp, log_q = _t_draws(loc, U, nu, n_chains * n_draws, rng)
    log_r = (_evaluate(log_target, Wp, progress) - log_q).reshape(n_chains, n_draws)
    log_u = np.log(rng.random((n_chains, n_draws)))
    states, accepted = _metropolis(log_r, log_u, (np.full(n_chains, -1, np.intp), lr_current))
    rate = accepted / (n_chains * n_draws)
    if rate < min_acceptance:
        return None, rate
    Wp = Wp.reshape(n_chains, n_draws, p)
    samples = np.where((states >= 0)[:, :, None],
                       np.take_along_axis(Wp, np.maximum(states, 0)[:, :, None], axis=1),
                       current[:, None, :])
    return samples, rate


# ------------------------------------------------------------------ diagnostics
def split_chains(x: np.ndarray) -> np.ndarray:
    """``(chains, draws)`` -> ``(2 chains, draws // 2)``: first and last halves (an odd
    middle draw is dropped)."""
    half = x.shape[1] // 2
    return np.concatenate([x[:, :half], x[:, x.shape[1] - half:]], axis=0)


def rank_normalise(x: np.ndarray) -> np.ndarray:
    """Normal scores of the pooled ranks: ``Phi^-1((r - 3/8) / (S + 1/4))``, average ranks
    for ties."""
    r = stats.rankdata(x, method="average", axis=None).reshape(x.shape)
    return special.ndtri((r - 0.375) / (x.size + 0.25))


def _basic_rhat(x: np.ndarray) -> float:
    n = x.shape[1]
    W = float(np.mean(np.var(x, axis=1, ddof=1)))
    B_over_n = float(np.var(np.mean(x, axis=1), ddof=1))
    if W <= 0:
        return np.nan
    return float(np.sqrt(((n - 1) / n * W + B_over_n) / W))


def rhat(draws: np.ndarray) -> Any:
    """Rank-normalised split R-hat per parameter: ``max(bulk, folded)``.

    ``draws``: ``(chains, draws)`` or ``(chains, draws, params)``.
    """
    x = np.asarray(draws, dtype=np.float64)
    flat = x[:, :, None] if x.ndim == 2 else x
    out = np.empty(flat.shape[2])
    for j in range(flat.shape[2]):
        out[j] = max(_basic_rhat(rank_normalise(split_chains(flat[:, :, j]))),
                     _basic_rhat(rank_normalise(split_chains(_folded(flat[:, :, j])))))
    return out[0] if x.ndim == 2 else out


def _folded(x: np.ndarray) -> np.ndarray:
    """``|x - median(x)|``, with the two middle draws of an even count exactly tied.

    Their midpoint is the median, so they are equally far from it; ``x - m`` rounds
    differently on each side, and the folded ranks would order them by rounding.
    Metropolis chains repeat those draws many times, so rounding moved the folded
    R-hat by up to 1e-4 when the draws were merely rescaled (and the choice of sampler,
    made on R-hat, with it). Only this pair ties: other equal distances to the median
    need two distinct draws summing to the middle pair's sum.
    """
    k = x.size // 2
    if not x.size:
        return np.abs(x)
    if x.size % 2:
        return np.abs(x - np.partition(x.ravel(), k)[k])
    # The median as numpy forms it (the mean of the middle pair), from one partition.
    low, high = np.partition(x.ravel(), [k - 1, k])[k - 1:k + 1]
    folded = np.abs(x - (low + high) / 2)
    folded[(x == low) | (x == high)] = 0.5 * (high - low)
    return folded


def _autocovariance(x: np.ndarray) -> np.ndarray:
    """Biased autocovariances ``(1/n) sum_i c_i c_{i+t}`` of each chain (rows), by FFT."""
    n = x.shape[1]
    c = x - x.mean(axis=1, keepdims=True)
    size = 1 << int(np.ceil(np.log2(2 * n)))
    f = np.fft.rfft(c, n=size, axis=1)
    return np.fft.irfft(f * np.conj(f), n=size, axis=1)[:, :n] / n


def _ess(x: np.ndarray) -> float:
    """Effective sample size of ``(chains, draws)``: the combined-chain autocorrelation
    ``rho_t = 1 - (W - mean_m acov_m(t)) / var+`` summed by Geyer's initial positive and
    monotone sequences, as Stan and ArviZ take them: pairs ``(rho_t, rho_t+1)`` from
    lag 2 on while the last pair's sum is positive and lags stay below ``n - 2`` (a
    pair of negative sum ends it and is left out), the last positive even lag added
    once, ``tau = -1 + 2 sum_{t <= T} rho_t + rho_{T+1}``."""
    m, n = x.shape
    acov = _autocovariance(x)
    W = float(np.mean(acov[:, 0])) * n / (n - 1)
    var_plus = W * (n - 1) / n + (float(np.var(x.mean(axis=1), ddof=1)) if m > 1 else 0.0)
    if not var_plus > 0:
        return np.nan
    rho = 1.0 - (W - acov.mean(axis=0)) / var_plus
    kept = np.zeros(n)
    kept[0], kept[1] = 1.0, rho[1]
    even, odd = 1.0, float(rho[1])
    t = 1
    while t < n - 3 and even + odd > 0.0:
        even, odd = float(rho[t + 1]), float(rho[t + 2])
        if even + odd >= 0.0:
            kept[t + 1], kept[t + 2] = even, odd
        t += 2
    last = t - 2
    if even > 0.0:
        kept[last + 1] = even
    for t in range(1, last - 1, 2):  # monotone: no pair above the one before it
        if kept[t + 1] + kept[t + 2] > kept[t - 1] + kept[t]:
            kept[t + 1] = kept[t + 2] = (kept[t - 1] + kept[t]) / 2.0
    tau = -1.0 + 2.0 * float(kept[:last + 1].sum()) + float(kept[last + 1:last + 2].sum())
    total = m * n
    return total / max(tau, 1.0 / np.log10(total))


def ess_bulk(draws: np.ndarray) -> Any:
    """Bulk effective sample size per parameter (split chains, rank-normalised)."""
    x = np.asarray(draws, dtype=np.float64)
    flat = x[:, :, None] if x.ndim == 2 else x
    out = np.array([_ess(rank_normalise(split_chains(flat[:, :, j])))
                    for j in range(flat.shape[2])])
    return out[0] if x.ndim == 2 else out
