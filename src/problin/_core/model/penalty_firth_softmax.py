"""Firth's penalty for the softmax (multinomial logit): the Jeffreys prior's row sums.

With the K - 1 contrasts against the first class (``M = K - 1`` free classes, one block
``[1, x]`` of ``p`` parameters each, class-major), the Fisher information is

    I(theta) = sum_i s_i W_i (x) z_i z_i^T,   W_i = diag(p_i) - p_i p_i^T   (M x M),

the exact Hessian of the softmax loss (its link is canonical). Differentiating
``log |I| `` in the free logit ``eta_ic`` of one row,

    d log |I| / d eta_ic = s_i tr(I^-1 (dW_i / d eta_ic (x) z_i z_i^T))
                         = s_i tr(Q_i dW_i / d eta_ic),
    Q_i = (I_M (x) z_i)^T I^-1 (I_M (x) z_i)                               (M x M),

the row's leverage-like matrix (for ``M = 1``, ``h_i = s_i w_i Q_i``). With
``dp_a / d eta_c = p_a (delta_ac - p_c)`` and ``g = diag(Q) - 2 Q p``,

    tr(Q_i dW_i / d eta_ic) = p_ic (g_ic - p_i^T g_i),

so the penalty ``r = -tau log |I|`` has the gradient ``-tau sum_i s_i c_i (x) z_i``,
``c_ic = p_ic (g_ic - p_i^T g_i)``: for ``M = 1`` it is ``h_i (1 - 2 p_i)``, the binary
logit's. The adjusted score is that of Kosmidis & Firth (2011), derived here directly
(their Poisson log-linear route gives the same vector field). ``Q_i`` comes from the
rows ``U_ia = z_i^T R^-1`` restricted to block ``a``'s rows of ``R^-1`` (``I = R^T R``):
one product of each row block with the ``p x M (M p)`` slices, ``Q_i = U_i U_i^T``;
no N x N array, and the exact Hessian's ``(Mp)^2`` per row only within a row block.

The Hessian the steps take is the information alone (Fisher scoring on the adjusted
score: the penalty's "held" curvature is zero here), and, once a step shows that it
misses the gradient's change (separated classes: :class:`~.penalty_firth.JeffreysPenalty`
decides, as for binary fits), the penalty's exact Hessian (:func:`_exact_terms`). The
covariance a fit reports is ``I(theta_hat)^-1``, the inverse expected information at the
bias-reduced estimate, as R's brglm2 (``brmultinom``) reports. (For binary fits problin
reports logistf's augmented information instead: a softmax with K = 2 has the binary
fit's estimates, not its standard errors.)
"""
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp

from ..blocks import block_rows
from ..linalg import add_intercept_gram, symmetrize
from .penalty_firth_rows import combined_adjustment, sum_over_blocks
from ..types import Matrix
from .design import Design
from .family_softmax import CategoricalSoftmax

__all__ = ["SoftmaxFisherRows", "require_contrasts"]


def require_contrasts(family: CategoricalSoftmax) -> None:
    """Refuse a softmax of all K blocks (its information is singular)."""
    if not family.contrast:
        raise ValueError("penalty='firth' needs the softmax's K - 1 contrasts (the "
                         "information of all K blocks is singular): alpha=0")


