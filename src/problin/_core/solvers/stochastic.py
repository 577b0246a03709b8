"""Stochastic gradient ascent of a GLM classifier's log-likelihood, one row at a time.

The texts' per-sample rule for logistic regression is ``theta <- theta + eta (y -
sigma(theta^T x)) x``: the gradient of one row's log-likelihood. For any family the
row's gradient in its linear predictor(s) is the family's own score weight
(``family.score_weights``: ``-(y - p)`` for the logit, the probit's ``-s lambda(s
eta)``, softmax's ``P - T`` per free class), so one loop serves logit, probit and
softmax; nothing here knows a link.

**Scale-free steps.** Plain SGD on raw columns depends on their units (a column in
millimetres takes steps 10^6 times those of the same column in kilometres). Here
each row's step is taken in the coordinates of the columns standardised by the
running weighted mean ``c_t`` and standard deviation ``s_t`` of the rows seen so
far, the row itself included (Welford's update, one row at a time):
``z = (x - c_t) / s_t``. In raw parameters ``theta = A_t phi`` with
``A_t^T [1, x] = [1, z]`` the step is ``theta <- theta - gamma_t A_t (g [1, z])``
(slopes ``-gamma g z_j / s_j``, intercept ``-gamma g (1 - sum_j c_j z_j / s_j)``): SGD
preconditioned by ``A_t A_t^T``, which is SGD on the standardised columns wherever the
statistics stand still. The iterates transform exactly with any affine change of
units of the columns (a column constant so far has ``z = 0``, so its scale never
enters). Without an intercept the columns are scaled by their running root mean
square instead (no centring: nothing would absorb it).

**Warm-up.** The first ``10 (D + 1)`` rows only feed the statistics: a scale from two
or three rows can be wildly small, and a step taken in its units would stay in the
raw parameters (measured: every parameter tens of standard errors off at 20,000 rows).

**Schedule** (:class:`StochasticSchedule`): ``gamma_t = eta0 / ((D + 1) I_t t^power)``
with ``t`` the steps taken, ``D + 1`` the mean squared norm of a standardised row
``[1, z]`` (the LMS learner's step, Bishop 2006 eq. 3.23), ``I_t`` the running mean of
the squared scores per parameter block (the information identity ``E g g^T = I``),
started at the family's information at ``eta = 0`` (1/4 for the logit, 2/pi for the
probit: :func:`start_information`), so the steps follow the curvature of the rows (rare
classes: small ``p (1 - p)``, larger steps), and ``power = 2/3``; the estimate is the
Polyak–Ruppert average ``theta_bar_t = theta_bar_{t-1} + (theta_t - theta_bar_{t-1}) /
t``. Polyak & Juditsky (1992) prove that the average of iterates with steps ``~
t^-power``, ``1/2 < power < 1``, is asymptotically efficient: ``sqrt(n) (theta_bar_n -
theta*)`` has the maximum-likelihood estimate's limit ``N(0, I^-1)``, so the average
and the batch MLE differ by ``o(n^-1/2)``, a vanishing fraction of a standard error.
The leading remainders shrink as ``n^{-(1-power)/2}`` (the last iterate's noise) and
``n^{1/2-power}`` (the loss's curvature along the path); ``2/3`` balances them (Bach &
Moulines 2011, non-asymptotic bounds for ``C t^-alpha`` with averaging; Bottou 2010
for the practice). A constant step ``~ 1/sqrt(N)`` (Bach & Moulines 2013) needs ``N``
in advance, which a stream does not have. Measured (``bench/bench_partial_fit.py``):
at 1,000,000 rows every parameter within 0.7 standard errors of the MLE.

**Weights** scale the row's gradient relative to the mean weight of the rows seen so
far (a common factor of all weights changes nothing); a row of weight 0 is skipped.

Every row's update reads only the rows before it, in order, with scalar recurrences:
a stream gives bit for bit the same state however it is cut into batches. The loop
below, in numpy, costs ~80 us a row (the family's vectorised derivatives on one row
are half of it); for the logit, probit and softmax families the same loop over scalars
(:mod:`.stochastic_rows`) runs compiled where numba is, ~100 times faster, and agrees
with it to rounding.

References: Polyak, B. T. & Juditsky, A. B. (1992), Acceleration of stochastic
approximation by averaging, SIAM J. Control Optim. 30(4), 838-855; Bach, F. &
Moulines, E. (2011), Non-asymptotic analysis of stochastic approximation algorithms
for machine learning, NeurIPS 24; Bach, F. & Moulines, E. (2013), Non-strongly-convex
smooth stochastic approximation with convergence rate O(1/n), NeurIPS 26; Bottou, L.
(2010), Large-scale machine learning with stochastic gradient descent, COMPSTAT.
"""
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from ..types import FloatArray
from .stochastic_rows import ROW_KERNELS, compiled

__all__ = ["RowScores", "StochasticSchedule", "StochasticState", "sgd_rows", "start_state"]


class RowScores(Protocol):
    """What the loop asks of a family (its layout's): each row's gradient of the loss in
    its linear predictor(s), one column per parameter block, and how the n x M
    products of the rows with the blocks become the family's linear predictor."""

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
class StochasticSchedule:
    """The step ``eta0 / ((D + 1) t^power)`` of step ``t`` (from 1), before the division
    by the running information, after ``warmup_per_column (D + 1)`` rows of statistics."""

    eta0: float = 1.0
    power: float = 2.0 / 3.0
    warmup_per_column: int = 10

    def __post_init__(self) -> None:
        if not self.eta0 > 0:
            raise ValueError(f"eta0 must be positive, got {self.eta0}")
        if not 0.5 < self.power <= 1.0:
            raise ValueError("power must lie in (1/2, 1] (Polyak-Juditsky averaging), "
                             f"got {self.power}")

    def warmup(self, n_features: int) -> int:
        """Rows that only feed the columns' statistics before the first step."""
        return self.warmup_per_column * (n_features + 1)

    def step(self, t: int, n_features: int) -> float:
        return self.eta0 / ((n_features + 1.0) * t ** self.power)


