"""Confidence intervals for the fitted probabilities of a binary GLM, and offsets.

For a row ``x`` the linear predictor ``eta = b + x^T w + o`` (``o`` a known
offset) has the Wald variance ``v = x~^T Cov x~`` (``x~ = [1, x]``, ``Cov`` the
parameters' covariance, robust if the model was fitted so). The interval is
formed on the linear-predictor scale and mapped through the inverse link
``F``, which keeps it inside ``(0, 1)``:

.. math::

    \\hat p = F(\\eta), \\quad \\mathrm{se}(\\hat p) = F'(\\eta) \\sqrt{v}, \\quad
    [F(\\eta - z_{1-a/2} \\sqrt{v}),\\; F(\\eta + z_{1-a/2} \\sqrt{v})]

(the delta method for the standard error; Greene, *Econometric Analysis*,
8th ed., §4.6 and §17.3; as statsmodels ``GLM.get_prediction().summary_frame()``).
The quadratic forms are computed row block by row block, in the solver's
standardised coordinates (so far from the origin no digits cancel).
"""
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy import special, stats
from sklearn.utils.validation import validate_data

from .._core.blocks import iter_blocks
from .._core.model.design import Design
from .._core.extreme import row_quadratic_root
from .._source import data_source
from .._frames import encode_frame
from .result import GLMFit

__all__ = ["check_offset", "interval_table", "linear_predictor_se",
           "probability_interval"]

_ROWS = 4096


def check_offset(offset: Any, n_rows: int) -> NDArray[np.float64] | None:
    """A validated offset: a finite float64 vector with one value per row (or None)."""
    if offset is None:
        return None
    if hasattr(offset, "dask") or type(offset).__module__.startswith("dask"):
        raise TypeError("offset must be an in-memory array: offsets are not supported "
                        "for Dask input")
    if isinstance(offset, str):  # (a column's name: Formula and the command line read it)
        raise TypeError(f"offset must be numbers, one per row, not the text {offset!r}: a "
                        "column name is read by Formula(...).fit/predict, not by the estimator")
    o = np.asarray(offset, dtype=np.float64)
    if o.ndim != 1 or o.shape[0] != n_rows:
        raise ValueError(f"offset must be a 1-D array with one value per row: got shape "
                         f"{o.shape} for {n_rows} rows")
    if not np.all(np.isfinite(o)):
        bad = int(np.flatnonzero(~np.isfinite(o))[0])
        raise ValueError(f"offset contains NaN or infinity (row {bad})")
    return o


def linear_predictor_se(fit: GLMFit, X: Any) -> NDArray[np.float64]:
    """``sqrt(x~_i^T Cov x~_i)`` per row of ``X`` (binary models), finite at rows far
    from the data (:func:`~problin._core.extreme.row_quadratic_root`). Parameters that
    are not identified (NaN in ``covariance_``) are held fixed: they add nothing."""
    if fit.covariance is None:
        raise ValueError("covariance_ was not computed during fit: call "
                         "compute_covariance(X, y) first")
    basis = fit.basis
    if basis is not None and basis.center is not None and not sp.issparse(X) \
            and fit.covariance_standard is not None:
        cov = fit.covariance_standard  # rows standardised as the solver saw them
        design = Design(X, fit.fit_intercept, basis=basis)
    else:
        cov = fit.covariance
        design = Design(X, fit.fit_intercept)
    cov_z = np.where(np.isnan(cov), 0.0, cov)
    out = np.empty(X.shape[0])
    for lo, hi, Xb in iter_blocks(X, rows=_ROWS):
        Zb = design._block(Xb)  # (standardised where the basis is centred)
        Zb = Zb.toarray() if sp.issparse(Zb) else np.asarray(Zb, dtype=np.float64)
        if fit.fit_intercept:
            Zb = np.column_stack([np.ones(hi - lo), Zb])
        out[lo:hi] = row_quadratic_root(Zb, cov_z)
    return out


def probability_interval(family: Any, eta: NDArray[np.float64], se: NDArray[np.float64],
                         level: float, index: Any = None) -> pd.DataFrame:
    """``mean, std_err, ci_low, ci_high`` of ``F(eta)`` (module docstring); the
    delta-method standard error ``F'(eta) se`` formed in logs (``F'`` underflows to 0
    where ``se`` is huge, at rows far from the data: their product is then 0, not NaN)."""
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    q = stats.norm.isf((1.0 - float(level)) / 2.0)
    mean = family.mean(eta)
    log_density = family.link_function.log_density(eta)  # (a BinaryLink's)
    with np.errstate(divide="ignore"):  # (se = 0: log 0 = -inf, exp(-inf) = 0)
        std_err = np.exp(log_density + np.log(se))
    return pd.DataFrame({"mean": mean, "std_err": std_err, "ci_low": family.mean(eta - q * se),
                         "ci_high": family.mean(eta + q * se)},
                        index=index)


