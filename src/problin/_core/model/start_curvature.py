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
from typing import Any

import numpy as np

__all__ = ["SharedStartCurvature"]


class SharedStartCurvature:
    """``shared_curvature`` / ``shared_hessian`` of the objective contract, for softmax.

    A mixin: the objective provides ``family``, ``design`` (its ``intercept``),
    ``n_blocks``, ``n_params``, ``sample_weight`` and ``_add_prior``.
    """

    family: Any
    design: Any
    n_blocks: int
    n_params: int
    sample_weight: np.ndarray | None
    _add_prior: Callable[..., tuple[Any, ...]]  # (GaussianPrior's)

    def _weighted_gram(self) -> np.ndarray:
        """``Z^T S Z`` of an in-memory design (the Dask objective reduces its chunks')."""
        return self.design.gram(self.sample_weight)

    def _start_blocks(self, theta: np.ndarray) -> np.ndarray:
        return np.asarray(theta, dtype=np.float64).reshape(self.n_blocks, -1)

    def shared_curvature(self, theta: np.ndarray) -> bool:
        """Whether every row has the same probabilities at ``theta``: all slopes zero."""
        blocks = self._start_blocks(theta)
        return not np.any(blocks[:, 1:] if self.design.intercept else blocks)

    def shared_hessian(self, theta: np.ndarray) -> np.ndarray:
        """The Hessian at ``theta`` (where :meth:`shared_curvature` holds), as above."""
        blocks = self._start_blocks(theta)
        logits = blocks[:, 0] if self.design.intercept else np.zeros(self.n_blocks)
        _, state = self.family.derivatives(np.zeros(1, dtype=np.intp), logits[None, :])
        p = state.P[0]
        C = -np.outer(p, p)
        C[np.diag_indices_from(C)] = p * state.complements()[0]  # exact complements
        G = self._weighted_gram()
        M, p = C.shape[0], G.shape[0]  # kron(C, G), by one broadcast product
        H = (C[:, None, :, None] * G[None, :, None, :]).reshape(M * p, M * p)
        return self._add_prior(theta, 0.0, np.zeros(self.n_params), H)[2]
