"""Sequential least mean squares (Widrow & Hoff 1960; Bishop 2006, §3.1.3 eq. 3.23)."""
import functools
from numbers import Integral, Real
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from .._core.moments.class_stats import ClassStats
from .._core.moments.standardize import ColumnScaling, column_scaling
from .._core.sequential import compiled
from .._core.types import MatrixLike
from .._core.validation import resolvable
from .._dask.chunks import _check_chunk, column_stats_chunk, reduce_chunks
from .._dask.online import sequential_epoch
from .._dask.reductions import dask_regression_data
from .._params import validate_params
from .._source import data_source
from ..exceptions import ConvergenceWarning, warn_at_caller
from ._base import LinearRegressorBase

__all__ = ["LMSRegressor"]


class LMSRegressor(LinearRegressorBase):
    r"""Least mean squares: stochastic gradient descent on the sum-of-squares error.

    One update per sample, ``w <- w + eta (t_n - w^T phi_n) phi_n`` with
    ``phi_n = [1, z_n]`` (the dummy basis function ``phi_0 = 1`` carries the
    intercept). With a step that decays over epochs it converges to the
    least-squares solution.

    The updates run on standardised features ``z_j = (x_j - m_j) / s_j``,
    each column's mean and standard deviation over the data seen (the rows of
    ``fit``; in a ``partial_fit`` stream, all rows up to and including the
    current batch; without an intercept ``z_j = x_j / s_j``, ``s_j`` the root
    mean square), and the weights are mapped back exactly: ``coef_ = v / s``,
    ``intercept_ = b - coef_ @ m``.
    Plain LMS moves ``w_j`` by ``x_nj`` per update, so its path (and where a
    finite number of epochs leaves it) depends on the units of the columns, and
    a column far from zero conditions it like a second intercept;
    standardised, scaling a column by ``c`` divides its weight by ``c`` and
    shifting it changes only the intercept, whatever the epochs.

    Parameters
    ----------
    eta0 : float, default=0.1
        Relative learning rate: the step is ``eta = eta0 / mean |phi_n|^2``
        with the standardised ``phi_n``, i.e. ``eta0 / (1 + D)`` for ``D``
        non-constant features with an intercept, so ``eta0`` does not depend
        on the units of the inputs; LMS is stable in the mean for ``eta0 < 2``.
    learning_rate : {"invscaling", "constant"}, default="invscaling"
        ``"invscaling"``: ``eta_e = eta / e^power_t`` in epoch ``e = 1, 2, ...``
        (Robbins-Monro for ``1/2 < power_t <= 1``: converges to least squares);
        ``"constant"``: ``eta`` throughout (ends in a neighbourhood of it).
    power_t : float, default=1.0
    max_iter : int, default=100
        Epochs (passes over the data) of ``fit``; ``partial_fit`` makes one.
    tol : float, default=1e-4
        ``fit`` stops when an epoch moves no weight of the standardised
        features by more than ``tol`` relative to the largest (or to the
        targets' standard deviation, where larger): a rule that depends on
        the units of neither the inputs nor the targets.
    shuffle : bool, default=True
        Visit the samples in a new random order each epoch.
    random_state : int, RandomState instance or None, default=None
    fit_intercept : bool, default=True

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_outputs, n_features)
    intercept_ : float or ndarray of shape (n_outputs,)
    n_iter_ : int
        Epochs run by the last ``fit``.
    t_ : int
        Epochs run so far (the learning-rate schedule's clock).

    Examples
    --------
    >>> import numpy as np
    >>> from problin import LMSRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 2))
    >>> t = X @ [1.0, -2.0] + 0.5
    >>> model = LMSRegressor(random_state=0).fit(X, t)
    >>> print(model.coef_.round(3), round(model.intercept_, 3))
    [ 1. -2.] 0.5
    """

    _parameter_constraints = {
        "eta0": [Interval(Real, 0, None, closed="neither")],
        "learning_rate": [StrOptions({"invscaling", "constant"})],
        "power_t": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "fit_intercept": ["boolean"],
    }

    def __init__(self, eta0: float = 0.1, learning_rate: str = "invscaling", power_t: float = 1.0,
                 max_iter: int = 100, tol: float = 1e-4, shuffle: bool = True,
                 random_state: Any = None, fit_intercept: bool = True) -> None:
        self.eta0 = eta0
        self.learning_rate = learning_rate
        self.power_t = power_t
        self.max_iter = max_iter
        self.tol = tol
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept

    def fit(self, X: MatrixLike, y: ArrayLike) -> Self:  # type: ignore[override]  # no weights
        """Run up to ``max_iter`` epochs of LMS from zero weights.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Or a Dask array/DataFrame: each epoch then runs as a chain of
            chunk tasks carrying the weights (in storage order on the
            workers holding the chunks, or, with ``shuffle``, in the same
            permutation of all rows as for numpy input); the weights equal
            those of the numpy fit.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)

        Returns
        -------
        self
        """
        validate_params(self)
        X, T = self._data(X, y, reset=True)
        self._start(X, T)
        # "Relative to the largest weight, or to the targets' spread" (the weights of
        # standardised features are in y's units; a floor of 1 made the rule depend on
        # them: 16 epochs for y, 2 for y / 1000).
        for epoch in range(1, self.max_iter + 1):
            change = self._epoch(X, T)
            if epoch == 1:  # (after a pass has checked every chunk of y for NaN)
                first, floor = change, _target_spread(T)
            if change <= self.tol * max(floor, float(np.max(np.abs(self._W)))):
                break
        else:
            # Moving more at the end than at the start: diverging, not slow.
            advice = ("the weights move more each epoch: the step is too large, reduce eta0"
                      if change > first else "increase max_iter")
            warn_at_caller(f"LMS did not settle in {self.max_iter} epochs (tol={self.tol:g}); "
                           f"{advice}", ConvergenceWarning)
        self.n_iter_ = epoch
        return self

    def partial_fit(self, X: MatrixLike, y: ArrayLike) -> Self:  # type: ignore[override]  # as fit
        """One epoch of LMS over the batch ``(X, y)``, continuing from the current weights.

        Streaming semantics (see docs/streaming.md):

        * State kept between calls: the weights, the columns' statistics over
          all rows seen, the step ``eta`` (``eta0 / (1 + D)``), the
          learning-rate clock ``t_`` and the shuffling random generator (seeded
          by ``random_state`` on the first call).
        * Each call first standardises by the mean and standard deviation of all
          rows seen, its own included (one more pass over a Dask batch), and
          re-expresses the weights so that the model's function is unchanged:
          a stream that starts with one row (every column constant so far)
          gets its columns' scales as the rows arrive.
        * Every call is one epoch over its own batch and advances ``t_`` by
          one: with ``learning_rate="invscaling"`` call ``i`` uses
          ``eta / i^power_t``, so the step decays per *call*, not per row.
          With ``shuffle`` the batch's rows are visited in the next
          permutation drawn from the generator, within the batch only.
        * Hence a loop over chunks is *not* one ``fit`` (nor one call on all
          rows): it is exactly the sequential pass over the rows, chunk by
          chunk, with that per-call schedule; both tend to the least-squares
          solution, they agree only in distribution. One call on all rows
          equals ``fit`` with ``max_iter=1``.
        * No ``sample_weight``. The number of outputs is fixed by the first
          call. ``fit`` afterwards discards all of this and starts from zero.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Or a Dask array/DataFrame: the epoch runs chunk by chunk on the
            workers, with the same result as the computed batch.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)

        Returns
        -------
        self
        """
        validate_params(self)
        first = not hasattr(self, "t_")
        X, T = self._data(X, y, reset=first)
        if first:
            self._start(X, T)
        elif T.shape[1] != self._W.shape[0]:
            raise ValueError(f"y has {T.shape[1]} outputs, the model {self._W.shape[0]}")
        elif hasattr(self, "_seen_count"):  # (a model file of an earlier version has
            self._restandardise(X)          # only its first batch's scaling: kept)
        self._epoch(X, T)
        self.n_iter_ = 1
        return self

    def _data(self, X: MatrixLike, y: Any, reset: bool) -> tuple[Any, Any]:
        """``(X, T)``: validated rows and 2-D targets, numpy or (for Dask ``X``) Dask."""
        return data_source(X).reduce(lambda X: _dask_data(self, X, y, reset),
                                     lambda X: self._check_data(X, y, None, reset=reset)[:2])

    def _start(self, X: Any, T: Any) -> None:
        """Zero weights, a fresh clock and generator, and the columns' statistics of ``X``."""
        stats = self._column_stats(X)
        self._rng = check_random_state(self.random_state)
        self._W = np.zeros((T.shape[1], X.shape[1] + int(self.fit_intercept)))
        self._keep_scaling(stats)
        # mean |phi|^2 of the standardised features: 1 per column, plus phi_0.
        # (Every column counts, also one constant so far: it may vary in later
        # batches, and a step sized without it diverged there.)
        square_norm = float(X.shape[1]) + int(self.fit_intercept)
        self._step = self.eta0 / max(square_norm, 1.0)
        self.t_ = 0

    def _column_stats(self, X: Any, seen: ClassStats | None = None) -> ClassStats:
        """The columns' statistics of ``X`` (merged with ``seen``), once every column is
        resolvable in float64 (below 1e-144 it would be scaled as constant: dropped)."""
        stats = data_source(X).column_stats()
        if seen is not None:
            stats = seen.merge(stats)
        return resolvable(self, stats)

    def _keep_scaling(self, stats: ClassStats) -> None:
        """Keep the statistics of the rows seen and the standardisation they give."""
        # Arrays (not records) persist between calls: model files store them as they are.
        scaling = column_scaling(stats, centre=self.fit_intercept)
        self._x_origin, self._x_offset, self._x_scale = \
            scaling.origin, scaling.offset, scaling.scale
        self._seen_count, self._seen_origin, self._seen_offset, self._seen_sq = \
            stats.counts, stats.origin, stats.offset, stats.sq

    def _restandardise(self, X: Any) -> None:
        """Standardise by all rows seen so far, ``X`` included, re-expressing the weights
        so that the model's function does not change: with raw weights ``w = v / s``,
        ``v' = w s'`` and ``b' = b + w^T (m' - m)``."""
        old = self._scaling()
        seen = ClassStats(self._seen_count, self._seen_origin, self._seen_offset,
                          self._seen_sq, None, "diag")
        stats = self._column_stats(X, seen)
        new = column_scaling(stats, centre=self.fit_intercept)
        off = int(self.fit_intercept)
        W = self._W.copy()
        coef = old.coef(W[:, off:])
        W[:, off:] = coef * new.scale
        if off:
            W[:, 0] += coef @ (new.origin - old.origin) + coef @ (new.offset - old.offset)
        self._W = W
        self._keep_scaling(stats)

    def _scaling(self) -> ColumnScaling:
        return ColumnScaling(self._x_origin, self._x_offset, self._x_scale)

    def _epoch(self, X: Any, T: Any) -> float:
        """One pass of ``w <- w + eta (t_n - w^T phi_n) phi_n``; returns the largest move.

        Dask input runs the same per-row updates as a chain of chunk tasks
        (:func:`~problin._dask.online.sequential_epoch`), in storage
        order or in the same permutation as numpy input: the weights agree.
        """
        self.t_ += 1
        eta = self._step
        if self.learning_rate == "invscaling":
            eta /= self.t_ ** self.power_t
        order = self._rng.permutation(X.shape[0]) if self.shuffle else None
        off = int(self.fit_intercept)
        step = functools.partial(_rows_step, eta=eta, off=off)
        scaling = self._scaling()
        before = self._W  # standardised weights [b_z, v]
        def on_chunks(X: Any) -> np.ndarray:  # a chain of chunk tasks
            prepare = functools.partial(_dask_rows, scaling=scaling)
            W: np.ndarray = sequential_epoch(step, before, prepare, X, T, order=order)
            return W

        def in_memory(X: Any) -> np.ndarray:
            W = before
            for lo in range(0, X.shape[0], 4096):  # visit rows in block-sized copies
                idx = slice(lo, lo + 4096) if order is None else order[lo:lo + 4096]
                W = step(W, lo, scaling.transform(X[idx]), T[idx])
            return W

        with np.errstate(over="ignore", invalid="ignore"):  # (divergence: checked below)
            W = data_source(X).reduce(on_chunks, in_memory)
        if not np.all(np.isfinite(W)):
            # A row's update scales its error by 1 - eta |phi|^2: rows where that
            # exceeds 1 in size make the weights grow without bound.
            raise ValueError(f"LMS diverged in epoch {self.t_}: the weights overflowed. The "
                             f"step eta0={self.eta0:g} is too large for these data; use a "
                             "smaller eta0 (or learning_rate='invscaling').")
        self._W = W
        coef = scaling.coef(W[:, off:])  # back to raw units
        b = scaling.intercept(W[:, 0], coef) if off else np.zeros(W.shape[0])
        self.coef_ = coef[0].copy() if self._single_output else coef
        self.intercept_ = float(b[0]) if self._single_output else b
        # (unit-free: the standardised weights' move)
        return float(np.max(np.abs(W - before)))