@dataclass(frozen=True, eq=False)
class StochasticState:
    """What a stream keeps between batches (replaced, never mutated, by :func:`sgd_rows`).

    ``theta`` and ``average`` are ``(M, p)`` raw parameters, ``[b_k, w_k]`` per block
    (``w_k`` alone without an intercept): the last iterate and its Polyak–Ruppert
    average (the estimate). ``rows``: rows of positive weight seen (the clock ``t``);
    ``weight``, ``mean``, ``m2``: their summed weight, weighted column means and sums
    of squared deviations (Welford)."""

    theta: FloatArray
    average: FloatArray
    rows: int
    weight: float
    mean: FloatArray
    m2: FloatArray
    intercept: bool
    information: float | None = None


def start_state(n_blocks: int, n_features: int, intercept: bool) -> StochasticState:
    """A stream before its first row: zero parameters, no statistics."""
    p = n_features + int(intercept)
    return StochasticState(theta=np.zeros((n_blocks, p)), average=np.zeros((n_blocks, p)),
                           rows=0, weight=0.0, mean=np.zeros(n_features),
                           m2=np.zeros(n_features), intercept=intercept)


def sgd_rows(state: StochasticState, family: RowScores, X: FloatArray, t: np.ndarray,
             sample_weight: FloatArray | None,
             schedule: StochasticSchedule = StochasticSchedule()) -> StochasticState:
    """The state after one stochastic gradient step per row of ``X`` (dense, n x D), in
    order; ``t`` the rows' class codes as the family reads them."""
    theta, average = state.theta.copy(), state.average.copy()
    mean, m2 = state.mean.copy(), state.m2.copy()
    rows, weight, intercept, info = state.rows, state.weight, state.intercept, state.information
    D, M = X.shape[1], theta.shape[0]
    warmup = schedule.warmup(D)
    start = start_information(family, M)
    floor = 1e-6 * start  # (rows all fitted with certainty, as under separation: the
    if info is None:       # steps stay finite)
        info = start
    w = np.ones(X.shape[0]) if sample_weight is None else sample_weight
    loop, kind = compiled(), ROW_KERNELS.get(family.name)
    if loop is not None and kind is not None:
        theta, average = np.ascontiguousarray(theta), np.ascontiguousarray(average)
        rows, weight, info = loop(
            np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(t, dtype=np.intp),
            np.ascontiguousarray(w, dtype=np.float64), theta, average, mean, m2, rows,
            float(weight), float(info), intercept, kind, family.reference_class,
            float(schedule.eta0), float(schedule.power), warmup, floor)
        return replace(state, theta=theta, average=average, rows=rows, weight=weight,
                       mean=mean, m2=m2, information=info)
    one = np.ones(1)
    zeros = np.zeros(D)
    for i in range(X.shape[0]):
        wi = float(w[i])
        if wi <= 0.0:
            continue
        x = X[i]
        rows += 1
        weight += wi
        delta = x - mean
        mean += (wi / weight) * delta
        m2 += wi * delta * (x - mean)
        clock = rows - warmup
        if clock <= 0:
            continue  # (the statistics settle first: see the module's docstring)
        spread = m2 / weight if intercept else m2 / weight + mean * mean
        inv = np.divide(1.0, np.sqrt(spread), out=zeros.copy(), where=spread > 0.0)
        z = (x - mean if intercept else x) * inv
        eta = theta[:, 1:] @ x + theta[:, 0] if intercept else theta @ x
        G, _ = family.score_weights(t[i:i + 1], family.predictors(eta[None, :]),
                                    one * (wi * rows / weight))
        g = G[0]
        gamma = schedule.step(clock, D) / max(info, floor)
        info += (float(g @ g) / M - info) / (clock + 1)  # (after the step: not its own)
        du = np.outer(gamma * g, z * inv)  # the slopes' step in raw units: g z_j / s_j
        if intercept:
            theta[:, 1:] -= du
            theta[:, 0] -= gamma * g - du @ mean
        else:
            theta -= du
        average += (theta - average) / clock
    return replace(state, theta=theta, average=average, rows=rows, weight=weight,
                   mean=mean, m2=m2, information=info)


def start_information(family: RowScores, n_blocks: int) -> float:
    """The family's Fisher information per block at ``eta = 0``, averaged over the
    classes: the mean ``|g|^2 / M`` of one row of each class (the information identity
    ``E g g^T = I``). 1/4 for the logit, ``2 / pi`` for the probit. (Kept per kind of
    family: a call on the family costs more than a compiled batch of 1,000 rows.)"""
    key = (type(family), family.name, family.reference_class, n_blocks)
    if key not in _START:
        _START[key] = _start_information(family, n_blocks)
    return _START[key]


_START: dict[tuple[type, str, bool, int], float] = {}


def _start_information(family: RowScores, n_blocks: int) -> float:
    K = n_blocks + 1 if n_blocks > 1 else 2
    codes = np.arange(K)
    G, _ = family.score_weights(codes, family.predictors(np.zeros((K, n_blocks))), None)
    return float(np.sum(G * G)) / (K * n_blocks)
