"""Stochastic Newton ascent of a GLM classifier's log-likelihood, one row at a time.

The texts' per-sample rule for logistic regression is ``theta <- theta + eta (y -
sigma(theta^T x)) x``: the gradient of one row's log-likelihood. For any family the
row's gradient in its linear predictor(s) is the family's own score weight
(``family.score_weights``: ``-(y - p)`` for the logit, the probit's ``-s lambda(s
eta)``, softmax's ``P - T`` per free class), so one loop serves logit, probit and
softmax; nothing here knows a link.

**The step** is the stochastic Newton algorithm of Bercu, Godichon-Baggioni & Portier
(2020): row ``n`` moves the parameters by

    theta_n = theta_{n-1} - S_n^-1 (g_n (x) v_n),    S_n = S_0 + sum_{k <= n} C_k (x) v_k v_k^T,

``v = [1, z]`` the row's features, ``g_n`` its score weights and ``C_n`` its curvature
(the family's observed information in the linear predictors, ``p (1 - p)`` for the
logit, a ``(K - 1) x (K - 1)`` block ``diag(p) - p p^T`` for softmax) at the current
parameters. ``S_n / n`` tends to the Fisher information, so the step is ``I^-1 / n``
times the row's score: the Robbins–Monro recursion with the optimal gain, which is
asymptotically efficient without averaging and without a learning rate to tune
(``sqrt(n) (theta_n - theta*)`` has the maximum-likelihood estimate's limit ``N(0,
I^-1)``, Bercu et al., Theorem 4.2), and is affine-invariant: correlated or
badly scaled columns do not slow it, as they slowed first-order steps (measured with the
averaged gradient steps this replaces, ``gamma_t = 1 / ((D + 1) I_t t^(2/3))``: 6-33
standard errors from the MLE with 20 columns at 200,000 rows, 41-93 with 50 columns at
1,000,000). ``S_n^-1`` is kept, not ``S_n``: the curvature block is factored ``L
diag(d) L^T`` and each of its ``K - 1`` rank-one terms ``d_c (L_c (x) v)(L_c (x) v)^T``
enters by a Sherman–Morrison update, ``O(P^2)`` a term for ``P`` parameters. Each
pivot ``d_c`` is raised to at least ``floor / n^0.49`` (the paper's truncation of
``p (1 - p)`` by ``c_beta / n^beta``, ``beta < 1/2``), so that rows fitted with
certainty (separation) still make ``S_n`` grow. The row's own curvature is in
``S_n`` before its step (recursive least squares' order; the paper steps with
``S_{n-1}``): a row's step along its own direction is damped by ``1 / (1 + d v^T
S_{n-1}^-1 v)``, so the first steps cannot overshoot.

**The remainder's correction.** Summing the recursion, ``S_n (theta_n - theta_hat) =
S_0 (theta_0 - theta_hat) + 1/2 sum_k h'_k (v_k^T delta_k)^2 v_k`` to second order
(``theta_hat`` the MLE, ``delta_k = theta_{k-1} - theta_hat``, ``h'`` the derivative of
the row's curvature): each row's score is taken at an iterate ``delta_k`` away, and these
terms add up to ``~ D log n``, a bias of ``~ D log(n) / sqrt(n)`` standard errors
(measured: 3-9 standard errors for the probit with 50 columns between 30,000 and
1,000,000 rows). ``E (v^T delta_k)^2`` is the iterate's variance along ``v``, ``v^T
S_{k-1}^-1 v`` times the mean row weight (the iterate is efficient), so each row's score
weight gets ``+ 1/2 h' v^T S_{k-1}^-1 v`` (softmax: ``1/2 sum_bc T_abc Lam_bc`` with the
curvature's derivatives ``T`` and the blocks' ``Lam``:
:func:`~.stochastic_rows.bias_correction`), which leaves a sum of mean zero. ``S^-1 (I (x)
v)`` is formed once a row and updated with ``S^-1`` by each rank-one term, so a row costs
``M`` matrix-vector products and ``M`` symmetric rank-one updates.

**Warm-up and start.** The first ``10 (D + 1)`` rows (:class:`StochasticNewton`)
only feed statistics: the weighted column means and co-moments (Welford's update, one
row at a time) and the co-moments of the rows' scores at ``theta = 0`` with the
columns. At their end the columns' centre ``c`` and scale ``s`` are frozen (without an
intercept: no centre, the root mean square), all later rows are taken in ``z = (x -
c) / s``, and the stream starts from one Newton step from zero on the warm-up rows,
``theta_0 = -H_0^-1 sum_k g_k(0) v_k``, ``H_0 = C(0) (x) (sum_k v_k v_k^T + m I)``: their
Hessian at zero plus a ridge of one mean row weight ``m`` per parameter (a constant or
collinear column would leave it singular). ``S_0`` keeps a tenth of ``H_0`` (``D + 1``
rows' worth): the start's error enters the estimate as ``S_n^-1 S_0 (theta_0 -
theta_hat)``, and a start linearised at zero on ``10 (D + 1)`` rows is far from the
maximum (measured with all of ``H_0``: the probit with 50 columns 3.2 standard errors
off at 1,000,000 rows; with a tenth, 0.19). The path is affine-invariant in exact
arithmetic; the standardised coordinates keep ``S^-1`` well conditioned in floating
point whatever the columns' units and offsets (raw columns at 1e4 +- 1e-3 would make
``S`` singular to rounding), and make the ridge units-free. A column constant during
the warm-up is scaled by its absolute value (or 1 at zero).

Every row's update reads only the rows before it, in order, with scalar recurrences:
a stream gives bit for bit the same state however it is cut into batches. The loop
below, in numpy, costs 100-600 microseconds a row; for the logit, probit and softmax
families the same loop over scalars (:mod:`.stochastic_rows`) runs compiled where
numba is and agrees with it to rounding.

**Weights** multiply a row's score and curvature (a common factor of all weights changes
nothing: ``S`` and the scores scale together); a row of weight 0 is skipped.

References: Bercu, B., Godichon-Baggioni, A. & Portier, B. (2020), An efficient
stochastic Newton algorithm for parameter estimation in logistic regressions, SIAM J.
Control Optim. 58(1), 348-367; Robbins, H. & Monro, S. (1951), A stochastic
approximation method, Ann. Math. Statist. 22(3); Polyak, B. T. & Juditsky, A. B. (1992),
Acceleration of stochastic approximation by averaging, SIAM J. Control Optim. 30(4).
"""
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from ..types import FloatArray
from .stochastic_rows import ROW_KERNELS, bias_correction, compiled, floored_ldl

