"""The cumulative-link family of ordered outcomes (McCullagh 1980; Agresti 2010, ch. 3-5).

``P(y <= k | x) = F(theta_k - x^T beta)``, ``k = 0..K-2``, for a latent distribution
``F`` (:data:`LATENT`: logistic, normal, minimum and maximum extreme value, Cauchy).
The engine's parameters are ``[b, w]`` of the design ``[1, X]`` (the linear predictor
``eta = b + x^T w`` in the solver's basis) and the ``K - 2`` log gaps
``gamma_m = log(a_{m+1} - a_m)`` of the cuts ``a_0 = 0 < a_1 < ... < a_{K-2}``
relative to the intercept: ``theta_k = a_k - b``, ``beta = w``. The cuts therefore
stay increasing without constraints, the solver's centring and scaling of the columns
(the basis) only moves ``b``, and a row's class probability is

    p_i = F(u_i) - F(l_i),   u_i = a_{t_i} - eta_i,   l_i = a_{t_i - 1} - eta_i,

``a_{-1} = -inf``, ``a_{K-1} = +inf``. It is formed in log space as a difference of
CDFs below the median of ``F`` and of survival functions above it
(``log p = log F(u) + log(1 - exp(log F(l) - log F(u)))``), so that rows in either tail
keep their digits. With ``r_u = f(u)/p``, ``r_l = f(l)/p`` and ``psi = f'/f`` the
row's loss ``-log p`` has

    d/du = -r_u,  d/dl = r_l,
    d2/du2 = r_u^2 - r_u psi(u),  d2/dl2 = r_l^2 + r_l psi(l),  d2/dudl = -r_u r_l,

from which :class:`OrdinalRows` sums what the objective needs over rows.
"""
from dataclasses import dataclass

import numpy as np
from scipy import special

from ..blocks import map_rows
from ..types import FloatArray

__all__ = ["LATENT", "CumulativeLink", "LatentDistribution", "OrdinalRows", "log1mexp"]

_LOG_PI = float(np.log(np.pi))
_LOG_SQRT_2PI = 0.5 * float(np.log(2.0 * np.pi))
_LN2 = float(np.log(2.0))
#: Rows per chunk of the row kernel: its ~40 temporaries of 8 bytes a row stay below
#: malloc's 128 KB threshold for fresh (page-faulting) memory; 16,384 rows cost 2.8x.
_CHUNK_ROWS = 4096


