"""Fixed basis functions phi(x) as scikit-learn transformers.

All three act per input feature (an additive expansion: feature ``j`` gets
its own functions ``phi_i(x_j)``), except :class:`GaussianBasis` with centres
given as full input vectors, which is radial: ``exp(-|x - mu_i|^2 / (2 s^2))``.
The constant ``phi_0 = 1`` is left to the model's intercept (``include_bias``
adds it explicitly, e.g. for a model with ``fit_intercept=False``).

Dask input: ``fit`` reads no rows where nothing is learnt (given centres, a
polynomial basis with ``standardize=False``) and otherwise places the centres
or finds each feature's mean and standard deviation from exact reductions
over the chunks: each feature's range for ``spacing="grid"``, exact quantiles
by a few counting passes for ``spacing="quantile"``, mergeable moments for the
polynomial basis; the results equal those of the numpy fit (to rounding for
the moments). ``transform`` of a Dask array is a lazy Dask array (each
chunk transformed by the numpy code). Without a pass, NaN in a chunk is then
reported when that chunk's transform is computed.
"""
from collections.abc import Sequence
from numbers import Integral, Real
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import (
    _check_feature_names_in,
    check_is_fitted,
    validate_data,
)

from .._core.moments.class_stats import ClassStats
from .._core.moments.standardize import column_scaling, column_stats
from .._core.numerics import sigmoid
from .._core.types import MatrixLike
from .._core.validation import check_finite_magnitude
from .._dask.chunks import _check_chunk, column_stats_chunk, dask_features, reduce_chunks
from .._dask.lazy import lazy_on_dask
from .._dask.quantile import dask_quantiles
from .._frames import numeric_input
from .._params import validate_params
from .._source import data_source
from .._state import AllOrNothingFit

__all__ = ["PolynomialBasis", "GaussianBasis", "SigmoidalBasis"]


class _Basis(AllOrNothingFit, TransformerMixin, BaseEstimator):
    """Shared by the bases: names, and the output width that lazy Dask transforms need."""

    def _names(self, input_features: Sequence[str]) -> list[str]:
        raise NotImplementedError

    def _n_out(self) -> int:
        return len(self._names([f"x{j}" for j in range(self.n_features_in_)]))

    def get_feature_names_out(self, input_features: ArrayLike | None = None) -> np.ndarray:
        """Names of the basis functions, e.g. ``x0^2`` or ``x0_g3``."""
        check_is_fitted(self)
        names = _check_feature_names_in(self, input_features)
        return np.asarray(self._names(names), dtype=object)


