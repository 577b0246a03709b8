"""What the linear regressors share: input checks, sufficient statistics, prediction."""
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core.blocks import small_blas
from .._core.extreme import linear_scores
from .._core.moments.least_squares import Factors, Moments, moments
from .._core.moments.lstsq import LeastSquaresSolution
from .._core.types import MatrixLike
from .._core.validation import (
    MAX_MAGNITUDE,
    check_column_sizes,
    check_finite_magnitude,
    check_targets_resolvable,
    check_total_weight,
    check_sample_weight,
)
from .._source import data_source
from .._dask.lazy import lazy_on_dask
from .._dask.reductions import dask_moments
from .._frames import encode_frame
from .._params import validate_params
from .._state import AllOrNothingFit
from ..exceptions import CollinearityWarning, NumericalWarning, warn_at_caller
from ..inference.hypothesis import LikelihoodModel

__all__ = ["LinearRegressorBase", "warn_least_squares"]


class LinearRegressorBase(AllOrNothingFit, LikelihoodModel, RegressorMixin, BaseEstimator):
    """Validation and ``predict`` of ``y(x) = W x + b``; ``t`` 1-D or 2-D (K outputs)."""

    def _check_data(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None, reset: bool,
                    check_values: bool = True) -> tuple[Any, np.ndarray, np.ndarray | None]:
        """Checked ``X`` (never copied when C-contiguous float), 2-D targets and weights.

        X and the targets are rejected if they hold NaN, infinity or values
        whose squares overflow (one pass each, see ``check_finite_magnitude``);
        ``check_values=False``: the caller finds them from the statistics of the
        pass that reads the data anyway (see :meth:`_statistics`).
        """
        X, y = validate_data(self, encode_frame(self, X, reset), y, reset=reset,
                             dtype=[np.float64, np.float32],
                             multi_output=True, y_numeric=True, ensure_all_finite=False)
        T = np.asarray(y, dtype=np.float64)
        if check_values:
            check_finite_magnitude(X, self)  # NaN, infinity, or values whose squares overflow
            check_finite_magnitude(T, name="y")  # the targets are squared too
        if reset:
            self._single_output = T.ndim == 1
        elif (T.ndim == 1) != self._single_output:
            raise ValueError("y has a different number of outputs than in the previous fit")
        T = T.reshape(T.shape[0], -1)
        check_targets_resolvable(T)  # (squares that underflow: zero standard errors)
        return X, T, check_sample_weight(sample_weight, X.shape[0])

    def score(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None
              ) -> float:
        """R^2 of ``predict(X)`` (scikit-learn's ``r2_score``). At rows far from the data
        the squared residuals may overflow: R^2 is then ``-inf``, its limit, without
        numpy's overflow warning."""
        with np.errstate(over="ignore"):
            return float(super().score(X, y, sample_weight))

    def fit(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Fit on all of ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Or a Dask array/DataFrame: the statistics are then reduced chunk
            by chunk on the active Dask scheduler.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights; weight 2 is the same as a duplicated row.

        Returns
        -------
        self
        """
        validate_params(self)
        return self._fit_statistics(self._statistics(X, y, sample_weight, merge=False))

    def partial_fit(self, X: MatrixLike, y: ArrayLike,
                    sample_weight: ArrayLike | None = None) -> Self:
        """Add a batch of rows: the sufficient statistics merge, then the model is re-solved.

        Fitting in several ``partial_fit`` calls equals one ``fit`` on all the rows
        (the moments merge by exact pairwise updates; tested to 1e-10 over random
        chunkings). Each call re-solves from the merged ``moments_`` from scratch,
        so the iterative solvers see what ``fit`` would; ``moments_`` is replaced
        only if that solve succeeds (a bad batch leaves the model as it was). The
        first call fixes the features and the number of outputs; ``sample_weight``
        is per batch (weight 2 is a duplicated row, across batches too); ``fit``
        after ``partial_fit`` starts over. Batches may be numpy or Dask arrays, mixed.
        See docs/streaming.md.
        """
        validate_params(self)
        merge = hasattr(self, "moments_")
        return self._fit_statistics(self._statistics(X, y, sample_weight, merge=merge))

    def _fit_statistics(self, stats: Moments) -> Self:
        """Solve from ``stats``; they become ``moments_`` only if that succeeds."""
        with small_blas(stats.factor.shape[0]):  # D x D work: threads only cost here
            self._from_statistics(stats)
        self.moments_ = stats
        return self

    def _from_statistics(self, stats: Moments) -> Self:
        raise NotImplementedError

    def _moments(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None,
                 reset: bool) -> Moments:
        """The sufficient statistics of rows in memory."""
        X, T, sw = self._check_data(X, y, sample_weight, reset=reset, check_values=False)
        stats = moments(X, T, sw)
        if not _statistics_bounded(stats, sw):  # (rare: only then a pass of its own)
            check_finite_magnitude(X, self)  # names the columns and rows
            check_finite_magnitude(T, name="y")  # the targets are squared too
        return stats

    def _statistics(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None,
                    merge: bool) -> Moments:
        """Sufficient statistics of this data, merged with those seen before if ``merge``."""
        # one pass: chunk by chunk on Dask (problin._dask.chunks), else in memory
        stats = data_source(X).reduce(
            lambda X: dask_moments(self, X, y, sample_weight, reset=not merge),
            lambda X: self._moments(X, y, sample_weight, reset=not merge))
        if not (np.all(np.isfinite(stats.factor)) and np.all(np.isfinite(stats.mean))):
            raise ValueError("Input X contains NaN or infinity (or values so large that "
                             "their squares overflow).")
        # Columns below 1e-144: their scatter underflows (dropped as constant, or an
        # infinite variance). Size from the statistics: |mean| and the factor's entries
        # (R^T R is the scatter: no squares).
        d = stats.n_features
        spread = np.max(np.abs(stats.factor[:, :d]), axis=0, initial=0.0)
        check_column_sizes(np.maximum(np.abs(stats.mean[:d]),
                                      spread / np.sqrt(max(stats.weight, 1e-300))),
                           getattr(self, "feature_names_in_", None))
        if merge:
            stats = self.moments_.merge(stats)
            check_total_weight(stats.weight)  # (each batch's is checked; so is the stream's)
        return stats

    def _factors(self, stats: Moments) -> Factors:
        """The R factors of ``[Phi, T]`` (:class:`~problin._core.moments.least_squares.Factors`):
        of the centred data when the intercept is fitted, else of the raw data."""
        return stats.factors(centred=self.fit_intercept)

    def _set_coef(self, stats: Moments, W: np.ndarray) -> None:
        """Store ``coef_`` and ``intercept_`` from the D x K weights ``W``."""
        b = stats.t_mean - stats.x_mean @ W if self.fit_intercept else np.zeros(W.shape[1])
        self.coef_ = W[:, 0].copy() if self._single_output else W.T.copy()
        self.intercept_ = float(b[0]) if self._single_output else b

    @lazy_on_dask(columns=lambda self: None if self._single_output else self.coef_.shape[0])
    def predict(self, X: MatrixLike) -> np.ndarray:
        """Predicted targets ``X coef_^T + intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            A Dask array gives a lazy Dask array, chunk by chunk.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_outputs)
        """
        check_is_fitted(self)
        X = validate_data(self, encode_frame(self, X, False), reset=False,
                          dtype=[np.float64, np.float32])
        # rows holding huge values (1e308 next to another): +-inf where the value
        # is beyond the float range, never NaN from inf - inf (extreme.linear_scores)
        out = linear_scores(X, np.atleast_2d(self.coef_), np.atleast_1d(self.intercept_))
        return out[:, 0] if np.ndim(self.coef_) == 1 else out

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


def warn_least_squares(solution: LeastSquaresSolution, n_features: int, singular: str
                       ) -> None:
    """Warn about a least-squares solution (``LeastSquaresSolution``): a
    ``CollinearityWarning`` with the message ``singular`` (formatted with ``rank`` and
    ``d``) when it is rank-deficient, a ``NumericalWarning`` with the estimated
    condition number when fewer than 6 significant digits can be guaranteed."""
    if solution.rank < n_features:
        warn_at_caller(singular.format(rank=solution.rank, d=n_features), CollinearityWarning)
    if solution.digits < 6.0:
        warn_at_caller("the least-squares problem is ill-conditioned: estimated condition "
                       f"number {solution.condition:.3g} of the (centred, equilibrated) "
                       f"design; the coefficients may have only about {solution.digits:.0f} "
                       "correct significant digits", NumericalWarning)


def _statistics_bounded(stats: Moments, sample_weight: np.ndarray | None) -> bool:
    """Whether the pass's statistics prove every value finite and within
    ``MAX_MAGNITUDE``: ``|z_i| <= |z_i - mean| + |mean| <= sqrt(S_jj / w_i) + |mean_j|``
    with ``S_jj`` the column's scatter (``R``'s column norm squared), so a bound
    on ``sqrt(S_jj) + |mean_j|`` covers every row of weight >= 1 (and NaN or
    infinity make it non-finite). Where it fails (or weights are small) the
    data are checked value by value: the statistics cost no pass of their own."""
    with np.errstate(over="ignore", invalid="ignore"):
        spread = np.sqrt(np.einsum("ij,ij->j", stats.factor, stats.factor))
        bound = spread + np.abs(stats.mean)
    light = sample_weight is not None and np.any((sample_weight > 0) & (sample_weight < 1))
    return bool(np.all(bound <= MAX_MAGNITUDE)) and not light