__all__ = ["RowScores", "StochasticNewton", "StochasticState", "raw_parameters",
           "sgd_rows", "start_state", "state_from_averaged_sgd"]


class RowScores(Protocol):
    """What the loop asks of a family (its layout's): each row's gradient of the loss in
    its linear predictor(s), one column per parameter block (and the binary families'
    curvature), and how the n x M products of the rows with the blocks become the
    family's linear predictor."""

    @property
    def name(self) -> str:
        """The family's name (its scalar kernel's key in ``stochastic_rows.ROW_KERNELS``)."""
        ...

    @property
    def reference_class(self) -> bool:
        """Whether the first class is the reference (softmax's contrasts)."""
        ...

    def score_weights(self, t: np.ndarray, eta: FloatArray, sample_weight: FloatArray | None
                      ) -> tuple[FloatArray, FloatArray | None]: ...

    def predictors(self, A: FloatArray) -> FloatArray: ...


@dataclass(frozen=True)
class StochasticNewton:
    """The algorithm's constants: ``warmup_per_column (D + 1)`` rows of statistics
    first; the curvature pivots' floor ``floor n^-floor_power`` (in units of the
    family's information at zero); the start's ridge, in mean row weights."""

    warmup_per_column: int = 10
    start_share: float = 0.1
    floor: float = 0.01
    floor_power: float = 0.49
    ridge: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 < self.floor_power < 0.5:
            raise ValueError("floor_power must lie in (0, 1/2) (Bercu et al.'s truncation), "
                             f"got {self.floor_power}")

    def warmup(self, n_features: int) -> int:
        """Rows that only feed the statistics before the first step."""
        return self.warmup_per_column * (n_features + 1)


