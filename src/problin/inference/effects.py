"""Average predictions over counterfactual copies of the data, and their Jacobians.

Every quantity that :meth:`slopes`, :meth:`comparisons` and :meth:`predictions` report is
a function of *average predictions*: the (weighted) mean over rows of the model's mean
``mu(x_i)`` on a copy of the data in which one variable is changed (shifted by a small
step, shifted by a chosen amount, or set to a level). This module computes those averages
and their Jacobians with respect to the parameters, in one pass over row blocks, for
every model that has a linear predictor:

.. math::

    \\bar\\mu_k = \\frac{1}{S}\\sum_i s_i\\, \\mu_k(\\eta_i), \\qquad
    \\frac{\\partial \\bar\\mu_k}{\\partial \\theta_l}
        = \\frac{1}{S}\\sum_i s_i\\, \\frac{\\partial \\mu_k}{\\partial \\eta_l}(\\eta_i)\\,
          \\tilde x_i, \\qquad \\eta_{il} = \\tilde x_i^\\top \\theta_l,

``x~ = [1, x]`` the design row. What differs between models is only the map from the
linear predictors to the means and its derivative (:class:`MeanMap`): a link's inverse
(``mu = g^-1(eta)``, ``d mu / d eta = g^-1'(eta)``: logit, probit, the GLM regressors'
links, the identity of least squares), or the softmax (``p_k(delta_kl - p_l)``). The
Jacobian is ``X~^T (s * dmu/deta)``, one product per block: no n x p array beyond a block.

Standard errors follow by the delta method with the model's covariance (robust or
clustered where the model was fitted so): ``Var = J V J^T`` (Greene, *Econometric
Analysis*, 8th ed., §4.6; Arel-Bundock 2024).
"""
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy import stats

from .._core.blocks import one_blas_thread
from .._core.model.links import Link
from .._core.numerics import log_softmax
from .effects_centred import MAX_HALF_SHIFT, CentredDifference, centred_difference
from .effects_elastic import Elasticities
from .effects_sparse import Rows, SparseRows

__all__ = ["EffectsModel", "IdentityMap", "LinkMap", "MeanMap", "NoOffsets", "RowOffsets",
           "SoftmaxMap", "Variant", "RowFunction", "Sampling", "average_rows",
           "effects_frame", "encode_variants"]

FloatArray = NDArray[np.float64]
# Rows per block: the block's n x K x L derivative array and its design copy stay small.
_BLOCK_ROWS = 8192
# Rows per call of a design's encoding: a block's variants are encoded together up to it.
_ENCODE_ROWS = 1 << 15

#: A counterfactual copy of the data: a function of a block of rows.
Variant = Callable[[Rows], Rows]
#: The encoding of rows into a model's design columns: dense, or sparse for sparse rows.
Design = Callable[[Rows], Any]


