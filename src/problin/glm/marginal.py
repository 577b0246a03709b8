"""Marginal effects of the GLM classifiers, with delta-method standard errors.

For a binary model ``p(x) = F(b + x^T w)`` the marginal effect of feature
``j`` is ``dp/dx_j = f(eta) w_j`` (``f = F'``: ``sigma (1 - sigma)`` for the
logit, ``phi`` for the probit); for softmax the effect on class ``k`` is
``dp_k/dx_j = p_k (w_kj - sum_m p_m w_mj)`` (Greene, *Econometric Analysis*,
8th ed., sections 17.3 and 18.2.2). ``at="overall"`` averages the effect over
the rows (the average marginal effect), ``at="mean"`` evaluates it at the
column means, as statsmodels' ``get_margeff(at=..., method="dydx")``.

Standard errors come from the delta method (Greene, section 4.6):
``Cov(ME) = J Cov(theta) J^T`` with ``J = d ME / d theta`` computed
analytically, the average over rows taken in row blocks as running sums of
the Jacobian (no n x n or n x p temporaries beyond a block). For a row with
``eta = x~^T theta`` (``x~ = [1, x]``)

* binary: ``d(f w_j)/d theta = f'(eta) w_j x~ + f(eta) e_j``
  (``f' = f (1 - 2 sigma)`` for the logit, ``-eta phi`` for the probit);
* softmax, free class block ``l``, with ``G = diag(p) - p p^T`` and
  ``wbar = p^T W``: ``d ME_kj / d theta_l = (G_kl (w_kj - wbar_j) - p_k ME_lj) x~
  + G_kl e_lj``,

where ``e_j`` is the unit vector of ``w_j`` in ``theta``.

Weights: statsmodels' discrete models take none; with ``sample_weight`` the
averages and means are weighted, which equals statsmodels on the data with
each row repeated (integer) weight times. The delta method uses whatever
``covariance_`` holds: robust with ``cov_type``, the Laplace covariance of
the penalised fit with ``alpha > 0``. It works in raw units, so a column far
from zero relative to its spread (offset / standard deviation of 1e5 and
beyond) costs the standard errors digits, as any use of the raw
``covariance_`` does (measured on spector: 2e-7 relative at 1e5, 7e-4 at 1e7).
"""
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core.blocks import block_rows, iter_blocks, reduce_row_ranges
from .._core.numerics import log_normal_pdf, log_sigmoid, log_softmax
from .._core.validation import check_sample_weight
from .._dask.chunks import is_dask
from .._frames import encode_frame
from ._predict import linear_predictors
from .inference import parameter_names, wald_table
from .result import GLMFit

__all__ = ["AT", "Effects", "average_effects", "marginal_effects_table"]

AT = ("overall", "mean")
COLUMNS = ["dy/dx", "std_err", "z", "p_value", "ci_low", "ci_high"]
_BLOCK_FLOATS = 1 << 17  # per-block temporaries of about 1 MiB


@dataclass(frozen=True)
class Effects:
    """Marginal effects and their Jacobian with respect to the parameters.

    Attributes
    ----------
    effects : ndarray of shape (n_outputs, n_features)
        ``dp_k/dx_j``: one row for binary models (the effect on the second
        class), one per class (all K) for softmax.
    jacobian : ndarray of shape (n_outputs * n_features, n_params)
        ``d effects.ravel() / d theta`` in the order of ``covariance_``.
    """

    effects: NDArray[np.float64]
    jacobian: NDArray[np.float64]

    def covariance(self, cov_theta: NDArray[np.float64]) -> NDArray[np.float64]:
        """The delta method: ``J Cov(theta) J^T``."""
        J = self.jacobian
        return np.asarray(J @ cov_theta @ J.T, dtype=np.float64)