@dataclass(frozen=True, eq=False)
class StochasticState:
    """What a stream keeps between batches (replaced, never mutated, by :func:`sgd_rows`).

    ``theta``: ``(M, p)`` parameters in the standardised coordinates, ``[b_k, w_k]`` per
    block (``w_k`` alone without an intercept), and ``inverse`` (``P x P``, ``P = M p``)
    the inverse of the summed curvature ``S_n`` (empty during the warm-up). ``rows``:
    rows of positive weight seen; ``weight``: their summed weight. The warm-up's
    statistics: ``mean``, ``comoment`` (the columns' weighted means and D x D co-moments),
    ``score_mean``, ``score_comoment`` (the scores' at zero, M and M x D); after it,
    ``center`` and ``scale``, the frozen standardisation (empty before)."""

    theta: FloatArray
    inverse: FloatArray
    rows: int
    weight: float
    mean: FloatArray
    comoment: FloatArray
    score_mean: FloatArray
    score_comoment: FloatArray
    center: FloatArray
    scale: FloatArray
    intercept: bool


def start_state(n_blocks: int, n_features: int, intercept: bool) -> StochasticState:
    """A stream before its first row: zero parameters, no statistics."""
    p = n_features + int(intercept)
    return StochasticState(
        theta=np.zeros((n_blocks, p)), inverse=np.zeros((0, 0)), rows=0, weight=0.0,
        mean=np.zeros(n_features), comoment=np.zeros((n_features, n_features)),
        score_mean=np.zeros(n_blocks), score_comoment=np.zeros((n_blocks, n_features)),
        center=np.zeros(0), scale=np.zeros(0), intercept=intercept)


def raw_parameters(state: StochasticState) -> FloatArray:
    """``(M, p)`` parameters on the raw columns (zero during the warm-up): slopes
    ``phi_j / s_j``, intercept ``phi_0 - sum_j c_j w_j``."""
    if state.scale.size == 0:
        return np.zeros_like(state.theta)
    if not state.intercept:
        return state.theta / state.scale
    slopes = state.theta[:, 1:] / state.scale
    return np.column_stack([state.theta[:, 0] - slopes @ state.center, slopes])


def sgd_rows(state: StochasticState, family: RowScores, X: FloatArray, t: np.ndarray,
             sample_weight: FloatArray | None,
             config: StochasticNewton = StochasticNewton()) -> StochasticState:
    """The state after one stochastic Newton step per row of ``X`` (dense, n x D), in
    order (the warm-up's rows: statistics only); ``t`` the rows' class codes as the
    family reads them."""
    w = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, float)
    start = 0
    if state.scale.size == 0:
        state, start = _warm_up(state, family, X, t, w, config)
        if state.scale.size == 0:
            return state
    X, t, w = X[start:], t[start:], w[start:]
    theta, inverse = state.theta.copy(), state.inverse.copy()
    floor = config.floor * _start_curvature(family, theta.shape[0])[1]
    loop, kind = compiled(), ROW_KERNELS[family.name]
    if loop is not None:
        rows, weight = loop(
            np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(t, dtype=np.intp),
            np.ascontiguousarray(w, dtype=np.float64), theta, inverse, state.center,
            state.scale, state.rows, float(state.weight), state.intercept, kind,
            family.reference_class, floor, config.floor_power)
    else:
        rows, weight = _newton_loop(state, family, X, t, w, theta, inverse, floor,
                                    config.floor_power)
    return replace(state, theta=theta, inverse=inverse, rows=rows, weight=weight)


