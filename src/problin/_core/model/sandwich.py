r"""The sandwich (heteroskedasticity- and cluster-robust) covariance, shared by all models.

For an M-estimator ``theta`` solving ``sum_i s_i(theta) = 0`` with score rows
``s_i`` (q-vectors) and bread ``B = H^-1`` (the inverse Hessian of the
objective, e.g. ``(X^T W X)^-1`` for least squares, the inverse Fisher
information for a GLM), the robust covariance is

.. math::

    V = c \, B \, M \, B, \qquad
    M = \sum_i s_i s_i^T \;\; \text{(HC)}, \qquad
    M = \sum_g \Big(\sum_{i \in g} s_i\Big)\Big(\sum_{i \in g} s_i\Big)^T \;\; \text{(cluster)},

(White 1980; MacKinnon & White 1985; Cameron & Miller 2015) with ``c`` the
small-sample factor. The score rows are never held for all rows at once:
they come from a callback ``score_rows(lo, hi) -> (hi - lo, q) array`` over
row blocks, so the meat costs one pass and block-sized memory; the cluster
meat keeps one ``G x q`` array of per-cluster score sums (never an
``n x G`` indicator matrix).

API (numpy only, no estimator knowledge):

``group_codes(groups, n_rows) -> (codes, n_groups)``
    Integer codes ``0..G-1`` of any 1-D labels (a clear ``ValueError`` when the
    length is not ``n_rows`` or the labels hold NaN).
``meat(score_rows, n_rows, groups=None, n_groups=None, rows=None) -> (q, q)``
    ``sum_b S_b^T S_b`` over row blocks ``b``, or with ``groups`` (codes from
    :func:`group_codes`) the cluster sums above.
``leverage_scale(cov_type, leverage) -> (m,)``
    The per-row factor by which HC2 (``1/sqrt(1-h_i)``) and HC3
    (``1/(1-h_i)``) rescale the score rows (1 otherwise); multiply a block's
    score rows by it inside the callback.
``small_sample_factor(cov_type, n, k, n_groups=None) -> float``
    ``c`` above, the defaults of statsmodels' ``fit(cov_type=...)``:

    ========== =====================================================
    HC0        1
    HC1        ``n / (n - k)``
    HC2, HC3   1 (their correction is the leverage scaling)
    cluster    ``G / (G - 1) * (n - 1) / (n - k)`` (``use_correction=True``)
    ========== =====================================================

    ``n`` the number of observations, ``k`` the number of estimated
    parameters (the rank), ``G`` the number of clusters. statsmodels further
    bases t tests of cluster covariances on ``G - 1`` degrees of freedom
    (``df_correction=True``); see :func:`inference_df`.
``inference_df(cov_type, df_resid, n_groups=None) -> float``
    The degrees of freedom of t tests: ``G - 1`` for ``"cluster"``, else ``df_resid``.
``sandwich(bread, meat, factor=1.0) -> (p, p)``
    ``factor * B M B^T``, symmetrised. ``B`` is the bread ``H^-1``, or any ``A``
    (p x q) with ``A A^T = H^-1`` when the score rows were given whitened,
    ``A^T s_i`` (then ``A M_w A^T = H^-1 M H^-1``): least squares passes
    ``A = R^-1`` of its triangular factor, which never forms ``H^-1``.

Example (least squares, HC1, rows in memory)::

    H_inv = np.linalg.solve(X.T @ X, np.eye(p))          # (illustration only)
    e = y - X @ beta
    M = meat(lambda lo, hi: X[lo:hi] * e[lo:hi, None], n)
    V = sandwich(H_inv, M, small_sample_factor("HC1", n, p))

References
----------
White, H. (1980). A heteroskedasticity-consistent covariance matrix estimator and a
direct test for heteroskedasticity. *Econometrica* 48(4), 817-838.
MacKinnon, J. G. & White, H. (1985). Some heteroskedasticity-consistent covariance
matrix estimators with improved finite sample properties. *J. Econometrics* 29, 305-325.
Cameron, A. C. & Miller, D. L. (2015). A practitioner's guide to cluster-robust
inference. *J. Human Resources* 50(2), 317-372.
Greene, W. H. (2012). *Econometric Analysis*, 7th ed., §9.4 and §11.3.
"""
from collections.abc import Callable

import numpy as np

__all__ = ["COV_TYPES", "group_codes", "meat", "leverage_scale", "small_sample_factor",
           "inference_df", "sandwich"]

#: The covariance types of the likelihood models' ``cov_type`` parameter.
COV_TYPES = ("nonrobust", "HC0", "HC1", "HC2", "HC3", "cluster")

_BLOCK_ROWS = 8192


def group_codes(groups: object, n_rows: int) -> tuple[np.ndarray, int]:
    """Integer codes ``0..G-1`` (in sorted order of the labels) and ``G`` for cluster labels.

    Parameters
    ----------
    groups : array-like of shape (n_rows,)
        One cluster label per row (numbers or strings).
    n_rows : int
        The number of rows the labels must match.

    Returns
    -------
    codes : ndarray of shape (n_rows,), int
    n_groups : int
    """
    labels = np.asarray(groups)
    if labels.ndim != 1 or labels.shape[0] != n_rows:
        raise ValueError(f"groups must be a 1-D array with one label per row: got shape "
                         f"{labels.shape} for {n_rows} rows")
    if labels.dtype.kind == "f" and not np.all(np.isfinite(labels)):
        raise ValueError("groups contains NaN or infinity; give every row a cluster label")
    if labels.dtype.kind == "O" and any(v is None for v in labels):
        raise ValueError("groups contains None; give every row a cluster label")
    uniques, codes = np.unique(labels, return_inverse=True)
    if uniques.size < 2:
        raise ValueError("cov_type='cluster' needs at least two clusters (the spread of the "
                         f"cluster sums): groups holds {uniques.size}")
    return codes.astype(np.intp).reshape(-1), int(uniques.size)


