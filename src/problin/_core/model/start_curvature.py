"""The softmax Hessian at the start point, where every row has the same probabilities.

At the usual start (intercepts at the class frequencies, slopes zero) every
row's linear predictor is the intercept vector ``a``, so every row has the
same probabilities ``p = softmax(a)`` and the Hessian is one Kronecker product

    H = sum_n s_n (diag(p) - p p^T) (x) z_n z_n^T = (diag(p) - p p^T) (x) Z^T S Z

(plus the prior's precision): one p x p Gram instead of ``n (Mp)^2 / 2``
multiply-adds. The engine's BFGS opening (``solvers.secant``) starts from it.
Shared by the in-memory and the Dask softmax objectives, so that both take
the same path.
"""
from collections.abc import Callable

import numpy as np

from ..linalg import IDENTIFIED_RTOL, Cholesky, equilibrated_cholesky, inverse_from_equilibrated
from .contract import DesignShape
from .family_softmax import CategoricalSoftmax
from .penalty import Penalty

__all__ = ["SharedStartCurvature"]

# Numbers the M inverse blocks of the start preconditioner may hold (128 MB).
_PRECONDITIONER_ELEMENTS = 1 << 24


class SharedStartCurvature:
    """``shared_curvature`` / ``shared_hessian`` of the objective contract, for softmax.

    A mixin: the objective provides ``family``, ``design`` (its ``intercept``),
    ``n_blocks``, ``n_params``, ``sample_weight``, ``penalty`` and the weighted Gram
    ``Z^T S Z`` (``_weighted_gram``: a product in memory, a pass on Dask).
    """

    family: CategoricalSoftmax
    design: DesignShape
    n_blocks: int
    n_params: int
    sample_weight: np.ndarray | None
    penalty: Penalty

    def _weighted_gram(self) -> np.ndarray:
        """``Z^T S Z``."""
        raise NotImplementedError  # pragma: no cover - each objective's own

    def _start_blocks(self, theta: np.ndarray) -> np.ndarray:
        return np.asarray(theta, dtype=np.float64).reshape(self.n_blocks, -1)

    def shared_curvature(self, theta: np.ndarray) -> bool:
        """Whether every row has the same probabilities at ``theta``: all slopes zero."""
        blocks = self._start_blocks(theta)
        return not np.any(blocks[:, 1:] if self.design.intercept else blocks)

    def _start_factors(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(C, G)``: the class factor ``diag(p) - p p^T`` (exact complements on its
        diagonal) and the Gram ``Z^T S Z`` of the Hessian ``C (x) G`` at ``theta``."""
        blocks = self._start_blocks(theta)
        logits = blocks[:, 0] if self.design.intercept else np.zeros(self.n_blocks)
        _, state = self.family.derivatives(np.zeros(1, dtype=np.intp), logits[None, :])
        p = state.P[0]
        C = -np.outer(p, p)
        C[np.diag_indices_from(C)] = p * state.complements()[0]  # exact complements
        return C, self._weighted_gram()

    def shared_hessian(self, theta: np.ndarray) -> np.ndarray:
        """The Hessian at ``theta`` (where :meth:`shared_curvature` holds), as above."""
        C, G = self._start_factors(theta)
        return self.penalty.add_hessian(theta, _kron(C, G))

    def shared_inverse(self, theta: np.ndarray) -> np.ndarray | None:
        """``C^-1 (x) G^-1`` without a penalty (a prior's precision breaks the Kronecker
        structure): two small factorisations instead of one of order ``M p``. None
        where the whole would not pass :func:`~problin._core.linalg.equilibrated_cholesky`'s
        test: its pivots are the products of the factors' pivots."""
        if not self.penalty.flat:
            return None
        C, G = (equilibrated_cholesky(A) for A in self._start_factors(theta))
        if C is None or G is None or not _least_pivot(C) * _least_pivot(G) > IDENTIFIED_RTOL:
            return None
        return _kron(inverse_from_equilibrated(*C), inverse_from_equilibrated(*G))


    def start_preconditioner(self, theta: np.ndarray, budget: int = _PRECONDITIONER_ELEMENTS
                             ) -> Callable[[np.ndarray], np.ndarray] | None:
        """``v -> H^-1 v`` for the Hessian at ``theta`` (where :meth:`shared_curvature`
        holds) with a diagonal prior ``I (x) D``, or None where its ``M`` factors of
        order p would hold more than ``budget`` numbers (wide data), or the prior is
        not diagonal.

        With ``C = U diag(l) U^T``, ``(U (x) I)^T (C (x) G + I (x) D) (U (x) I)`` is
        block diagonal, ``l_k G + D``: M Cholesky factors of order p, then two
        M x M by M x p products a solve. The intercepts' rank-one prior term (all
        K blocks, pinning their sum along C's null vector, the ones) is added to the
        block it falls in. L-BFGS's initial matrix (``solvers.quasi_newton``): the
        class coupling ``-p p^T`` and the features' correlations that a diagonal
        scaling leaves, and which made L-BFGS crawl on many classes (K = 300: 521
        iterations where scikit-learn stops after tens)."""
        M, p = self.n_blocks, self.n_params // self.n_blocks
        gaussian = self.penalty.gaussian
        if not self.penalty.flat and gaussian is None:
            return None  # (a penalty other than a Gaussian prior's)
        P = None if gaussian is None else gaussian.precision
        diag = None if P is None else P.diag
        if M * p * p > budget or (P is not None and diag is None):
            return None
        C, G = self._start_factors(theta)
        lam, U = np.linalg.eigh(C)
        D = np.zeros(p) if diag is None else diag[:p]
        if diag is not None and not np.allclose(diag.reshape(M, p), D):
            return None  # (the same prior on every block: the GLMs' and Bayes' priors)
        A = lam[:, None, None] * G[None, :, :]
        A[:, np.arange(p), np.arange(p)] += D
        for v, c in ([] if P is None else P.rank_one):
            R = U.T @ v.reshape(M, p)
            A += c * R[:, :, None] * R[:, None, :]  # (its cross-block terms dropped)
        scale = np.maximum(np.abs(A[:, np.arange(p), np.arange(p)]).max(axis=1), 1e-300)
        A[:, np.arange(p), np.arange(p)] += 1e-10 * scale[:, None]  # (a null direction)
        try:  # M Cholesky factors at once (batched); not positive definite: no start
            L = np.linalg.cholesky(A)
        except np.linalg.LinAlgError:
            return None
        W = np.linalg.solve(L, np.broadcast_to(np.eye(p), A.shape))  # L^-1, A^-1 = W^T W
        Wt = np.ascontiguousarray(W.transpose(0, 2, 1))

        def apply(v: np.ndarray) -> np.ndarray:
            R = U.T @ np.asarray(v, dtype=np.float64).reshape(M, p)
            R = np.matmul(Wt, np.matmul(W, R[:, :, None]))[:, :, 0]
            return (U @ R).ravel()

        return apply


def _least_pivot(factored: tuple[np.ndarray, Cholesky]) -> float:
    """The smallest squared pivot of an equilibrated Cholesky factor."""
    return float(np.min(np.square(np.diag(factored[1].factor[0]))))


def _kron(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``A (x) B`` by one broadcast product."""
    (m, _), (p, _) = A.shape, B.shape
    return (A[:, None, :, None] * B[None, :, None, :]).reshape(m * p, m * p)
