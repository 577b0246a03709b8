"""Fits whose means run off to the boundary of their range: the count models' separation.

A GLM whose link reaches an end of the mean's range only in the limit (the log link's
``mu -> 0`` as ``eta -> -inf``; a binary link's 0 and 1) has no maximum-likelihood
estimate when some direction ``b`` of the coefficients moves the rows whose ``y`` lies
at that end further towards it and leaves every other row where it is (Haberman 1974
for the Poisson; Albert & Anderson 1984 for the binary case): with signs ``s_i = -1``
(``y`` at the lower end), ``+1`` (at the upper end) and 0 (inside),

    s_i x_i^T b >= 0 where s_i != 0,   x_i^T b = 0 where s_i = 0,   some s_i x_i^T b > 0.

Along ``b`` the loss of the rows at the end falls towards its infimum and no other row's
changes, so the fit runs off to infinity: all-zero counts (the intercept), a column
nonzero only where ``y = 0``, a proportion of 0 or 1 in a group of its own. As for
:func:`~problin._core.model.separation.separated_rows`, a linear program finds such a
direction (the margins maximised in ``-1 <= b_j <= 1``), repeated on the rows left at
zero margin.
"""
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy.optimize import linprog

from .separation import moved_rows

__all__ = ["boundary_rows"]


def _direction(A: Any, E: Any, rows: NDArray[np.intp]) -> NDArray[np.float64] | None:
    """``b`` with ``A b >= 0`` and ``E b = 0`` maximising the margins of ``rows``
    (None: no positive margin)."""
    c = -np.asarray(A[rows].sum(axis=0)).ravel()
    p = A.shape[1]
    eq = {} if E.shape[0] == 0 else {"A_eq": E, "b_eq": np.zeros(E.shape[0])}
    res = linprog(c, A_ub=-A, b_ub=np.zeros(A.shape[0]), bounds=[(-1.0, 1.0)] * p,
                  method="highs", **eq)
    if res.status != 0 or -res.fun <= 1e-9 * max(1.0, float(np.abs(c).max(initial=0.0))):
        return None
    return np.asarray(res.x, dtype=np.float64)


def boundary_rows(X: Any, signs: NDArray[np.int8], max_rounds: int = 20) -> NDArray[np.bool_]:
    """The rows a direction of the coefficients moves towards the end of the mean's range
    where their ``y`` lies, every other row fixed (module docstring); all False if none.

    ``X``: the rows ``[1, x]`` in the coordinates of the fit (dense or sparse);
    ``signs``: -1, +1 at the lower, upper end, 0 inside (rows of zero weight left out
    by the caller)."""
    s = np.asarray(signs, dtype=np.float64)
    at_end = np.flatnonzero(s != 0)
    found = np.zeros(s.size, dtype=bool)
    if at_end.size == 0:
        return found
    inside = np.flatnonzero(s == 0)
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        A = sp.csr_matrix(sp.diags(s[at_end]) @ X[at_end])
        E = X[inside]
    else:
        X = np.asarray(X, dtype=np.float64)
        A, E = X[at_end] * s[at_end, None], X[inside]
    if E.shape[0] >= E.shape[1]:  # the rows inside pin every coefficient (E b = 0 only
        # at b = 0, the usual case): no direction, and no LP (~3 s at 100,000 x 20)
        G = E.T @ E
        G = G.toarray() if sp.issparse(G) else np.asarray(G)
        if np.linalg.matrix_rank(G, hermitian=True) == E.shape[1]:
            return found
    hit = moved_rows(A, lambda rest: _direction(A, E, rest), max_rounds)
    found[at_end[hit]] = True
    return found