def _binary_sums(fit: GLMFit, link: str, Xb: Any, sb: NDArray[np.float64] | None
                 ) -> tuple[float, float, NDArray[np.float64]]:
    """``(sum s, sum s f(eta), sum s f'(eta) x~)`` over one block of rows."""
    eta = linear_predictors(fit, Xb, 2)
    if link == "probit":  # phi underflows to 0 beyond |eta| = 40: clip the infinite
        near = np.clip(eta, -40.0, 40.0)
        f = np.exp(log_normal_pdf(near))
        df = -near * f
    else:  # f = sigma(eta) sigma(-eta); 1 - 2 sigma(eta) = -tanh(eta / 2)
        f = np.exp(log_sigmoid(eta) + log_sigmoid(-eta))
        df = -f * np.tanh(0.5 * eta)
    s = np.ones(eta.shape[0]) if sb is None else sb
    v = s * df
    back = np.asarray(Xb.T @ v, dtype=np.float64).ravel()
    if fit.fit_intercept:
        back = np.concatenate([[v.sum()], back])
    return float(s.sum()), float(s @ f), back


def _softmax_sums(fit: GLMFit, W: NDArray[np.float64], Xb: Any, sb: NDArray[np.float64] | None
                  ) -> tuple[float, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``(sum s, sum s ME, sum s G, sum s C x~)`` over one block of rows.

    ``ME`` (K x d) are the row's effects, ``G`` (K x L) the free columns of
    ``diag(p) - p p^T`` and ``C x~`` the part of the Jacobian along ``x~``,
    shaped (K, L, d, p).
    """
    K, d = W.shape
    L = fit.n_blocks
    free = np.arange(K - L, K)
    P = np.exp(log_softmax(linear_predictors(fit, Xb, K), axis=1))
    n = P.shape[0]
    s = np.ones(n) if sb is None else sb
    Wbar = P @ W  # (n, d)
    ME = P[:, :, None] * (W[None, :, :] - Wbar[:, None, :])  # (n, K, d)
    G = -P[:, :, None] * P[:, None, free]  # (n, K, L)
    G[:, free, np.arange(L)] += P[:, free]
    p = d + int(fit.fit_intercept)
    back = np.empty((K, L, d, p))
    Xd = Xb if sp.issparse(Xb) else np.asarray(Xb, dtype=np.float64)
    ME_free = ME[:, free, :]
    for k in range(K):
        C = G[:, k, :, None] * (W[k][None, None, :] - Wbar[:, None, :])
        C -= P[:, k, None, None] * ME_free
        C *= s[:, None, None]
        C2 = C.reshape(n, L * d)
        part = np.asarray(Xd.T @ C2, dtype=np.float64)  # (d_x, L d)
        if fit.fit_intercept:
            part = np.vstack([C2.sum(axis=0)[None, :], part])
        back[k] = part.T.reshape(L, d, p)
    return (float(s.sum()), np.einsum("n,nkd->kd", s, ME), np.einsum("n,nkl->kl", s, G), back)


def average_effects(fit: GLMFit, link: str, n_classes: int, X: Any,
                    sample_weight: NDArray[np.float64] | None = None) -> Effects:
    """The (weighted) average over the rows of ``X`` of the marginal effects and
    of their Jacobian, summed in row blocks (``link``: "logit", "probit";
    softmax where ``n_classes > 2``). One row gives the effects at that row."""
    n, d = X.shape
    off = int(fit.fit_intercept)
    p = d + off
    Theta = fit.raw_blocks()[:, 1:]  # (L, d) weights of the free blocks
    if n_classes == 2:
        def work(lo: int, hi: int) -> tuple[Any, ...]:
            out: tuple[Any, ...] = (0.0, 0.0, np.zeros(p))
            for _, _, Xb, sb in iter_blocks(X, sample_weight, rows=rows, start=lo, stop=hi):
                part = _binary_sums(fit, link, Xb, sb)
                out = tuple(a + b for a, b in zip(out, part))
            return out

        rows = block_rows(2 * d + 2)
        total, f_sum, back = reduce_row_ranges(work, n, rows)
        w = Theta[0]
        J = np.outer(w, back) / total
        J[np.arange(d), off + np.arange(d)] += f_sum / total
        return Effects((f_sum / total * w)[None, :], J)
    K, L = n_classes, fit.n_blocks
    W = np.vstack([np.zeros((K - L, d)), Theta])

    def work_softmax(lo: int, hi: int) -> tuple[Any, ...]:
        out: tuple[Any, ...] = (0.0, np.zeros((K, d)), np.zeros((K, L)), np.zeros((K, L, d, p)))
        for _, _, Xb, sb in iter_blocks(X, sample_weight, rows=rows, start=lo, stop=hi):
            part = _softmax_sums(fit, W, Xb, sb)
            out = tuple(a + b for a, b in zip(out, part))
        return out

    rows = max(1, min(65536, _BLOCK_FLOATS // max(K * d, K * L, L * d, d)))
    total, me_sum, g_sum, back = reduce_row_ranges(work_softmax, n, rows)
    J = back / total  # (K, L, d, p): J[k, l, j, :] = d ME_kj / d theta_l
    j = np.arange(d)
    J[:, :, j, off + j] += (g_sum / total)[:, :, None]
    return Effects(me_sum / total, J.transpose(0, 2, 1, 3).reshape(K * d, L * p))


def _column_means(X: Any, sample_weight: NDArray[np.float64] | None) -> NDArray[np.float64]:
    """Weighted column means, summed in row blocks."""
    total, acc = 0.0, np.zeros(X.shape[1])
    for _, _, Xb, sb in iter_blocks(X, sample_weight):
        s = np.ones(Xb.shape[0]) if sb is None else sb
        total += float(s.sum())
        acc += np.asarray(Xb.T @ s, dtype=np.float64).ravel()
    return acc / total


def marginal_effects_table(estimator: Any, X: Any, at: str, sample_weight: Any = None,
                           level: float = 0.95) -> pd.DataFrame:
    """The table of :meth:`GLMClassifier.marginal_effects` (see there)."""
    check_is_fitted(estimator)
    if not isinstance(at, str) or at not in AT:
        raise ValueError(f"at must be one of {AT}, got {at!r}")
    fit: GLMFit = estimator._result
    cov_theta = getattr(estimator, "covariance_", None)
    if cov_theta is None:
        raise ValueError("marginal_effects needs covariance_, which this model does not "
                         "have (fit skipped it for its many parameters): call "
                         "compute_covariance(X, y) first")
    if X is None:
        raise ValueError("marginal_effects needs X: the estimator keeps no copy of its "
                         "training data. Pass the training X (and its sample_weight) for "
                         "the effects statsmodels' get_margeff() reports, or any other rows")
    if is_dask(X):
        raise TypeError("marginal_effects reads X in memory: pass a numpy array, DataFrame "
                        "or sparse matrix (e.g. X.compute() or a sample of the rows)")
    X = validate_data(estimator, encode_frame(estimator, X, False), accept_sparse=["csr", "csc"],
                      dtype=[np.float64, np.float32], reset=False)
    if sp.issparse(X):
        X = X.tocsr()
    if X.shape[0] == 0:
        raise ValueError("marginal_effects needs at least one row of X")
    sw = check_sample_weight(sample_weight, X.shape[0])  # (rejects a zero sum)
    K = estimator.classes_.size
    link = estimator._family.name
    if at == "mean":
        found = average_effects(fit, link, K, _column_means(X, sw)[None, :])
    else:
        found = average_effects(fit, link, K, X, sw)
    cov = found.covariance(np.asarray(cov_theta, dtype=np.float64))
    features = parameter_names(estimator, X.shape[1])[int(fit.fit_intercept):]
    names: Any = features
    if K > 2:
        names = pd.MultiIndex.from_product([estimator.classes_.tolist(), features],
                                           names=["class", "feature"])
    table = wald_table(names, found.effects.ravel(), cov, level)
    table = table.rename(columns={"coef": "dy/dx"})
    if K == 2:
        table.index.name = "feature"
    table.attrs.update(model=type(estimator).__name__, at=at, level=float(level),
                       n_rows=int(X.shape[0]))
    return table