def log1mexp(x: FloatArray) -> FloatArray:
    """``log(1 - exp(x))`` for ``x <= 0`` (Maechler 2012: ``expm1`` near 0, ``log1p``
    beyond ``-log 2``); ``-inf`` at 0, 0 at ``-inf``."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.where(x > -_LN2, np.log(-np.expm1(np.minimum(x, 0.0))),
                        np.log1p(-np.exp(np.minimum(x, -_LN2))))


class LatentDistribution:
    """A latent distribution ``F``: log CDF and survival function, log density, the
    density's score ``psi = f'/f``, the quantile function, and its median (methods of a
    class, so that fitted models pickle)."""

    name = ""
    median = 0.0
    #: whether the density is log-concave (then the likelihood is concave in (eta, a))
    log_concave = True

    def log_cdf(self, x: FloatArray) -> FloatArray:
        raise NotImplementedError  # pragma: no cover - each distribution's own

    def log_sf(self, x: FloatArray) -> FloatArray:
        raise NotImplementedError  # pragma: no cover

    def log_pdf(self, x: FloatArray) -> FloatArray:
        raise NotImplementedError  # pragma: no cover

    def score(self, x: FloatArray) -> FloatArray:
        raise NotImplementedError  # pragma: no cover

    def ppf(self, p: FloatArray) -> FloatArray:
        raise NotImplementedError  # pragma: no cover

    def interval(self, upper: FloatArray, lower: FloatArray
                 ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``(log p, f(upper)/p, f(lower)/p)`` for ``p = F(upper) - F(lower)``: by CDFs
        below the median, by survival functions above it (:func:`log_interval`);
        the ratios 0 at the open ends."""
        logp = log_interval(self, upper, lower)
        with np.errstate(over="ignore", invalid="ignore"):
            r_u = np.exp(self.log_pdf(upper) - logp)
            r_l = np.exp(self.log_pdf(lower) - logp)
        return (logp, np.where(np.isfinite(upper), r_u, 0.0),
                np.where(np.isfinite(lower), r_l, 0.0))

    def row_terms(self, upper: FloatArray, lower: FloatArray
                  ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
        """``(log p, r_u, r_l, r_u psi(u), r_l psi(l))`` with ``r = f/p`` (0 at the open
        ends): what a row's loss and its first and second derivatives are made of."""
        logp, r_u, r_l = self.interval(upper, lower)
        with np.errstate(invalid="ignore"):
            psi_u = np.where(r_u > 0, r_u * self.score(np.where(r_u > 0, upper, 0.0)), 0.0)
            psi_l = np.where(r_l > 0, r_l * self.score(np.where(r_l > 0, lower, 0.0)), 0.0)
        return logp, r_u, r_l, psi_u, psi_l

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(self.name)


def _log_expit(x: FloatArray) -> FloatArray:
    """``log(1 / (1 + e^-x))``: ``-log1p(e^-|x|) + min(x, 0)`` (a third of scipy's
    ``log_expit``'s time)."""
    x = np.asarray(x, dtype=np.float64)
    out: FloatArray = np.minimum(x, 0.0) - np.log1p(np.exp(-np.abs(x)))
    return out


def _exp(x: FloatArray) -> FloatArray:
    with np.errstate(over="ignore"):
        out: FloatArray = np.exp(x)
    return out


class Logistic(LatentDistribution):
    name = "logit"

    def log_cdf(self, x: FloatArray) -> FloatArray:
        return np.asarray(special.log_expit(x))

    def log_sf(self, x: FloatArray) -> FloatArray:
        return np.asarray(special.log_expit(-np.asarray(x)))

    def log_pdf(self, x: FloatArray) -> FloatArray:
        return self.log_cdf(x) + self.log_sf(x)

    def score(self, x: FloatArray) -> FloatArray:
        return -np.tanh(0.5 * np.asarray(x))

    def ppf(self, p: FloatArray) -> FloatArray:
        return np.asarray(special.logit(p))

    def interval(self, upper: FloatArray, lower: FloatArray
                 ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Closed form: ``s(u) - s(l) = s(u) s(-l) (1 - e^(l - u))`` (``s`` the logistic
        CDF), so ``log p = log s(u) + log s(-l) + log(1 - e^(l-u))``, exact in both tails
        without a branch, and ``f(u)/p = s(-u) / (s(-l) (1 - e^(l-u)))``,
        ``f(l)/p = s(l) / (s(u) (1 - e^(l-u)))`` (two ``log_expit`` per row, with
        ``log s(-x) = log s(x) - x``)."""
        with np.errstate(invalid="ignore", over="ignore"):
            A = _log_expit(upper)  # log s(u) (0 at +inf)
            C = _log_expit(-lower)  # log s(-l) (0 at -inf)
            L = log1mexp(lower - upper)
            logp = A + C + L
            r_u = np.exp((A - upper) - C - L)  # (A - u = -inf at u = +inf: 0)
            r_l = np.exp((C + lower) - A - L)  # (C + l = -inf at l = -inf: 0)
        return logp, r_u, r_l

    def row_terms(self, upper: FloatArray, lower: FloatArray
                  ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
        """The fitting kernel: :meth:`interval`'s closed form from ``e = exp(-|x|)`` of
        each end (``log s(x) = min(x, 0) - log1p(e)``, ``psi(x) = -tanh(x/2) =
        -sign(x) (1 - e) / (1 + e)``) and ``log(1 - e^(l-u))`` as ``log(-expm1)`` (exact
        to rounding in absolute terms, which is what sums of losses need; predictions use
        :meth:`interval`): seven transcendental functions a row."""
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            e_u, e_l = np.exp(-np.abs(upper)), np.exp(-np.abs(lower))
            A = np.minimum(upper, 0.0) - np.log1p(e_u)  # log s(u)
            C = np.minimum(-lower, 0.0) - np.log1p(e_l)  # log s(-l)
            E = -np.expm1(lower - upper)
            L = np.log(E)
            logp = A + C + L
            r_u = np.exp((A - upper) - C) / E
            r_l = np.exp((C + lower) - A) / E
            psi_u = r_u * np.copysign((1.0 - e_u) / (1.0 + e_u), -upper)
            psi_l = r_l * np.copysign((1.0 - e_l) / (1.0 + e_l), -lower)
        return logp, r_u, r_l, psi_u, psi_l


class Normal(LatentDistribution):
    name = "probit"

    def log_cdf(self, x: FloatArray) -> FloatArray:
        return np.asarray(special.log_ndtr(x))

    def log_sf(self, x: FloatArray) -> FloatArray:
        return np.asarray(special.log_ndtr(-np.asarray(x)))

    def log_pdf(self, x: FloatArray) -> FloatArray:
        x = np.asarray(x)
        return -0.5 * x * x - _LOG_SQRT_2PI

    def score(self, x: FloatArray) -> FloatArray:
        return -np.asarray(x, dtype=np.float64)

    def ppf(self, p: FloatArray) -> FloatArray:
        return np.asarray(special.ndtri(p))


class MinimumExtreme(LatentDistribution):
    """The minimum extreme value (Gumbel minimum), ``F = 1 - exp(-e^x)`` (cloglog)."""

    name = "cloglog"
    median = float(np.log(np.log(2.0)))

    def log_cdf(self, x: FloatArray) -> FloatArray:
        return log1mexp(-_exp(x))

    def log_sf(self, x: FloatArray) -> FloatArray:
        return -_exp(x)

    def log_pdf(self, x: FloatArray) -> FloatArray:
        return np.asarray(x) - _exp(x)

    def score(self, x: FloatArray) -> FloatArray:
        return 1.0 - _exp(x)

    def ppf(self, p: FloatArray) -> FloatArray:
        return np.log(-np.log1p(-np.asarray(p)))


class MaximumExtreme(LatentDistribution):
    """The maximum extreme value (Gumbel maximum), ``F = exp(-e^-x)`` (loglog)."""

    name = "loglog"
    median = -float(np.log(np.log(2.0)))

    def log_cdf(self, x: FloatArray) -> FloatArray:
        return -_exp(-np.asarray(x))

    def log_sf(self, x: FloatArray) -> FloatArray:
        return log1mexp(-_exp(-np.asarray(x)))

    def log_pdf(self, x: FloatArray) -> FloatArray:
        return -np.asarray(x) - _exp(-np.asarray(x))

    def score(self, x: FloatArray) -> FloatArray:
        return _exp(-np.asarray(x)) - 1.0

    def ppf(self, p: FloatArray) -> FloatArray:
        return -np.log(-np.log(np.asarray(p)))


class Cauchy(LatentDistribution):
    """The Cauchy distribution (cauchit): heavy tails, a density that is not log-concave."""

    name = "cauchit"
    log_concave = False

    def log_cdf(self, x: FloatArray) -> FloatArray:
        # F = atan2(1, -x) / pi: no cancellation in the lower tail
        with np.errstate(divide="ignore"):
            return np.log(np.arctan2(1.0, -np.asarray(x))) - _LOG_PI

    def log_sf(self, x: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore"):
            return np.log(np.arctan2(1.0, np.asarray(x))) - _LOG_PI

    def log_pdf(self, x: FloatArray) -> FloatArray:
        # log(1 + x^2) without overflow for |x| > 1e154
        with np.errstate(divide="ignore"):
            return -_LOG_PI - np.logaddexp(0.0, 2.0 * np.log(np.abs(x)))

    def score(self, x: FloatArray) -> FloatArray:
        x = np.asarray(x, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            out = -2.0 * x / (1.0 + x * x)
        return np.where(np.isfinite(out), out, -2.0 / np.where(x == 0, 1.0, x))

    def ppf(self, p: FloatArray) -> FloatArray:
        return np.tan(np.pi * (np.asarray(p) - 0.5))


#: The latent distributions by link name (R ``ordinal::clm``'s links).
LATENT: dict[str, LatentDistribution] = {
    dist.name: dist for dist in (Logistic(), Normal(), MinimumExtreme(), MaximumExtreme(),
                                 Cauchy())}


def log_interval(dist: LatentDistribution, upper: FloatArray, lower: FloatArray) -> FloatArray:
    """``log(F(upper) - F(lower))`` (``upper > lower``, either infinite): by CDFs where
    ``lower`` is below the median, by survival functions above it."""
    with np.errstate(divide="ignore", invalid="ignore"):
        by_sf = lower > dist.median
        lcu, lcl = dist.log_cdf(upper), dist.log_cdf(lower)
        lsu, lsl = dist.log_sf(upper), dist.log_sf(lower)
        from_cdf = lcu + log1mexp(np.minimum(lcl - lcu, 0.0))
        from_sf = lsl + log1mexp(np.minimum(lsu - lsl, 0.0))
        out: FloatArray = np.where(by_sf, from_sf, from_cdf)
    return out


@dataclass(frozen=True)
class OrdinalRows:
    """The rows' loss and derivatives at ``(eta, cuts)``, weighted.

    ``loss``: ``sum s_i (-log p_i)``; ``g``: ``d loss_i / d eta_i`` (n); ``grad_cuts``:
    ``d loss / d a_j`` summed (K-1); ``h`` (``d2 / d eta2``, n), the two entries per row of
    ``d2 / d eta_i d a_j`` (its own class's upper and lower cuts) and ``hess_cuts``
    (``d2 / d a_j d a_k`` summed, K-1 x K-1, tridiagonal)."""

    loss: float
    g: FloatArray
    grad_cuts: FloatArray
    h: FloatArray
    cross_upper: FloatArray  # d2 loss_i / d eta_i d a_{t_i}
    cross_lower: FloatArray  # d2 loss_i / d eta_i d a_{t_i - 1}
    hess_cuts: FloatArray
    upper: FloatArray  # d loss_i / d a_{t_i}, for the rows' scores
    lower: FloatArray  # d loss_i / d a_{t_i - 1}


class CumulativeLink:
    """The cumulative-link family of ``n_classes`` ordered classes with latent ``link``."""

    #: no uniform bound on the change of the row curvatures (the engine rebuilds H)
    curvature_lipschitz: float | None = None

    def __init__(self, link: str, n_classes: int) -> None:
        if link not in LATENT:
            raise ValueError(f"link must be one of {sorted(LATENT)}, got {link!r}")
        self.link = link
        self.dist = LATENT[link]
        self.n_classes = int(n_classes)
        self.n_gaps = self.n_classes - 2

    # ------------------------------------------------------------ parameters
    def cuts(self, gaps: FloatArray) -> FloatArray:
        """``a_0 = 0, a_j = sum_{m<j} exp(gamma_m)`` (K-1 values)."""
        return np.concatenate(([0.0], np.cumsum(np.exp(gaps))))

    def gaps_jacobian(self, gaps: FloatArray) -> FloatArray:
        """``d a_j / d gamma_m`` (K-1 x K-2): ``exp(gamma_m)`` for ``m < j``."""
        K1 = self.n_classes - 1
        J = np.tril(np.ones((K1, self.n_gaps)), -1) * np.exp(gaps)[None, :]
        return J

    def start(self, class_weights: FloatArray) -> tuple[float, FloatArray]:
        """``(b, gaps)`` of the thresholds model (no slopes): the cut-points at the
        quantiles of the cumulative class shares, ``theta_k = F^-1(P(y <= k))``."""
        share = np.cumsum(class_weights)[:-1] / np.sum(class_weights)
        theta = np.asarray(self.dist.ppf(np.clip(share, 1e-12, 1.0 - 1e-12)), dtype=np.float64)
        return -float(theta[0]), np.log(np.maximum(np.diff(theta), 1e-12))

    # ------------------------------------------------------------ the rows
    def log_proba(self, eta: FloatArray, thresholds: FloatArray) -> FloatArray:
        """``(n, K)`` log class probabilities at linear predictors ``eta`` (without the
        cut-points) and cut-points ``thresholds`` (K-1, increasing)."""
        eta = np.asarray(eta, dtype=np.float64)
        return self.log_proba_bounds(np.asarray(thresholds)[None, :] - eta[:, None])

    def log_proba_bounds(self, U: FloatArray) -> FloatArray:
        """``(n, K)`` log class probabilities from each row's ``theta_k - eta_k``
        (n, K-1, non-decreasing in k; equal neighbours give a class probability 0)."""
        n = U.shape[0]
        full = np.hstack((np.full((n, 1), -np.inf), U, np.full((n, 1), np.inf)))
        return log_interval(self.dist, full[:, 1:], full[:, :-1])

    def row_pass(self, t: np.ndarray, gaps: FloatArray, sample_weight: FloatArray | None,
                 out: list[FloatArray] | None = None) -> "RowPass":
        """A pass of the row kernel at the cuts of ``gaps`` (see :class:`RowPass`)."""
        return RowPass(self, t, gaps, sample_weight, out)

    def rows(self, t: np.ndarray, eta: FloatArray, gaps: FloatArray,
             sample_weight: FloatArray | None, out: list[FloatArray] | None = None
             ) -> OrdinalRows:
        """Loss and derivatives of the rows with classes ``t`` at ``eta`` (module
        docstring), by chunks of rows in parallel threads (each chunk's temporaries in
        cache)."""
        rows = self.row_pass(t, gaps, sample_weight, out)

        def chunk(lo: int, hi: int) -> tuple[float | FloatArray, ...]:
            return rows.block(lo, hi, eta[lo:hi])

        return rows.finish(map_rows(chunk, t.size, rows.outputs[:2], rows=_CHUNK_ROWS))

    def cross_block(self, t: np.ndarray, rows: OrdinalRows, lo: int, hi: int,
                    with_gradient: bool = True) -> FloatArray:
        """Rows ``lo:hi`` of ``[g, C]`` (``with_gradient``; else ``C``): the gradient
        weights and ``d2 loss / d eta d a_j`` for the cuts ``a_1..a_{K-2}`` that move
        with the gaps (two entries per row)."""
        K = self.n_classes
        m = hi - lo
        M = np.zeros((m, K + 2))
        r = np.arange(m)
        tb = t[lo:hi]
        M[r, tb + 2] = rows.cross_upper[lo:hi]  # (cut j in column j + 2)
        M[r, tb + 1] = rows.cross_lower[lo:hi]
        if not with_gradient:
            return M[:, 3:K + 1]
        M[:, 2] = rows.g[lo:hi]  # (over a_0 = 0, which no parameter moves)
        return M[:, 2:K + 1]


class RowPass:
    """One pass of the row kernel over blocks of rows, in any order and on any thread:
    :meth:`block` is a :data:`~.design.RowDerivatives` (the design's fused pass calls it
    on each block of X it reads), the per-row terms go into six n-vectors (``out``:
    reused between calls; fresh ones cost a page fault per 4 KB, a quarter of the
    kernel's time) and the per-class sums are kept by block and added in the blocks'
    order (:meth:`finish`), so that the result does not depend on the threads."""

    def __init__(self, family: CumulativeLink, t: np.ndarray, gaps: FloatArray,
                 sample_weight: FloatArray | None, out: list[FloatArray] | None) -> None:
        self.family, self.t, self.s = family, t, sample_weight
        self.a = np.concatenate(([-np.inf], family.cuts(gaps), [np.inf]))
        n = t.size
        self.outputs = out if out is not None and len(out) == 6 and out[0].shape == (n,) \
            else [np.empty(n) for _ in range(6)]
        self.parts: list[tuple[int, FloatArray]] = []

    def block(self, lo: int, hi: int, eta: FloatArray) -> tuple[float, FloatArray, FloatArray]:
        """``(loss, g, h)`` of rows ``lo:hi`` at their ``eta``; the rest kept."""
        K, tb = self.family.n_classes, self.t[lo:hi]
        upper, lower = self.a[tb + 1] - eta, self.a[tb] - eta
        logp, r_u, r_l, psi_u, psi_l = self.family.dist.row_terms(upper, lower)
        Lu, Ll, Lul = -r_u, r_l, -r_u * r_l
        Luu, Lll = r_u * r_u - psi_u, r_l * r_l + psi_l
        if self.s is None:
            loss = -float(np.sum(logp))
        else:
            sb = self.s[lo:hi]
            loss = -float(sb @ logp)
            Lu, Ll, Luu, Lll, Lul = sb * Lu, sb * Ll, sb * Luu, sb * Lll, sb * Lul
        self.parts.append((lo, np.stack([np.bincount(tb, weights=w, minlength=K)
                                         for w in (Lu, Ll, Luu, Lll, Lul)])))
        _, _, cross_upper, cross_lower, upper_out, lower_out = self.outputs
        cross_upper[lo:hi] = -(Luu + Lul)
        cross_lower[lo:hi] = -(Lul + Lll)
        upper_out[lo:hi] = Lu
        lower_out[lo:hi] = Ll
        return loss, -(Lu + Ll), Luu + 2.0 * Lul + Lll

    def finish(self, loss: float) -> OrdinalRows:
        """The rows' terms, once every block is done (``g, h`` in the first two
        n-vectors, written by the caller's pass)."""
        K = self.family.n_classes
        self.parts.sort(key=lambda part: part[0])  # (a fixed order of the sums)
        Su, Sl, Suu, Sll, Sul = np.sum([part for _, part in self.parts], axis=0) \
            if self.parts else np.zeros((5, K))
        grad_cuts = Su[:K - 1] + Sl[1:]
        H = np.zeros((K - 1, K - 1))
        idx = np.arange(K - 1)
        H[idx, idx] = Suu[:K - 1] + Sll[1:]
        off = Sul[1:K - 1]
        H[idx[:-1], idx[:-1] + 1] = off
        H[idx[:-1] + 1, idx[:-1]] = off
        g, h, cross_upper, cross_lower, Lu, Ll = self.outputs
        return OrdinalRows(float(loss), g, grad_cuts, h, cross_upper, cross_lower, H, Lu, Ll)
