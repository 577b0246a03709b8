"""The perceptron: a linear discriminant fitted by the perceptron criterion."""
import functools
from collections.abc import Callable, Iterator
from numbers import Integral, Real
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core.extreme import linear_scores
from .._core.labels import encode_classes
from .._core.model.layout import ClassLayout, class_layout
from .._core.moments.standardize import ColumnScaling, column_scaling, column_stats
from .._core.sequential import compiled
from .._core.types import MatrixLike
from .._core.validation import (
    check_finite_magnitude,
    check_label_types,
    label_values,
    resolvable,
)
from .._dask.chunks import _check_chunk, column_stats_chunk, reduce_chunks
from .._dask.lazy import lazy_on_dask
from .._dask.online import sequential_epoch
from .._dask.reductions import dask_labels
from .._frames import encode_frame
from .._params import validate_params
from .._source import data_source
from .._state import AllOrNothingFit
from .._linear_boundary import LinearBoundaryMixin
from ..exceptions import ConvergenceWarning, warn_at_caller

__all__ = ["Perceptron"]

# Rows gathered, augmented with the bias feature and scored at once. After a
# mistake only the rest of the block is re-scored, so a pass costs
# O(N p + mistakes * _BLOCK * p) and one Python step per mistake or block.
# Compiled (numba: problin._core.sequential) the rows are visited one by one in
# compiled code and only the gathering is per block: larger blocks, fewer steps.
_BLOCK = 256
_COMPILED_BLOCK = 4096


def _block_rows() -> int:
    return _COMPILED_BLOCK if compiled() is not None else _BLOCK


def _augment(X: np.ndarray, fit_intercept: bool) -> np.ndarray:
    """The feature vectors ``phi = (1, x)`` (or ``x``) of a block of rows."""
    if not fit_intercept:
        return np.asarray(X, dtype=np.float64)
    return np.column_stack([np.ones(X.shape[0]), X])


def _binary_block(Phi: np.ndarray, t: np.ndarray, w: np.ndarray,
                  eta: float) -> tuple[int, float]:
    """Sequential perceptron updates over one block; ``w`` is updated in place.

    A row is misclassified when ``t_n w^T phi_n <= 0``; each such row, in
    order, gets ``w <- w + eta phi_n t_n`` before the next row is scored.
    Returns the number of mistakes and their perceptron criterion
    ``sum -t_n w^T phi_n``, each row scored by the weights it met.
    """
    kernels = compiled()
    if kernels is not None:
        return kernels["perceptron_binary"](Phi, t, w, eta)
    signed = Phi * t[:, None]  # rows t_n phi_n: misclassified where w^T t_n phi_n <= 0
    mistakes, loss, start = 0, 0.0, 0
    while start < t.size:
        margin = signed[start:] @ w
        bad = margin <= 0
        i = int(bad.argmax())
        if not bad[i]:
            break
        loss -= float(margin[i])
        w += eta * signed[start + i]
        mistakes += 1
        start += i + 1
    return mistakes, loss


def _multiclass_block(Phi: np.ndarray, t: np.ndarray, W: np.ndarray,
                      eta: float) -> tuple[int, float]:
    """Multiclass perceptron updates over one block; ``W`` (K x p) in place.

    A row of class ``k`` is misclassified when a rival ``j != k`` scores at
    least as high, ``w_j^T phi >= w_k^T phi``; then ``w_k <- w_k + eta phi``
    and ``w_j <- w_j - eta phi`` for the highest-scoring rival ``j``. Returns
    the number of mistakes and their criterion ``sum (w_j - w_k)^T phi``.
    """
    kernels = compiled()
    if kernels is not None:
        return kernels["perceptron_multiclass"](Phi, t, W, eta)
    mistakes, loss, start = 0, 0.0, 0
    while start < t.size:
        scores = Phi[start:] @ W.T
        rows = np.arange(scores.shape[0])
        own = scores[rows, t[start:]].copy()
        scores[rows, t[start:]] = -np.inf
        rival = np.argmax(scores, axis=1)
        bad = scores[rows, rival] >= own
        i = int(bad.argmax())
        if not bad[i]:
            break
        loss += float(scores[i, rival[i]] - own[i])
        W[t[start + i]] += eta * Phi[start + i]
        W[rival[i]] -= eta * Phi[start + i]
        mistakes += 1
        start += i + 1
    return mistakes, loss


def _blocks(first: int, n: int) -> Iterator[tuple[int, int]]:
    """``(a, b)`` row ranges of ``n`` rows whose sequence position starts at ``first``,
    cut where the in-memory epoch cuts its blocks (at multiples of ``_block_rows()``)."""
    a, block = 0, _block_rows()
    while a < n:
        b = min(n, a + block - (first + a) % block)
        yield a, b
        a = b


