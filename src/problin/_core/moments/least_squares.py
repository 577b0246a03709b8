"""Least squares from sufficient statistics, read in one blocked pass.

Every linear-Gaussian fit (least squares, ridge, the lasso's Gram-matrix
coordinate descent, Bayesian linear regression) needs only the weighted
moments of ``z = [x, t]``: the total weight ``n``, the mean ``z_bar`` and the
centred scatter ``sum w (z - z_bar)(z - z_bar)^T``, held as its triangular
factor ``R`` (``R^T R`` = scatter), the QR factor of the centred rows, so
that the solvers lose ``kappa``, not ``kappa^2``, digits (see
:mod:`problin._core.moments.tsqr`). They are computed in one thread-parallel pass
over row blocks: each block is reduced about its own mean (one ``syrk`` per
block, on a block-sized buffer or, for blocks whose columns sit within a
standard deviation of zero, on X itself) and the blocks merge exactly (Chan,
Golub & LeVeque), as ``partial_fit`` merges batches; the scatter is factored
at the end, or, where that would lose digits, the rows are factored by
Householder QR instead. The result is thus as accurate as if the whole data
had been centred on their exact means first, however the column means drift
along the rows, and no copy of X is ever made.
"""
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy import linalg

from ..blocks import _default_rows, iter_blocks, reduce_row_ranges, small_blas
from ..types import Matrix
from .class_stats import aligned_rows, merge_means, spread_classes
from .running import RAW_RATIO, RawRun, Running
from .tsqr import QRRunning, centre_rows, gram_factor, stack_qr

__all__ = ["Moments", "Factors", "ClassMoments", "moments", "class_moments"]

_EPS = np.finfo(np.float64).eps


