"""The equilibrated, centred coordinates in which the GLM engine works.

A fit's answer must not depend on the units or the offsets of the columns:
a column in dollars next to a proportion, or a year next to a rate. In raw
units the Hessian of such data mixes scales of 1e-12 and 1e12 (a pivot
threshold then drops the small direction) and a column at 1e6 +- 1 is
nearly collinear with the intercept (a rank test then flags it). So the
engine solves in the coordinates of the standardised columns

    z_j = (x_j - c_j) / s_j,     eta = b_z + z^T w_z,

and maps the answer back exactly: ``w = w_z / s``, ``b = b_z - c^T w``,
``Cov(theta) = T Cov(theta_z) T^T``. ``c`` and ``s`` are the mean and
standard deviation of a fixed, evenly spaced sample of rows: statistics that
transform with the data (scaling a column by ``a`` scales its ``c`` and ``s``
by ``a``), which is all the equivariance needs; they need not be exact. They
are weighted by the sample weights, so that on data of up to ``SAMPLE_ROWS``
rows (where the sample is every row) weight 2 and a repeated row, or weight
0 and a removed row, give the same basis, and so the same rounding.

The centre is used only where the design has an intercept to absorb it and
some column sits far from zero relative to its spread (dense data only:
subtracting it from sparse columns would fill them in). Then each row block
is standardised as it is read (a copy of the block, in cache); otherwise the
blocks are read as they are and only the parameters are rescaled, which is
exact and free.
"""
from typing import cast

import numpy as np
import scipy.sparse as sp

from ..types import Matrix
from ..validation import MIN_MAGNITUDE

__all__ = ["ColumnBasis", "SAMPLE_ROWS", "moments_from_sums"]

# Rows of the evenly spaced sample: enough for a spread accurate to a few
# per cent (what conditioning needs), few enough to cost nothing.
SAMPLE_ROWS = 4096
# A column whose mean exceeds this many standard deviations loses about
# log10(ratio) digits to cancellation in raw units: centre the blocks then.
_CENTRE_RATIO = 8.0
# Columns whose scale is outside this range could overflow or underflow in
# the float32 Gram products used for Newton directions (without centring,
# blocks are read in raw units): such designs use double precision only.
_SINGLE_SAFE = (1e-15, 1e15)
# A constant column's computed spread is below this x n eps |mean| (n sampled rows).
_CONSTANT_SPREAD = 4 * np.finfo(np.float64).eps


def _fallback_scales(std: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """Scales where some spread is zero, tiny or not finite: a constant column gets its
    own magnitude (or 1 when it is zero), a non-finite one 1; a column too small for
    float64 is an error."""
    scale = np.where(std > 0, std, np.where(mean != 0, np.abs(mean), 1.0))
    scale = np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)
    tiny = np.flatnonzero(scale < MIN_MAGNITUDE)
    if tiny.size:  # the mirror of MAX_MAGNITUDE: 1 / scale^2 would overflow
        many = tiny.size > 1
        raise ValueError(
            f"column{'s' * many} {tiny[:10].tolist()} of X hold{'' if many else 's'} only "
            f"values too small for the model's arithmetic (spread and size below "
            f"{MIN_MAGNITUDE:.0e}, down to {float(scale[tiny].min()):.3g}): the "
            "coefficients' variances would overflow float64. Rescale "
            f"{'those columns' if many else 'that column'} (e.g. change the units).")
    return scale


def sample_rows(n_samples: int, size: int = SAMPLE_ROWS) -> np.ndarray:
    """Evenly spaced row indices (all rows when there are few)."""
    if n_samples <= size:
        return np.arange(n_samples)
    # Steps of (n - 1) / (size - 1) >= 1: the truncated points increase strictly.
    return np.linspace(0, n_samples - 1, size).astype(np.intp)


