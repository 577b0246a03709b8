"""Heteroskedasticity- and cluster-robust (sandwich) covariances of a GLM classifier.

With the per-row scores ``s_i = g_i x~_i`` (``g_i = d loss_i / d eta_i``,
``x~_i = [1, x_i]``; for softmax one block ``g_ik x~_i`` per free class) and
the bread ``B = H^-1`` (the model-based ``covariance_``: the inverse observed
information, of the penalised objective when ``alpha > 0``),

.. math::

    V = c \\, B \\Big(\\sum_i \\frac{u_i}{w_i} s_i s_i^T\\Big) B \\;\\; (\\mathrm{HC}), \\qquad
    V = c \\, B \\Big(\\sum_g S_g S_g^T\\Big) B, \\; S_g = \\sum_{i \\in g} s_i
    \\;\\; (\\mathrm{cluster})

(White 1980; MacKinnon & White 1985; Cameron & Miller 2015; Greene,
*Econometric Analysis*, 8th ed., §14.8). Sample weights ``w_i`` are frequency
weights (they are in ``s_i``; dividing by ``w_i`` makes a weight-2 row count as
two rows). ``u_i`` is 1 for HC0 and HC1, ``1 / (1 - h_i)`` for HC2 and
``1 / (1 - h_i)^2`` for HC3, with the GLM leverage ``h_i = c_i x~_i^T H^-1 x~_i``
(``c_i`` the row's observed curvature weight: statsmodels ``GLM``'s
``get_influence().hat_matrix_diag`` for the logit). Factors ``c``: HC0, HC2, HC3
1; HC1 ``n / (n - k)``; cluster ``G / (G - 1) (n - 1) / (n - k)`` (statsmodels'
default ``use_correction=True``), ``n`` the sum of the weights, ``k`` the
estimated parameters, ``G`` the clusters.

statsmodels' discrete models (``Logit``, ``Probit``, ``MNLogit``) and ``GLM``
return HC0 under the names HC1, HC2 and HC3; problin's HC0 and cluster equal
statsmodels', HC1 to HC3 are the formulas above (HC2 and HC3 binary only: a
softmax row's leverage is a matrix).
"""
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._core.model.contract import Objective
from .._core.model.objective import GLMObjective, InMemoryObjective
from .._core.model.sandwich import (
    group_codes,
    leverage_scale,
    meat,
    sandwich,
    small_sample_factor,
    weighted_groups,
)
from ._covariance import to_raw

__all__ = ["RowScores", "check_groups", "one_predictor_scores", "robust_covariance"]


def check_groups(cov_type: str, groups: Any, n_rows: int) -> tuple[NDArray[np.intp], int] | None:
    """Cluster codes for ``cov_type="cluster"`` (None otherwise); one clear error each
    for missing groups, groups without a cluster covariance, or the wrong length."""
    if cov_type != "cluster":
        if groups is not None:
            raise ValueError(f"groups are only used with cov_type='cluster', but "
                             f"cov_type={cov_type!r}")
        return None
    if groups is None:
        raise ValueError("cov_type='cluster' needs the cluster of every row: "
                         "fit(X, y, groups=...)")
    return group_codes(groups, n_rows)


#: Each row's scores: its gradient weights, one column per linear predictor, and its
#: curvature (for a row's leverage; None where that is a matrix: softmax).
RowScores = tuple[NDArray[np.float64], NDArray[np.float64] | None]


def one_predictor_scores(objective: GLMObjective, eta: NDArray[np.float64]) -> RowScores:
    """The :data:`RowScores` of an in-memory GLM (one linear predictor) at its linear
    predictor ``eta`` (the objective's offset added here)."""
    eta_full = eta if objective.offset is None else eta + objective.offset
    _, g, h = objective.family.derivatives(objective.y, eta_full, objective.sample_weight,
                                           "observed")
    return g[:, None], h


def robust_covariance(objective: InMemoryObjective, scores: RowScores, bread: NDArray[np.float64],
                      cov_type: str, clusters: tuple[NDArray[np.intp], int] | None,
                      n_estimated: int, copies: NDArray[np.float64] | None = None
                      ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The sandwich covariance (module docstring) in raw units and in the solver's
    coordinates, from the rows' ``scores`` at the estimate (the family's, as its
    parameter layout forms them: ``one_predictor_scores``, or a classifier problem's
    ``row_scores``) on the in-memory ``objective``'s rows, and the bread in the
    solver's coordinates (the model-based covariance, NaN where not identified).
    ``copies``: the rows' frequency weights where the objective's sample weights also
    carry variance weights (a GLM regressor's ``var_weights`` or binomial trials, which
    scale a row's score instead of repeating it; statsmodels ``GLM``'s convention);
    None: the sample weights are frequency weights."""
    design = objective.design
    n, sw = design.n_samples, objective.sample_weight
    freq = sw if copies is None else copies
    lost = np.isnan(np.diag(bread))
    B = np.where(np.isnan(bread), 0.0, bread)
    G, h = scores
    if h is None and cov_type in ("HC2", "HC3"):
        raise ValueError(f"cov_type={cov_type!r} needs each row's leverage, which for "
                         "softmax regression is a matrix: use 'HC0', 'HC1' or 'cluster'")
    # frequency weights: a weight-w row's score is w times one row's; HC sums w s s^T
    scale = np.ones(n)
    if clusters is None and freq is not None:
        scale = np.where(freq > 0, 1.0 / np.sqrt(np.where(freq > 0, freq, 1.0)), 0.0)
    rows = max(64, (1 << 17) // max(1, B.shape[0]))  # score blocks of ~1 MB
    if h is not None and cov_type in ("HC2", "HC3"):
        # The leverage of one copy of a row (h carries the weight: a weight-w row is
        # w copies, each with c_i x~^T H^-1 x~), as the fit on the repeated rows has.
        c = h if freq is None else np.where(freq > 0, h / np.where(freq > 0, freq, 1.0), 0.0)
        scale = scale * leverage_scale(cov_type, _leverage(design, c, B, rows))

    def score_rows(lo: int, hi: int) -> NDArray[np.float64]:
        R = design.dense_rows(np.arange(lo, hi))  # [1, Z]: the solver's coordinates
        Gb = G[lo:hi] * scale[lo:hi, None]
        return (Gb[:, :, None] * R[:, None, :]).reshape(hi - lo, -1)

    codes, n_groups = (None, None) if clusters is None else clusters
    M = meat(score_rows, n, codes, n_groups, rows=rows)
    if codes is not None and n_groups is not None:
        n_groups = weighted_groups(codes, n_groups, sw)
    n_obs = float(objective.total_weight) if copies is None else float(np.sum(copies))
    factor = small_sample_factor(cov_type, n_obs, n_estimated, n_groups)
    V = sandwich(B, M, factor)
    V[lost, :] = np.nan
    V[:, lost] = np.nan
    return to_raw(objective, V), V


def _leverage(design: Any, h: NDArray[np.float64], cov: NDArray[np.float64],
              rows: int) -> NDArray[np.float64]:
    """``h_i x~_i^T cov x~_i`` by row blocks (binary models, solver's coordinates)."""
    out = np.empty(h.size)
    for lo in range(0, h.size, rows):
        hi = min(h.size, lo + rows)
        R = design.dense_rows(np.arange(lo, hi))
        out[lo:hi] = h[lo:hi] * np.einsum("ij,ij->i", R @ cov, R)
    return out