class SoftmaxFisherRows:
    """:class:`~.penalty_firth.FisherRows` of a softmax's rows in memory (the K - 1
    contrasts), read by contiguous row blocks of their design (dense or sparse)."""

    def __init__(self, design: Design, family: CategoricalSoftmax, t: np.ndarray,
                 sample_weight: np.ndarray | None) -> None:
        require_contrasts(family)
        self.design, self.family = design, family
        self.t, self.sample_weight = np.asarray(t, dtype=np.intp), sample_weight
        self.n_free = family.n_free
        self.n_params = self.n_free * design.n_params
        # Blocks of ~512 KB of the M x (M p) leverage rows U_i (the largest temporary).
        self._rows = block_rows(self.n_free * self.n_params, 8, target_bytes=1 << 19)

    def _scale(self) -> np.ndarray:
        """The kernel's column scales, tiled over the blocks (solving = kernel * m)."""
        _, params = self.design.kernel()
        return np.asarray(params(np.ones((self.n_free, self.design.n_params)))).ravel()

    def _probabilities(self, theta_k: np.ndarray, Xb: Matrix) -> np.ndarray:
        """The free classes' probabilities ``p_i`` (n_b x M) of rows ``Xb``."""
        Theta = theta_k.reshape(self.n_free, self.design.n_params)
        if self.design.intercept:
            eta = np.asarray(Xb @ Theta[:, 1:].T, dtype=np.float64) + Theta[:, 0]
        else:
            eta = np.asarray(Xb @ Theta.T, dtype=np.float64)
        # exp(eta - top) / (exp(-top) + sum exp(eta - top)), top = max(0, eta): the
        # reference's logit is 0 (log_softmax's general path costs ~3x as much)
        top = np.maximum(eta.max(axis=1), 0.0)
        E = np.exp(eta - top[:, None])
        return np.asarray(E / (np.exp(-top) + E.sum(axis=1))[:, None])

    def _row_weights(self, lo: int, hi: int) -> np.ndarray:
        sw = self.sample_weight
        return np.ones(hi - lo) if sw is None else np.asarray(sw[lo:hi], dtype=np.float64)

    def _sum(self, func: Callable[[int, int, Matrix], tuple[Any, ...]]) -> Any:
        return sum_over_blocks(self.design, self._rows, func)

    def _pairs(self) -> tuple[list[tuple[int, int]], np.ndarray, np.ndarray]:
        """The pairs ``a >= b`` of free classes, as a list and as two index arrays."""
        pairs = [(a, b) for a in range(self.n_free) for b in range(a + 1)]
        first, second = (np.array(side) for side in zip(*pairs))
        return pairs, first, second

    def _pair_grams(self, Xb: Matrix, w: np.ndarray) -> np.ndarray:
        """``[1, X_b]^T diag(w_k) [1, X_b]`` for each column ``k`` of ``w`` (one per pair
        of classes; signed weights allowed): one product for dense rows."""
        p, intercept = self.design.n_params, self.design.intercept
        if sp.issparse(Xb):
            G = np.zeros((w.shape[1], p, p))
            for k in range(w.shape[1]):
                add_intercept_gram(G[k], Xb, w[:, k], intercept, np.float64, None)
            return G
        Z = np.asarray(Xb, dtype=np.float64)
        if intercept:
            Z = np.hstack((np.ones((Z.shape[0], 1)), Z))
        product = Z.T @ (w[:, :, None] * Z[:, None, :]).reshape(Z.shape[0], -1)
        return np.asarray(product.reshape(p, w.shape[1], p).transpose(1, 0, 2))

    def _assemble(self, G_pairs: np.ndarray, m: np.ndarray) -> np.ndarray:
        """The ``M p x M p`` matrix of the pairs' blocks (kernel units) in the solving
        basis."""
        p = self.design.n_params
        G = np.zeros((self.n_params, self.n_params))
        for k, (a, b) in enumerate(self._pairs()[0]):
            G[a * p:(a + 1) * p, b * p:(b + 1) * p] = G_pairs[k]
            G[b * p:(b + 1) * p, a * p:(a + 1) * p] = G_pairs[k].T
        return np.asarray(symmetrize(G * m[:, None] * m[None, :]))

    def information(self, theta: np.ndarray) -> np.ndarray:
        """``sum_i s_i W_i (x) z_i z_i^T``: per row block one product ``Z^T [w_ab Z]``
        over the pairs ``a >= b`` of free classes."""
        m = self._scale()
        theta_k = np.asarray(theta, dtype=np.float64) * m
        _, first, second = self._pairs()
        diagonal = (first == second).astype(np.float64)

        def part(lo: int, hi: int, Xb: Matrix) -> tuple[np.ndarray]:
            P, s = self._probabilities(theta_k, Xb), self._row_weights(lo, hi)
            return (self._pair_grams(Xb, s[:, None] * (P[:, first]
                                                       * (diagonal - P[:, second]))),)

        return self._assemble(self._sum(part)[0], m)

    def adjustment(self, theta: np.ndarray, r_inv: np.ndarray, tau: float,
                   curvature: bool, exact: bool = False
                   ) -> tuple[np.ndarray, np.ndarray | None]:
        """The gradient ``-tau sum_i s_i c_i (x) z_i`` (see the module docstring) and
        (``curvature``) a zero curvature, the steps then being Fisher scoring on ``I``,
        or (``exact``) the penalty's Hessian (:func:`_exact_terms`)."""
        return combined_adjustment(self.adjustment_sums(theta, r_inv, tau, curvature, exact),
                                   tau)

    def adjustment_sums(self, theta: np.ndarray, r_inv: np.ndarray, tau: float,
                        curvature: bool, exact: bool = False) -> tuple[np.ndarray, ...]:
        """The row sums :meth:`adjustment` combines (``combined_adjustment``), in the
        solving basis: the gradient, with ``curvature`` the curvature that sums over rows
        (zero, or the exact Hessian's ``-tau sum_i s_i A_i (x) z_i z_i^T``), with
        ``exact`` the factor ``N`` of its ``tau N N^T``. Row chunks' shares add up
        (Dask: ``DaskFisherRows``)."""
        M, p, intercept = self.n_free, self.design.n_params, self.design.intercept
        m = self._scale()
        theta_k = np.asarray(theta, dtype=np.float64) * m
        # z_i^T R^-1 restricted to block a's rows, for kernel rows: m_a * R^-1[block a];
        # the blocks side by side, p x M (M p).
        K = (m[:, None] * np.asarray(r_inv, dtype=np.float64)).reshape(M, p, M * p)
        K = np.ascontiguousarray(K.transpose(1, 0, 2).reshape(p, M * M * p))
        K_rows, K_first = (K[1:], K[0]) if intercept else (K, None)
        _, first, second = self._pairs()
        upper = np.triu_indices(M * p)
        flat_upper = upper[0] * (M * p) + upper[1]
        pair_scale = np.where(upper[0] == upper[1], 1.0, np.sqrt(2.0))

        def part(lo: int, hi: int, Xb: Matrix) -> tuple[np.ndarray, ...]:
            P, s = self._probabilities(theta_k, Xb), self._row_weights(lo, hi)
            U = np.asarray(Xb @ K_rows, dtype=np.float64)
            if K_first is not None:
                U += K_first
            U = U.reshape(-1, M, M * p)
            Q = np.empty((U.shape[0], M, M))
            for a in range(M):  # (pair by pair: ~2x an einsum over all at once)
                for b in range(a + 1):
                    Q[:, a, b] = Q[:, b, a] = np.einsum("im,im->i", U[:, a], U[:, b])
            g = np.einsum("iaa->ia", Q) - 2.0 * np.einsum("iab,ib->ia", Q, P)
            C = (-tau * s)[:, None] * P * (g - np.einsum("ia,ia->i", P, g)[:, None])
            grad = self._bordered(Xb, C)
            if not exact:
                return (grad,)
            A, V = _exact_terms(P, Q, g, U, flat_upper, pair_scale)
            held = self._pair_grams(Xb, (-tau * s)[:, None] * A[:, first, second])
            N = np.concatenate([self._bordered(Xb, s[:, None] * V[c]) for c in range(M)])
            return grad, held, N

        parts = self._sum(part)
        gradient = np.asarray(parts[0].T.ravel() * m)
        if not curvature:
            return (gradient,)
        if not exact:
            return gradient, np.zeros((self.n_params, self.n_params))
        # -tau (sum_i s_i A_i (x) z_i z_i^T - N N^T) (see _exact_terms): N N^T after the sum
        return gradient, self._assemble(parts[1], m), m[:, None] * parts[2]

    def _bordered(self, Xb: Matrix, B: np.ndarray) -> np.ndarray:
        """``[1, X_b]^T B`` (dense or sparse ``X_b``)."""
        product = np.asarray(Xb.T @ B, dtype=np.float64)
        return np.vstack((B.sum(axis=0), product)) if self.design.intercept else product

    def subsample(self, rows: np.ndarray, sample_weight: np.ndarray) -> "SoftmaxFisherRows":
        return SoftmaxFisherRows(self.design.subsample(rows), self.family, self.t[rows],
                                 sample_weight)