@dataclass
class Moments:
    """Weighted moments of ``z = [x, t]`` (``n_features`` inputs, then the targets).

    ``weight`` is the total sample weight and ``factor`` an upper triangular
    ``R`` whose ``R^T R`` is the centred scatter ``sum_n w_n (z_n - mean)(z_n -
    mean)^T`` (see :mod:`problin._core.moments.tsqr`): the least-squares problem of the
    centred data reduced to D x D, from which it is solved as accurately as by
    QR of the rows. The mean is held as ``origin + offset``: ``origin`` is a
    rounded reference point near the data (where their first block was
    centred) and ``offset`` is accurate to the data's spread, not to their
    magnitude, so that merging statistics (whose exact update is first-order
    in the difference of the means) loses no digits when the means are large
    and the spreads small.
    """

    weight: float
    offset: np.ndarray
    factor: np.ndarray
    n_features: int
    origin: np.ndarray

    @property
    def mean(self) -> np.ndarray:
        """Weighted mean of z."""
        return self.origin + self.offset

    @property
    def scatter(self) -> np.ndarray:
        """The centred scatter matrix ``R^T R``."""
        return self.factor.T @ self.factor

    def merge(self, other: "Moments") -> "Moments":
        """The moments of both data sets together: the R factor of both factors stacked,
        with the Chan-Golub-LeVeque row ``sqrt(n_a n_b / n) (mean_b - mean_a)``."""
        if other.offset.shape != self.offset.shape or other.n_features != self.n_features:
            raise ValueError("cannot merge the statistics of data with different shapes: "
                             f"{self.n_features} features/{self.offset.size - self.n_features} "
                             f"targets vs {other.n_features}/"
                             f"{other.offset.size - other.n_features}")
        n, origin, offset, delta, c = merge_means(self.weight, self.origin, self.offset,
                                                  other.weight, other.origin, other.offset)
        rows = np.vstack([other.factor, np.sqrt(c) * delta[None, :]])
        with small_blas(rows.shape[1]):
            R = stack_qr(np.array(self.factor, order="F"), np.asfortranarray(rows))
        return Moments(float(n), offset, R, self.n_features, origin)

    __add__ = merge  # reduce_row_ranges merges the threads' statistics with ``+``

    def values_within(self, limit: float) -> bool:
        """Whether these moments prove every value of ``z = [x, t]`` in the rows of
        weight at least 1 finite and at most ``limit`` in size: ``|z_j| <= |z_j -
        mean_j| + |mean_j| <= sqrt(S_jj) + |mean_j|``, ``S_jj`` the scatter's diagonal
        (the factor's column norms squared; NaN or infinity make it fail)."""
        with np.errstate(over="ignore", invalid="ignore"):
            bound = np.sqrt(np.einsum("ij,ij->j", self.factor, self.factor)) + \
                np.abs(self.mean)
        return bool(np.all(bound <= limit))

    def factors(self, centred: bool = True) -> "Factors":
        """:class:`Factors` of the centred data, or of the raw data (``centred=False``).

        Features whose centred values are all rounding (a constant column) get
        exactly zero rows and columns and ``live`` False.
        """
        d = self.n_features
        R, mean = np.asfortranarray(self.factor), self.mean
        norms = np.sqrt(np.sum(R[:, :d] ** 2, axis=0))
        raw = np.sqrt(norms ** 2 + self.weight * mean[:d] ** 2)
        if not centred:  # append the row sqrt(n) mean: the factor of the raw rows
            R = stack_qr(R.copy(order="F"), np.sqrt(self.weight) * mean[None, :])
            norms = raw
        live = norms > 16.0 * _EPS * raw
        if not live.all():
            keep = np.concatenate([np.flatnonzero(live), np.arange(d, R.shape[0])])
            kept = linalg.qr(R[:, keep], mode="r", check_finite=False)[0][:keep.size]
            R = np.zeros_like(R)
            R[np.ix_(keep, keep)] = kept
        # rounding of the data relative to the columns solved for (centred: |x| / |x - mean|)
        spread = np.where(live, raw / np.where(live, norms, 1.0), 1.0)
        return Factors(R[:d, :d], R[:d, d:], R[d:, d:], live, spread)

    def constant_direction(self, n_rows: float) -> np.ndarray | None:
        """A unit ``v`` with ``X v`` constant (and not zero) where the features' span
        holds the constant (a constant column, or dummies that sum to one: the
        intercept a model without ``fit_intercept`` has anyway); None if it does not.

        As statsmodels decides it (``k_constant``): the rank of ``[1, X]`` equals that
        of ``X``, each rank at numpy's tolerance for ``n_rows`` rows. The weighted
        factors have the rows' singular values: ``[[sqrt(n), sqrt(n) xbar^T], [0,
        R_c]]`` of ``[1, X]``, and ``[sqrt(n) xbar^T; R_c]`` of ``X``. ``v`` is the
        null direction of the first nearest to the constant's.
        """
        d, n = self.n_features, self.weight
        if d == 0 or not n > 0:
            return None
        root, xbar = np.sqrt(n), self.x_mean
        augmented = np.zeros((d + 1, d + 1))
        augmented[0, 0], augmented[0, 1:], augmented[1:, 1:] = root, root * xbar, \
            self.factor[:d, :d]
        _, s, Vt = linalg.svd(augmented, check_finite=False)
        bare = linalg.svdvals(augmented[:, 1:], check_finite=False)
        scale = max(float(n_rows), d + 1) * _EPS

        def rank(values: np.ndarray) -> int:
            return int(np.sum(values > values.max() * scale)) if values.max() > 0 else 0

        kept = rank(s)
        if kept != rank(bare):
            return None
        null = Vt[kept:]  # (c, v) with c + xbar^T v = 0 and R_c v = 0: X v = -c
        v = null[:, 1:].T @ null[:, 0]  # the null direction nearest e_0's
        norm = float(np.linalg.norm(v))
        return v / norm if norm > 0 else None

    @property
    def x_mean(self) -> np.ndarray:
        return self.mean[:self.n_features]

    @property
    def t_mean(self) -> np.ndarray:
        return self.mean[self.n_features:]