def weighted_groups(codes: np.ndarray, n_groups: int,
                    sample_weight: np.ndarray | None) -> int:
    """The number of clusters that hold weight: a cluster whose rows all have weight 0
    adds nothing to the meat and is no cluster for the small-sample factor (the fit
    with those rows dropped has the same covariance)."""
    if sample_weight is None:
        return n_groups
    return int(np.unique(codes[sample_weight > 0]).size)


def meat(score_rows: Callable[[int, int], np.ndarray], n_rows: int,
         groups: np.ndarray | None = None, n_groups: int | None = None,
         rows: int | None = None) -> np.ndarray:
    """The meat ``M`` of the sandwich, from score rows supplied block by block.

    Parameters
    ----------
    score_rows : callable ``(lo, hi) -> ndarray of shape (hi - lo, q)``
        The score rows ``s_i`` of rows ``lo:hi`` (already scaled by any leverage
        factor, see :func:`leverage_scale`).
    n_rows : int
        The number of rows.
    groups : ndarray of shape (n_rows,), int, optional
        Cluster codes ``0..G-1`` (:func:`group_codes`): then
        ``M = sum_g S_g^T S_g`` with ``S_g`` the summed scores of cluster ``g``.
    n_groups : int, optional
        ``G`` (default ``groups.max() + 1``).
    rows : int, optional
        Rows per block (default 8192).

    Returns
    -------
    ndarray of shape (q, q)
    """
    step = int(rows) if rows else _BLOCK_ROWS
    total: np.ndarray | None = None
    for lo in range(0, n_rows, step):
        hi = min(n_rows, lo + step)
        S = np.asarray(score_rows(lo, hi), dtype=np.float64)
        if S.ndim != 2 or S.shape[0] != hi - lo:
            raise ValueError(f"score_rows({lo}, {hi}) must return {hi - lo} rows, "
                             f"got shape {S.shape}")
        if groups is None:
            part = S.T @ S
        else:
            if total is None:
                G = int(n_groups) if n_groups is not None else int(np.max(groups)) + 1
                total = np.zeros((G, S.shape[1]))
            np.add.at(total, groups[lo:hi], S)  # per-cluster score sums, G x q
            continue
        total = part if total is None else total + part
    if total is None:
        return np.zeros((0, 0))
    return total.T @ total if groups is not None else total


def leverage_scale(cov_type: str, leverage: np.ndarray) -> np.ndarray:
    """Per-row factor of the score rows: ``1/sqrt(1-h)`` (HC2), ``1/(1-h)`` (HC3), else 1.

    Rows of leverage 1 (a parameter fitted by one row alone) get an infinite
    factor only where their score is not zero; callers multiply ``0 * inf``
    safely by passing scores already zero there (least squares residuals are).
    """
    h = np.asarray(leverage, dtype=np.float64)
    one_minus = np.maximum(1.0 - h, np.finfo(np.float64).tiny)
    if cov_type == "HC2":
        return 1.0 / np.sqrt(one_minus)
    if cov_type == "HC3":
        return 1.0 / one_minus
    return np.ones_like(h)


def small_sample_factor(cov_type: str, n: float, k: int, n_groups: int | None = None) -> float:
    """The factor ``c`` of ``c B M B``: statsmodels' defaults (see the module docstring).

    Parameters
    ----------
    cov_type : {"HC0", "HC1", "HC2", "HC3", "cluster"}
    n : float
        The number of observations.
    k : int
        The number of estimated parameters (the rank of the design).
    n_groups : int, optional
        The number of clusters (``"cluster"`` only).
    """
    if cov_type in ("HC0", "HC2", "HC3"):
        return 1.0
    if n <= k:  # (n - k) degrees of freedom: none left
        raise ValueError(f"cov_type={cov_type!r} needs more observations than estimated "
                         f"parameters (its factor divides by n - k): n = {n:g}, k = {k}")
    if cov_type == "HC1":
        return float(n) / float(n - k)
    if cov_type == "cluster":
        if n_groups is None or n_groups < 2:
            raise ValueError("the cluster covariance needs at least two clusters")
        return n_groups / (n_groups - 1.0) * (float(n) - 1.0) / (float(n) - k)
    raise ValueError(f"cov_type must be one of {COV_TYPES[1:]}, got {cov_type!r}")


def inference_df(cov_type: str, df_resid: float, n_groups: int | None = None) -> float:
    """Degrees of freedom of t tests: ``G - 1`` for a cluster covariance (statsmodels'
    ``df_correction=True``), ``df_resid`` otherwise."""
    if cov_type == "cluster" and n_groups is not None:
        return float(n_groups - 1)
    return float(df_resid)


def sandwich(bread: np.ndarray, meat: np.ndarray, factor: float = 1.0) -> np.ndarray:
    """``factor * B M B^T`` (symmetrised): ``B`` the bread (the symmetric inverse Hessian),
    or a factor ``A`` of it (``A A^T = H^-1``) when the meat is of whitened scores ``A^T s_i``."""
    V = bread @ meat @ bread.T
    return factor * 0.5 * (V + V.T)
