"""Firth's penalty: the Jeffreys prior ``|I(theta)|^(1/2)`` on a GLM's coefficients.

    r(theta) = -tau log |I(theta)|,  I(theta) = [1, X]^T diag(w(eta)) [1, X],

with ``tau = 1/2`` (Firth 1993), ``w_i = s_i mu_i'^2 / V(mu_i)`` the expected (Fisher)
weights and ``eta = [1, X] theta + o``. Its gradient is

    grad r = -tau sum_i h_i (d log w_i / d eta_i) x_i,   h_i = w_i x_i^T I^-1 x_i,

the leverages of the weighted design (the hat matrix's diagonal, the quantity HC2 and
HC3 use). The penalised score ``X^T (y - mu) mu' / V + tau sum_i h_i (w_i' / w_i) x_i``
is the adjusted score of Kosmidis & Firth (2009) for a fixed dispersion; for the logit,
``w' / w = 1 - 2 mu`` and it is Heinze & Schemper's (2002) ``sum (y - mu + h (1/2 - mu))
x``, for the Poisson-log ``w' / w = 1``.

What the penalty reads of the rows is row-block sums at ``theta``
(:class:`FisherRows`): the information ``I`` (a Gram pass), then with its factor
``I = R^T R`` the leverages ``h_i = w_i |R^-T x_i|^2`` (block by block, no n x p
temporary), the sum ``sum_i c_i x_i`` of the per-row adjustments and a Gram of them.
Both are sums over rows, so the same penalty runs on any rows that can form them;
:class:`MemoryFisherRows` forms them in memory (dense or sparse, by blocks).

The Hessian is approximated (``exact_hessian`` False): the data term's Fisher
information plus the penalty's curvature with the leverages held fixed, the information
of logistf's augmented data (Heinze & Schemper 2002), whose inverse is the covariance
logistf reports. The engine's stopping test then reads the Newton decrement,
``lambda^2 / 2 <= tol^2``, of the penalised gradient. On (nearly) separated data that
curvature misses the leverages' own change (terms of order ``h_i`` against the data's
``w_i ~ 0``) and Fisher scoring crawls; once a step shows it, the steps take the exact
Hessian, the held-leverage terms with ``h_i s_i^2`` (``s = d log w / d eta``) and
``tau sum_il s_i s_l P_il^2 z_i z_l^T`` (``P`` the hat matrix) added, as ``tau M M^T``
with ``M = sum_i s_i w_i z_i (u_i (x) u_i)^T`` and ``u_i = z_i^T R^-1`` (one pass,
``n p^3 / 2``); the covariance stays the held-leverage one (``reported_curvature``).
"""
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Protocol

import numpy as np
from scipy import special
import scipy.sparse as sp
from scipy.linalg import blas, lapack

from ..blocks import block_rows, small_blas
from ..linalg import add_intercept_gram, cholesky, symmetrize
from ..types import Matrix
from .design import Design
from .exponential_family import ExponentialFamily
from .family_softmax import CategoricalSoftmax
from .penalty import Information, Penalty, PenaltyBase
from .penalty_firth_rows import combined_adjustment, sum_over_blocks
from .penalty_firth_softmax import SoftmaxFisherRows, require_contrasts

__all__ = ["FisherRows", "MemoryFisherRows", "JeffreysPenalty", "Jeffreys", "JEFFREYS",
           "combined_adjustment", "information_slope", "log_weight_derivatives"]


def information_slope(family: ExponentialFamily, eta: np.ndarray) -> np.ndarray:
    """``d log w / d eta`` of the Fisher weight ``w = mu'^2 / V(mu)``:
    ``2 mu'' / mu' - mu' V'(mu) / V(mu)`` (``1 - 2 mu`` for the logit, 1 for the
    Poisson-log, ``-2 eta - phi/Phi + phi/(1 - Phi)`` for the probit). Rows whose weight
    underflows (``mu'`` or ``V`` zero) get 0: their leverage is 0 as well."""
    link, dist = family.link_function, family.distribution
    with np.errstate(all="ignore"):
        mu, d1, d2 = link.inverse_derivatives(eta)
        slope = 2.0 * d2 / d1 - d1 * dist.variance_derivative(mu) / dist.variance(mu)
    return np.where(np.isfinite(slope), slope, 0.0)