@dataclass
class Factors:
    """The least-squares problem ``min |Phi W - T|`` reduced to triangular factors.

    ``[Phi, T] = Q [[xx, xt], [0, tt]]``: ``Phi^T Phi = xx^T xx``, ``Phi^T T =
    xx^T xt`` and the residual of ``W`` is ``|xt - xx W|^2 + |tt|^2``. ``live``
    marks the features that vary (the others have zero rows and columns);
    ``spreads`` holds each feature's ratio of raw to solved (centred) norm, by
    which the rounding of its data grows relative to its column (1 where dead).
    """

    xx: np.ndarray
    xt: np.ndarray
    tt: np.ndarray
    live: np.ndarray
    spreads: np.ndarray

    def residual_sum_of_squares(self, W: np.ndarray) -> float:
        """``sum_k |t_k - Phi w_k|^2``, without cancellation."""
        return float(np.sum((self.xt - self.xx @ W) ** 2) + np.sum(self.tt ** 2))

    def gram(self) -> tuple[np.ndarray, np.ndarray]:
        """``(Phi^T Phi, Phi^T T)``, formed from the factors (for the iterative solvers)."""
        return self.xx.T @ self.xx, self.xx.T @ self.xt

    @property
    def total_sum_of_squares(self) -> float:
        """``trace(T^T T)`` (centred or raw, as the factors)."""
        return float(np.sum(self.xt ** 2) + np.sum(self.tt ** 2))


def moments(X: Matrix, T: np.ndarray, sample_weight: np.ndarray | None = None, *,
            rows: int | None = None, workers: int | None = None,
            n_classes: int | None = None) -> Moments:
    """:class:`Moments` of ``[X, T]`` (``T`` 2-D) in one thread-parallel blocked pass.

    ``X`` may be a numpy array or a scipy.sparse matrix (densified a block at a
    time). With ``n_classes``, ``T`` is a vector of integer class codes and the
    targets are their 1-of-K coding (built a block at a time).

    Every block is reduced to its weight, its mean (as an offset from the
    first block's mean) and its scatter about its own mean, and the blocks are
    merged by the Chan-Golub-LeVeque update: the result is as accurate as
    centring all data on their exact means first, however the column means
    drift along the rows (sorted data). A block is reduced in one of two ways:

    * **centred**: the block minus its mean (times ``sqrt(w)``) is written into
      a block-sized buffer with a last column of ones (``sqrt(w)``); one
      ``B^T B`` (BLAS ``syrk``) gives the scatter, the residual sums
      ``r = sum w (z - mean)`` and the weight, and ``P - r r^T / n`` removes
      the first-order error of the rounded mean.
    * **raw** (unweighted C-contiguous float64 X only): ``X_b^T X_b`` on the
      block itself, no copy, with the targets shifted by a nearby mean (the
      previous block's); consecutive raw blocks add up (:class:`RawRun`) and
      merge once. A block is taken raw only if each column passes
      ``sum (z - c)^2 <= 17 sum (z - m)^2`` (``|m - c| <= 4 sd``; ``c = 0`` for
      the features) on the block's own products, so the raw sums carry at
      most 17 times the rounding-error bound of centred ones (4 bits, however
      the data lie); a block that fails is reduced centred. Whether to try is
      predicted from the previous block (the first try is raw), so a wasted
      try costs one block per change of regime. Data near zero (standardised
      features) are thus read in place at the speed of one ``syrk`` per
      block; data far from zero pay one block-sized copy.

    Each thread's scatter is then factored by Cholesky into the R factor that
    :class:`Moments` holds, unless that would lose digits (ill-conditioned
    features or a nearly perfect fit, see :func:`~problin._core.moments.tsqr.gram_factor`):
    then the thread reads its rows again and factors them by Householder QR,
    block by block (:class:`~problin._core.moments.tsqr.QRRunning`), at about 2.5 times
    the cost. ``rows``/``workers`` set the block size and the number of threads
    (the results agree to rounding).
    """
    with np.errstate(all="ignore"):  # non-finite input shows as a non-finite result
        return _moments(X, T, sample_weight, rows, workers, n_classes)


