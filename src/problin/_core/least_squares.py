"""Least squares from sufficient statistics, read in one blocked pass.

Every linear-Gaussian fit (least squares, ridge, the lasso's Gram-matrix
coordinate descent, Bayesian linear regression) needs only the weighted
moments of ``z = [x, t]``: the total weight ``n``, the mean ``z_bar`` and the
centred scatter ``sum w (z - z_bar)(z - z_bar)^T``. They are computed in one
thread-parallel pass over row blocks, one ``syrk`` per block on the block
shifted by a fixed reference row mean (so the centred scatter never loses
digits to cancellation, and no centred copy of X is ever made), and they
merge exactly (Chan, Golub & LeVeque), which is what ``partial_fit`` does.
"""
from dataclasses import dataclass

import numpy as np
from scipy import linalg
from scipy.linalg import lapack

from .blocks import _default_rows, iter_blocks, reduce_row_ranges
from .linalg import solve_psd

__all__ = ["Moments", "moments", "solve_normal_equations"]


@dataclass
class Moments:
    """Weighted moments of ``z = [x, t]`` (``n_features`` inputs, then the targets).

    ``weight`` is the total sample weight, ``mean`` the weighted mean of z and
    ``scatter`` the centred scatter matrix ``sum_n w_n (z_n - mean)(z_n - mean)^T``.
    """

    weight: float
    mean: np.ndarray
    scatter: np.ndarray
    n_features: int

    def merge(self, other):
        """The moments of both data sets together (exact, order-free up to rounding)."""
        if other.mean.shape != self.mean.shape or other.n_features != self.n_features:
            raise ValueError("cannot merge the statistics of data with different shapes: "
                             f"{self.n_features} features/{self.mean.size - self.n_features} "
                             f"targets vs {other.n_features}/"
                             f"{other.mean.size - other.n_features}")
        n = self.weight + other.weight
        delta = other.mean - self.mean
        mean = self.mean + delta * (other.weight / n)
        scatter = self.scatter + other.scatter
        scatter += np.outer(delta, delta) * (self.weight * other.weight / n)
        return Moments(n, mean, scatter, self.n_features)

    def blocks(self, centred=True):
        """``(Phi^T Phi, Phi^T T, T^T T)`` of the centred data, or of the raw data."""
        S = self.scatter if centred else self.scatter + self.weight * np.outer(self.mean,
                                                                              self.mean)
        d = self.n_features
        return S[:d, :d], S[:d, d:], S[d:, d:]

    @property
    def x_mean(self):
        return self.mean[:self.n_features]

    @property
    def t_mean(self):
        return self.mean[self.n_features:]


def moments(X, T, sample_weight=None):
    """:class:`Moments` of ``[X, T]`` (``T`` 2-D) in one thread-parallel blocked pass.

    Each block ``Z_b = [X_b, T_b]`` is shifted by a reference mean ``c`` (that
    of the first block) into a block-sized buffer, weighted by ``sqrt(w)``, and
    ``B^T B`` (BLAS ``syrk``) is added; the shift is removed at the end
    (``S - s s^T / n`` with ``s = sum w (z - c)`` small), so X is never copied
    and the centred scatter keeps its digits even when the means are large.
    Unweighted float64 features whose first-block means are within a few
    standard deviations of zero lose nothing to cancellation unshifted: their
    blocks go to ``syrk`` as they are, without the copy.
    """
    with np.errstate(all="ignore"):  # non-finite input shows as a non-finite result
        return _moments(X, T, sample_weight)


def _moments(X, T, sample_weight):
    n, d = X.shape
    k = T.shape[1]
    rows = _default_rows(np.empty((1, d + k)))
    head = min(n, rows)
    shift = np.concatenate([np.mean(X[:head], axis=0, dtype=np.float64),
                            np.mean(T[:head], axis=0, dtype=np.float64)])
    root = None if sample_weight is None else np.sqrt(sample_weight)
    sd = np.std(X[:head], axis=0, dtype=np.float64)
    in_place = root is None and X.dtype == np.float64 and X.flags.c_contiguous and \
        bool(np.all(np.abs(shift[:d]) <= 4.0 * sd))
    if in_place:
        shift[:d] = 0.0

    def accumulate(lo, hi):
        S = np.zeros((d + k, d + k))
        s = np.zeros(d + k)
        w = 0.0
        buffer = np.empty((min(rows, hi - lo), k + 1 if in_place else d + k))
        if in_place:
            buffer[:, k] = 1.0
        for start, stop, Xb, Tb in iter_blocks(X, T, rows=rows, start=lo, stop=hi):
            B = buffer[:stop - start]
            if in_place:  # X_b^T X_b on the block itself; X_b^T [T_b - c, 1] in one product
                np.subtract(Tb, shift[d:], out=B[:, :k])
                S[:d, :d] += Xb.T @ Xb
                XtB = Xb.T @ B
                S[:d, d:] += XtB[:, :k]
                s[:d] += XtB[:, k]
                S[d:, d:] += B[:, :k].T @ B[:, :k]
                s[d:] += B[:, :k].sum(axis=0)
                w += stop - start
                continue
            np.subtract(Xb, shift[:d], out=B[:, :d])
            np.subtract(Tb, shift[d:], out=B[:, d:])
            if root is None:
                s += B.sum(axis=0)
                w += stop - start
            else:
                rb = root[start:stop]
                B *= rb[:, None]
                s += rb @ B
                w += float(rb @ rb)
            S += B.T @ B
        return w, s, S

    def accumulate_quietly(lo, hi):  # errstate is per thread
        with np.errstate(all="ignore"):
            return accumulate(lo, hi)

    w, s, S = reduce_row_ranges(accumulate_quietly, n, rows)
    S[d:, :d] = S[:d, d:].T
    offset = s / w
    S -= np.outer(s, offset)
    return Moments(float(w), shift + offset, S, d)


def solve_normal_equations(G, C, alpha=0.0, *, rcond=1e-12):
    """``W`` solving ``(G + alpha I) W = C`` for PSD ``G``; returns ``(W, rank)``.

    Cholesky of the matrix scaled to unit diagonal (so badly scaled columns do
    not look singular); when it is numerically singular (pivots below
    ``rcond`` times the largest) the minimum-norm solution, that is
    ``Phi^+ T`` -- pseudo-inverse semantics -- from an eigendecomposition.
    """
    A = np.array(G, dtype=np.float64)
    A[np.diag_indices_from(A)] += alpha
    diag = np.diag(A).copy()
    if A.size and np.all(diag > 0):
        scale = 1.0 / np.sqrt(diag)
        c, info = lapack.dpotrf(A * np.outer(scale, scale), lower=0, clean=1)
        pivots = np.square(np.diag(c))
        if info == 0 and pivots.min() > rcond * pivots.max():
            Cs = C * (scale[:, None] if C.ndim == 2 else scale)
            Ws = linalg.cho_solve((c, False), Cs, check_finite=False)
            return Ws * (scale[:, None] if C.ndim == 2 else scale), A.shape[0]
    return solve_psd(A, C, rcond=rcond)
