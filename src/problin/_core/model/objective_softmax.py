"""The softmax regression objective (K classes), for every solver.

    f(Theta) = -sum_i s_i log softmax([0,] Theta x_i)_{t_i} + r(theta),

``r`` the objective's penalty (:mod:`.penalty`), with one parameter block per free class (the first class's logits fixed at 0
when unpenalised: the K - 1 contrasts; all K blocks under a prior). The row
derivatives are :class:`~problin._core.model.family_softmax.SoftmaxState`'s (exact
complements where a probability is near 1); the exact Hessian is the design's
``softmax_gram``. Follows the solvers' contract
(:mod:`~problin._core.model.contract`) with its unfused defaults, and, at the
usual start, the shared curvature of :mod:`.start_curvature`.
"""
import numpy as np

from ..blocks import ELEMENTWISE_ROWS, map_rows
from .design import Design
from .design_small import SMALL_ELEMENTS
from .family_softmax import CategoricalSoftmax, SoftmaxState, _class_major
from .objective import InMemoryObjective, _range_basis, _scaled_weights
from .penalty import Information, Penalty, add_penalty, objective_penalty
from .prior import PriorPrecision
from .start_curvature import SharedStartCurvature

__all__ = ["SoftmaxObjective"]


class SoftmaxObjective(SharedStartCurvature, InMemoryObjective):
    """Penalised negative log-likelihood (negative log-posterior) of softmax regression.

    ``theta`` stacks one parameter block ``[intercept, coef...]`` per free
    class (class-major); ``eta = [1, X] Theta^T`` is n x M.
    """

    design: Design
    family: CategoricalSoftmax

    def __init__(self, design: Design, family: CategoricalSoftmax, t: np.ndarray,
                 sample_weight: np.ndarray | None = None,
                 prior_precision: PriorPrecision | np.ndarray | None = None,
                 prior_mean: np.ndarray | None = None, *, penalty: Penalty | None = None
                 ) -> None:
        self.design = design
        self.family = family
        self.t = np.asarray(t, dtype=np.intp)
        self.sample_weight = sample_weight
        self.n_blocks = family.n_free
        self.n_params = self.n_blocks * design.n_params
        self.penalty = objective_penalty(penalty, prior_precision, prior_mean, self.n_params)
        self.exact_hessian = self.penalty.exact_hessian
        self._cached: tuple[np.ndarray, tuple[float, SoftmaxState]] | None = None  # (eta, state)
        self._weights_buffer: np.ndarray | None = None  # (see _gradient)
        # Targets among the free classes, their rows and positions in P's memory,
        # by P's order (class-major or not; formed once: t does not change).
        self._targets: dict[bool, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def _weighted_gram(self) -> np.ndarray:
        """``Z^T S Z`` (the start curvature's Gram): one product in memory."""
        return self.design.gram(self.sample_weight)

    def subsample(self, rows: np.ndarray) -> "SoftmaxObjective":
        """The same objective on a subset of rows, weights scaled to the full total."""
        w = _scaled_weights(self, rows)
        return SoftmaxObjective(self.design.subsample(rows), self.family, self.t[rows], w,
                                penalty=self.penalty.subsample(rows, w))

    def _blocks(self, theta: np.ndarray) -> np.ndarray:
        return np.asarray(theta, dtype=np.float64).reshape(self.n_blocks, self.design.n_params)

    def linear_predictor(self, theta: np.ndarray) -> np.ndarray:
        return self.design.matmat(self._blocks(theta))

    def value(self, theta: np.ndarray, eta: np.ndarray) -> float:
        """``f(theta)``; keeps the row derivatives for the next gradient (see GLMObjective)."""
        return self.row_derivatives(eta)[0] + self.penalty.value(theta)

    def row_derivatives(self, eta: np.ndarray) -> tuple[float, SoftmaxState]:
        """Loss, gradient weights and probabilities at ``eta`` (cached for the
        most recent ``eta`` array).

        The state's n x M probability array is reused by the next call at
        another ``eta`` (a fresh array costs a page fault per 4 KB: ~5 % of
        a large softmax fit), so a state is valid until then.
        """
        cached = self._cached
        if cached is not None and cached[0] is eta:
            return cached[1]
        self._cached = None
        key, t, sw = eta, self.t, self.sample_weight
        n, M = eta.shape
        # One chunk (1 MB at most, no threads) in eta's memory order; row chunks row-major.
        whole = n * M <= SMALL_ELEMENTS
        eta = np.asarray(eta, dtype=np.float64)
        eta = eta if whole and eta.flags.f_contiguous else np.ascontiguousarray(eta)
        class_major = whole and _class_major(eta)
        P = cached[1][1].P if cached is not None else None
        if P is None or P.shape != eta.shape or _class_major(P) != class_major:
            P = np.empty(eta.shape, order="F" if class_major else "C")
        cached = None
        targets = self._targets.get(class_major)
        if targets is None:
            targets = self._targets[class_major] = self.family.observed_classes(t, class_major)
        if whole:
            self._cached = (key, self.family.derivatives(t, eta, sw, out=P, observed=targets))
            return self._cached[1]
        parts: list[tuple[int, SoftmaxState]] = []

        def chunk(lo: int, hi: int) -> tuple[float]:  # writes P[lo:hi] in place
            loss, state = self.family.derivatives(t[lo:hi], eta[lo:hi],
                                                  None if sw is None else sw[lo:hi],
                                                  out=P[lo:hi])
            parts.append((lo, state))
            return (loss,)

        # Chunks of ~2 ELEMENTWISE_ROWS elements.
        loss = map_rows(chunk, n, (), rows=max(1024, 2 * ELEMENTWISE_ROWS // M))
        if len(parts) == 1:
            out = (loss, parts[0][1])
        else:
            parts.sort(key=lambda part: part[0])
            free_t, _, flat = targets
            out = (loss, SoftmaxState.concatenate(P, parts, free_t, sw, flat))
        self._cached = (key, out)
        return out

    def value_grad(self, theta: np.ndarray, eta: np.ndarray) -> tuple[float, np.ndarray]:
        """``(f, gradient)`` at ``theta``: one ``X^T V`` pass."""
        loss, state = self.row_derivatives(eta)
        return self.penalty.add_gradient(theta, loss, self._gradient(state))

    def _gradient(self, state: SoftmaxState) -> np.ndarray:
        """``Z^T S (P - T)``, flat (exact complements: ``SoftmaxState.gradient_weights``).
        All rows' weights at once (a small design) go into one array kept for the
        objective's next gradient: the design consumes them within this call."""
        n = state.P.shape[0]

        def weights(lo: int, hi: int) -> np.ndarray:
            if lo > 0 or hi < n:
                return state.gradient_weights(lo, hi)
            if self._weights_buffer is None or self._weights_buffer.shape != state.P.shape \
                    or _class_major(self._weights_buffer) != _class_major(state.P):
                self._weights_buffer = np.empty_like(state.P)
            return state.gradient_weights(lo, hi, out=self._weights_buffer)

        return self.design.rmatmat(weights, self.n_blocks).ravel()

    def hessp(self, theta: np.ndarray, eta: np.ndarray, v: np.ndarray, single: bool = False
              ) -> np.ndarray:
        """``H v`` in one fused pass over X (see ``Design.softmax_hessp``; ``single``: its
        products in float32, for Newton directions only)."""
        _, state = self.row_derivatives(eta)
        Hv = self.design.softmax_hessp(state.P, self.sample_weight, self._blocks(v),
                                       single).ravel()
        return self.penalty.add_hessp(theta, v, Hv)

    def value_grad_hess(self, theta: np.ndarray, eta: np.ndarray, single: bool = False
                        ) -> tuple[float, np.ndarray, np.ndarray]:
        """``(f, gradient, Hessian)`` at ``theta`` (the exact block Hessian)."""
        loss, state = self.row_derivatives(eta)
        hess = self.design.softmax_gram(state, self.sample_weight, single)
        # (the Hessian is the Fisher information: a penalty of it, Firth's, reads it)
        f, grad, H = add_penalty(self.penalty, theta, loss, self._gradient(state), hess,
                                 Information(hess, single))
        assert H is not None
        return f, grad, H

    def coordinate_derivatives(self, eta: np.ndarray, c: np.ndarray, block: int = 0
                               ) -> tuple[float, float]:
        """Derivatives along ``eta[:, block] += delta c`` (curvature ``p_k (1 - p_k)``)."""
        _, state = self.row_derivatives(eta)
        curv = state.P[:, block] * state.complements()[:, block]
        if self.sample_weight is not None:
            curv = curv * self.sample_weight
        return float(c @ state.gradient_weights()[:, block]), float(curv @ np.square(c))

    def block_curvatures(self, eta: np.ndarray) -> np.ndarray:
        """Each block's summed row curvature ``sum_i s_i p_ik (1 - p_ik)`` (the
        intercept's diagonal Hessian entry): ``coordinate_derivatives`` with a column
        of ones for all blocks in one pass over the n x M probabilities (block by
        block it read them M times: 0.37 s at 5,000 rows and K = 300)."""
        _, state = self.row_derivatives(eta)
        curv = state.P * state.complements()
        if self.sample_weight is not None:
            return np.asarray(self.sample_weight @ curv, dtype=np.float64)
        return np.asarray(curv.sum(axis=0), dtype=np.float64)

    def row_certainty(self, eta: np.ndarray) -> np.ndarray:
        return self.family.row_certainty(self.row_derivatives(eta), self.sample_weight)

    def recentre(self, theta: np.ndarray) -> np.ndarray:
        """Exact minimiser along the directions the likelihood cannot see.

        With all K blocks free, shifting every class's parameters by the same
        vector changes no probability, only the prior; for a prior that is
        the same on every block, centring the blocks is its minimum there.
        Coordinate-wise methods crawl along these flat directions otherwise.
        """
        if self.family.contrast:
            return theta
        Theta = self._blocks(theta)
        return (Theta - Theta.mean(axis=0)).ravel()

    def data_range_basis(self) -> np.ndarray:
        """The data's range basis in every class block (prior invariances excluded)."""
        return np.kron(np.eye(self.n_blocks), _range_basis(self.design, self.sample_weight))

    def block_direction(self, c: np.ndarray, block: int = 0) -> np.ndarray:
        """The change of ``eta`` (n x M) when a coefficient of ``block`` moves along ``c``."""
        D = np.zeros((self.design.n_samples, self.n_blocks))
        D[:, block] = c
        return D

    def observed_hessian(self, theta: np.ndarray, eta: np.ndarray) -> np.ndarray:
        """The Hessian (softmax's link is canonical: observed = expected information)."""
        return self.value_grad_hess(theta, eta)[2]