Derivatives = tuple[np.ndarray, np.ndarray]


def _logit(eta: np.ndarray) -> Derivatives:
    # log w = log mu (1 - mu): 1 - 2 mu, -2 mu (1 - mu)
    mu = special.expit(eta)
    return 1.0 - 2.0 * mu, -2.0 * mu * (1.0 - mu)


def _probit(eta: np.ndarray) -> Derivatives:
    # log w = 2 log phi - log Phi - log(1 - Phi): -2 eta - r1 + r2 and
    # -2 + r1 (eta + r1) + r2 (r2 - eta), r1 = phi / Phi, r2 = phi / (1 - Phi) (in log
    # space: both tails stay finite)
    log_phi = -0.5 * eta * eta - 0.5 * np.log(2.0 * np.pi)
    r1 = np.exp(log_phi - special.log_ndtr(eta))
    r2 = np.exp(log_phi - special.log_ndtr(-eta))
    return -2.0 * eta - r1 + r2, -2.0 + r1 * (eta + r1) + r2 * (r2 - eta)


def _log_poisson(eta: np.ndarray) -> Derivatives:
    return np.ones_like(eta), np.zeros_like(eta)  # log w = eta


# Closed forms of (d log w / d eta, d^2 log w / d eta^2) by (distribution, link).
_CLOSED: dict[tuple[str, str], Callable[[np.ndarray], Derivatives]] = {
    ("binomial", "logit"): _logit, ("binomial", "probit"): _probit,
    ("bernoulli", "logit"): _logit, ("bernoulli", "probit"): _probit,
    ("poisson", "log"): _log_poisson}


def log_weight_derivatives(family: ExponentialFamily, eta: np.ndarray) -> Derivatives:
    """``(d log w / d eta, d^2 log w / d eta^2)``: closed forms for the logit, the
    probit and the Poisson-log; else :func:`information_slope` and its central
    differences (relative step 1e-4: ~1e-8 of a term that only shapes the covariance
    and the step, never the estimate)."""
    closed = _CLOSED.get((family.distribution.name, family.link_function.name))
    if closed is not None:
        return closed(eta)
    step = 1e-4 * (1.0 + np.abs(eta))
    return information_slope(family, eta), (information_slope(family, eta + step)
                                            - information_slope(family, eta - step)) / (2.0 * step)


def _bordered_product(Xb: Matrix, B: np.ndarray, intercept: bool) -> np.ndarray:
    """``[1, X_b]^T B`` (dense or sparse ``X_b``)."""
    product = np.asarray(Xb.T @ B, dtype=np.float64)
    return np.vstack((B.sum(axis=0), product)) if intercept else product


#: The exact Hessian's pass forms ``M``, ``p x p (p + 1) / 2``, and per row block its
#: ``u_i (x) u_i`` (~``2^18 p`` bytes): ``n p^3 / 2`` multiply-adds, ~p/2 Grams (measured
#: at 10,000 x 50: 20 exact steps 1.9 s where 100 held-leverage ones, unconverged, took
#: 1.1 s). Beyond this many parameters the steps keep the held-leverage curvature.
EXACT_MAX_PARAMS = 128


class FisherRows(Protocol):
    """The row sums Firth's penalty needs at ``theta``, in the solving basis: two
    passes, each one read of the rows (on Dask summed over the chunks:
    ``problin._dask.fisher_rows``)."""

    n_params: int

    def information(self, theta: np.ndarray) -> np.ndarray:
        """``I(theta) = [1, X]^T diag(w) [1, X]`` (``w`` the Fisher weights with the
        sample weights)."""
        ...

    def adjustment(self, theta: np.ndarray, r_inv: np.ndarray, tau: float,
                   curvature: bool, exact: bool = False
                   ) -> tuple[np.ndarray, np.ndarray | None]:
        """With ``r_inv = R^-1`` (``I(theta) = R^T R``) and the leverages
        ``h_i = w_i |x_i^T r_inv|^2``: the penalty's gradient ``-tau sum_i h_i
        (d log w_i / d eta_i) x_i`` and (``curvature``) its curvature with ``h`` held,
        ``-tau sum_i h_i (d^2 log w_i / d eta_i^2) x_i x_i^T``, or (``exact``) its
        Hessian (see :func:`exact_curvature_terms`)."""
        ...

    def subsample(self, rows: np.ndarray, sample_weight: np.ndarray) -> "FisherRows":
        """The same rows restricted to ``rows``, reweighted by ``sample_weight``."""
        ...