class PolynomialBasis(_Basis):
    r"""Powers of each (standardised) feature: ``phi_i(x_j) = z_j^i``, ``i = 1..degree``.

    ``z_j = (x_j - m_j) / s_j`` with ``m_j`` and ``s_j`` the mean and standard
    deviation of feature ``j`` over the rows given to ``fit`` (``standardize=True``,
    the default), else ``z_j = x_j``. Columns are ordered by feature, then power.

    With a constant among the basis functions (``include_bias``, or a model
    that fits an intercept), the powers of ``z`` span exactly the polynomials
    the powers of ``x`` span, so the model's predictions are the same; but
    ``(x + 1e8)^3`` next to ``x + 1e8`` are collinear to the last digit, and
    ``x`` in nanometres has powers of 1e-27. Standardised, the powers are of
    order one and the fit is the same whatever the units or offsets of the
    features. (A prior or penalty on the weights then acts on the weights of
    the standardised powers. Without an intercept the span differs: give
    ``standardize=False`` for the raw powers ``x^j`` of Bishop 2006, §3.1.)

    Parameters
    ----------
    degree : int, default=3
    include_bias : bool, default=False
        Prepend the constant ``phi_0 = 1``.
    standardize : bool, default=True
        Take the powers of the standardised features.

    Attributes
    ----------
    mean_, scale_ : ndarray of shape (n_features,)
        ``m`` and ``s`` (``standardize=True`` only; ``s = 1`` for a constant feature).

    Examples
    --------
    >>> import numpy as np
    >>> from problin import PolynomialBasis
    >>> PolynomialBasis(degree=3, standardize=False).fit_transform(np.array([[2.0]]))
    array([[2., 4., 8.]])
    >>> PolynomialBasis(degree=2).fit_transform(np.array([[1.0], [3.0]]))
    array([[-1.,  1.],
           [ 1.,  1.]])
    """

    _parameter_constraints = {"degree": [Interval(Integral, 0, None, closed="left")],
                              "include_bias": ["boolean"], "standardize": ["boolean"]}

    def __init__(self, degree: int = 3, include_bias: bool = False,
                 standardize: bool = True) -> None:
        self.degree = degree
        self.include_bias = include_bias
        self.standardize = standardize

    def fit(self, X: MatrixLike, y: Any = None) -> Self:
        """Each feature's mean and standard deviation (``standardize``; on Dask input one
        reduction over the chunks), else just the number of features."""
        validate_params(self)
        for stale in ("mean_", "scale_"):
            self.__dict__.pop(stale, None)
        def on_chunks(X: Any) -> ClassStats | None:
            X = dask_features(self, X, reset=True)  # (the chunks checked in the pass)
            return reduce_chunks(column_stats_chunk, X) if self.standardize else None

        def in_memory(X: Any) -> ClassStats | None:
            X = validate_data(self, numeric_input(X), dtype=np.float64)
            if not self.standardize:
                return None
            check_finite_magnitude(X, self)  # the moments sum squares
            return column_stats(X)

        stats = data_source(X).reduce(on_chunks, in_memory)
        if stats is not None:
            scaling = column_scaling(stats)
            self.mean_, self.scale_ = scaling.origin + scaling.offset, scaling.scale
        return self

    @lazy_on_dask(columns=lambda self: self._n_out())
    def transform(self, X: MatrixLike) -> np.ndarray:
        """``[1?, z_0, z_0^2, ..., z_0^degree, z_1, ...]`` of shape (n, bias + D degree)."""
        check_is_fitted(self)
        X = validate_data(self, numeric_input(X), reset=False, dtype=np.float64)
        if self.standardize:
            # x - m is exact for x near m (however far both are from zero); any
            # rounding of m is one offset of z, whose powers span the same space.
            X = (X - self.mean_) / self.scale_
        powers = np.arange(1, self.degree + 1)
        out = (X[:, :, None] ** powers).reshape(X.shape[0], -1)
        return np.column_stack([np.ones(X.shape[0]), out]) if self.include_bias else out

    def _names(self, names: Sequence[str]) -> list[str]:
        bias = ["1"] if self.include_bias else []
        return bias + [f"{f}^{p}" if p > 1 else str(f) for f in names
                       for p in range(1, self.degree + 1)]


def _place_centers(X: np.ndarray, n_centers: int, spacing: str) -> np.ndarray:
    """``n_centers`` per feature on an even grid or at quantiles of each feature."""
    if spacing == "grid":
        return _grid(X.min(axis=0), X.max(axis=0), n_centers)
    return np.quantile(X, (np.arange(n_centers) + 0.5) / n_centers, axis=0)


def _grid(lo: np.ndarray, hi: np.ndarray, n_centers: int) -> np.ndarray:
    """``n_centers`` evenly spaced from ``lo`` to ``hi``; one centre: the midpoint (as
    the one quantile centre is the median; linspace would put it at the minimum)."""
    if n_centers == 1:
        return (0.5 * lo + 0.5 * hi)[None, :]
    return np.linspace(lo, hi, n_centers)


class _Range:
    """Per-feature minimum and maximum of some rows; merges exactly."""

    def __init__(self, lo: np.ndarray, hi: np.ndarray) -> None:
        self.lo, self.hi = lo, hi

    def merge(self, other: "_Range") -> "_Range":
        return _Range(np.minimum(self.lo, other.lo), np.maximum(self.hi, other.hi))


def _range_chunk(k: int, lo: int, Xb: np.ndarray) -> "_Range | None":
    if Xb.shape[0] == 0:
        return None
    Xb = np.asarray(Xb, dtype=np.float64)
    _check_chunk(k, lo, "X", Xb)
    return _Range(Xb.min(axis=0), Xb.max(axis=0))


def _dask_centers(X: Any, n_centers: int, spacing: str) -> np.ndarray:
    """Placed centres from Dask rows, equal to :func:`_place_centers` on numpy rows.

    The grid needs only each feature's range (one exact tree reduction); the
    quantiles are found exactly by a few counting passes
    (:func:`~problin._dask.quantile.dask_quantiles`), rows never travel.
    """
    if spacing == "quantile":
        return dask_quantiles(X, (np.arange(n_centers) + 0.5) / n_centers)
    span = reduce_chunks(_range_chunk, X)
    return _grid(span.lo, span.hi, n_centers)


