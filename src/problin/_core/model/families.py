"""GLM families: the per-row loss and its derivatives in the linear predictor.

A family turns targets ``y`` and linear predictors ``eta`` into

* ``loss``: the summed negative log-likelihood ``-sum_i s_i log p(y_i | eta_i)``,
* ``grad``: per-row weights ``g_i = d loss_i / d eta_i`` (so ``X^T g`` is the gradient),
* ``curv``: per-row weights ``h_i = d^2 loss_i / d eta_i^2`` (so ``X^T diag(h) X``
  is the Hessian); ``information="expected"`` gives Fisher scoring weights
  (McCullagh & Nelder 1989).

``s_i`` are sample weights. Nothing here touches X: the Newton engine and the
design operator combine these n-vectors with the data by row blocks.
"""
from typing import Any

import numpy as np

_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)
_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)
# exp(690) ~ 4e299: K of them sum without overflow for any K below ~4e8.
_EXP_SAFE = 690.0

from scipy.special import ndtri

from ..numerics import (
    inverse_mills,
    log_probit_cdf,
    log_sigmoid,
    log_softmax,
    probit_cdf,
    probit_curvature,
    sigmoid,
)

__all__ = ["BernoulliLogit", "BernoulliProbit", "CategoricalSoftmax", "SoftmaxState", "FAMILIES"]


def _weighted(v: np.ndarray, sample_weight: np.ndarray | None) -> np.ndarray:
    return v if sample_weight is None else v * sample_weight


def _sign(y: np.ndarray) -> np.ndarray:
    """Map targets in {0, 1} to signs in {-1, +1}."""
    return 2.0 * y - 1.0


