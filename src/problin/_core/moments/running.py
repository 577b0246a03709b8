"""Running sums of the one-pass moments (:func:`problin._core.moments.least_squares.moments`).

:class:`Running` merges blocks reduced about their own means (Chan, Golub &
LeVeque); :class:`RawRun` sums consecutive blocks read in place, without a
centred copy, while the blocks' own products show that this loses at most a
factor ``RAW_RATIO`` of accuracy.
"""
import numpy as np

from .class_stats import merge_means

__all__ = ["RAW_RATIO", "Running", "RawRun"]

RAW_RATIO = 17.0  # raw sums of squares may exceed the centred ones by at most this factor


class Running:
    """Weight, mean (``origin + offset``) and centred scatter, merged block by block
    (the first block's centre becomes the origin; ``origin`` is that of no block)."""

    def __init__(self, origin: np.ndarray, n_features: int) -> None:
        self.origin, self.n_features, self.weight = origin, n_features, 0.0
        self.offset = np.zeros(origin.size)
        self.scatter = np.zeros((origin.size, origin.size))

    def add(self, n: float, shift: np.ndarray, P: np.ndarray, r: np.ndarray) -> np.ndarray:
        """Merge a block of weight ``n``, scatter ``P`` about ``shift`` and residual
        sums ``r = sum w (z - shift)``; returns the block's sums of squares about its mean."""
        self.weight, self.origin, self.offset, delta, c = merge_means(
            self.weight, self.origin, self.offset, n, shift, r / n)
        self.scatter += P
        self.scatter -= np.outer(r, r / n)
        self.scatter += np.outer(delta, delta * c)
        return np.diagonal(P) - r * r / n


class RawRun:
    """Raw products of consecutive blocks, read in place, about ``[0, t_shift]``.

    A block joins the run only if each of its columns passes the test on its
    own products: ``sum (z - c)^2 <= R sum (z - m_b)^2`` (``c`` the shift, ``m_b``
    the block mean). Summed over the blocks, the run's raw sums then exceed its
    centred scatter by at most the factor ``R`` too (within-block scatters add
    up to at most the run's), so the whole run merges as one block.
    """

    def __init__(self, d: int, k: int, rows: int) -> None:
        self.d, self.k, self.active = d, k, False
        self.B = np.empty((rows, k + 1))  # [T_b - t_shift, 1]
        self.B[:, k] = 1.0
        self.shift = np.zeros(d + k)
        self.P, self.r, self.n = np.zeros((d + k, d + k)), np.zeros(d + k), 0

    def start(self, t_shift: np.ndarray) -> None:
        self.shift[self.d:] = t_shift
        self.active = True

    def add(self, Xb: np.ndarray, Tb: np.ndarray, acc: Running) -> bool:
        """Add a block; ``False`` (and the run stops) if a feature fails the test.

        Targets that fail it (a target drifting along the rows) are shifted to
        the block's own mean instead, which starts a new run (the old one is
        merged into ``acc``): only ``X_b^T [T_b - c, 1]`` is formed again.
        """
        d, k, m = self.d, self.k, Xb.shape[0]
        B = self.B[:m]
        np.subtract(Tb, self.shift[d:], out=B[:, :k])
        G = Xb.T @ Xb  # syrk on the block itself
        XtB = Xb.T @ B
        BtB = B.T @ B
        rx, rt = XtB[:, k], BtB[:k, k]
        limit = (1.0 - 1.0 / RAW_RATIO) * m  # r^2 / m <= (1 - 1/R) sum (z - c)^2
        if not (rx * rx <= limit * G.diagonal()).all():
            self.active = False
            return False
        if not (rt * rt <= limit * BtB.diagonal()[:k]).all():
            self.flush(acc)
            self.shift[d:] += rt / m
            np.subtract(Tb, self.shift[d:], out=B[:, :k])  # about the shift as stored
            XtB = Xb.T @ B
            BtB = B.T @ B
            rt = BtB[:k, k]
            if not (rt * rt <= limit * BtB.diagonal()[:k]).all():  # NaN or infinity
                self.active = False
                return False
        self.P[:d, :d] += G
        self.P[:d, d:] += XtB[:, :k]
        self.P[d:, d:] += BtB[:k, :k]
        self.r[:d] += rx
        self.r[d:] += rt
        self.n += m
        return True

    def flush(self, acc: Running) -> None:
        """Merge the run into ``acc`` and empty it."""
        if self.n:
            self.P[self.d:, :self.d] = self.P[:self.d, self.d:].T
            acc.add(float(self.n), self.shift, self.P, self.r)
            self.P[:], self.r[:], self.n = 0.0, 0.0, 0