def _exact_terms(P: np.ndarray, Q: np.ndarray, g: np.ndarray, U: np.ndarray,
                 flat_upper: np.ndarray, pair_scale: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The rows' parts of ``d^2 log |I|``: ``A_i`` (M x M), the derivative of
    ``tr(Q_i dW_i / d eta_c)`` in ``eta_d`` with ``Q_i`` held,

        A_cd = W_cd (g_c - p^T g) - 2 p_c (Q W)_cd - p_c (W g)_d + 2 p_c (W Q p)_d,

    and, per free class ``c``, the upper triangles (off-diagonal ones scaled by sqrt 2)
    of ``U_i^T (dW_i / d eta_c) U_i`` (``V[c]``, n x (Mp)(Mp + 1)/2). With them
    ``d^2 log |I| = sum_i s_i A_i (x) z_i z_i^T - N N^T``, ``N = sum_i s_i sum_c (e_c (x)
    z_i) V[c]_i^T``: the second term is ``sum_il s_i s_l tr(I^-1 dI_i I^-1 dI_l)``, each
    trace ``<U_i^T D_ic U_i, U_l^T D_ld U_l>`` (the binary case's ``P_il^2`` terms)."""
    n, M = P.shape
    W = P[:, :, None] * (np.eye(M) - P[:, None, :])
    QW = np.matmul(Q, W)
    Wg = np.einsum("iab,ib->ia", W, g)
    WQp = np.einsum("iab,ib->ia", W, np.einsum("iab,ib->ia", Q, P))
    pg = np.einsum("ia,ia->i", P, g)
    A = W * (g - pg[:, None])[:, :, None] - 2.0 * P[:, :, None] * QW \
        - P[:, :, None] * Wg[:, None, :] + 2.0 * P[:, :, None] * WQp[:, None, :]
    A = 0.5 * (A + A.transpose(0, 2, 1))  # (symmetric up to rounding)
    pU = np.einsum("ib,ibm->im", P, U)
    V = []
    for c in range(M):
        # (D_c)_ab = W_ac delta_ab - W_ac p_b - p_a W_bc: D_c U row by row
        Wc = W[:, :, c]
        Y = Wc[:, :, None] * (U - pU[:, None, :]) \
            - P[:, :, None] * np.einsum("ib,ibm->im", Wc, U)[:, None, :]
        F = np.matmul(U.transpose(0, 2, 1), Y).reshape(n, -1)
        V.append(F[:, flat_upper] * pair_scale)
    return A, np.stack(V)