class MemoryFisherRows:
    """:class:`FisherRows` of rows in memory, read by contiguous row blocks of their
    design (dense or sparse; no row-index copies): each block's linear predictor,
    weights and products are formed while it is in cache."""

    def __init__(self, design: Design, family: ExponentialFamily, y: np.ndarray,
                 sample_weight: np.ndarray | None, offset: np.ndarray | None) -> None:
        self.design, self.family, self.y = design, family, y
        self.sample_weight, self.offset = sample_weight, offset
        self.n_params = design.n_params
        # Blocks of ~512 KB: a thin product's fastest size (as the design's own).
        self._rows = design.rows or block_rows(design.n_features, 8, target_bytes=1 << 19)

    def _weights(self, theta_k: np.ndarray, lo: int, hi: int, Xb: Matrix
                 ) -> tuple[np.ndarray, np.ndarray]:
        """``(w, eta)`` of rows ``lo:hi`` (``theta_k`` in the kernel's units)."""
        intercept = self.design.intercept
        eta = np.asarray(Xb @ (theta_k[1:] if intercept else theta_k), dtype=np.float64)
        if intercept:
            eta = eta + theta_k[0]
        if self.offset is not None:
            eta = eta + self.offset[lo:hi]
        sw = self.sample_weight
        _, _, w = self.family.derivatives(self.y[lo:hi], eta, None if sw is None
                                          else sw[lo:hi], "expected")
        return w, eta

    def _sum(self, func: Callable[[int, int, Matrix], tuple[Any, ...]]) -> Any:
        return sum_over_blocks(self.design, self._rows, func)

    def information(self, theta: np.ndarray) -> np.ndarray:
        design = self.design
        _, params = design.kernel()
        theta_k, p = params(theta), design.n_params

        def part(lo: int, hi: int, Xb: Matrix) -> tuple[np.ndarray]:
            G = np.zeros((p, p))
            add_intercept_gram(G, Xb, self._weights(theta_k, lo, hi, Xb)[0],
                               design.intercept, np.float64, None)
            return (G,)

        (G,) = self._sum(part)
        return np.asarray(params(symmetrize(G), cov=True))

    def adjustment(self, theta: np.ndarray, r_inv: np.ndarray, tau: float,
                   curvature: bool, exact: bool = False
                   ) -> tuple[np.ndarray, np.ndarray | None]:
        return combined_adjustment(self.adjustment_sums(theta, r_inv, tau, curvature, exact),
                                   tau)

    def adjustment_sums(self, theta: np.ndarray, r_inv: np.ndarray, tau: float,
                        curvature: bool, exact: bool = False) -> tuple[np.ndarray, ...]:
        """The row sums :meth:`adjustment` combines (:func:`combined_adjustment`), in the
        solving basis: the gradient, with ``curvature`` the held-leverage Gram, with
        ``exact`` the factor ``M`` of the exact Hessian's ``tau M M^T``. Each is a sum
        over rows, so row chunks' shares add up (Dask: ``DaskFisherRows``)."""
        design, family = self.design, self.family
        _, params = design.kernel()
        theta_k, p, intercept = params(theta), design.n_params, design.intercept
        # z_i R^-1 = [1, x_i] diag(m) R^-1 for the kernel's rows [1, x_i].
        K = params(r_inv.T).T
        K_rows, K_first = (K[1:, 1:], K[0]) if intercept else (K, None)
        K_upper = np.asfortranarray(K_rows)

        def part(lo: int, hi: int, Xb: Matrix) -> tuple[np.ndarray, ...]:
            w, eta = self._weights(theta_k, lo, hi, Xb)
            # Z^T = K^T [1, x_i]^T: a triangular product (trmm, half a gemm's work)
            if sp.issparse(Xb):
                Zt = np.asarray(Xb @ K_rows).T
            else:
                Zt = blas.dtrmm(1.0, K_upper, Xb.T, side=0, lower=0, trans_a=1)
            q = np.einsum("ij,ij->j", Zt, Zt)
            if K_first is not None:  # the intercept's column of [1, x_i] K
                q += K_first[0] ** 2 + 2.0 * (K_first[1:] @ Zt) + K_first[1:] @ K_first[1:]
            h = w * q
            slope, curve = log_weight_derivatives(family, eta)
            c = -tau * h * slope
            grad = np.asarray(c @ Xb, dtype=np.float64).ravel()
            if intercept:
                grad = np.concatenate(([c.sum()], grad))
            if not curvature:
                return (grad,)
            G = np.zeros((p, p))
            add_intercept_gram(G, Xb, -tau * h * (curve + slope * slope if exact else curve),
                               intercept, np.float64, None)
            if not exact:
                return grad, G
            # u_i = [1, x_i] K, the rows of the hat matrix's factor (P_il = sqrt(w_i w_l)
            # u_i . u_l), paired as u_i (x) u_i over the upper triangle
            U = Zt.T if K_first is None else np.hstack(
                (np.full((Zt.shape[1], 1), K_first[0]), Zt.T + K_first[1:]))
            U2 = (U[:, upper[0]] * U[:, upper[1]]) * pair_scale
            return grad, G, _bordered_product(Xb, (slope * w)[:, None] * U2, intercept)

        upper = np.triu_indices(p)
        pair_scale = np.where(upper[0] == upper[1], 1.0, np.sqrt(2.0))
        parts = self._sum(part)
        # (M's rows are parameters: the basis scales them as it scales a gradient)
        return (params(parts[0]),) + tuple(
            params(a, cov=True) if i == 1 else params(a.T).T for i, a in enumerate(parts) if i)

    def subsample(self, rows: np.ndarray, sample_weight: np.ndarray) -> "MemoryFisherRows":
        return MemoryFisherRows(self.design.subsample(rows), self.family, self.y[rows],
                                sample_weight, None if self.offset is None
                                else self.offset[rows])