_State = tuple[np.ndarray, int, float]


def _rows_step(state: _State, first: int, X: np.ndarray, t: np.ndarray, eta: float,
               fit_intercept: bool) -> _State:
    """Perceptron updates over rows ``first, first + 1, ...`` of an epoch's sequence.

    ``state`` is ``(weights, mistakes so far, their criterion so far)``; returns a
    new one (the input is not modified: a Dask task must not change its arguments).
    """
    Theta, mistakes, loss = state
    Theta = Theta.copy()
    update = _binary_block if Theta.ndim == 1 else _multiclass_block
    for a, b in _blocks(first, X.shape[0]):
        wrong, criterion = update(_augment(X[a:b], fit_intercept), t[a:b], Theta, eta)
        mistakes, loss = mistakes + wrong, loss + criterion
    return Theta, mistakes, loss


def _dask_rows(k: int, lo: int, Xb: np.ndarray, yb: np.ndarray, classes: np.ndarray,
               layout: ClassLayout, scaling: ColumnScaling) -> tuple[np.ndarray, np.ndarray]:
    """Chunk ``k`` of Dask input as the in-memory fit sees it: standardised float rows
    and targets."""
    Xb = np.asarray(Xb, dtype=np.float64)
    _check_chunk(k, lo, "X", Xb)
    codes = np.searchsorted(classes, np.asarray(yb))
    return scaling.transform(Xb), layout.targets(codes)


