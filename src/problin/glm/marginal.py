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

Rows far out: there every effect is tiny (``f(eta)``, or products ``p_k p_m``
of probabilities), and the delta method squares it, which underflows from
~1e-154 on (z was 0/0, and the probit's standard errors 0 beside nonzero
effects). Each output is therefore carried on a log scale of its own (a
block's largest ``f`` or, per class, its largest product ``p_k p_m``, from log
probabilities; 0 for ordinary rows), each Jacobian row divided by its largest
entry before the delta method and the table multiplied back: z and p match
an 80-digit evaluation of the formulas, and the effects do where float64
can hold them. A probit Jacobian that overflows (linear predictors beyond
~1e150) is a clear error.

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
from .._core.model.families import ClassFamily
from .._core.numerics import log_normal_pdf, log_sigmoid, log_softmax
from .._core.validation import check_sample_weight
from .._source import data_source
from .._frames import encode_frame
from ._predict import linear_predictors
from .inference import parameter_names, wald_table
from .interval import check_offset
from .result import GLMFit

__all__ = ["AT", "Effects", "average_effects", "marginal_effects_table"]

AT = ("overall", "mean")
COLUMNS = ["dy/dx", "std_err", "z", "p_value", "ci_low", "ci_high"]
_BLOCK_FLOATS = 1 << 17  # per-block temporaries of about 1 MiB
# Blocks whose largest effect is below exp(_FAR) are summed on their own log scale:
# the delta method squares the Jacobian, which underflows from ~1e-154 on.
_FAR = -200.0
# log phi(eta) is -eta^2 / 2: beyond this |eta| only its sign matters for the scale.
_ETA_MAX = 1e150


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
    log_scale : ndarray of shape (n_outputs * n_features,)
        Each effect and its Jacobian row are ``exp(log_scale)`` times the arrays
        above: 0 unless every row lies so far out that they would underflow.
    """

    effects: NDArray[np.float64]
    jacobian: NDArray[np.float64]
    log_scale: NDArray[np.float64]

    def table(self, names: Any, cov_theta: NDArray[np.float64], level: float,
              identified: NDArray[np.bool_] | None = None) -> pd.DataFrame:
        """The Wald table of the effects. Each output's Jacobian row is divided by its
        largest entry before the delta method and the table multiplied back after
        (z and p need no factor), so that rows far out, whose entries are huge or
        tiny, neither overflow nor underflow when squared. ``identified``: per
        effect, False where its feature's weight is not identified (no statistics)."""
        J = self.jacobian
        if not np.all(np.isfinite(J)):
            raise ValueError("the marginal effects' Jacobian overflows float64 at these rows "
                             "(their linear predictors are beyond ~1e150): their effects are "
                             "0 to double precision; drop those rows")
        size = np.max(np.abs(J), axis=1, initial=0.0)
        if np.any(size == 0):
            raise ValueError("every row's marginal effect is 0 to double precision: their "
                             "linear predictors are too far out (beyond ~1e150, or infinite)")
        J = J / size[:, None]
        table = wald_table(names, self.effects.ravel() / size, J @ cov_theta @ J.T, level,
                           identified)
        factor = size * np.exp(self.log_scale)
        for column in ("coef", "std_err", "ci_low", "ci_high"):
            table[column] *= factor
        return table


def _block_scale(log_size: NDArray[np.float64], sb: NDArray[np.float64] | None
                 ) -> NDArray[np.float64]:
    """A block's log scales, one per column of ``log_size`` (n x K): the rows' largest
    where that is below ``_FAR`` (rows of zero weight do not count), else 0 (summed
    as they are)."""
    if sb is not None:
        log_size = log_size[sb > 0]
    top = np.max(log_size, axis=0, initial=-np.inf)
    return np.where(np.isfinite(top) & (top < _FAR), top, 0.0)


