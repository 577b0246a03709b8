"""Monte Carlo predictive probabilities of logistic models over posterior draws.

``ln (1/S sum_s p(C | x, w_s))`` by row blocks and batches of draws, exact where
the sum of the draws' probabilities underflows (see :func:`sampled_log_proba`);
:mod:`problin._core.bayes.far_rows` mends the rows whose activations overflow.
"""
from typing import Any

import numpy as np
from scipy import special

from ..blocks import block_rows, iter_blocks, reduce_row_ranges
from ..numerics import log_sigmoid, log_softmax
from ..types import Matrix
from .logistic import _dense_design_block

__all__ = ["sampled_log_proba"]


def _activations(Phi: np.ndarray, draws: np.ndarray, n_blocks: int) -> np.ndarray:
    """``(rows, S, n_blocks)`` activations of every row under every draw (one GEMM)."""
    p = draws.shape[1] // n_blocks
    return (Phi @ draws.reshape(-1, p).T).reshape(Phi.shape[0], draws.shape[0], n_blocks)


def _draw_log_proba(A: np.ndarray) -> np.ndarray:
    """Per-draw log class probabilities from activations (binary: one column)."""
    if A.shape[2] == 1:
        return np.stack([log_sigmoid(-A[:, :, 0]), log_sigmoid(A[:, :, 0])], axis=2)
    return log_softmax(A, axis=2)


def _draw_proba_sums(A: np.ndarray) -> np.ndarray:
    """``sum_s p(C_k | x, w_s)`` per row and class, from activations."""
    if A.shape[2] == 1:
        a = A[:, :, 0]
        return np.column_stack([special.expit(-a).sum(axis=1), special.expit(a).sum(axis=1)])
    return special.softmax(A, axis=2).sum(axis=1)


def _log_mean(total: np.ndarray, S: int) -> np.ndarray:
    """``log(total / S)``; for the most probable class, where above 1/2, ``log1p(-q)``
    with ``q`` the other classes' mean (each sum has full relative precision): its
    ``log p`` near 0 keeps its digits, which ``log`` of a mean rounded to 1 loses."""
    out = np.log(total) - np.log(S)
    rows, k = np.arange(total.shape[0]), np.argmax(total, axis=1)
    others = total.copy()
    others[rows, k] = 0.0
    q = others.sum(axis=1) / S
    near = q < 0.5
    out[rows[near], k[near]] = np.log1p(-q[near])
    return out


def sampled_log_proba(X: Matrix, intercept: bool, draws: np.ndarray, n_blocks: int = 1,
                      batch: int = 256, block: Any = None) -> np.ndarray:
    """Monte Carlo predictive ``ln (1/S sum_s p(C | x, w_s))`` over posterior draws.

    ``draws`` is ``(S, n_blocks * p)``. The sum of the draws' probabilities
    (each class's from its own ``sigma`` or softmax, never ``1 - p``) has full
    relative precision, so its logarithm is exact; only where that sum
    underflows (activations beyond ~700) are those rows averaged in log space
    (``logsumexp``). By row blocks and batches of draws; ``block`` maps each
    row block of ``X`` first (centring, for draws at the centre of the data).
    """
    S = draws.shape[0]
    K = 2 if n_blocks == 1 else n_blocks
    out = np.empty((X.shape[0], K))
    rows = block_rows(min(S, batch) * n_blocks)

    def work(lo: int, hi: int) -> float:
        for start, stop, Xb in iter_blocks(X, rows=rows, start=lo, stop=hi):
            Phi = _dense_design_block(Xb if block is None else block(Xb), intercept)
            total = np.zeros((stop - start, K))
            for b in range(0, S, batch):
                total += _draw_proba_sums(_activations(Phi, draws[b:b + batch], n_blocks))
            tiny = np.any(total < 1e-250, axis=1)
            total[tiny] = 1.0
            out[start:stop] = _log_mean(total, S)
            if np.any(tiny):
                logs = np.full((int(tiny.sum()), K), -np.inf)
                for b in range(0, S, batch):
                    A = _activations(Phi[tiny], draws[b:b + batch], n_blocks)
                    logs = np.logaddexp(logs, special.logsumexp(_draw_log_proba(A), axis=1))
                out[start:stop][tiny] = logs - np.log(S)
        return 0.0

    reduce_row_ranges(work, X.shape[0], rows)
    return out
