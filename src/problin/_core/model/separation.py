"""Detecting (quasi-)complete separation of two classes by linear programming.

Maximum-likelihood estimates of binary GLMs exist iff no hyperplane weakly
separates the classes. Following Konis (2007), solve

    maximise   sum_i s_i x_i^T b
    subject to s_i x_i^T b >= 0  for all i,   -1 <= b_j <= 1,

with ``s_i = +-1`` the class signs and ``x_i`` the design rows ``[1, x]``.
A positive optimum is a separating direction; the rows with
``s_i x_i^T b > 0`` are the ones fitted with probability 0 or 1 in the limit.
This is a diagnostic, run only when a fit looks divergent: it builds the
signed design (size of X) for the LP solver.

Most fits that look divergent (some rows fitted with probability ~1) are not:
far-out rows of data with strong effects. A converged Newton fit usually
proves it, for the price of one pass, by Stiemke's theorem of the
alternative: either some ``r > 0`` has ``A^T r = 0`` (``A`` the signed
design), or a direction separates (``A b >= 0``, ``A b != 0``), never both.
The fit's own residuals nearly give such an ``r`` (see
:func:`newton_certifies_overlap`).
"""
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

__all__ = ["separated_rows", "certified_separation", "newton_certifies_overlap",
           "LP_MAX_SIZE"]

# The LP is exact but costs far more than a fit on large data; beyond this
# many design entries only the cheap certificates below are tried.
LP_MAX_SIZE = 5_000_000


def certified_separation(margins: np.ndarray, y: np.ndarray,
                         sample_weight: np.ndarray | None = None,
                         rtol: float = 1e-6) -> np.ndarray | None:
    """Rows separated by a given direction, if it is a separating one (else None).

    ``margins = [1, X] b`` for a candidate ``b`` (the fitted parameters, or
    the last Newton step of a diverging fit). ``b`` separates when every
    signed margin ``s_i margin_i`` is >= 0 (up to ``rtol`` of the largest)
    and some are > 0: a certificate of (quasi-)separation needing no LP.
    """
    s = 2.0 * np.asarray(y, dtype=np.float64) - 1.0
    keep = np.ones(s.size, dtype=bool) if sample_weight is None else sample_weight > 0
    signed = (s * np.asarray(margins, dtype=np.float64))[keep]
    scale = float(np.max(np.abs(signed), initial=0.0))
    if scale == 0.0 or np.any(signed < -rtol * scale):
        return None
    mask = np.zeros(s.size, dtype=bool)
    mask[np.flatnonzero(keep)[signed > rtol * scale]] = True
    return mask if mask.any() else None


def newton_certifies_overlap(g: np.ndarray, h: np.ndarray, step_eta: np.ndarray,
                             used: np.ndarray | None = None) -> bool:
    """Whether a binary GLM's fit proves that no hyperplane separates the classes.

    ``g``, ``h``: each row's loss gradient and (observed) curvature in ``eta``
    at the fit; ``step_eta = [1, X] z`` for the Newton step ``z = -H^-1 G``
    from there (``G = sum g_i x~_i``, ``H = sum h_i x~_i x~_i^T``). With class
    signs ``s_i`` the residuals ``r_i = -s_i g_i = |g_i|`` satisfy
    ``A^T r = -G``; the correction ``delta_i = -h_i s_i step_eta_i`` has
    ``A^T delta = -H z = G``, so ``y = r + delta`` solves ``A^T y = 0``
    exactly, and ``y_i > 0`` reads ``g_i (g_i + h_i step_eta_i) > 0``: each
    row's gradient keeps its sign along the linearised step. Then no
    direction separates (Stiemke). Required with a margin of half, so that
    the rounding in ``G`` (at the level of the step itself near the optimum)
    cannot flip a row; under separation Newton moves the separated rows by
    ``h_i step_eta_i ~ -g_i`` (it diverges at a steady pace), so they fail
    it. Rows with ``g_i = 0`` (a probability rounded to exactly 0 or 1)
    cannot be certified: False, and the LP decides.
    """
    g, prod = np.asarray(g, dtype=np.float64), np.asarray(h * step_eta, dtype=np.float64)
    if used is not None:
        g, prod = g[used], prod[used]
    return bool(np.all(g * (g + prod) >= 0.5 * g * g) and np.all(g != 0.0))


def _max_margin(A: np.ndarray, rows: np.ndarray) -> np.ndarray | None:
    """Direction ``b`` in the cone ``A b >= 0`` maximising the margins of ``rows``."""
    c = -np.asarray(A[rows].sum(axis=0)).ravel()
    res = linprog(c, A_ub=-A, b_ub=np.zeros(A.shape[0]),
                  bounds=[(-1.0, 1.0)] * A.shape[1], method="highs")
    if res.status != 0 or -res.fun <= 1e-9 * max(1.0, float(np.abs(c).max(initial=0.0))):
        return None
    return res.x


def moved_rows(A: Any, direction: Callable[[np.ndarray], np.ndarray | None],
               max_rounds: int) -> np.ndarray:
    """The rows of ``A`` that some direction moves strictly (``A b > 0``), grown round by
    round: ``direction(rest)`` solves the linear program for a ``b`` with ``A b >= 0``
    that moves the rows ``rest`` not found yet (None: none does), until no round adds
    a row (Konis 2007: the quasi-separated rows are those every such LP can reach)."""
    found = np.zeros(A.shape[0], dtype=bool)
    for _ in range(max_rounds):
        rest = np.flatnonzero(~found)
        b = direction(rest) if rest.size else None
        if b is None:
            break
        margins = np.asarray(A @ b).ravel()
        new = margins > 1e-7 * max(float(np.max(np.abs(margins))), 1e-300)
        if not np.any(new & ~found):
            break
        found |= new
    return found


def separated_rows(design: Any, y: np.ndarray, sample_weight: np.ndarray | None = None,
                   max_rounds: int = 20) -> np.ndarray:
    """Boolean mask of the rows a separating hyperplane isolates (all False if none).

    One LP finds a separating direction; since an LP optimum is a vertex of
    the cone it may leave some separable rows on its hyperplane, so the LP is
    repeated on the rows still at zero margin until no more can be separated.
    """
    keep = np.ones(design.n_samples, dtype=bool) if sample_weight is None else sample_weight > 0
    s = (2.0 * np.asarray(y, dtype=np.float64) - 1.0)[keep]
    if sp.issparse(design.X):
        X = design.X[keep]
        if design.intercept:
            X = sp.hstack([np.ones((X.shape[0], 1)), X], format="csr")
    else:  # the design's own (standardised) rows: the LP's tolerances are unit-free
        X = design.dense_rows(np.flatnonzero(keep))
    A = sp.csr_matrix(sp.diags(s) @ X) if sp.issparse(X) else X * s[:, None]
    found = moved_rows(A, lambda rest: _max_margin(A, rest), max_rounds)
    mask = np.zeros(design.n_samples, dtype=bool)
    mask[np.flatnonzero(keep)[found]] = True
    return mask
