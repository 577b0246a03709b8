"""Elasticities of plain columns of a single-index model, every variable from shared sums.

Stata's ``eyex``, ``dyex`` and ``eydx`` of a row are its slope ``D_i w_j`` (``D = d mu /
d eta``) times ``x_ij`` and/or over ``mu_i``. For a variable that is one design column
as it is, the average over rows is ``w_j avg(s a x_j)`` (``ex``) or ``w_j avg(s a)``
(``dx``), with ``a = D`` (``dy``) or ``D / mu`` (``ey``): one product ``X^T (s a)`` gives
every variable's. The Jacobian in ``theta = (b, w)`` is

    w_j avg(s a' x_j x~) + avg(s a x_j) e_j     (ex),    w_j avg(s a' x~) + avg(s a) e_j   (dx),

``a' = d a / d eta``: ``T = d^2 mu / d eta^2`` (``dy``) or ``T / mu - (D / mu)^2``
(``ey``); the ``ex`` kinds need one ``X^T diag(s a') X~`` per block, every variable's at
once, in place of a pass per variable (a 200,000 x 50 logistic's ``eyex`` of all
variables took 4x the fit's time that way).
"""
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

__all__ = ["Elasticities"]

FloatArray = NDArray[np.float64]


class Elasticities:
    """The sums of a single-index model's plain-column elasticities over row blocks:
    ``wanted`` maps a function's index to ``(design column, kind)``."""

    def __init__(self, wanted: dict[int, tuple[int, str]], p1: int) -> None:
        self.wanted = wanted
        kinds = {kind for _, kind in wanted.values()}
        self.first = {kind: np.zeros(p1 - 1 if kind.endswith("ex") else 1) for kind in kinds}
        self.second = {kind: np.zeros((p1 - 1, p1) if kind.endswith("ex") else (1, p1))
                       for kind in kinds}

    def add(self, s: FloatArray, X: Any, mu: FloatArray, d: FloatArray,
            T: FloatArray) -> None:
        """A block's rows: weights ``s`` (n,), design ``X`` (n, p; dense or CSR),
        ``mu, D, T`` (n,) at the observed rows."""
        for kind in self.first:
            if kind.startswith("ey"):
                with np.errstate(divide="ignore", invalid="ignore"):
                    a, a1 = d / mu, T / mu - (d / mu) ** 2
            else:
                a, a1 = d, T
            v = s * a1
            if kind.endswith("ex"):
                self.first[kind] += X.T @ (s * a)
                self.second[kind][:, 0] += X.T @ v
                _add_weighted_gram(self.second[kind][:, 1:], X, v)
            else:
                self.first[kind] += np.sum(s * a)
                self.second[kind][0, 0] += np.sum(v)
                self.second[kind][0, 1:] += X.T @ v

    def finish(self, W: FloatArray, values: FloatArray, jacobians: FloatArray) -> None:
        """Each wanted function's average (values[f], shape (1,)) and Jacobian
        (jacobians[f], shape (1, 1, p1)), ``W`` the slopes (1, p)."""
        for f, (j, kind) in self.wanted.items():
            at = j if kind.endswith("ex") else 0
            first, second = self.first[kind][at], self.second[kind][at]
            values[f] = W[0, j] * first
            jacobians[f, 0, 0] = W[0, j] * second
            jacobians[f, 0, 0, 1 + j] += first


def _add_weighted_gram(out: FloatArray, X: Any, v: FloatArray) -> None:
    """``out += X^T diag(v) X`` for a block: a sparse block's as a sparse product added
    at its stored entries (no p x p dense temporary per block)."""
    if sp.issparse(X):
        G = sp.csr_matrix(X.T @ sp.csr_matrix(X.multiply(v[:, None])))
        G.sum_duplicates()  # (a product's CSR is canonical: a flag check; += needs it)
        rows = np.repeat(np.arange(G.shape[0]), np.diff(G.indptr))
        out[rows, G.indices] += G.data
    else:
        out += X.T @ (X * v[:, None])