class MeanMap(Protocol):
    """The map from a row's linear predictors to its means, and its derivative."""

    def __call__(self, eta: FloatArray) -> tuple[FloatArray, FloatArray]:
        """``(mu, d mu / d eta)`` at linear predictors ``eta`` (n, L): shapes (n, K)
        and (n, K, L)."""
        ...  # pragma: no cover - protocol

    def curvature(self, eta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``(mu, d, T)`` with ``T = d^2 mu_k / d eta_l d eta_m`` (n, K, L, L)."""
        ...  # pragma: no cover - protocol


@dataclass(frozen=True)
class LinkMap:
    """One linear predictor and the inverse of its link: ``mu = g^-1(eta)``."""

    link: Link

    def __call__(self, eta: FloatArray) -> tuple[FloatArray, FloatArray]:
        mu, d1, _ = self.link.inverse_derivatives(eta[:, 0])
        return mu[:, None], d1[:, None, None]

    def curvature(self, eta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        mu, d1, d2 = self.link.inverse_derivatives(eta[:, 0])
        return mu[:, None], d1[:, None, None], d2[:, None, None, None]


@dataclass(frozen=True)
class IdentityMap:
    """The linear predictors themselves (the link scale)."""

    def __call__(self, eta: FloatArray) -> tuple[FloatArray, FloatArray]:
        n, L = eta.shape
        return eta, np.broadcast_to(np.eye(L), (n, L, L))

    def curvature(self, eta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        n, L = eta.shape
        return eta, np.broadcast_to(np.eye(L), (n, L, L)), np.zeros((n, L, L, L))


@dataclass(frozen=True)
class SoftmaxMap:
    """Class probabilities ``p = softmax([0, eta])`` (``reference``: the first class's
    logit is fixed at 0, the free blocks are the other classes) or ``softmax(eta)``;
    ``d p_k / d eta_l = p_k (delta_{k c(l)} - p_{c(l)})``, ``c(l)`` the class of block
    ``l``. Probabilities from log-probabilities (``log_softmax``)."""

    reference: bool

    def __call__(self, eta: FloatArray) -> tuple[FloatArray, FloatArray]:
        n, L = eta.shape
        logits = np.column_stack([np.zeros(n), eta]) if self.reference else eta
        p = np.exp(log_softmax(logits, axis=1))
        K = p.shape[1]
        free = np.arange(K - L, K)
        d = -p[:, :, None] * p[:, None, free]
        d[:, free, np.arange(L)] += p[:, free]
        return p, d

    def curvature(self, eta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``T_klm = D_km (delta_{k c(l)} - p_{c(l)}) - p_k D_{c(l) m}``."""
        p, d = self(eta)
        L = eta.shape[1]
        free = np.arange(p.shape[1] - L, p.shape[1])
        own = (np.arange(p.shape[1])[:, None] == free[None, :]).astype(np.float64)  # (K, L)
        T = d[:, :, None, :] * (own[None, :, :, None] - p[:, None, free, None])
        T -= p[:, :, None, None] * d[:, free, :][:, None, :, :]
        return p, d, T


class RowOffsets(Protocol):
    """A model's known per-row term of the linear predictor: ``offset`` plus
    ``log(exposure)`` (each an array of ``n_rows`` values, or None), checked as the
    model's ``predict`` checks them; None where neither is given."""

    def __call__(self, offset: Any, exposure: Any, n_rows: int) -> FloatArray | None:
        ...  # pragma: no cover - protocol


@dataclass(frozen=True)
class NoOffsets:
    """A model whose predictions take no offset (``name``: the model, for the error)."""

    name: str = "this model"

    def __call__(self, offset: Any, exposure: Any, n_rows: int) -> FloatArray | None:
        if offset is not None or exposure is not None:
            raise ValueError(f"{self.name} takes no offset or exposure in its predictions")
        return None


@dataclass(frozen=True)
class EffectsModel:
    """What the interpretation methods ask of a fitted model (one value per model and
    scale, built by the estimator).

    Attributes
    ----------
    blocks : ndarray of shape (L, 1 + d)
        ``[b_l, w_l]`` per linear predictor in raw units (``b_l = 0`` without intercept).
    fit_intercept : bool
        Whether the parameters (and ``covariance``) hold the intercepts.
    mean : MeanMap
        Linear predictors to the reported means (response or link scale).
    outputs : list or None
        The label of each mean (class labels), or None for a single mean.
    covariance : ndarray of shape (P, P)
        The parameters' covariance, ``[b_l?, w_l]`` block after block; NaN rows (not
        identified parameters) are held fixed.
    df : float or None
        Student t's degrees of freedom of the model's tests, or None for z.
    draws : ndarray of shape (D, L, 1 + d) or None
        Posterior draws of ``blocks`` (a Bayesian model): the tables then summarise each
        effect computed per draw (:mod:`problin.inference.effects_draws`) instead of the
        delta method with ``covariance``.
    offsets : RowOffsets
        The rows' offsets from the ``offset=``/``exposure=`` the methods are given
        (:class:`NoOffsets`: the model takes none).
    """

    blocks: FloatArray
    fit_intercept: bool
    mean: MeanMap
    outputs: list[Any] | None
    covariance: FloatArray
    df: float | None = None
    draws: FloatArray | None = None
    offsets: RowOffsets = NoOffsets()


@dataclass(frozen=True)
class Sampling:
    """How a Bayesian model draws its posterior for the interpretation methods:
    ``n_draws`` draws (None: the model's default) seeded by ``random_state``."""

    n_draws: int | None = None
    random_state: Any = None


class RowFunction(Protocol):
    """A per-row quantity of the predictions on some variants of the data, averaged."""

    @property
    def keys(self) -> tuple[Hashable, ...]:
        """The variants it reads."""
        ...  # pragma: no cover - protocol

    def __call__(self, mu: dict[Hashable, FloatArray], block: Rows
                 ) -> tuple[FloatArray, dict[Hashable, FloatArray]]:
        """``(r, c)``: the rows' values (n, K) and, per variant read, the derivative
        ``d r / d mu_variant`` (n, K; element-wise, each output its own)."""
        ...  # pragma: no cover - protocol


def design_matrix(X: Any) -> Any:
    """A design block as the products read it: a sparse block stays sparse (CSR: ``X w``
    and ``X^T G`` are sparse products, no dense copy of its ``n x d``), else float64."""
    return X.tocsr() if sp.issparse(X) else np.asarray(X, dtype=np.float64)


def encode_variants(design: Design | Callable[[pd.DataFrame], FloatArray], block: Rows,
                    variants: dict[Hashable, Variant], width: int) -> dict[Hashable, Any]:
    """The design of each variant of ``block``, with ``width`` columns. Variants are
    stacked and encoded together, up to ``_ENCODE_ROWS`` rows a call: a formula's
    encoding costs about the same for 40 rows as for 4,000 (a slope, a contrast per
    level, the observed rows: one call instead of one each)."""
    # (a design typed for frames is given frames only: the Bayesian draws' blocks)
    encode = cast(Design, design)
    out: dict[Hashable, Any] = {}
    keys = list(variants)
    per_call = max(1, _ENCODE_ROWS // max(1, len(block)))
    for start in range(0, len(keys), per_call):
        batch = keys[start:start + per_call]
        frames = [variants[key](block) for key in batch]
        stacked = frames[0] if len(frames) == 1 else _stack(frames)
        X = design_matrix(encode(stacked))
        if X.ndim != 2 or X.shape[1] != width:
            raise ValueError(f"the data give {X.shape[-1]} design columns, the model has "
                             f"{width}")
        for i, key in enumerate(batch):
            out[key] = X[i * len(block):(i + 1) * len(block)]
    return out


def _stack(frames: Sequence[Rows]) -> Rows:
    """Blocks of rows one after another."""
    if isinstance(frames[0], SparseRows):
        return SparseRows.stack([f for f in frames if isinstance(f, SparseRows)])
    return pd.concat([f for f in frames if isinstance(f, pd.DataFrame)], ignore_index=True)


def average_rows(model: EffectsModel, design: Design, frame: Rows, weights: FloatArray,
                 variants: dict[Hashable, Variant], functions: Sequence[RowFunction],
                 shifts: dict[Hashable, tuple[int, float, bool]] | None = None,
                 derivatives: dict[int, int] | None = None,
                 offset: FloatArray | None = None,
                 elasticities: dict[int, tuple[int, str]] | None = None,
                 centred: dict[int, tuple[int, float]] | None = None
                 ) -> tuple[FloatArray, FloatArray]:
    """The weighted averages over the rows of ``frame`` of each function (F, K) and
    their Jacobians (F, K, P) in the order of ``model.covariance``, in one pass over row
    blocks: each function's Jacobian is ``sum_v X~_v^T (s c_v dmu_v/deta)``.

    ``shifts``: the variants that add ``delta`` to design column ``j`` alone (a plain
    estimator's numeric column): their linear predictors are ``eta + delta w_j`` and
    their design ``X + delta e_j``, so they need no encoding of their own, and all of
    them and the observed rows share one product ``X~^T [G_1 ... G_m]`` per block (one
    read of the block for every variable's slope). Where the shift is a slope's step
    (``nudge``), its means and derivatives are the expansion ``mu + delta D w_j``,
    ``D + delta T w_j`` at the observed rows (``T`` the map's curvature): the central
    difference of two nudges is then the exact derivative ``D w_j`` and its Jacobian
    ``T w_j x~ + D e_j``, with no evaluation of the map per variable.

    ``derivatives``: the functions (index -> design column ``j``) that are such a central
    difference, a plain ``dy/dx`` slope. They are not evaluated per variable at all:
    their averages ``avg(s D) w_j`` and Jacobians ``avg(s T x~) w_j + avg(s D) e_j`` come
    from two sums shared by every variable, ``sum s D`` and one product ``X~^T (s T)``
    per block (one column for a single-index model; as the average marginal effects of
    :mod:`problin.glm.marginal`), whatever the number of variables.

    ``offset``: the rows' known term of the linear predictor (held at each row's value
    in every variant: a change of a variable does not change the row's exposure).

    ``elasticities``: the functions (index -> ``(j, kind)``) that are a plain column's
    ``eyex``/``dyex``/``eydx`` slope of a single-index model, every variable's from
    shared sums (:class:`~problin.inference.effects_elastic.Elasticities`).

    ``centred``: the functions (index -> ``(j, a)``) that are a plain column's centred
    difference ``mu(eta + a w_j) - mu(eta - a w_j)``; for a single-index model of the
    identity, log or logit link (and ``|a w_j| <= 30``) every variable's comes from one
    evaluation per row (:mod:`~problin.inference.effects_centred`), else as the others."""
    # (block-sized products on one BLAS thread: a multithreaded BLAS waits on thread
    # barriers, measured 0.33 s instead of 9 ms for a 7,000 x 50 by 100 product on a
    # busy two-core machine; see _core.blocks.small_blas)
    with one_blas_thread():
        return _average_rows(model, design, frame, weights, variants, functions,
                             shifts or {}, derivatives or {}, offset,
                             Elasticities(elasticities or {}, model.blocks.shape[1]),
                             _factorised(model, centred or {}))


def _factorised(model: EffectsModel, centred: dict[int, tuple[int, float]]
                ) -> tuple[CentredDifference | None, dict[int, tuple[int, float]]]:
    """The map's factorised centred difference and the functions it takes (index ->
    ``(j, a)``): none unless the model is one mean of such a link."""
    mean = model.mean
    name = ("identity" if isinstance(mean, IdentityMap) else
            mean.link.name if isinstance(mean, LinkMap) else "")
    rule = centred_difference(name)
    if rule is None or model.blocks.shape[0] != 1 or model.outputs is not None:
        return None, {}
    W = model.blocks[0, 1:]
    return rule, {f: (j, a) for f, (j, a) in centred.items()
                  if abs(a * W[j]) <= MAX_HALF_SHIFT}


def _average_rows(model: EffectsModel, design: Design, frame: Rows, weights: FloatArray,
                  variants: dict[Hashable, Variant], functions: Sequence[RowFunction],
                  shifts: dict[Hashable, tuple[int, float, bool]],
                  derivatives: dict[int, int], offset: FloatArray | None,
                  elastic: Elasticities,
                  factorised: tuple[CentredDifference | None, dict[int, tuple[int, float]]]
                  ) -> tuple[FloatArray, FloatArray]:
    L, p1 = model.blocks.shape
    W = model.blocks[:, 1:]
    total = float(weights.sum())
    K = len(model.outputs) if model.outputs is not None else 1
    values = np.zeros((len(functions), K))
    jacobians = np.zeros((len(functions), K, L, p1))
    rule, centred = factorised
    rest = [f for f in range(len(functions))
            if f not in derivatives and f not in elastic.wanted and f not in centred]
    centred_f = list(centred)
    steps = np.array([centred[f][1] for f in centred_f])  # (m,) each a
    columns = np.array([centred[f][0] for f in centred_f], dtype=np.intp)
    half = steps * W[0, columns] if centred else steps  # (m,) each a w_j
    # (the variants the other functions read: a batched slope's nudges need none)
    read = {key for f in rest for key in functions[f].keys}
    variants = {key: change for key, change in variants.items() if key in read}
    d_sum = np.zeros((K, L))  # sum s D
    t_sum = np.zeros((p1, K, L, L))  # X~^T (s T)
    width = max(1, 2 * len(rest) * L * K, K * L * L, 3 * len(centred))
    rows = max(256, min(_BLOCK_ROWS, (1 << 20) // width))
    for lo in range(0, len(frame), rows):
        block = frame.iloc[lo:lo + rows]
        s = weights[lo:lo + rows] / total
        # (the intercepts, and the rows' offsets where given: (n, 1) against (L,))
        b = model.blocks[:, 0] if offset is None else \
            model.blocks[:, 0] + offset[lo:lo + rows, None]
        base: Any = None  # (the block's design: dense, or CSR for sparse rows)
        eta0: FloatArray | None = None
        if derivatives or elastic.wanted or centred or \
                any(key in shifts for key in variants):
            base = design_matrix(design(block))
            eta0 = base @ W.T + b
        expansion: tuple[FloatArray, FloatArray, FloatArray] | None = None
        if elastic.wanted:  # (a single-index model: K = L = 1)
            assert base is not None and eta0 is not None
            expansion = model.mean.curvature(eta0)
            mu0, d0, T0 = expansion
            elastic.add(s, base, mu0[:, 0], d0[:, 0, 0], T0[:, 0, 0, 0])
        if derivatives:
            assert base is not None and eta0 is not None
            if expansion is None:
                expansion = model.mean.curvature(eta0)
            _, d0, T0 = expansion
            d_sum += np.einsum("n,nkl->kl", s, d0)
            sT = (s[:, None, None, None] * T0).reshape(len(s), -1)
            t_sum[0] += sT.sum(axis=0).reshape(K, L, L)
            t_sum[1:] += (base.T @ sT).reshape(p1 - 1, K, L, L)
        if centred:  # (K = L = 1: r, dr/deta, dr/da per row and variable)
            assert rule is not None and eta0 is not None
            r, r_eta, r_a = rule(eta0[:, 0], half)
            values[centred_f, 0] += s @ r
            jacobians[centred_f, 0, 0, 0] += s @ r_eta
            jacobians[centred_f, 0, 0, 1:] += (base.T @ (s[:, None] * r_eta)).T
            # (the half-shift a w_j moves with w_j: d/dw_j takes a dr/da)
            jacobians[centred_f, 0, 0, 1 + columns] += steps * (s @ r_a)
        at: dict[Hashable, tuple[FloatArray | None, FloatArray, FloatArray]] = {}
        encoded = encode_variants(design, block, {key: change for key, change in
                                                  variants.items() if key not in shifts},
                                  p1 - 1)
        for key in variants:
            if key in shifts:
                assert base is not None and eta0 is not None
                j, delta, nudge = shifts[key]
                X: Any = None
                if nudge:
                    if expansion is None:
                        expansion = model.mean.curvature(eta0)
                    mu0, d0, T0 = expansion
                    at[key] = (X, mu0 + delta * (d0 @ W[:, j]), d0 + delta * (T0 @ W[:, j]))
                    continue
                eta = eta0 + delta * W[:, j]
            else:
                X = encoded[key]
                eta = X @ W.T + b
            mu, d = model.mean(eta)
            at[key] = (X, mu, d)
        means = {key: mu for key, (_, mu, _) in at.items()}
        shared: dict[int, FloatArray] = {}  # function -> its G over the block's X
        for f in rest:
            r, cotangents = functions[f](means, block)
            values[f] += s @ r
            for key, c in cotangents.items():
                X, _, d = at[key]
                G = ((s[:, None] * c)[:, :, None] * d).reshape(len(s), -1)  # (n, K L)
                total_G = G.sum(axis=0)
                jacobians[f, :, :, 0] += total_G.reshape(K, L)
                if X is None:  # a shift: X + delta e_j
                    j, delta, _ = shifts[key]
                    jacobians[f, :, :, 1 + j] += delta * total_G.reshape(K, L)
                    shared[f] = shared[f] + G if f in shared else G
                else:
                    jacobians[f, :, :, 1:] += (X.T @ G).T.reshape(K, L, p1 - 1)
        if shared:
            assert base is not None
            back = base.T @ np.hstack(list(shared.values()))  # (d, m K L)
            for i, f in enumerate(shared):
                part = back[:, i * K * L:(i + 1) * K * L]
                jacobians[f, :, :, 1:] += part.T.reshape(K, L, p1 - 1)
    assert len(frame) > 0, "at least one row"
    for f, j in derivatives.items():  # d/dtheta_l of D w_j: (T w_j)_l x~ + D_l e_j
        values[f] = d_sum @ W[:, j]
        jacobians[f] = np.moveaxis(t_sum @ W[:, j], 0, -1)
        jacobians[f, :, :, 1 + j] += d_sum
    elastic.finish(W, values, jacobians)
    start = 0 if model.fit_intercept else 1
    return values, jacobians[:, :, :, start:].reshape(len(functions), K, -1)


def _held_covariance(covariance: FloatArray) -> FloatArray:
    """Parameters that are not identified (NaN rows) held fixed: they add no variance."""
    return np.where(np.isnan(covariance), 0.0, np.asarray(covariance, dtype=np.float64))


def effects_frame(index: pd.Index, estimate: FloatArray, jacobian: FloatArray,
                  model: EffectsModel, level: float) -> pd.DataFrame:
    """``estimate, std_err, z (t), p_value, ci_low, ci_high`` with the delta method's
    ``J V J^T`` (only its diagonal is formed, ``(J V * J).sum(1)``)."""
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    V = _held_covariance(model.covariance)
    var = np.einsum("ij,ij->i", jacobian @ V, jacobian)
    se = np.sqrt(np.clip(var, 0.0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = estimate / se
    reference: Any = stats.norm if model.df is None else stats.t(float(model.df))
    q = reference.isf((1.0 - float(level)) / 2.0)
    statistic = "z" if model.df is None else "t"
    table = pd.DataFrame({"estimate": estimate, "std_err": se, statistic: z,
                          "p_value": 2.0 * reference.sf(np.abs(z)),
                          "ci_low": estimate - q * se, "ci_high": estimate + q * se},
                         index=index)
    table.attrs.update(level=float(level), statistic=statistic)
    return table


def output_labels(model: EffectsModel, n_outputs: int) -> Sequence[Any]:
    """The label of each of the ``n_outputs`` means (None for one mean)."""
    return model.outputs if model.outputs is not None else [None] * n_outputs