@dataclass
class ClassMoments:
    """:class:`Moments` of ``[x, 1-of-K code of the class]`` with the class weights ``counts``."""

    counts: np.ndarray
    moments: Moments

    def merge(self, other: "ClassMoments") -> "ClassMoments":
        return ClassMoments(self.counts + other.counts, self.moments.merge(other.moments))

    def spread(self, index: np.ndarray, n_classes: int) -> "ClassMoments":
        """These moments as those of ``n_classes`` classes, class ``k`` at ``index[k]``: an
        absent class's 1-of-K target is zero on every row, its mean, its row and column of
        the factor zero (the factor of ``[x, t]`` with zero columns inserted)."""
        m, d = self.moments, self.moments.n_features
        at = np.concatenate([np.arange(d), d + np.asarray(index)])
        size = d + n_classes
        factor = spread_classes(spread_classes(m.factor, at, size), at, size, axis=1)
        return ClassMoments(spread_classes(self.counts, index, n_classes),
                            Moments(m.weight, spread_classes(m.offset, at, size), factor, d,
                                    spread_classes(m.origin, at, size)))


def class_moments(X: Matrix, codes: np.ndarray, sample_weight: np.ndarray | None,
                  n_classes: int) -> ClassMoments:
    """:class:`ClassMoments` of ``X`` (dense or sparse) and integer class ``codes``, one pass.

    The regression of the 1-of-K targets on ``X`` (least-squares classification).
    """
    counts = np.bincount(codes, weights=sample_weight, minlength=n_classes).astype(np.float64)
    return ClassMoments(counts, moments(X, codes, sample_weight, n_classes=n_classes))