def _spacing_width(centers: np.ndarray) -> np.ndarray:
    """Per-feature distance between neighbouring centres (1 where it is zero)."""
    width = (centers.max(axis=0) - centers.min(axis=0)) / (centers.shape[0] - 1)
    return np.where(width > 0, width, 1.0)


def _data_width(X: Any) -> np.ndarray:
    """The width of a single centre: each feature's range in the data (1 where it is
    zero), in the feature's units (a width of 1 made every value 0 on X * 1e6)."""
    def on_chunks(X: Any) -> np.ndarray:
        span = reduce_chunks(_range_chunk, X)
        return np.asarray(span.hi - span.lo)

    width = data_source(X).reduce(on_chunks,
                                  lambda X: np.max(X, axis=0) - np.min(X, axis=0))
    return np.where(np.isfinite(width) & (width > 0), width, 1.0)


class _CenteredBasis(_Basis):
    """Shared fit of the Gaussian and sigmoidal bases: centres and widths per feature."""

    _parameter_constraints = {
        "centers": ["array-like", None],
        "n_centers": [Interval(Integral, 1, None, closed="left")],
        "spacing": [StrOptions({"grid", "quantile"})],
    }
    _suffix = "b"

    def _fit_centers(self, X: MatrixLike, width: ArrayLike | float | None) -> Self:
        X = data_source(X).reduce(
            lambda X: dask_features(self, X, reset=True),
            lambda X: validate_data(self, numeric_input(X), dtype=np.float64))
        D = X.shape[1]
        if self.centers is None:  # from the data (on Dask: counting passes)
            C = data_source(X).reduce(
                lambda X: _dask_centers(X, self.n_centers, self.spacing),
                lambda X: self._place_centers(X))
        else:
            C = np.asarray(self.centers, dtype=np.float64)
            if C.ndim == 1:
                C = np.repeat(C[:, None], D, axis=1)
            if C.ndim != 2 or C.shape[1] != D or C.shape[0] < 1 or not np.all(np.isfinite(C)):
                raise ValueError(f"centers must be finite, of shape (n_centers,) or "
                                 f"(n_centers, {D}); got shape {np.shape(self.centers)}")
        self.centers_ = C
        if width is None:
            self.width_ = _spacing_width(C) if C.shape[0] > 1 else _data_width(X)
        else:
            given = np.asarray(width, dtype=np.float64)
            if given.ndim > 1 or given.size not in (1, D):
                raise ValueError(f"the width/scale must be one number or one per feature "
                                 f"({D}); got shape {given.shape}")
            self.width_ = np.broadcast_to(given.reshape(-1), (D,)).copy()
            if not np.all(self.width_ > 0) or not np.all(np.isfinite(self.width_)):
                raise ValueError("the width/scale of the basis functions must be positive")
        return self

    def _place_centers(self, X: np.ndarray) -> np.ndarray:
        """Centres from rows in memory: the grid's span must stay finite."""
        check_finite_magnitude(X, self)
        return _place_centers(X, self.n_centers, self.spacing)

    def _scaled(self, X: np.ndarray) -> np.ndarray:
        """``(x_j - mu_ij) / s_j`` as an (n, D, n_centers) array."""
        check_is_fitted(self)
        X = validate_data(self, numeric_input(X), reset=False, dtype=np.float64)
        return (X[:, :, None] - self.centers_.T[None]) / self.width_[None, :, None]

    def _names(self, names: Sequence[str]) -> list[str]:
        return [f"{f}_{self._suffix}{i}" for f in names for i in range(self.centers_.shape[0])]


