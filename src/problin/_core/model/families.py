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
import math
from typing import Protocol, TypeAlias

import numpy as np

_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)
_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)
_EXPM1_MAX = 700.0  # expm1 overflows float64 beyond ~709.78

from scipy.special import ndtri

from ..blocks import ELEMENTWISE_ROWS, reduce_row_ranges
from ..numerics import (
    inverse_mills,
    log_probit_cdf,
    log_sigmoid,
    probit_cdf,
    probit_curvature,
    sigmoid,
)
from .distributions import Bernoulli
from .exponential_family import ExponentialFamily
from .family_softmax import CategoricalSoftmax, SoftmaxState
from .layout import OnePredictor
from .links import BinaryLink, Logit, Probit

__all__ = ["CurvatureBound", "BernoulliLogit", "BernoulliProbit", "CategoricalSoftmax", "SoftmaxState", "FAMILIES",
           "BinaryFamily", "ClassFamily", "class_family",
           "largest_change", "uniform_curvature_change"]


def largest_change(eta_old: np.ndarray, eta_new: np.ndarray) -> float:
    """``max |eta_new - eta_old|`` over every row (and class): the uniform bound's input.
    (By cache-sized chunks of ~ELEMENTWISE_ROWS entries, on every core: whole n x M
    temporaries cost ~5x more, mostly in page faults.)"""
    def range_max(lo: int, hi: int) -> list[float]:
        return [float(np.abs(np.subtract(eta_new[i:i + step], eta_old[i:i + step])).max())
                for i in range(lo, hi, step)]

    n = eta_new.shape[0] if eta_new.size else 0
    if not n:
        return 0.0
    step = max(1, ELEMENTWISE_ROWS // (eta_new.size // n))
    if n <= step:  # one chunk: no threads
        return range_max(0, n)[0]
    return float(np.max(reduce_row_ranges(range_max, n, step)))  # (NaN wins over numbers)


class CurvatureBound(Protocol):
    """A family's ``L`` with ``|d log h / d eta| <= L`` for every row's curvature ``h``
    (None: no such bound), for :func:`~.families.uniform_curvature_change`."""

    @property
    def curvature_lipschitz(self) -> float | None: ...


def uniform_curvature_change(family: CurvatureBound, moved: float) -> float:
    """A bound on how far a Hessian moves, in its own metric (``max_v |v^T (H_new - H) v| /
    v^T H v``), when no row's linear predictor moves by more than ``moved``: where
    ``|d log h / d eta| <= L`` for every row's curvature ``h`` (the family's
    ``curvature_lipschitz``: 1 for the logit's ``p (1 - p)``; 2 for the softmax's
    ``diag(p) - p p^T``, whose quadratic forms are variances under ``p``, each ``p_k``
    moving by a factor within ``exp(+-2 moved)``), every row's term, and so the sum,
    moves by at most ``expm1(L moved)`` relatively (a prior's constant precision only
    shrinks that). ``inf`` for a family without such a bound (the probit's)."""
    rate = family.curvature_lipschitz
    if rate is None or not rate * moved < _EXPM1_MAX:  # (also a NaN change)
        return np.inf
    return math.expm1(rate * moved)


def _weighted(v: np.ndarray, sample_weight: np.ndarray | None) -> np.ndarray:
    return v if sample_weight is None else v * sample_weight


def _sign(y: np.ndarray) -> np.ndarray:
    """Map targets in {0, 1} to signs in {-1, +1}."""
    return 2.0 * y - 1.0


class _Bernoulli(ExponentialFamily, OnePredictor):
    """Binary targets ``y in {0, 1}`` with ``p(y=1 | eta) = F(eta)``: the Bernoulli
    distribution with a binary link, whose derivatives have their own tuned kernels
    (the binary classifiers' hot path; ``ExponentialFamily``'s statistics are
    inherited, and a Bernoulli-cloglog family is ``make_family("bernoulli", "cloglog")``).
    The class attributes ``name``, ``canonical`` and ``curvature_lipschitz`` stand
    for the ones ``ExponentialFamily.__init__`` would compute. Its parameter layout is
    one linear predictor (:class:`~problin._core.model.layout.OnePredictor`)."""

    _link_type: type[BinaryLink]

    def __init__(self) -> None:
        self.distribution = Bernoulli()
        self.link_function = self._link_type()

    # L with |d log h / d eta| <= L for every row's curvature weight h (None: no such
    # bound): how far a step can move the Hessian (solvers.newton_exact._hessian_change).
    curvature_lipschitz: float | None = None

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
        return -float(np.add.reduce(loss)), g, h  # (np.sum's Python layer: ~1 us a call)


class BernoulliLogit(_Bernoulli):
    """Logistic regression: ``p(y=1 | eta) = sigmoid(eta)`` (canonical link)."""

    name = "logit"
    canonical = True
    observed_convex = True
    _link_type = Logit
    curvature_lipschitz = 1.0  # d log(p (1 - p)) / d eta = 1 - 2p

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
        # (Each numpy call on a small n costs ~1 us: in place where it can be.)
        s = _sign(y)
        z = s * eta
        e = np.abs(z)
        np.negative(e, out=e)
        np.exp(e, out=e)
        inv = e + 1.0
        np.reciprocal(inv, out=inv)
        loglik = np.minimum(z, 0.0)
        loglik -= np.log1p(e)
        # q = 1 - p(observed class) = sigma(-z) = exp(-max(z, 0)) / (1 + e) without
        # cancellation (the exponential is e where z > 0, else 1). Branch-free: np.where's
        # select by the sign costs ~4 ns a row on data it cannot predict, 2-3x this.
        q = np.maximum(z, 0.0)
        np.negative(q, out=q)
        np.exp(q, out=q)
        q *= inv
        np.negative(s, out=s)
        q *= s
        e *= inv
        e *= inv
        return loglik, q, e


class BernoulliProbit(_Bernoulli):
    """Probit regression: ``p(y=1 | eta) = Phi(eta)``, the standard normal CDF."""

    name = "probit"
    canonical = False
    observed_convex = True  # log Phi and log(1 - Phi) are concave
    _link_type = Probit

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


#: A binary family (one linear predictor).
BinaryFamily: TypeAlias = _Bernoulli
#: A classifier's family: binary (one linear predictor) or softmax (class blocks).
ClassFamily: TypeAlias = _Bernoulli | CategoricalSoftmax


def class_family(binary: BinaryFamily, n_classes: int, contrast: bool) -> ClassFamily:
    """The family of a classifier of ``n_classes`` classes whose two-class family is
    ``binary``: itself for two, else softmax (``contrast``: the K-1 contrasts against
    the first class; the multiclass estimators are logits)."""
    return binary if n_classes == 2 else CategoricalSoftmax(n_classes, contrast=contrast)