def _dense_moments(Xs: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted column means and spreads of a dense sample (``w`` sums to 1); a
    constant column has its value as mean and spread 0."""
    Xs = np.asarray(Xs, dtype=np.float64)
    mean = w @ Xs
    deviation = Xs - mean
    np.square(deviation, out=deviation)
    std = np.sqrt(w @ deviation)
    # Constant: every row equals the first. Only a column whose spread is its mean's
    # rounding error (the deviations are then that error, exactly: at most
    # ~n eps |mean|) can be; the exact test (a sum of |x - x_0|) runs on those
    # alone, rarely any.
    maybe = ~(std > (_CONSTANT_SPREAD * Xs.shape[0]) * np.abs(mean))
    if not maybe.any():
        return mean, std
    columns = np.flatnonzero(maybe)
    constant = np.zeros(Xs.shape[1], dtype=bool)
    constant[columns] = np.ones(Xs.shape[0]) @ np.abs(Xs[:, columns] - Xs[0, columns]) == 0.0
    return _constant_moments(constant, Xs[0], mean, std)


def _sparse_moments(Xs: Matrix, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_dense_moments` of a sparse sample (it stays sparse)."""
    Xs = sp.csr_matrix(Xs, dtype=np.float64)
    mean = np.asarray(Xs.T @ w).ravel()
    second = np.asarray(Xs.multiply(Xs).T @ w).ravel()
    std = np.sqrt(np.maximum(second - mean ** 2, 0.0))  # only a scale
    value = Xs.max(axis=0).toarray().ravel()
    constant = Xs.min(axis=0).toarray().ravel() == value
    return _constant_moments(constant, value, mean, std)


def _constant_moments(constant: np.ndarray, value: np.ndarray, mean: np.ndarray,
                      std: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The constant columns' moments: their value, spread 0. A constant column is found
    by its values, not by its spread: the weighted mean of equal values rounds (sum of
    w = 1/60 is not 1), which left a spread of ~1e-16, a scale of 1e-16, and the column
    as rounding noise blown up to unit spread (the fit then followed the noise, or its
    prior vanished)."""
    if not constant.any():
        return mean, std
    return np.where(constant, value, mean), np.where(constant, 0.0, std)


class ColumnBasis:
    """The map between raw parameters ``[b, w]`` and standardised ones ``[b_z, w_z]``.

    Parameters
    ----------
    scale : ndarray of shape (d,)
        Positive column scales ``s``.
    center : ndarray of shape (d,) or None
        Column centres ``c`` (None: the blocks are not centred).
    intercept : bool
        Whether the parameters start with an intercept.
    """

    def __init__(self, scale: np.ndarray, center: np.ndarray | None = None,
                 intercept: bool = True) -> None:
        self.scale = np.asarray(scale, dtype=np.float64)
        self.center = None if center is None else np.asarray(center, dtype=np.float64)
        self.intercept = bool(intercept)
        lo, hi = _SINGLE_SAFE
        self.single_safe = self.center is not None or not self.scale.size or bool(
            lo <= self.scale.min() and self.scale.max() <= hi)  # (False for a NaN)
        self._multipliers: np.ndarray | None = None

    @classmethod
    def from_sample(cls, Xs: Matrix, intercept: bool = True, weights: np.ndarray | None = None,
                    centre: bool | str = "auto") -> "ColumnBasis":
        """The basis of a design from a sample of its rows (dense or sparse).

        ``centre``: "auto" centres only where some column sits far from zero;
        "always" centres every dense design with an intercept (models whose
        intercept prior is placed at the centre of the data).

        Scales are the sample's standard deviations; a column constant in the
        sample gets its own magnitude (or 1 when it is zero there), so that a
        truly constant column becomes exactly zero after centring.
        """
        if weights is not None and np.any(weights > 0):
            keep = np.flatnonzero(weights > 0)
            Xs, w = Xs[keep], np.asarray(weights, dtype=np.float64)[keep]
            w = w / w.sum()
        elif Xs.shape[0]:
            w = np.empty(Xs.shape[0])
            w.fill(1.0 / Xs.shape[0])  # (= ones / their sum, exactly)
        if Xs.shape[0] == 0:
            return cls(np.ones(Xs.shape[1]), None, intercept)
        with np.errstate(over="ignore", invalid="ignore"):  # huge values: scale 1
            mean, std = (_sparse_moments if sp.issparse(Xs) else _dense_moments)(Xs, w)
        if std.size and std.min() > MIN_MAGNITUDE and std.max() < np.inf:
            # Every spread usable, none NaN: then every mean is finite too (an
            # infinite or NaN mean makes its column's spread infinite or NaN).
            scale = std
        else:
            scale = _fallback_scales(std, mean)
            mean = np.where(np.isfinite(mean), mean, 0.0)
        center = None
        if intercept and not sp.issparse(Xs) and (
                centre == "always" or (np.abs(mean) > _CENTRE_RATIO * scale).any()):
            center = mean
        return cls(scale, center, intercept)

    @classmethod
    def of(cls, X: Matrix, intercept: bool = True, sample_weight: np.ndarray | None = None,
           centre: bool | str = "auto") -> "ColumnBasis":
        """The basis of an in-memory ``X`` (numpy, sparse): from :func:`sample_rows`.
        Sparse data are never centred (it would densify them)."""
        if X.shape[0] <= SAMPLE_ROWS:  # every row: no copy
            return cls.from_sample(X, intercept, sample_weight, centre)
        rows = sample_rows(X.shape[0])
        basis = cls.from_sample(X[rows], intercept,
                                None if sample_weight is None else sample_weight[rows], centre)
        if centre == "always" and basis.center is not None:
            w = np.ones(X.shape[0]) if sample_weight is None else sample_weight
            basis.centre_at(w @ np.asarray(X, dtype=np.float64), float(w.sum()))
        return basis

    def centre_at(self, weighted_sums: np.ndarray, total_weight: float) -> None:
        """Centre at the data's exact weighted column means (``sums / total``) instead of the
        sample's, where finite. For ``centre="always"``, whose centre places a prior (the
        intercept's, at the centre of the data): it must not depend on which rows were
        sampled, and so on the rows' order (the sample is evenly spaced by position)."""
        assert self.center is not None
        with np.errstate(over="ignore", invalid="ignore"):
            mean = weighted_sums / total_weight
        self.center = np.where(np.isfinite(mean), mean, self.center)

    # ------------------------------------------------------------------ blocks
    def standardise(self, Xb: np.ndarray) -> np.ndarray:
        """``(X_b - c) / s`` as a new float64 array (centred bases, dense blocks)."""
        out = np.subtract(Xb, cast(np.ndarray, self.center), dtype=np.float64)  # centred
        out *= 1.0 / self.scale
        return out

    def multipliers(self) -> np.ndarray:
        """``m`` with ``theta_kernel = m * theta_z`` for uncentred designs:
        ``[1, 1/s]`` (or ``1/s`` without an intercept). Formed once: not to be
        modified."""
        if self._multipliers is None:
            inv = 1.0 / self.scale
            self._multipliers = np.concatenate(([1.0], inv)) if self.intercept else inv
        return self._multipliers

    # -------------------------------------------------------------- parameters
    def _blocks(self, theta: np.ndarray) -> tuple[np.ndarray, tuple[int, ...]]:
        p = self.scale.size + int(self.intercept)
        theta = np.asarray(theta, dtype=np.float64)
        return theta.reshape(-1, p), theta.shape

    def to_raw(self, theta_z: np.ndarray) -> np.ndarray:
        """``T theta_z`` per class block: ``w = w_z / s``, ``b = b_z - c^T w``."""
        Z, shape = self._blocks(theta_z)
        out = Z * self.multipliers()
        if self.center is not None:
            out[:, 0] -= out[:, 1:] @ self.center
        return out.reshape(shape)

    def _apply(self, A: np.ndarray) -> np.ndarray:
        """``T A`` for ``T`` block diagonal over the class blocks of ``A``'s rows:
        each block ``T_1 a = m * a``, plus ``-(c / s)^T a_slopes`` on the intercept
        row where centred. O(p^2) per block pair, no dense T (a Kronecker T costs
        two (Bp)^3 products: 0.3 ms of a small softmax fit's covariance)."""
        p = self.scale.size + int(self.intercept)
        blocks = A.reshape(-1, p, A.shape[-1] if A.ndim > 1 else 1)
        out = blocks * self.multipliers()[:, None]
        if self.center is not None:
            out[:, 0] -= np.einsum("k,bkn->bn", self.center, out[:, 1:])
        return out.reshape(A.shape)

    def covariance_to_raw(self, cov_z: np.ndarray, n_blocks: int = 1,
                          flat: np.ndarray | None = None) -> np.ndarray:
        """``T Cov_z T^T`` (``T`` as in :meth:`to_raw`, per class block);
        parameters with NaN rows (not identified) are held fixed in the map
        (their NaN rows and columns are restored after).

        ``flat``: a direction ``u`` along which the likelihood and prior are
        flat (the common shift of all softmax intercepts), on which ``Cov_z``
        is reported on the constraint ``u^T theta_z = 0``. The raw convention
        is ``u^T theta = 0`` (``u^T T theta_z = 0``): the covariance is first
        carried along ``u`` onto that hyperplane, ``Q = I - u v^T / (v^T u)``
        with ``v = T^T u`` (a rank-one correction of ``Cov_z``).
        """
        lost = np.isnan(cov_z.diagonal())
        if self.center is None and not lost.any():
            m = self.multipliers()  # T = diag(m) per block
            m = m if n_blocks == 1 else np.tile(m, n_blocks)
            raw = cov_z * np.multiply.outer(m, m)
            return 0.5 * (raw + raw.T)
        C = np.where(np.isnan(cov_z), 0.0, cov_z)
        if flat is not None and self.center is not None:
            u = np.asarray(flat, dtype=np.float64)
            v = self._transpose_apply(u)
            vu = float(v @ u)
            Cv = C @ v
            # Q C Q^T = C - u (C v)^T / vu - (C v) u^T / vu + u u^T (v^T C v) / vu^2
            C = C - np.outer(u, Cv / vu)
            C -= np.outer(Cv / vu, u)
            C += np.outer(u, (float(v @ Cv) / (vu * vu)) * u)
        # T C T^T = T (T C)^T for symmetric C: the block map twice.
        raw = self._apply(np.ascontiguousarray(self._apply(C).T))
        raw = 0.5 * (raw + raw.T)
        raw[lost, :] = np.nan
        raw[:, lost] = np.nan
        return raw

    def _transpose_apply(self, u: np.ndarray) -> np.ndarray:
        """``T^T u``: per block ``m * u``, with ``-(c / s) u_0`` added to the slopes."""
        p = self.scale.size + int(self.intercept)
        blocks = u.reshape(-1, p)
        out = blocks * self.multipliers()
        if self.center is not None:
            out[:, 1:] -= np.outer(blocks[:, 0], self.center / self.scale)
        return out.reshape(u.shape)

    def precision_to_standard(self, P_diag: np.ndarray) -> np.ndarray:
        """A diagonal prior precision on raw slopes, in standardised
        coordinates: ``alpha_j s_j^2``. The intercept's entry is kept: in a
        centred basis it is then a prior on the intercept at the centre."""
        m = self.multipliers()
        p = m.size
        P = np.asarray(P_diag, dtype=np.float64).reshape(-1, p)
        return (P * m ** 2).ravel()


def moments_from_sums(s1: np.ndarray, s2: np.ndarray, n: int, basis: ColumnBasis | None
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation from :meth:`Design.column_sums` over ``n`` rows,
    in the coordinates of a design with ``basis``: an uncentred basis's blocks are
    raw, its parameters scaled by the multipliers ``1 / s``, so are the moments."""
    mean = s1 / n
    # Only a preconditioner: the one-pass variance's rounding is harmless.
    std = np.sqrt(np.maximum(s2 / n - mean**2, 0.0))
    if basis is not None and basis.center is None:
        inv = basis.multipliers()[int(basis.intercept):]
        mean, std = mean * inv, std * inv
    return mean, std