def interval_table(est: Any, X: Any, level: float, offset: Any) -> pd.DataFrame:
    """``est.predict_interval(X, level, offset)`` of a fitted GLM classifier: binary,
    the second class's probability; softmax, every class's (:func:`class_interval`)."""
    data_source(X).require_in_memory("predict_interval needs in-memory X (a DataFrame of one "
                                     "row per row of X); compute the Dask rows you need first",
                                     TypeError)
    return est._fitted_family().on_layout(_Interval(est, X, level, offset))


class _Interval:
    """:func:`interval_table` of each parameter layout (``family.on_layout``)."""

    def __init__(self, est: Any, X: Any, level: float, offset: Any) -> None:
        self.est, self.X, self.level, self.offset = est, X, level, offset

    def _rows(self) -> Any:
        return validate_data(self.est, encode_frame(self.est, self.X, False),
                             accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32],
                             reset=False)

    def one_predictor(self) -> pd.DataFrame:
        est, X = self.est, self.X
        index = X.index if isinstance(X, pd.DataFrame) else None
        eta = est.decision_function(X, self.offset)
        se = linear_predictor_se(est._result, self._rows())
        return probability_interval(est._family, eta, se, self.level, index)

    def class_blocks(self) -> pd.DataFrame:
        est, X = self.est, self.X
        log_p = est.predict_log_proba(X, self.offset)  # (refuses an offset, clearly)
        index = X.index if isinstance(X, pd.DataFrame) else pd.RangeIndex(len(log_p))
        return class_interval(est._result, self._rows(), log_p, est.classes_, self.level,
                              index)


def class_interval(fit: GLMFit, X: Any, log_p: NDArray[np.float64], classes: Any,
                   level: float, index: pd.Index) -> pd.DataFrame:
    """Softmax: every class's probability with its interval, one row per (row, class).

    Each class's interval is formed on its log-odds scale ``logit p_k = log p_k -
    log(sum_{m != k} p_m)`` and mapped back by the logistic function, which keeps it
    inside ``(0, 1)``. By the delta method ``Var(logit p_k) = a_k^T Q a_k``, with
    ``Q_lm = x~^T Cov_lm x~`` the covariance of the free blocks' linear predictors and
    ``a_kl = d logit p_k / d eta_l``: 1 for class k's own block, ``-p_c / (1 - p_k)``
    for the block of another class ``c`` (bounded, from log probabilities: no
    ``p_k (1 - p_k)`` that underflows at rows far out). ``std_err`` is the
    probability's, ``p_k (1 - p_k) sd(logit p_k)``, formed in logs as the binary
    one's. Parameters not identified (NaN in ``covariance_``) are held fixed."""
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    if fit.covariance is None:
        raise ValueError("covariance_ was not computed during fit: call "
                         "compute_covariance(X, y) first")
    n, K = log_p.shape
    L = fit.n_blocks
    p1 = X.shape[1] + int(fit.fit_intercept)
    cov = np.where(np.isnan(fit.covariance), 0.0, fit.covariance).reshape(L, p1, L, p1)
    free = np.arange(K - L, K)
    log_rest = np.empty((n, K))  # log(1 - p_k): the other classes' log-sum-exp
    var = np.empty((n, K))
    for lo, hi, Xb in iter_blocks(X, rows=_ROWS):
        lp = log_p[lo:hi]
        others = np.where(np.eye(K, dtype=bool), -np.inf, lp[:, None, :])
        log_rest[lo:hi] = rest = special.logsumexp(others, axis=2)
        a = -np.exp(lp[:, None, free] - rest[:, :, None])  # (n, K, L)
        a[:, free, np.arange(L)] = 1.0
        Zb = Xb.toarray() if sp.issparse(Xb) else np.asarray(Xb, dtype=np.float64)
        if fit.fit_intercept:
            Zb = np.column_stack([np.ones(hi - lo), Zb])
        Q = np.einsum("np,lpmq,nq->nlm", Zb, cov, Zb, optimize=True)  # (n, L, L)
        var[lo:hi] = np.einsum("nkl,nlm,nkm->nk", a, Q, a, optimize=True)
    se = np.sqrt(np.clip(var, 0.0, None))
    q = stats.norm.isf((1.0 - float(level)) / 2.0)
    logit = log_p - log_rest
    with np.errstate(divide="ignore"):  # (se = 0: log 0 = -inf, exp(-inf) = 0)
        std_err = np.exp(log_p + log_rest + np.log(se))
    names = [index.name or "row", "class"]
    rows = pd.MultiIndex.from_product([index, list(classes)], names=names)
    return pd.DataFrame({"mean": np.exp(log_p).ravel(), "std_err": std_err.ravel(),
                         "ci_low": special.expit(logit - q * se).ravel(),
                         "ci_high": special.expit(logit + q * se).ravel()}, index=rows)