class _Bernoulli:
    """Binary targets ``y in {0, 1}`` with ``p(y=1 | eta) = F(eta)``."""

    def log_cdf(self, eta: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        """``log F(eta)``."""
        raise NotImplementedError

    def _derivatives(self, y: np.ndarray, eta: np.ndarray,
                     information: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        raise NotImplementedError  # pragma: no cover - abstract

    def log_proba(self, eta: np.ndarray) -> np.ndarray:
        """``(n, 2)`` array of ``[log p(y=0), log p(y=1)]``, in log space."""
        return np.column_stack([self.log_cdf(-eta), self.log_cdf(eta)])

    def loss(self, y: np.ndarray, eta: np.ndarray,
             sample_weight: np.ndarray | None = None) -> float:
        return -float(np.sum(_weighted(self.log_cdf(_sign(y) * eta), sample_weight)))

    def derivatives(self, y: np.ndarray, eta: np.ndarray, sample_weight: np.ndarray | None = None,
                    information: str = "observed") -> tuple[float, np.ndarray, np.ndarray]:
        """Return ``(loss, g, h)``: summed loss and per-row gradient/curvature weights."""
        if information not in ("observed", "expected"):
            raise ValueError(f"information must be 'observed' or 'expected', got {information!r}")
        loss, g, h = self._derivatives(y, eta, information)
        if sample_weight is not None:
            loss, g, h = loss * sample_weight, g * sample_weight, h * sample_weight
        return -float(np.sum(loss)), g, h


class BernoulliLogit(_Bernoulli):
    """Logistic regression: ``p(y=1 | eta) = sigmoid(eta)`` (canonical link)."""

    name = "logit"
    canonical = True

    def log_cdf(self, eta: np.ndarray) -> np.ndarray:
        return log_sigmoid(eta)

    def mean(self, eta: np.ndarray) -> np.ndarray:
        return sigmoid(eta)

    def link(self, p: np.ndarray) -> np.ndarray:
        return np.log(p) - np.log1p(-p)

    def _derivatives(self, y: np.ndarray, eta: np.ndarray,
                     information: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # Canonical link: observed and expected information coincide. All
        # three from e = exp(-|z|), z = s eta (one exp and one log1p per row):
        # log p = -log1p(e) - max(-z, 0); 1 - p = sigma(-z); p (1 - p) = e / (1 + e)^2.
        s = _sign(y)
        z = s * eta
        e = np.exp(-np.abs(z))
        inv = 1.0 / (1.0 + e)
        loglik = -np.log1p(e)
        loglik -= np.maximum(-z, 0.0)
        q = np.where(z > 0, e * inv, inv)  # 1 - p(observed class), without cancellation
        return loglik, -s * q, e * inv * inv


class BernoulliProbit(_Bernoulli):
    """Probit regression: ``p(y=1 | eta) = Phi(eta)``, the standard normal CDF."""

    name = "probit"
    canonical = False

    def log_cdf(self, eta: np.ndarray) -> np.ndarray:
        return log_probit_cdf(eta)

    def mean(self, eta: np.ndarray) -> np.ndarray:
        return probit_cdf(eta)

    def link(self, p: np.ndarray) -> np.ndarray:
        return ndtri(p)

    def _derivatives(self, y: np.ndarray, eta: np.ndarray,
                     information: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s = _sign(y)
        z = np.asarray(s * eta, dtype=np.float64)
        # Bulk (z >= -5): Phi = ndtr(z) keeps full relative precision there
        # (Phi >= 2.9e-7), so lambda = phi / Phi and log Phi = log(Phi) are
        # exact and cheaper than erfcx. Far left tail: lambda from erfcx and
        # log Phi = log phi - log lambda (no cancellation). Right of z = 3,
        # log Phi = log1p(-Phi(-z)) with Phi(-z) exact (log of the rounded
        # Phi(z) would keep only ~eps / Phi(-z) relative precision).
        cdf = probit_cdf(z)
        half_sq = 0.5 * np.square(z)
        mills = np.exp(-half_sq)
        mills *= _INV_SQRT_2PI
        with np.errstate(divide="ignore", invalid="ignore"):  # tail rows: replaced below
            mills /= cdf
            loglik = np.log(cdf)
        tail = np.flatnonzero(z < -5.0)
        if tail.size:
            mills[tail] = inverse_mills(z[tail])
            loglik[tail] = -half_sq[tail] - _LOG_SQRT_2PI - np.log(mills[tail])
        right = np.flatnonzero(z > 3.0)
        if right.size:
            loglik[right] = np.log1p(-probit_cdf(-z[right]))
        if information == "observed":
            # -d^2 log Phi(z) / dz^2 = lambda(z) (z + lambda(z)) >= 0 (log-concavity)
            curv = probit_curvature(z, mills)
        else:
            # Fisher information phi^2 / (Phi (1 - Phi)) = lambda(eta) lambda(-eta).
            curv = inverse_mills(eta) * inverse_mills(-eta)
        return loglik, -s * mills, curv


FAMILIES = {"logit": BernoulliLogit, "probit": BernoulliProbit}


class CategoricalSoftmax:
    """Softmax (multinomial logit): ``p(y = k | x) = exp(a_k) / sum_j exp(a_j)``.

    The linear predictor ``eta`` has one column per *free* class. With
    ``contrast=True`` the first class is the reference (its logit is fixed at
    0, the identifiable parameterisation of maximum likelihood, as statsmodels
    ``MNLogit``) and ``eta`` has K-1 columns; otherwise all K logits are free.
    Targets are class indices ``t in {0, ..., K-1}``.

    The gradient of the loss in ``eta`` is ``P - T`` (probabilities minus
    one-hot targets) restricted to the free classes; the Hessian weights of
    row n are ``diag(p_n) - p_n p_n^T`` over the free classes, which the design
    operator turns into the block Hessian ``H_kj = sum_n p_nk (I_kj - p_nj) x_n x_n^T``.
    """

    name = "softmax"
    canonical = True

    def __init__(self, n_classes: int, contrast: bool = True) -> None:
        self.n_classes = int(n_classes)
        self.contrast = bool(contrast)
        self.n_free = self.n_classes - int(self.contrast)

    def logits(self, eta: np.ndarray) -> np.ndarray:
        """All K logits: a zero column for the reference class, then ``eta``."""
        eta = np.asarray(eta, dtype=np.float64).reshape(-1, self.n_free)
        if not self.contrast:
            return eta
        return np.concatenate([np.zeros((eta.shape[0], 1)), eta], axis=1)

    def log_proba(self, eta: np.ndarray) -> np.ndarray:
        """``(n, K)`` log class probabilities, by log-softmax."""
        return log_softmax(self.logits(eta), axis=1)

    def _normalise(self, eta: np.ndarray,
                   out: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray | float, np.ndarray, np.ndarray]:
        """``(E, top, log_z, total)``: ``E = exp(a - top)`` for the free logits ``a``,
        ``exp(-top)`` being the reference's term (contrast only), ``total`` the
        sum of all K terms and ``log_z`` the log normaliser per row, without
        materialising the zero column. ``E`` is written into ``out`` if given.

        The shift ``top`` only has to keep ``exp`` from overflowing and the
        total from vanishing: with contrasts the reference's term ``exp(0) = 1``
        bounds the total below, so no shift is needed while every logit is
        below ``_EXP_SAFE`` (the row maxima cost more than the exponentials:
        numpy reduces short rows slowly); with all K logits free, logits
        relative to the first class's do the same. Only rows of huge logits
        take the per-row maximum. The terms are exact exponentials of the
        logits given either way, so the probabilities agree to rounding.
        """
        eta = np.asarray(eta, dtype=np.float64).reshape(-1, self.n_free)
        top: np.ndarray | float = 0.0
        if self.contrast:
            safe = not eta.size or float(eta.max()) < _EXP_SAFE
            E = np.exp(eta, out=out) if safe else None
        else:
            top = eta[:, 0].copy()
            E = np.subtract(eta, top[:, None], out=out)
            safe = not eta.size or float(E.max()) < _EXP_SAFE
            if safe:
                np.exp(E, out=E)
        if not safe:
            # A loop over the few columns runs ~5x faster than numpy's row maxima.
            top = np.zeros(eta.shape[0]) if self.contrast else eta[:, 0].copy()
            for k in range(self.n_free):
                np.maximum(top, eta[:, k], out=top)
            E = np.subtract(eta, top[:, None], out=out)
            np.exp(E, out=E)  # in place: one n x M array
        assert E is not None
        total = E @ np.ones(self.n_free)  # (a gemv: faster than a sum along short rows)
        if self.contrast:
            total += np.exp(-top)
        return E, top, np.log(total) + top, total

    def observed_classes(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(free_t, rows, flat)``: the targets among the free classes (-1: the
        reference), the rows whose class is free, and their entries' positions
        in the flattened n x M array (one gather instead of a 2-D fancy index)."""
        free_t = t - 1 if self.contrast else np.asarray(t)
        return (free_t, *_observed_positions(free_t, self.n_free))

    @staticmethod
    def _log_likelihoods(eta: np.ndarray, log_z: np.ndarray, rows: np.ndarray,
                         flat: np.ndarray) -> np.ndarray:
        """``a_{t_n} - log z_n`` per row (the reference's logit is 0)."""
        loglik = -log_z
        loglik[rows] += eta.reshape(-1)[flat]
        return loglik

    def loss(self, t: np.ndarray, eta: np.ndarray,
             sample_weight: np.ndarray | None = None) -> float:
        eta = np.ascontiguousarray(eta, dtype=np.float64).reshape(-1, self.n_free)
        _, _, log_z, _ = self._normalise(eta)
        _, rows, flat = self.observed_classes(t)
        loglik = self._log_likelihoods(eta, log_z, rows, flat)
        return -float(np.sum(_weighted(loglik, sample_weight)))

    def derivatives(self, t: np.ndarray, eta: np.ndarray, sample_weight: np.ndarray | None = None,
                    information: str = "observed", out: np.ndarray | None = None,
                    observed: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
                    ) -> tuple[float, "SoftmaxState"]:
        """Return ``(loss, state)``: the summed loss and a :class:`SoftmaxState`
        holding the free-class probabilities (from which the gradient weights
        ``P - T`` and the Hessian weights follow; written into ``out`` if given).
        ``observed``: ``observed_classes(t)``, where the caller keeps it."""
        eta = np.ascontiguousarray(eta, dtype=np.float64).reshape(-1, self.n_free)
        E, top, log_z, total = self._normalise(eta, out)
        free_t, rows, flat = self.observed_classes(t) if observed is None else observed
        loglik = self._log_likelihoods(eta, log_z, rows, flat)
        inv_total = 1.0 / total
        E *= inv_total[:, None]  # E is now P, in place: no second n x M array
        p0 = np.exp(-top) * inv_total if self.contrast else None
        if sample_weight is not None:
            loglik *= sample_weight
        loss = -float(np.sum(loglik))
        return loss, SoftmaxState(E, p0, free_t, sample_weight, observed=flat)


class SoftmaxState:
    """Softmax probabilities at one ``eta``, with exact complements where needed.

    Keeps one n x M array, ``P``. ``1 - p`` is exact for ``p <= 1/2``; at
    most one class per row has ``p > 1/2``, and for those entries the
    complement is summed from the other classes (``fix``), so that rows fitted
    with probability near 1 keep full relative precision in ``p - 1`` (the
    gradient) and ``p (1 - p)`` (the curvature).
    """

    def __init__(self, P: np.ndarray, p0: np.ndarray | None, free_t: np.ndarray,
                 sample_weight: np.ndarray | None, fix: Any = None,
                 observed: np.ndarray | None = None) -> None:
        self.P, self.free_t, self.sample_weight = P, free_t, sample_weight
        if observed is None:
            observed = _observed_positions(free_t, P.shape[1])[1]
        # The flat positions in P of the observed classes that are free, ascending
        # (one per row at most: the rows lo:hi are those in [lo M, hi M)).
        self.observed = observed
        if fix is None:
            # At most one entry per row exceeds 1/2: found by one test over the
            # contiguous array (numpy's argmax along short rows is slow).
            M = P.shape[1]
            flat = np.flatnonzero(P.reshape(-1) > 0.5)
            rows, cols = np.divmod(flat, M)
            others = P[rows]
            others[np.arange(rows.size), cols] = 0.0
            q = others @ np.ones(M)  # the other free classes (no cancellation)...
            if p0 is not None:
                q += p0[rows]  # ...and the reference
            fix = (rows, cols, q)
        self.fix = fix  # (rows, cols, 1 - P[rows, cols]) where P > 1/2, by row

    @classmethod
    def concatenate(cls, P: np.ndarray, parts: list[tuple[int, "SoftmaxState"]], free_t: np.ndarray,
                    sample_weight: np.ndarray | None, observed: np.ndarray | None = None
                    ) -> "SoftmaxState":
        """The state of all rows from those of consecutive row chunks:
        ``parts`` is ``[(first row, state of the chunk), ...]`` in row order;
        ``observed``: the flat positions of all rows' observed classes, where the
        caller keeps them (else joined from the parts')."""
        fix = tuple(np.concatenate([st.fix[0] + lo for lo, st in parts]) if i == 0 else
                    np.concatenate([st.fix[i] for _, st in parts]) for i in range(3))
        if observed is None:
            M = P.shape[1]
            observed = np.concatenate([st.observed + lo * M for lo, st in parts])
        return cls(P, None, free_t, sample_weight, fix, observed)

    def complements(self, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """``1 - P[lo:hi]``, exact."""
        Q = 1.0 - self.P[lo:hi]
        rows, cols, q = self.fix
        hi = self.P.shape[0] if hi is None else hi
        a, b = np.searchsorted(rows, [lo, hi])
        Q[rows[a:b] - lo, cols[a:b]] = q[a:b]
        return Q

    def observed_complements(self) -> np.ndarray:
        """``1 - p(observed class)`` per row, exactly (n-vector)."""
        n, M = self.P.shape
        q = np.empty(n)
        flat = self.observed
        q[flat // M] = 1.0 - self.P.reshape(-1)[flat]
        rows, cols, fixed = self.fix
        if flat.size and rows.size:
            # Both ascending: where P > 1/2 on the observed class, its summed complement.
            key = rows * M + cols
            at = np.minimum(np.searchsorted(flat, key), flat.size - 1)
            hit = flat[at] == key
            q[rows[hit]] = fixed[hit]
        reference = self.free_t < 0
        q[reference] = self.P[reference] @ np.ones(M)  # 1 - p0 = the free classes' sum
        return q

    def gradient_weights(self, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """``s (P - T)`` for rows ``lo:hi`` (all: n x M); on the observed class
        ``p - 1 = -(1 - p)``, exactly."""
        n, M = self.P.shape
        hi = n if hi is None else hi
        G = self.P[lo:hi].copy()
        flat_G = G.reshape(-1)
        flat = self.observed
        if lo > 0 or hi < n:
            a, b = np.searchsorted(flat, [lo * M, hi * M])
            flat = flat[a:b] - lo * M
        flat_G[flat] -= 1.0  # exact where p >= 1/2 (Sterbenz)...
        rows, cols, q = self.fix
        a, b = np.searchsorted(rows, [lo, hi])
        rows, cols, q = rows[a:b], cols[a:b], q[a:b]
        hit = self.free_t[rows] == cols  # ...but p itself was rounded near 1:
        flat_G[(rows[hit] - lo) * M + cols[hit]] = -q[hit]  # 1 - p summed from the rest
        if self.sample_weight is not None:
            G *= self.sample_weight[lo:hi, None]
        return G


def _observed_positions(free_t: np.ndarray, M: int) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, flat)``: the rows whose observed class is free and that class's
    position in the flattened n x M array of those classes (ascending)."""
    rows = np.flatnonzero(free_t >= 0)
    flat = rows * M
    flat += free_t[rows]
    return rows, flat