def _plus(a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(x + y for x, y in zip(a, b))


def _merge(parts: list[tuple[NDArray[np.float64], tuple[Any, ...]]]
           ) -> tuple[NDArray[np.float64], tuple[Any, ...]]:
    """Blocks' scaled sums ``(log scales c, sums)`` on their largest common scales:
    each sum's first axis runs over the entries of ``c``. A block far below the
    top adds nothing (its sums times 0, without its infinities)."""
    top = np.max([c for c, _ in parts], axis=0)
    total: tuple[Any, ...] | None = None
    for c, sums in parts:
        factor = np.exp(c - top)
        scaled = tuple(np.multiply(x, _column(factor, x), out=np.zeros_like(x),
                                   where=_column(factor > 0.0, x)) for x in sums)
        total = scaled if total is None else _plus(total, scaled)
    assert total is not None
    return top, total


def _column(v: NDArray[Any], x: NDArray[Any]) -> NDArray[Any]:
    """``v`` (one entry per first-axis index of ``x``) shaped to broadcast against ``x``."""
    return v.reshape(v.shape + (1,) * (np.ndim(x) - 1))


def _binary_sums(fit: GLMFit, family: ClassFamily, link: str, Xb: Any,
                 sb: NDArray[np.float64] | None,
                 ob: NDArray[np.float64] | None = None
                 ) -> tuple[float, list[tuple[NDArray[np.float64], tuple[Any, ...]]]]:
    """``(sum s, [(c, (sum s f(eta), sum s f'(eta) x~) / exp(c))])`` over one block
    of rows, ``c`` its log scale (shape (1,)): ``f`` from its logarithm and
    ``f' = f r`` with ``r = f' / f`` (``-tanh(eta / 2)`` logit, ``-eta`` probit);
    ``ob``: the rows' offsets (a known term of eta), or None."""
    eta = linear_predictors(fit, Xb, family)
    if ob is not None:
        eta = eta + ob
    if link == "probit":
        log_f = log_normal_pdf(np.clip(eta, -_ETA_MAX, _ETA_MAX))
        ratio = -eta
    else:  # f = sigma(eta) sigma(-eta)
        log_f = log_sigmoid(eta) + log_sigmoid(-eta)
        ratio = -np.tanh(0.5 * eta)
    c = _block_scale(log_f[:, None], sb)
    f = np.exp(log_f - c[0])
    s = np.ones(eta.shape[0]) if sb is None else sb
    # (f' = 0 where f = 0, also where eta overflowed and the ratio is infinite)
    v = s * np.multiply(f, ratio, out=np.zeros_like(f), where=f > 0)
    with np.errstate(over="ignore"):  # (a block far out: see Effects.table and _merge)
        back = np.asarray(Xb.T @ v, dtype=np.float64).ravel()
    if fit.fit_intercept:
        back = np.concatenate([[v.sum()], back])
    return float(s.sum()), [(c, (np.array([s @ f]), back[None, :]))]


def _softmax_sums(fit: GLMFit, family: ClassFamily, W: NDArray[np.float64], Xb: Any,
                  sb: NDArray[np.float64] | None
                  ) -> tuple[float, list[tuple[NDArray[np.float64], tuple[Any, ...]]]]:
    """``(sum s, [(c, (sum s ME, sum s G, sum s C x~) / exp(c))])`` over one block
    of rows, with a log scale ``c_k`` per class ``k`` (the rows of each sum).

    ``ME`` (K x d) are the row's effects, ``G`` (K x L) the free columns of
    ``diag(p) - p p^T`` and ``C x~`` the part of the Jacobian along ``x~``,
    shaped (K, L, d, p). Class ``k``'s are sums of products ``p_k p_m`` (m != k)
    times bounded factors (``ME_k = sum_m p_k p_m (w_k - w_m)``, ``G_kk = sum_{m != k}
    p_k p_m``), so its scale is its largest such product, ``c_k`` (in logs): a
    row far out, where the probabilities span hundreds of orders of magnitude,
    keeps every class's tiny effects exactly.
    """
    K, d = W.shape
    L = fit.n_blocks
    free = np.arange(K - L, K)
    log_p = log_softmax(linear_predictors(fit, Xb, family), axis=1)
    n = log_p.shape[0]
    pairs = log_p[:, :, None] + log_p[:, None, :]  # log p_k p_m
    pairs[:, np.arange(K), np.arange(K)] = -np.inf  # (m != k only)
    c = _block_scale(pairs.max(axis=2), sb)  # (K,)
    A = np.exp(pairs - c[None, :, None])  # p_k p_m / exp(c_k)
    P = np.exp(log_p)
    s = np.ones(n) if sb is None else sb
    # ME_k = sum_m A_km (w_k - w_m); w_k - wbar rounds away its O(p_m) part for the
    # likely class, but enters only as G_kl (w_k - wbar), beside O(1) terms.
    ME = A.sum(axis=2)[:, :, None] * W[None, :, :] - A @ W
    D = W[None, :, :] - (P @ W)[:, None, :]  # w_k - wbar
    G = -A[:, :, free]  # (n, K, L)
    G[:, free, np.arange(L)] = A[:, free, :].sum(axis=2)  # p_l (1 - p_l)
    # p_k ME_l on class k's scale: exp(log p_k + c_l - c_k) is at most K.
    cross = np.exp(log_p[:, :, None] + c[None, free] - c[:, None])  # (n, K, L)
    p = d + int(fit.fit_intercept)
    back = np.empty((K, L, d, p))
    Xd = Xb if sp.issparse(Xb) else np.asarray(Xb, dtype=np.float64)
    ME_free = ME[:, free, :]
    for k in range(K):
        C = G[:, k, :, None] * D[:, k, None, :]
        C -= cross[:, k, :, None] * ME_free
        C *= s[:, None, None]
        C2 = C.reshape(n, L * d)
        with np.errstate(over="ignore", invalid="ignore"):  # (see _binary_sums)
            part = np.asarray(Xd.T @ C2, dtype=np.float64)  # (d_x, L d)
        if fit.fit_intercept:
            part = np.vstack([C2.sum(axis=0)[None, :], part])
        back[k] = part.T.reshape(L, d, p)
    sums = (np.einsum("n,nkd->kd", s, ME), np.einsum("n,nkl->kl", s, G), back)
    return float(s.sum()), [(c, sums)]


def average_effects(fit: GLMFit, family: ClassFamily, link: str, X: Any,
                    sample_weight: NDArray[np.float64] | None = None,
                    offset: NDArray[np.float64] | None = None) -> Effects:
    """The (weighted) average over the rows of ``X`` of the marginal effects and
    of their Jacobian, summed in row blocks (``link``: "logit", "probit";
    softmax where ``family`` has class blocks; ``offset``: the rows' known terms of a
    binary model's linear predictor). One row gives the effects at that row."""
    return family.on_layout(_AverageEffects(fit, family, link, X, sample_weight, offset))


class _AverageEffects:
    """:func:`average_effects` of each parameter layout (``family.on_layout``)."""

    def __init__(self, fit: GLMFit, family: ClassFamily, link: str, X: Any,
                 sample_weight: NDArray[np.float64] | None,
                 offset: NDArray[np.float64] | None) -> None:
        self.fit, self.family, self.link, self.X = fit, family, link, X
        self.sample_weight, self.offset = sample_weight, offset

    def one_predictor(self) -> Effects:
        """Binary: the effects on the probability of the second class."""
        fit, link, X, sample_weight, offset = (self.fit, self.link, self.X,
                                               self.sample_weight, self.offset)
        n, d = X.shape
        off = int(fit.fit_intercept)
        Theta = fit.raw_blocks()[:, 1:]  # (1, d) weights

        def work(lo: int, hi: int) -> tuple[Any, ...]:
            out: tuple[Any, ...] = (0.0, [])
            for _, _, Xb, sb, ob in iter_blocks(X, sample_weight, offset, rows=rows,
                                                start=lo, stop=hi):
                out = _plus(out, _binary_sums(fit, self.family, link, Xb, sb, ob))
            return out

        rows = block_rows(2 * d + 2)
        total, parts = reduce_row_ranges(work, n, rows)
        c, (f_sum, back) = _merge(parts)
        w = Theta[0]
        J = np.outer(w, back[0]) / total
        J[np.arange(d), off + np.arange(d)] += f_sum[0] / total
        return Effects((f_sum[0] / total * w)[None, :], J, np.full(d, c[0]))

    def class_blocks(self) -> Effects:
        """Softmax: the effects on every class's probability, the reference included."""
        fit, X, sample_weight = self.fit, self.X, self.sample_weight
        n, d = X.shape
        off = int(fit.fit_intercept)
        p = d + off
        Theta = fit.raw_blocks()[:, 1:]  # (L, d) weights of the free blocks
        L = fit.n_blocks
        K = L + int(fit.reference_class)  # (the reference class's block is fixed at 0)
        W = np.vstack([np.zeros((K - L, d)), Theta])

        def work_softmax(lo: int, hi: int) -> tuple[Any, ...]:
            out: tuple[Any, ...] = (0.0, [])
            for _, _, Xb, sb in iter_blocks(X, sample_weight, rows=rows, start=lo, stop=hi):
                out = _plus(out, _softmax_sums(fit, self.family, W, Xb, sb))
            return out

        rows = max(1, min(65536, _BLOCK_FLOATS // max(K * K, K * d, K * L, L * d, d)))
        total, parts = reduce_row_ranges(work_softmax, n, rows)
        c, (me_sum, g_sum, back) = _merge(parts)
        J = back / total  # (K, L, d, p): J[k, l, j, :] = d ME_kj / d theta_l
        j = np.arange(d)
        J[:, :, j, off + j] += (g_sum / total)[:, :, None]
        return Effects(me_sum / total, J.transpose(0, 2, 1, 3).reshape(K * d, L * p),
                       np.repeat(c, d))


class _EffectNames:
    """The index of the effects' table for each parameter layout (``family.on_layout``)."""

    def __init__(self, features: list[str], classes: NDArray[Any]) -> None:
        self.features, self.classes = features, classes

    def one_predictor(self) -> pd.Index:
        """Binary: one effect per feature (on the second class's probability)."""
        return pd.Index(self.features, name="feature")

    def class_blocks(self) -> pd.Index:
        """Softmax: one effect per class (all K) and feature."""
        return pd.MultiIndex.from_product([self.classes.tolist(), self.features],
                                          names=["class", "feature"])


def _column_means(X: Any, sample_weight: NDArray[np.float64] | None) -> NDArray[np.float64]:
    """Weighted column means (of a 2-D ``X``, or a vector's mean), summed in row blocks."""
    total, acc = 0.0, np.zeros(X.shape[1])
    for _, _, Xb, sb in iter_blocks(X, sample_weight):
        s = np.ones(Xb.shape[0]) if sb is None else sb
        total += float(s.sum())
        acc += np.asarray(Xb.T @ s, dtype=np.float64).ravel()
    return acc / total


def marginal_effects_table(estimator: Any, X: Any, at: str, sample_weight: Any = None,
                           level: float = 0.95, offset: Any = None) -> pd.DataFrame:
    """The table of :meth:`GLMClassifier.marginal_effects` (see there)."""
    check_is_fitted(estimator)
    if not isinstance(at, str) or at not in AT:
        raise ValueError(f"at must be one of {AT}, got {at!r}")
    fit: GLMFit = estimator._result
    cov_theta = getattr(estimator, "covariance_", None)
    if cov_theta is not None:
        cov_theta = np.asarray(cov_theta, dtype=np.float64)
    if cov_theta is None:
        raise ValueError("marginal_effects needs covariance_, which this model does not "
                         "have (fit skipped it for its many parameters): call "
                         "compute_covariance(X, y) first")
    if X is None:
        raise ValueError("marginal_effects needs X: the estimator keeps no copy of its "
                         "training data. Pass the training X (and its sample_weight) for "
                         "the effects statsmodels' get_margeff() reports, or any other rows")
    data_source(X).require_in_memory("marginal_effects reads X in memory: pass a numpy array, "
                                     "DataFrame or sparse matrix (e.g. X.compute() or a sample "
                                     "of the rows)", TypeError)
    X = validate_data(estimator, encode_frame(estimator, X, False), accept_sparse=["csr", "csc"],
                      dtype=[np.float64, np.float32], reset=False)
    if sp.issparse(X):
        X = X.tocsr()
    if X.shape[0] == 0:
        raise ValueError("marginal_effects needs at least one row of X")
    sw = check_sample_weight(sample_weight, X.shape[0])  # (rejects a zero sum)
    family = estimator._fitted_family()
    o = check_offset(offset, X.shape[0])
    if o is not None:
        family.require_one_predictor("offset is supported for binary models only")
    link = estimator._family.name
    if at == "mean":
        o_mean = None if o is None else _column_means(o[:, None], sw)
        found = average_effects(fit, family, link, _column_means(X, sw)[None, :],
                                offset=o_mean)
    else:
        found = average_effects(fit, family, link, X, sw, o)
    # Parameters that are not identified (NaN rows of covariance_) are held fixed:
    # they add no variance (as in predict_interval), and the other effects keep
    # theirs; the effects of a feature whose weight is not identified get none.
    held = np.isnan(np.diag(cov_theta))
    cov_theta = np.where(np.isnan(cov_theta), 0.0, cov_theta)
    p = X.shape[1] + int(fit.fit_intercept)
    unidentified = held.reshape(-1, p)[:, int(fit.fit_intercept):].any(axis=0)
    identified = None
    if unidentified.any():
        identified = np.tile(~unidentified, found.effects.shape[0])  # (per output)
    features = parameter_names(estimator, X.shape[1])[int(fit.fit_intercept):]
    names = family.on_layout(_EffectNames(features, estimator.classes_))
    table = found.table(names, cov_theta, level, identified)
    table = table.rename(columns={"coef": "dy/dx"})
    table.index = names  # (as named by the layout)
    table.attrs.update(model=type(estimator).__name__, at=at, level=float(level),
                       n_rows=int(X.shape[0]))
    return table