class Perceptron(AllOrNothingFit, LinearBoundaryMixin, ClassifierMixin, BaseEstimator):
    """Rosenblatt's perceptron, trained by stochastic descent on the perceptron criterion.

    .. math::

        y(x) = \\mathrm{sign}(w^T \\phi(x)), \\quad \\phi(x) = (1, x), \\quad
        E_P(w) = -\\sum_{n \\in \\mathcal{M}} w^T \\phi_n t_n, \\; t_n \\in \\{-1, +1\\}

    where :math:`\\mathcal{M}` is the set of misclassified rows
    (``t_n w^T phi_n <= 0``). Starting from ``w = 0``, each epoch visits the
    rows in turn (in a fresh random order when ``shuffle``) and updates
    ``w <- w + eta0 phi_n t_n`` at every mistake. By the perceptron
    convergence theorem an epoch without a mistake comes after finitely many
    epochs on linearly separable data, and the fit stops there. On other data
    it stops, as scikit-learn's ``Perceptron`` does, once the epoch's mean
    perceptron criterion (``E_P`` over the rows, each scored by the weights it
    met, divided by ``n``) has not fallen below the best so far minus ``tol``
    for ``n_iter_no_change`` consecutive epochs; with ``tol=None``, or if that
    does not happen, after ``max_iter`` epochs with a
    :class:`problin.ConvergenceWarning`. Either way it keeps the last weights.

    The updates run on standardised features, ``phi = (1, z)`` with
    ``z_j = (x_j - m_j) / s_j`` (each column's mean and standard deviation
    over the training rows; without an intercept ``z_j = x_j / s_j``, ``s_j``
    the root mean square), and the weights are mapped back exactly:
    ``coef_ = v / s``, ``intercept_ = b - coef_ @ m``. The plain algorithm's
    path depends on the units of the columns (each update moves ``w_j`` by
    ``x_nj``: a column in small units is barely learnt, one far from zero acts
    as a second intercept); standardised, the fit transforms with the data --
    scaling a column by ``c`` divides its weight by ``c``, shifting it changes
    only the intercept -- and every update is equally informative about
    every column. The boundary found is still a perceptron solution for the
    raw data (the map is affine and keeps each row's side).

    For K > 2 classes this is the *multiclass perceptron* (one weight vector
    per class, predict ``argmax_k w_k^T phi``): a row of class ``k`` whose
    best rival ``j`` scores ``>= w_k^T phi`` moves ``w_k`` towards ``phi`` and
    ``w_j`` away from it. It converges whenever some ``W`` classifies every
    row correctly by argmax (unlike one-vs-rest, which needs each class to
    be separable from all the others).

    Because ``w`` starts at zero, every weight is a multiple of ``eta0``:
    ``eta0`` scales ``coef_`` but never changes a prediction.

    Cost: rows are scored in blocks of 256 with one matrix product; after a
    mistake only the rest of the block is re-scored (the updates stay
    exactly sequential, equal to the per-sample loop). An epoch costs
    ``O(N p)`` flops plus ``O(256 p)`` and a few numpy calls (~5-20 us of
    interpreter time) per mistake: late epochs on separable data are fast,
    while 1000 epochs on badly overlapping classes with N = 1000 (~200
    mistakes an epoch) take about a second -- which the ``tol`` stop avoids
    (on such data the criterion stops falling within a few epochs).

    Parameters
    ----------
    max_iter : int, default=1000
        Maximum number of epochs (passes over the data).
    shuffle : bool, default=True
        Visit the rows in a new random order every epoch.
    random_state : int, RandomState instance or None, default=None
        Seed of the shuffling; the same seed gives bit-identical weights.
    eta0 : float, default=1.0
        Learning rate (positive).
    fit_intercept : bool, default=True
        Whether ``phi`` includes the bias feature 1.
    tol : float or None, default=1e-3
        The stopping tolerance (scikit-learn's): the fit stops when the mean
        perceptron criterion of an epoch is above ``best - tol`` (``best``: the
        lowest of the earlier epochs) for ``n_iter_no_change`` consecutive
        epochs. The criterion is in the units of the weights, which scale with
        ``eta0``. On separable data with a small margin the stop may come
        before the epoch without a mistake; ``None`` disables it (epochs run
        until one makes no mistake, or ``max_iter``).
    n_iter_no_change : int, default=5
        Number of consecutive epochs without improvement by ``tol`` before
        stopping.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (K, n_features)
    intercept_ : ndarray of shape (1,) or (K,)
    classes_ : ndarray of shape (K,)
    n_iter_ : int
        Epochs run (the last one without a mistake, if converged).
    converged_ : bool
        Whether an epoch made no mistake (False after a ``tol`` stop).
    history_ : ndarray of int
        Number of mistakes (updates) in each epoch.
    loss_curve_ : ndarray of float
        The mean perceptron criterion of each epoch (what ``tol`` watches): the
        sum over the epoch's mistakes of ``-t_n w^T phi_n`` (multiclass: the
        best rival's score minus the own class's), each row scored by the
        weights it met, on the standardised features, divided by ``n``.

    Examples
    --------
    >>> import numpy as np
    >>> from problin import Perceptron
    >>> X = np.array([[0., 0.], [1., 0.], [0., 1.], [2., 2.], [3., 2.], [2., 3.]])
    >>> y = np.array([0, 0, 0, 1, 1, 1])
    >>> clf = Perceptron(random_state=0).fit(X, y)
    >>> clf.converged_, clf.predict([[0.5, 0.5], [2.5, 2.5]]).tolist()
    (True, [0, 1])
    """

    _parameter_constraints = {
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "eta0": [Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, max_iter: int = 1000, *, shuffle: bool = True, random_state: Any = None,
                 eta0: float = 1.0, fit_intercept: bool = True, tol: float | None = 1e-3,
                 n_iter_no_change: int = 5) -> None:
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state
        self.eta0 = eta0
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change

    def fit(self, X: MatrixLike, y: ArrayLike) -> Self:
        """Run perceptron epochs until one makes no mistake, the ``tol`` stop or
        ``max_iter`` epochs.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Or a Dask array/DataFrame: every epoch then runs as a chain of
            tasks over its row chunks, in storage order on the workers that
            hold them (``shuffle=False``), or in the same random row order as
            for numpy input (``shuffle=True``, which moves every row once per
            epoch). Either way the weights equal those of the numpy fit.
        y : array-like of shape (n_samples,)
            Numpy or Dask, aligned row by row with ``X``.

        Returns
        -------
        self
        """
        validate_params(self)
        epoch, n, scaling = data_source(X).reduce(lambda X: self._dask_epoch(X, y),
                                                  lambda X: self._numpy_epoch(X, y))
        layout = class_layout(self.classes_.size)
        Theta = layout.zero_weights(self.n_features_in_ + int(self.fit_intercept))
        rng = check_random_state(self.random_state)
        history: list[int] = []
        losses: list[float] = []
        converged, stalled, best = False, 0, np.inf
        for _ in range(self.max_iter):
            Theta, mistakes, loss = epoch(Theta, rng.permutation(n) if self.shuffle else None)
            history.append(mistakes)
            losses.append(loss / n)
            if mistakes == 0:
                converged = True
                break
            if self.tol is not None:  # scikit-learn's rule (sklearn.linear_model._sgd_fast)
                stalled = stalled + 1 if losses[-1] > best - self.tol else 0
                best = min(best, losses[-1])
                if stalled >= self.n_iter_no_change:
                    break
        Theta = layout.weight_matrix(Theta)
        off = int(self.fit_intercept)
        self.coef_ = np.ascontiguousarray(scaling.coef(Theta[:, off:]))  # back to raw units
        self.intercept_ = scaling.intercept(Theta[:, 0], self.coef_) if off \
            else np.zeros(Theta.shape[0])
        self.n_iter_, self.converged_ = len(history), converged
        self.history_ = np.asarray(history, dtype=np.int64)
        self.loss_curve_ = np.asarray(losses, dtype=np.float64)
        if not converged and stalled < self.n_iter_no_change:
            warn_at_caller(f"Perceptron made {history[-1]} mistake(s) in its last of "
                           f"{self.max_iter} epochs: the classes are probably not linearly "
                           "separable. Keeping the last weights; increase max_iter or use a "
                           "probabilistic classifier.", ConvergenceWarning)
        return self

    def _numpy_epoch(self, X: MatrixLike,
                     y: ArrayLike) -> tuple[Callable[..., Any], int, ColumnScaling]:
        """``(epoch, n, scaling)``: ``epoch(Theta, order)`` runs one pass over in-memory
        rows, standardised by ``scaling`` (from one pass of column statistics)."""
        y = label_values(y)
        # Row-major: every epoch gathers blocks of rows (shuffled), which from a
        # column-major array (a DataFrame's values) read a cache line per value (2x the
        # fit's time in 5 epochs); one conversion here instead.
        X, y = validate_data(self, encode_frame(self, X, True), y, dtype=np.float64,
                             ensure_all_finite=False, order="C")
        check_finite_magnitude(X, self)  # NaN, infinity, or values whose squares overflow
        self.classes_, codes = encode_classes(y, owner=type(self).__name__)
        t = class_layout(self.classes_.size).targets(codes)
        scaling = column_scaling(resolvable(self, column_stats(X)), centre=self.fit_intercept)
        step = functools.partial(_rows_step, eta=float(self.eta0),
                                 fit_intercept=self.fit_intercept)

        def epoch(Theta: np.ndarray, order: np.ndarray | None) -> _State:
            state: _State = (Theta, 0, 0.0)
            block = _block_rows()
            for lo in range(0, X.shape[0], block):  # gather one block of rows at a time
                rows = slice(lo, lo + block) if order is None else order[lo:lo + block]
                state = step(state, lo, scaling.transform(X[rows]), t[rows])
            return state
        return epoch, X.shape[0], scaling

    def _dask_epoch(self, X: Any, y: Any) -> tuple[Callable[..., Any], int, ColumnScaling]:
        """``(epoch, n, scaling)`` for Dask input: each epoch is a chain of chunk tasks.

        The column statistics are one tree reduction over the chunks (equal to
        the in-memory pass to rounding). Without shuffling each chunk's updates
        run on the worker holding it and only the weights travel; with
        shuffling the rows are visited in the very permutation the in-memory
        fit draws (see :mod:`problin._dask.online`), so both give the same
        weights.
        """
        X, y, present = dask_labels(self, X, y, reset=True)
        check_label_types(present)
        self.classes_, _ = encode_classes(present, owner=type(self).__name__)
        scaling = column_scaling(resolvable(self, reduce_chunks(column_stats_chunk, X)),
                                 centre=self.fit_intercept)
        prepare = functools.partial(_dask_rows, classes=self.classes_,
                                    layout=class_layout(self.classes_.size), scaling=scaling)
        step = functools.partial(_rows_step, eta=float(self.eta0),
                                 fit_intercept=self.fit_intercept)

        def epoch(Theta: np.ndarray, order: np.ndarray | None) -> _State:
            return sequential_epoch(step, (Theta, 0, 0.0), prepare, X, y, order=order)
        return epoch, X.shape[0], scaling

    @lazy_on_dask(columns=lambda self: class_layout(self.classes_.size).score_columns)
    def decision_function(self, X: MatrixLike) -> np.ndarray:
        """``w^T phi(x)``: shape (n,) for two classes (positive: ``classes_[1]``), else (n, K)."""
        check_is_fitted(self)
        X = validate_data(self, encode_frame(self, X, False), dtype=np.float64, reset=False)
        scores = linear_scores(X, self.coef_, self.intercept_)  # +-inf, never NaN, at 1e308
        return class_layout(self.classes_.size).weight_scores(scores)

    @lazy_on_dask(dtype=lambda self: self.classes_.dtype)
    def predict(self, X: MatrixLike) -> np.ndarray:
        """``classes_[1]`` where ``w^T phi > 0`` (two classes), else the argmax class."""
        check_is_fitted(self)

        def relative() -> np.ndarray:  # shifted per row where they overflow (rows at 1e308)
            Xv = validate_data(self, encode_frame(self, X, False), dtype=np.float64,
                               reset=False)
            return linear_scores(Xv, self.coef_, self.intercept_, relative=True)

        index = class_layout(self.classes_.size).weight_prediction(
            lambda: self.decision_function(X), relative)
        return self.classes_[index]