def _newton_loop(state: StochasticState, family: RowScores, X: FloatArray, t: np.ndarray,
                 w: FloatArray, theta: FloatArray, inverse: FloatArray, floor: float,
                 floor_power: float) -> tuple[int, float]:
    """The steps in numpy, asking the family for the scores and curvatures (``theta``
    and ``inverse`` in place; the remainder's correction is the scalar kernels')."""
    rows, weight = state.rows, state.weight
    M, p = theta.shape
    kind = ROW_KERNELS[family.name]
    L, d, fix = np.empty((M, M)), np.empty(M), np.empty(M)
    one = np.ones(1)
    for i in range(X.shape[0]):
        wi = float(w[i])
        if wi <= 0.0:
            continue
        rows += 1
        weight += wi
        z = (X[i] - state.center) / state.scale
        v = np.r_[1.0, z] if state.intercept else z
        eta = theta @ v
        Q = (inverse.reshape(M * p, M, p) @ v)  # S^-1 (I (x) v), P x M
        Lam = v @ Q.reshape(M, p, M)  # (I (x) v)^T Q
        G, h = family.score_weights(t[i:i + 1], family.predictors(eta[None, :]), one * wi)
        g = G[0]
        bias_correction(kind, int(t[i]), eta, g, wi, family.reference_class, Lam,
                        weight / rows, fix)
        floored_ldl(_curvature(g, h, int(t[i]), wi, family.reference_class),
                    wi * floor / rows ** floor_power, L, d)
        for c in range(M):  # S <- S + d_c u u^T, u = L[:, c] (x) v, by Sherman-Morrison
            q = Q @ L[:, c]
            factor = d[c] / (1.0 + d[c] * (L[:, c] @ (Lam @ L[:, c])))
            inverse -= factor * np.outer(q, q)  # (symmetric bit for bit)
            r = v @ q.reshape(M, p).T
            Q -= np.outer(factor * q, r)
            Lam -= np.outer(factor * r, r)
        theta -= (Q @ (g + fix)).reshape(M, p)
    return rows, weight


def _curvature(g: FloatArray, h: FloatArray | None, code: int, weight: float,
               contrast: bool) -> FloatArray:
    """A row's weighted curvature block in its linear predictors: the binary family's
    ``h``; softmax's ``weight (diag(p) - p p^T)``, ``p`` read back from ``g = weight (p -
    e_t)`` (``stochastic_rows.softmax_curvature``'s operations)."""
    if h is not None:
        return np.asarray(h, dtype=np.float64).reshape(1, 1)
    observed = np.arange(g.size) == (code - 1 if contrast else code)
    p = g / weight + observed
    return weight * (np.diag(p) - np.outer(p, p))


def _warm_up(state: StochasticState, family: RowScores, X: FloatArray, t: np.ndarray,
             w: FloatArray, config: StochasticNewton) -> tuple[StochasticState, int]:
    """Feed the warm-up statistics from the first rows of the batch; at the warm-up's
    last row, freeze the standardisation and take the starting Newton step. Returns the
    state and the number of the batch's rows consumed."""
    D, M = X.shape[1], state.theta.shape[0]
    warmup = config.warmup(D)
    mean, comoment = state.mean.copy(), state.comoment.copy()
    score_mean, score_comoment = state.score_mean.copy(), state.score_comoment.copy()
    rows, weight = state.rows, state.weight
    scores = _start_curvature(family, M)[0]
    i = 0
    while i < X.shape[0] and rows < warmup:
        wi = float(w[i])
        x = X[i]
        i += 1
        if wi <= 0.0:
            continue
        rows += 1
        weight += wi
        share = wi / weight
        delta = x - mean
        mean += share * delta
        after = x - mean
        comoment += wi * np.outer(delta, after)
        dg = scores[int(t[i - 1])] - score_mean
        score_mean += share * dg
        score_comoment += wi * np.outer(dg, after)
    state = replace(state, rows=rows, weight=weight, mean=mean, comoment=comoment,
                    score_mean=score_mean, score_comoment=score_comoment)
    if rows < warmup:
        return state, i
    return _newton_start(state, family, config.start_share), i