def _positive_definite(H: np.ndarray) -> bool:
    """Whether ``H`` factors without jitter (one too indefinite for any jitter raises in
    :func:`cholesky`: not positive definite either)."""
    try:
        return cholesky(H).jitter == 0.0
    except np.linalg.LinAlgError:
        return False


class JeffreysPenalty(PenaltyBase):
    """``r(theta) = -tau log |I(theta)|`` on :class:`FisherRows` (``tau = 1/2``: Firth).

    At a new ``theta`` the value needs the information's factor: the objective's own
    Fisher Gram where it formed one in double precision in the same pass
    (:meth:`add_derivatives`: for the logit, the Hessian the engine forms IS the
    information), else one pass of its own. The gradient (and the Hessian's term) then
    come from ONE more pass, the leverages with the adjustment's sums. Both are kept for
    the last ``theta`` asked (a line search asks the value, then the derivatives at the
    accepted point).

    The Hessian's term is ``r``'s curvature with the leverages held fixed, ``-tau sum_i
    h_i (d^2 log w_i / d eta_i^2) x_i x_i^T`` (for the logit ``sum_i h_i w_i x_i
    x_i^T``): with the data term's Fisher information it is the information of
    logistf's augmented data (rows weighted ``1 + h_i``), whose inverse logistf reports.
    It costs a Gram of its own, so it is added to double-precision Hessians only, those a
    covariance is read from; a direction's float32 Hessian is the information alone
    (Fisher scoring on the modified score, as logistf iterates), and its factor serves
    the leverages at that point until an exact one comes."""

    exact_hessian = False
    reads_information = True  # (the engine forms a Gram in every pass: see newton.py)

    def __init__(self, rows: FisherRows, tau: float = 0.5) -> None:
        self.rows, self.tau = rows, float(tau)
        self._at: bytes | None = None
        self._state: tuple[float, np.ndarray] | None = None
        self._rounded = False  # the state's factor is of a float32 Gram
        self._derivatives: tuple[np.ndarray, np.ndarray | None] | None = None
        self._derivatives_exact = False  # (the curvature cached is the exact Hessian)
        self._exact = False  # steps take the exact Hessian (the held-leverage one failed)
        self._report = False  # within reported_curvature
        self._last: tuple[np.ndarray, np.ndarray] | None = None  # (theta, grad r) of a step
        self._lagged: np.ndarray | None = None  # grad r standing in for a leverage pass

    def _evaluate(self, theta: np.ndarray, information: Information | None = None
                  ) -> tuple[float, np.ndarray]:
        """``(r(theta), R)`` with ``I(theta) = R^T R``: from ``information`` where it is
        given (a rounded one only until an exact one comes for the same ``theta``)."""
        key = np.asarray(theta, dtype=np.float64).tobytes()
        fresh = key != self._at or self._state is None
        if fresh or (self._rounded and information is not None and not information.rounded):
            chol = cholesky(self.rows.information(theta) if information is None
                            else information.gram)
            logdet = chol.logdet() if chol.jitter == 0.0 else -np.inf
            self._at, self._derivatives = key, None
            self._rounded = information is not None and information.rounded
            self._state = (-self.tau * logdet, chol.factor[0])
        assert self._state is not None
        return self._state

    def _adjustment(self, theta: np.ndarray, curvature: bool
                    ) -> tuple[np.ndarray, np.ndarray | None]:
        """The gradient and (``curvature``) the held-leverage curvature at ``theta``,
        in one pass."""
        R = self._evaluate(theta)[1]
        known, exact = self._derivatives, curvature and self._exact and not self._report
        if known is None or (curvature and (known[1] is None
                                            or self._derivatives_exact != exact)):
            with small_blas(R.shape[0]):
                r_inv, info = lapack.dtrtri(R, lower=0)
            if info != 0:  # pragma: no cover - a factor is non-singular
                raise np.linalg.LinAlgError("inverting the information's factor failed")
            self._derivatives = known = self.rows.adjustment(theta, np.triu(r_inv), self.tau,
                                                             curvature, exact)
            self._derivatives_exact = exact
        return known

    def value(self, theta: np.ndarray) -> float:
        return self._evaluate(theta)[0]

    def gradient(self, theta: np.ndarray) -> np.ndarray:
        return self._adjustment(theta, False)[0]

    def _curvature(self, theta: np.ndarray) -> np.ndarray:
        H = self._adjustment(theta, True)[1]
        assert H is not None
        return H

    def hessp(self, theta: np.ndarray, v: np.ndarray) -> np.ndarray:
        return self._curvature(theta) @ v

    def add_hessian(self, theta: np.ndarray, H: np.ndarray) -> np.ndarray:
        return H + self._curvature(theta)

    def add_derivatives(self, theta: np.ndarray, f: float, grad: np.ndarray,
                        hess: np.ndarray | None, information: Information | None = None
                        ) -> tuple[float, np.ndarray, np.ndarray | None]:
        value = self._evaluate(theta, information)[0]
        if hess is None or (information is not None and information.rounded):
            # (a gradient, or a direction's float32 Hessian: the information alone)
            lagged = self._lagged if hess is not None else None
            return f + value, grad + (self.gradient(theta) if lagged is None else lagged), hess
        g, H = self._adjustment(theta, True)
        assert H is not None
        if not self._report:
            if not self._exact and self.rows.n_params <= EXACT_MAX_PARAMS \
                    and self._held_curvature_failed(theta, g, H, hess):
                self._exact = True
                g, H = self._adjustment(theta, True)
                assert H is not None
            if self._exact and not _positive_definite(hess + H):
                # (the penalty is not convex: where the exact Hessian is not positive
                # definite, this step takes the held-leverage one)
                self._exact = False
                g, H = self._adjustment(theta, True)
                self._exact = True
                assert H is not None
        return f + value, grad + g, hess + H

    def _held_curvature_failed(self, theta: np.ndarray, g: np.ndarray, H: np.ndarray,
                               hess: np.ndarray) -> bool:
        """Whether the held-leverage curvature ``H`` missed the change of the gradient
        since the last step by more than a quarter of the total curvature along it: on
        (nearly) separated data the leverages' own change dominates (the terms ``h_i``
        against the data's ``w_i ~ 0``) and Fisher scoring with it converges linearly,
        by ~0.8 a step (measured: 70 steps at 1,000 x 10), where Newton's exact Hessian
        takes a few."""
        last, self._last = self._last, (np.array(theta, dtype=np.float64), g)
        if last is None:
            return False
        step = theta - last[0]
        total = float(step @ (hess + H) @ step)
        return bool(total > 0.0 and abs(float(step @ (g - last[1])) - float(step @ H @ step))
                    > 0.25 * total)

    @contextmanager
    def lagged(self, gradient: np.ndarray) -> Iterator[None]:
        self._lagged = gradient
        try:
            yield
        finally:
            self._lagged = None

    @contextmanager
    def reported_curvature(self) -> Iterator[bool]:
        """The held-leverage curvature (logistf's covariance) while in it; yields
        whether steps took the exact Hessian."""
        self._report = True
        try:
            yield self._exact
        finally:
            self._report = False

    def subsample(self, rows: np.ndarray, sample_weight: np.ndarray) -> Penalty:
        return JeffreysPenalty(self.rows.subsample(rows, sample_weight), self.tau)