def _block_reader(X: Matrix, n_classes: int | None
                  ) -> Callable[[Any, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``(X_b, T_b) -> dense (X_b, T_b)``: sparse blocks densified, class codes 1-of-K coded."""
    sparse = sp.issparse(X)
    eye = None if n_classes is None else np.eye(int(n_classes))

    def read(Xb: Any, Tb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return (Xb.toarray() if sparse else Xb), (Tb if eye is None else eye[Tb])
    return read


def _moments(X: Matrix, T: np.ndarray, sample_weight: np.ndarray | None, rows: int | None,
             workers: int | None, n_classes: int | None) -> Moments:
    read = _block_reader(X, n_classes)
    n, d = X.shape
    k = T.shape[1] if n_classes is None else int(n_classes)
    size = d + k
    rows = int(rows) if rows else _default_rows(np.empty((1, size)))
    Xh, Th = read(X[:min(n, rows)], T[:min(n, rows)])
    origin = np.concatenate([np.mean(Xh, axis=0, dtype=np.float64),
                             np.mean(Th, axis=0, dtype=np.float64)])
    # (Raw products read the blocks in place: BLAS takes a row block of an F-ordered
    # array, a DataFrame's values, as it takes a C one.)
    may_raw = (sample_weight is None and not sp.issparse(X) and X.dtype == np.float64
               and (X.flags.c_contiguous or X.flags.f_contiguous))

    def accumulate(lo: int, hi: int) -> Moments:
        acc = Running(origin, d)
        m0 = min(rows, hi - lo)
        run = RawRun(d, k, m0) if may_raw else None
        if run is not None:  # try in place first: a wrong guess costs one block
            run.start(origin[d:])
        buffer = None  # [X_b - m, T_b - m, 1] (times sqrt(w)), made when first needed
        ones = np.ones(m0)
        shift = np.zeros(size)
        copy = None  # a misaligned X's block, copied (see aligned_rows), made when first needed
        for start, stop, Xb, Tb in iter_blocks(X, T, rows=rows, start=lo, stop=hi):
            m = stop - start
            Xb, Tb = read(Xb, Tb)
            if not Xb.flags.aligned:
                copy = np.empty(m0 * d) if copy is None else copy
                Xb = aligned_rows(Xb, copy)
            if run is not None and run.active and run.add(Xb, Tb, acc):
                continue
            if run is not None:
                run.flush(acc)
            if buffer is None:
                buffer = np.empty((m0, size + 1))
                buffer[:, size] = 1.0
            weight = _centred_block(Xb, Tb, None if sample_weight is None else
                                    sample_weight[start:stop], buffer[:m], ones[:m], shift)
            if not weight > 0:  # rows of zero weight add nothing
                continue
            Q = buffer[:m].T @ buffer[:m]  # syrk: scatter, residual sums, weight
            sq = acc.add(weight, shift, Q[:size, :size], Q[:size, size])
            mean = shift[:d] + Q[:d, size] / weight
            if run is not None and np.all(weight * mean * mean <= (RAW_RATIO - 1.0) * sq[:d]):
                run.start(shift[d:] + Q[d:size, size] / weight)  # predicted: raw blocks next
        if run is not None:
            run.flush(acc)
        R = gram_factor(acc.scatter, d, acc.weight, acc.origin + acc.offset)
        if R is None:  # the Gram would lose digits: factor these rows by Householder QR
            return _householder(X, T, sample_weight, lo, hi, rows, origin, d, read)
        return Moments(float(acc.weight), acc.offset, R, d, acc.origin)

    def accumulate_quietly(lo: int, hi: int) -> Moments:
        with np.errstate(all="ignore"):
            return accumulate(lo, hi)

    return reduce_row_ranges(accumulate_quietly, n, rows, workers)


def _householder(X: Matrix, T: np.ndarray, sample_weight: np.ndarray | None, lo: int, hi: int,
                 rows: int, origin: np.ndarray, d: int,
                 read: Callable[[Any, np.ndarray], tuple[np.ndarray, np.ndarray]]) -> Moments:
    """:class:`Moments` of rows ``lo:hi`` by blocked Householder QR of the centred rows."""
    acc = QRRunning(origin, d)
    m0 = min(rows, hi - lo)
    buffer = np.empty((m0 + 1, origin.size), order="F")  # a spare row for the merge
    for start, stop, Xb, Tb in iter_blocks(X, T, rows=rows, start=lo, stop=hi):
        m = stop - start
        Xb, Tb = read(Xb, Tb)
        weight, shift, u = centre_rows(Xb, Tb, None if sample_weight is None else
                                       sample_weight[start:stop], buffer[:m])
        if weight > 0 and shift is not None and u is not None:  # (None only at weight 0)
            acc.add(weight, shift, u, buffer[:m + 1])
    return Moments(acc.weight, acc.offset, acc.R, d, acc.origin)


def _centred_block(Xb: np.ndarray, Tb: np.ndarray, wb: np.ndarray | None, B: np.ndarray,
                   ones: np.ndarray, shift: np.ndarray) -> float:
    """Write ``[Z_b - shift, 1]`` (rows times ``sqrt(w)``) into ``B``, ``shift`` the
    block's rounded weighted mean; returns the block's weight."""
    m, d = Xb.shape
    size = B.shape[1] - 1
    if wb is None and Xb.dtype == np.float64:  # mean read from X_b, centred from cache
        np.dot(ones, Xb, out=shift[:d])
        shift[d:] = ones @ Tb
        shift /= m
        np.subtract(Xb, shift[:d], out=B[:, :d])
        np.subtract(Tb, shift[d:], out=B[:, d:size])
        return float(m)
    B[:, :d] = Xb
    B[:, d:size] = Tb
    total = float(m) if wb is None else float(wb.sum())
    if not total > 0:
        return 0.0
    np.dot(ones if wb is None else wb, B[:, :size], out=shift)
    shift /= total
    B[:, :size] -= shift
    if wb is not None:
        np.sqrt(wb, out=B[:, size])
        B[:, :size] *= B[:, size:]
    return total