def _newton_start(state: StochasticState, family: RowScores, share: float
                  ) -> StochasticState:
    """The frozen standardisation and one Newton step from zero on the warm-up rows."""
    weight, mean = state.weight, state.mean
    comoment = 0.5 * (state.comoment + state.comoment.T)
    if state.intercept:
        center = mean
        spread = np.diag(comoment) / weight
        scatter = comoment  # sum w (x - c)(x - c)^T
        cross = state.score_comoment  # sum w g (x - c)^T (the scores' own mean cancels)
    else:
        center = np.zeros_like(mean)
        scatter = comoment + weight * np.outer(mean, mean)  # sum w x x^T
        spread = np.diag(scatter) / weight
        cross = state.score_comoment + weight * np.outer(state.score_mean, mean)
    scale = np.sqrt(spread)
    flat = ~(scale > 0.0)
    scale[flat] = np.where(center[flat] != 0.0, np.abs(center[flat]), 1.0)
    V = scatter / np.outer(scale, scale)
    gv = cross / scale
    if state.intercept:
        V = np.block([[np.full((1, 1), weight), np.zeros((1, V.shape[0]))],
                      [np.zeros((V.shape[0], 1)), V]])
        gv = np.column_stack([weight * state.score_mean, gv])
    V[np.diag_indices_from(V)] += weight / state.rows  # the ridge: one mean row weight
    M, p = gv.shape
    C0 = _start_curvature(family, M)[2]
    eye_p, eye_m = np.eye(p), np.eye(M)
    inverse = np.kron(cho_solve(cho_factor(C0), eye_m), cho_solve(cho_factor(V), eye_p))
    inverse = 0.5 * (inverse + inverse.T)
    theta = -(inverse @ gv.ravel()).reshape(M, p)
    inverse /= share
    return replace(state, theta=theta, inverse=inverse, center=center, scale=scale)


def _start_curvature(family: RowScores, n_blocks: int
                     ) -> tuple[FloatArray, float, FloatArray]:
    """The family at ``eta = 0``: each class's score weights (K x M), the mean
    curvature per block, and the curvature block (M x M), which do not depend on the
    class there. (Kept per kind of family: a call on the family costs more than a
    compiled batch of 1,000 rows.)"""
    key = (type(family), family.name, family.reference_class, n_blocks)
    if key not in _START:
        K = n_blocks + 1 if family.reference_class or n_blocks == 1 else n_blocks
        codes = np.arange(K)
        G, h = family.score_weights(codes, family.predictors(np.zeros((K, n_blocks))), None)
        C = _curvature(G[0], None if h is None else h[:1], 0, 1.0, family.reference_class)
        _START[key] = (G, float(np.trace(C)) / n_blocks, C)
    return _START[key]


_START: dict[tuple[type, str, bool, int], tuple[FloatArray, float, FloatArray]] = {}


def state_from_averaged_sgd(fields: dict[str, Any]) -> dict[str, Any]:
    """The fields of a stream saved by the averaged-gradient ``partial_fit`` (model-file
    record version 1: raw last iterate and average, Welford ``mean``/``m2`` per column,
    running ``information``) as this algorithm's state. The estimate (the average) is
    kept exactly, in the coordinates of the columns' moments so far; ``S`` restarts as
    the information times the weight seen on uncorrelated columns (the old state holds
    no cross-moments), so a continued stream takes Newton steps from there. A stream
    still in its warm-up keeps its moments (no cross-moments) and restarts its scores."""
    average = np.asarray(fields["average"], dtype=np.float64)
    mean, m2 = np.asarray(fields["mean"], np.float64), np.asarray(fields["m2"], np.float64)
    rows, weight = int(fields["rows"]), float(fields["weight"])
    intercept = bool(fields["intercept"])
    M, p = average.shape
    D = mean.size
    state = start_state(M, D, intercept)
    state = replace(state, rows=rows, weight=weight, mean=mean.copy(), comoment=np.diag(m2))
    information = fields.get("information")
    if information is None or rows <= StochasticNewton().warmup(D) or not weight > 0:
        return vars(state)
    center = mean if intercept else np.zeros(D)
    scale = np.sqrt(m2 / weight if intercept else m2 / weight + mean * mean)
    flat = ~(scale > 0.0)
    scale[flat] = np.where(center[flat] != 0.0, np.abs(center[flat]), 1.0)
    slopes = average[:, int(intercept):] * scale
    theta = (np.column_stack([average[:, 0] + average[:, 1:] @ center, slopes])
             if intercept else slopes)
    inverse = np.eye(M * p) / (float(information) * weight)
    return vars(replace(state, theta=theta, inverse=inverse, center=center, scale=scale))