class GaussianBasis(_CenteredBasis):
    r"""Gaussian bumps ``phi_i(x) = exp(-(x - mu_i)^2 / (2 s^2))``.

    Per feature (``n_centers`` per feature, columns ordered by feature) unless
    ``radial=True``: then ``phi_i(x) = exp(-|x - mu_i|^2 / (2 s^2))`` with
    centres that are full input vectors (one column per centre; placed
    centres are the i-th grid or quantile point of every feature).

    Parameters
    ----------
    centers : array-like of shape (n_centers,) or (n_centers, n_features), optional
        Given centres (1-D: the same for every feature). Default: ``n_centers``
        placed per feature by ``spacing``.
    n_centers : int, default=10
    spacing : {"grid", "quantile"}, default="grid"
        Even grid from the minimum to the maximum, or at the quantiles
        ``(i + 1/2) / n_centers`` of each feature.
    width : float or array-like of shape (n_features,), optional
        ``s``; default: the distance between neighbouring centres.
    radial : bool, default=False

    Examples
    --------
    >>> import numpy as np
    >>> from problin import GaussianBasis
    >>> GaussianBasis(centers=[0.0, 1.0], width=1.0).fit_transform(np.array([[0.0]])).round(4)
    array([[1.    , 0.6065]])
    """

    _parameter_constraints = {**_CenteredBasis._parameter_constraints,
                              "width": [Interval(Real, 0, None, closed="neither"),
                                        "array-like", None],
                              "radial": ["boolean"]}
    _suffix = "g"

    def __init__(self, centers: ArrayLike | None = None, n_centers: int = 10, spacing: str = "grid",
                 width: ArrayLike | float | None = None, radial: bool = False) -> None:
        self.centers = centers
        self.n_centers = n_centers
        self.spacing = spacing
        self.width = width
        self.radial = radial

    def fit(self, X: MatrixLike, y: Any = None) -> Self:
        """Place the centres and choose the widths."""
        validate_params(self)
        if self.radial and self.width is not None and np.unique(np.ravel(self.width)).size > 1:
            raise ValueError("radial=True takes one width (|x - mu| / s over all features); "
                             "got one per feature. Give a number, or use radial=False")
        self._fit_centers(X, self.width)
        if self.radial:  # one isotropic width
            self.width_ = np.full_like(self.width_, float(np.max(self.width_)))
        return self

    @lazy_on_dask(columns=lambda self: self._n_out())
    def transform(self, X: MatrixLike) -> np.ndarray:
        """Basis-function values: (n, n_features * n_centers), or (n, n_centers) if radial."""
        Z = self._scaled(X)
        with np.errstate(over="ignore"):  # (z^2 beyond the float range: exp(-inf) = 0)
            if self.radial:
                return np.exp(-0.5 * np.einsum("ndk,ndk->nk", Z, Z))
            return np.exp(-0.5 * Z * Z).reshape(Z.shape[0], -1)

    def _names(self, names: Sequence[str]) -> list[str]:
        if self.radial:
            return [f"rbf{i}" for i in range(self.centers_.shape[0])]
        return super()._names(names)


class SigmoidalBasis(_CenteredBasis):
    r"""Logistic sigmoids per feature: ``phi_i(x_j) = sigma((x_j - mu_i) / s)``.

    Parameters
    ----------
    centers : array-like of shape (n_centers,) or (n_centers, n_features), optional
    n_centers : int, default=10
    spacing : {"grid", "quantile"}, default="grid"
    scale : float or array-like of shape (n_features,), optional
        ``s``; default: the distance between neighbouring centres.

    Examples
    --------
    >>> import numpy as np
    >>> from problin import SigmoidalBasis
    >>> SigmoidalBasis(centers=[0.0, 1.0], scale=1.0).fit_transform(np.array([[0.0]])).round(4)
    array([[0.5   , 0.2689]])
    """

    _parameter_constraints = {**_CenteredBasis._parameter_constraints,
                              "scale": [Interval(Real, 0, None, closed="neither"),
                                        "array-like", None]}
    _suffix = "s"

    def __init__(self, centers: ArrayLike | None = None, n_centers: int = 10, spacing: str = "grid",
                 scale: ArrayLike | float | None = None) -> None:
        self.centers = centers
        self.n_centers = n_centers
        self.spacing = spacing
        self.scale = scale

    def fit(self, X: MatrixLike, y: Any = None) -> Self:
        """Place the centres and choose the scales."""
        validate_params(self)
        return self._fit_centers(X, self.scale)

    @lazy_on_dask(columns=lambda self: self._n_out())
    def transform(self, X: MatrixLike) -> np.ndarray:
        """Basis-function values, (n, n_features * n_centers)."""
        Z = self._scaled(X)
        return sigmoid(Z).reshape(Z.shape[0], -1)