class Jeffreys:
    """The recipe of Firth's penalty: :meth:`bind` makes it for one objective's rows.

    A value object, so that an estimator's choice of penalty travels to where the rows
    are (the data source builds the objective) without the rows travelling back."""

    def __init__(self, tau: float = 0.5) -> None:
        self.tau = float(tau)

    def check(self, family: ExponentialFamily) -> None:
        """Refuse a family whose dispersion is estimated (the penalised estimate would
        depend on it; Kosmidis & Firth's adjusted score for those is not built here)."""
        if not family.distribution.fixed_dispersion:
            raise ValueError(f"penalty='firth' needs a family with a fixed dispersion "
                             f"(binomial, Poisson); {family!r} has none")

    @staticmethod
    def check_options(name: str, alpha: float, solver: str) -> None:
        """One clear error for what the penalty ``name`` (Firth's, or its FLIC/FLAC
        refits) does not combine with: an L2 ``alpha`` (two priors at once; logistf has
        none either) and solvers other than Newton (its Hessian is the Fisher
        information, which the first-order solvers never form)."""
        if alpha > 0:
            raise ValueError(f"penalty={name!r} is the Jeffreys prior and takes no L2 alpha; "
                             f"got alpha={alpha!r} (set alpha=0, or penalty='l2')")
        if solver not in ("auto", "newton"):
            raise ValueError(f"penalty={name!r} is fitted by Newton (Fisher scoring on the "
                             f"adjusted score); got solver={solver!r}")

    def bind(self, design: Design, family: ExponentialFamily, y: np.ndarray,
             sample_weight: np.ndarray | None, offset: np.ndarray | None) -> JeffreysPenalty:
        return self.on(MemoryFisherRows(design, family, y, sample_weight, offset), family)

    def on(self, rows: FisherRows, family: ExponentialFamily) -> JeffreysPenalty:
        """The penalty on ``rows`` wherever they are (in memory, Dask chunks)."""
        self.check(family)
        return JeffreysPenalty(rows, self.tau)

    def bind_classes(self, design: Design, family: CategoricalSoftmax, t: np.ndarray,
                     sample_weight: np.ndarray | None) -> JeffreysPenalty:
        """The penalty of a softmax's rows (:mod:`.penalty_firth_softmax`): the same
        :class:`JeffreysPenalty` on the classes' row sums."""
        return self.on_classes(SoftmaxFisherRows(design, family, t, sample_weight), family)

    def on_classes(self, rows: FisherRows, family: CategoricalSoftmax) -> JeffreysPenalty:
        """The penalty on a softmax's ``rows`` wherever they are (in memory, Dask
        chunks), refused before any pass where the softmax has all K blocks."""
        require_contrasts(family)
        return JeffreysPenalty(rows, self.tau)


#: Firth's penalty, ``tau = 1/2``.
JEFFREYS = Jeffreys()
