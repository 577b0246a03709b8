"""The linear predictors of a fitted GLM classifier, exact far from the origin.

Two things can cost digits or give NaN when a GLM predicts:

* columns far from zero (a year, a price level): ``b + x^T w`` cancels
  (``b ~ -c^T w``). A model fitted in a centred basis keeps its intercept at
  the centre ``c`` and predicts from standardised blocks instead.
* rows holding huge values (1e200, 1e308): ``x^T w`` overflows and ``inf -
  inf`` is NaN. Such rows are recomputed with the row scaled by its largest
  magnitude ``r``: ``eta = b + r (x / r)^T w``, which is +-inf or finite but
  never NaN. For softmax every logit of the row is shifted by the same
  ``r max_k (x / r)^T w_k`` first, which leaves the probabilities unchanged.
"""
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .._core.model.basis import ColumnBasis
from .._core.model.design import Design
from .._core.model.layout import Layout
from .result import GLMFit

__all__ = ["linear_predictors"]


def linear_predictors(fit: GLMFit, X: Any, layout: Layout) -> NDArray[np.float64]:
    """The decision function of the parameter ``layout`` (a family's): ``eta`` (n,) for
    one linear predictor, else the n x K logits (reference class 0)."""
    basis = fit.basis
    if basis is not None and basis.center is not None and not sp.issparse(X):
        # The intercept at the centre keeps every digit, on standardised blocks.
        design = Design(X, True, basis=basis)
        Theta = fit.theta_standard.reshape(fit.n_blocks, -1)
    else:
        design = Design(X, True)
        Theta = fit.raw_blocks()  # the free blocks (not the reference)
    with np.errstate(over="ignore", invalid="ignore"):  # such rows are redone below
        eta = design.matmat(Theta)
    bad = ~np.isfinite(eta).all(axis=1)
    if bad.any():
        eta[bad] = _scaled_rows(X, np.flatnonzero(bad), basis if design.basis else None, Theta)

    # (a lambda: an annotated closure's annotations cost microseconds a call)
    return layout.decision_scores(
        eta, lambda: _reference_rows(X, bad, basis if design.basis else None, Theta))


def _reference_rows(X: Any, bad: NDArray[np.bool_], basis: ColumnBasis | None,
                    Theta: NDArray[np.float64]) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """The rows whose logits were shifted to stay finite, with the reference class's
    logit (0) shifted too: all K logits of those rows."""
    rows = np.flatnonzero(bad)
    if not rows.size:
        return rows, np.empty((0, Theta.shape[0] + 1))
    return rows, _scaled_rows(X, rows, basis, np.vstack([np.zeros(Theta.shape[1]), Theta]))


def _scaled_rows(X: Any, rows: NDArray[np.intp], basis: ColumnBasis | None,
                 Theta: NDArray[np.float64]) -> NDArray[np.float64]:
    """Logits of ``rows`` with each row scaled by its largest magnitude first.

    With ``x = r u`` (``|u| <= 1``) and kernel parameters ``[b, w]``:
    ``b + r u^T w``. In a centred basis ``z = (x - c) / s = r (u - c / r) / s``.
    Several logits (softmax): minus ``r max_k u^T w_k`` from each, so the row's
    largest logit is ``b_k`` and the others are finite or ``-inf``.
    """
    Xr = X[rows]
    Xr = Xr.toarray() if sp.issparse(Xr) else np.asarray(Xr, dtype=np.float64)
    r = np.max(np.abs(Xr), axis=1)
    r = np.where(r > 0, r, 1.0)
    U = Xr / r[:, None]
    b, W = Theta[:, 0], Theta[:, 1:]
    if basis is not None:
        U = (U - basis.center / r[:, None]) / basis.scale
    inner = U @ W.T
    if Theta.shape[0] > 1:
        inner = inner - inner.max(axis=1, keepdims=True)
    with np.errstate(over="ignore", invalid="ignore"):
        prod = np.where(inner == 0.0, 0.0, r[:, None] * inner)
    return b + prod