def _rows_step(W: np.ndarray, first: int, X: np.ndarray, T: np.ndarray, eta: float,
               off: int) -> np.ndarray:
    """LMS over consecutive rows of an epoch: a new weight matrix (``W`` is not changed)."""
    W = W.copy()
    X = np.asarray(X, dtype=np.float64)
    for k in range(W.shape[0]):  # the outputs' updates are independent
        W[k] = _lms_pass(W[k], X, T[:, k], eta, off)
    return W


def _dask_rows(k: int, lo: int, Xb: np.ndarray, Tb: np.ndarray,
               scaling: ColumnScaling) -> tuple[np.ndarray, np.ndarray]:
    """Chunk ``k`` of Dask input as standardised float rows and targets; NaN or inf
    named by chunk."""
    Xb = np.asarray(Xb, dtype=np.float64)
    _check_chunk(k, lo, "X", Xb)
    Tb = np.asarray(Tb, dtype=np.float64)  # 2-D: ``_data`` gives every target a column
    _check_chunk(k, lo, "y", Tb, bounded=True)  # a regression target: squared too
    return scaling.transform(Xb), Tb


def _lms_pass(w: np.ndarray, X: np.ndarray, t: np.ndarray, eta: float, off: int) -> np.ndarray:
    """``w <- w + eta (t_n - w^T phi_n) phi_n`` over the rows, ``phi_n = [1, x_n]`` if ``off``
    (compiled where numba is: :mod:`problin._core.sequential`)."""
    v, b = w[off:].copy(), float(w[0]) if off else 0.0
    kernels = compiled()
    if kernels is not None:
        b = kernels["lms_rows"](np.ascontiguousarray(X, dtype=np.float64),
                                np.ascontiguousarray(t, dtype=np.float64), v, b, float(eta),
                                float(off))
        return np.concatenate(([b], v)) if off else v
    for x, tn in zip(X, t.tolist()):
        err = eta * (tn - v.dot(x) - b)
        v += err * x
        b += err * off  # phi_0 = 1 only with an intercept
    return np.concatenate(([b], v)) if off else v


def _dask_data(est: "LMSRegressor", X: Any, y: Any, reset: bool) -> tuple[Any, Any]:
    """Validated Dask rows and their 2-D targets."""
    X, y = dask_regression_data(est, X, y, reset)
    return X, (y[:, None] if y.ndim == 1 else y)


def _target_spread(T: Any) -> float:
    """The targets' largest standard deviation over the outputs (1 where they are
    constant): the weights' natural size, in the targets' units."""
    # (on Dask from the chunks' statistics: dask's own std is NaN where a chunk is
    # empty, a filtered array)
    spread = data_source(T).reduce(
        lambda T: float(np.sqrt(np.max(reduce_chunks(column_stats_chunk, T).var()))),
        lambda T: float(np.max(np.std(np.asarray(T, dtype=np.float64), axis=0))))
    return spread if np.isfinite(spread) and spread > 0 else 1.0
