"""(Quasi-)complete separation of ordered categories, certified by linear programming.

The cumulative-link likelihood ``prod_i F(theta_{t_i} - x_i^T beta) - F(theta_{t_i - 1} -
x_i^T beta)`` has no maximum (the estimates run off to infinity) iff some direction
``(d_beta, d_theta) != 0`` moves no row's two bounds against it and keeps the cut-points
ordered (the ordinal form of Albert & Anderson 1984; Konis 2007 for the binary LP):

    d_theta_t - x_i^T d_beta >= 0       (rows of class t < K - 1: the upper bound rises)
    x_i^T d_beta - d_theta_{t-1} >= 0   (rows of class t > 0: the lower bound falls)
    d_theta_{k+1} - d_theta_k >= 0      (the cut-points stay increasing)

with some row's inequality strict: along it those rows' probabilities go to 1 while no
other row's falls. These are the rows ``A b >= 0`` of one matrix ``A`` (a row of the
data appears once per bound it has), so the binary check's LP and its rounds
(:func:`.separation.moved_rows`) find the rows such directions move, maximising their
margins in the box ``|b_j| <= 1``. Columns are centred and scaled first (a shift of a
column is a common shift of the cut-points), so the LP's tolerances are unit-free. With
every class observed a direction that moves the cut-points alone does not exist, so a
separation always involves the slopes.
"""
import numpy as np

from ..types import FloatArray
from .separation import _max_margin, moved_rows

__all__ = ["ordinal_separation"]


def ordinal_separation(X: FloatArray, t: np.ndarray, n_classes: int,
                       sample_weight: FloatArray | None = None, max_rounds: int = 20
                       ) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, cuts)``: the rows of the dense ``X`` (no column of ones) that separating
    directions fit with probability 1 in the limit (each of their bounds moved; bool, n)
    and the cut-points at which some row's bound moves (bool, K - 1); all False if none."""
    dense = np.asarray(X, dtype=np.float64)
    keep = np.ones(dense.shape[0], dtype=bool) if sample_weight is None else sample_weight > 0
    Z, codes = dense[keep], np.asarray(t, dtype=np.intp)[keep]
    scale = Z.std(axis=0)
    Z = (Z - Z.mean(axis=0)) / np.where(scale > 0, scale, 1.0)
    M = n_classes - 1
    upper, lower = np.flatnonzero(codes < M), np.flatnonzero(codes > 0)
    E = np.eye(M)
    A = np.vstack((
        np.hstack((E[codes[upper]], -Z[upper])),  # d_theta_t - x^T d_beta
        np.hstack((-E[codes[lower] - 1], Z[lower])),  # x^T d_beta - d_theta_{t-1}
        np.hstack((E[1:] - E[:-1], np.zeros((M - 1, Z.shape[1]))))))  # ordered cuts
    n_bounds = upper.size + lower.size
    moved = moved_rows(A, lambda rest: _max_margin(A, rest[rest < n_bounds]), max_rounds)
    up, low = moved[:upper.size], moved[upper.size:n_bounds]
    # a row goes to probability 1 where each of its bounds moves away (a middle class's
    # row with one bound moved and one tied only gains)
    certain = np.ones(codes.size, dtype=bool)
    certain[upper[~up]] = False
    certain[lower[~low]] = False
    rows = np.zeros(dense.shape[0], dtype=bool)
    rows[np.flatnonzero(keep)[certain]] = True
    cuts = np.zeros(M, dtype=bool)
    cuts[codes[upper[up]]] = True
    cuts[codes[lower[low]] - 1] = True
    return rows, cuts
