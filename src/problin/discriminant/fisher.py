"""Fisher's linear discriminant: the projection that best separates the classes."""
from numbers import Integral
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike
from scipy import linalg
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.utils._param_validation import Interval, StrOptions

from .._core.linalg import symmetrize
from .._core.model.layout import class_layout
from .._core.moments.class_stats import ClassStats, between_scatter, class_stats, pooled_scatter
from .._core.types import MatrixLike
from .._core.validation import resolvable
from .._dask.lazy import lazy_on_dask
from .._params import validate_params
from .._state import AllOrNothingFit
from .._linear_boundary import LinearBoundaryMixin
from ..exceptions import CollinearityWarning, warn_at_caller
from ._class_data import fit_class_stats, linear_scores, validated_X
from ._generative import SoftmaxPosteriorMixin, log_class_priors

__all__ = ["FisherDiscriminant", "fisher_directions"]


def _class_covariances(X: MatrixLike, codes: np.ndarray, w: np.ndarray | None,
                       n_classes: int) -> ClassStats:
    """Per-class statistics with each class's own scatter (``within="sum"``; module
    level: a Dask chunk's reduction is pickled)."""
    return class_stats(X, codes, n_classes, w, kind="full")


def within_covariance(stats: ClassStats, within: str) -> np.ndarray:
    """The within-class covariance Fisher's criterion divides by: the count-weighted
    pooled ``S_W / n = sum_k (n_k / n) Sigma_k`` (``"pooled"``), or the unweighted mean
    ``sum_k Sigma_k / K`` of the classes' maximum-likelihood covariances ``Sigma_k = S_k /
    n_k`` (``"sum"``: the texts' ``Sigma_1 + Sigma_2``, halved, which scales no direction)."""
    if within == "sum":
        covariances: np.ndarray = stats.covariances()
        return covariances.mean(axis=0)
    return pooled_scatter(stats) / float(stats.counts.sum())


def fisher_directions(S_W: np.ndarray, S_B: np.ndarray, *,
                      rcond: float = 1e-12) -> tuple[np.ndarray, np.ndarray, int]:
    """Solutions of the generalised eigenproblem ``S_B w = lambda S_W w``, best first.

    ``S_W`` is scaled to unit diagonal and eigendecomposed, ``S_W = Q L Q^T``;
    the whitening map ``T = Q L^-1/2`` (on the eigenvalues above ``rcond``
    times the largest) turns the problem into the symmetric one
    ``T^T S_B T v = lambda v``, and ``w = T v``. So the directions are
    ``S_W``-orthonormal (``W^T S_W W = I``), as ``scipy.linalg.eigh(S_B, S_W)``
    returns them. Where ``S_W`` is singular (collinear or constant features,
    fewer rows than features) Fisher's ratio is unbounded along its null
    space; those directions are left out (pseudo-inverse semantics) instead
    of being amplified by a jitter. Returns ``(lambdas, W, rank)``: eigenvalues
    in decreasing order, directions as the columns of ``W`` and the rank of ``S_W``.
    """
    diag = np.diag(S_W)
    scale = np.where(diag > 0, 1.0 / np.sqrt(np.where(diag > 0, diag, 1.0)), 0.0)
    vals, Q = linalg.eigh(S_W * np.outer(scale, scale), check_finite=False)
    keep = vals > rcond * max(float(vals[-1]), 0.0)
    T = scale[:, None] * Q[:, keep] / np.sqrt(vals[keep])
    lambdas, V = linalg.eigh(symmetrize(T.T @ S_B @ T), check_finite=False)
    return lambdas[::-1], T @ V[:, ::-1], int(keep.sum())


class FisherDiscriminant(AllOrNothingFit, ClassNamePrefixFeaturesOutMixin, TransformerMixin,
                         SoftmaxPosteriorMixin, LinearBoundaryMixin, ClassifierMixin,
                         BaseEstimator):
    """Fisher's linear discriminant: a projection to at most K-1 dimensions, and a classifier there.

    .. math::

        J(W) = \\mathrm{Tr}\\big[(W^T S_W W)^{-1} (W^T S_B W)\\big], \\quad
        S_B w = \\lambda S_W w, \\quad
        \\text{binary: } w \\propto S_W^{-1}(m_2 - m_1)
        \\;\\text{or, } \\texttt{within="sum"}\\text{: } (\\Sigma_1 + \\Sigma_2)^{-1}(m_2 - m_1)

    ``S_W = sum_k sum_{n in C_k} (x_n - m_k)(x_n - m_k)^T`` is the within-class
    and ``S_B = sum_k n_k (m_k - m)(m_k - m)^T`` the between-class scatter.
    The rows of ``components_`` are the generalised eigenvectors of the
    largest eigenvalues (``S_B`` has rank at most K-1, so at most K-1 of them
    separate anything), scaled so that the projected data have unit pooled
    within-class covariance: ``W^T (S_W / n) W = I``. Each direction is
    oriented so that the last class projects above the first (for two classes:
    ``w = S_W^-1 (m_2 - m_1) / |...|_{S_W/n}``, Fisher's direction, Bishop 2006 eq. 4.30).
    ``transform(X)`` is ``X @ components_.T`` (``y = W^T x``, not centred).

    As a classifier, the projected classes are modelled as Gaussians with
    the shared (unit) within-class covariance: with ``z = W^T x`` and projected
    means ``mu_k = W^T m_k``, ``log p(C_k | x) = -|z - mu_k|^2 / 2 + log pi_k - const``,
    i.e. the nearest projected class mean, shifted by the log priors. For two
    classes this is the threshold rule ``w^T x > threshold_``. With the full
    K-1 components (and K-1 <= D) it is exactly linear discriminant analysis.
    The scores are formed with the means taken about the overall mean ``m``
    (``mu_k = W^T (m_k - m)``, the same up to a term shared by all classes),
    so that shifting a feature changes only ``intercept_`` and ``threshold_``.

    Parameters
    ----------
    n_components : int or None, default=None
        Number of directions; at most ``min(K - 1, n_features)`` (None: that many).
    priors : array-like of shape (K,) or None, default=None
        Class priors of the classifier (non-negative, summing to 1, in the
        order of ``classes_``; a class of prior 0 is never predicted); None:
        the (weighted) class frequencies. They do not change the projection.
    within : {"pooled", "sum"}, default="pooled"
        The within-class matrix of the criterion. ``"pooled"``: the scatter
        ``S_W`` above, each class weighted by its size (Bishop 2006 eq. 4.28, LDA's
        pooled covariance). ``"sum"``: the classes' maximum-likelihood covariances
        ``Sigma_k = S_k / n_k`` added unweighted, ``(Sigma_1 + Sigma_2)^-1 (m_2 - m_1)``
        for two classes as the lecture texts write Fisher discriminant analysis
        (the same direction as ``"pooled"`` when the classes are of equal size or
        share their covariance; for K classes the mean ``sum_k Sigma_k / K``). The
        directions are then scaled to unit variance under that matrix
        (``W^T (sum_k Sigma_k / K) W = I``) and the classifier reads them alike.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        One direction per row.
    explained_variance_ratio_ : ndarray of shape (n_components,)
        Each direction's eigenvalue over the sum of all eigenvalues.
    means_ : ndarray of shape (K, n_features)
        Class means ``m_k``.
    priors_ : ndarray of shape (K,)
    coef_, intercept_ : ndarray of shape (K, n_features), (K,)
        The classifier's log posterior (up to a shared term) is ``coef_ @ x + intercept_``:
        ``coef_[k] = W mu_k``, ``intercept_[k] = -|mu_k|^2 / 2 + log pi_k - coef_[k] @ m``.
    threshold_ : float
        Two classes only: predict ``classes_[1]`` where ``transform(x) > threshold_``.
    classes_ : ndarray of shape (K,)

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from problin import FisherDiscriminant
    >>> X, y = load_iris(return_X_y=True)
    >>> fda = FisherDiscriminant().fit(X, y)
    >>> fda.transform(X).shape, fda.explained_variance_ratio_.round(4).tolist()
    ((150, 2), [0.9912, 0.0088])
    >>> round(fda.score(X, y), 3)
    0.98
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "priors": ["array-like", None],
        "within": [StrOptions({"pooled", "sum"})],
    }

    def __init__(self, n_components: int | None = None, *, priors: ArrayLike | None = None,
                 within: str = "pooled") -> None:
        self.n_components = n_components
        self.priors = priors
        self.within = within

    def fit(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Find the Fisher directions and the projected class means.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Or a Dask array/DataFrame: the class statistics are then reduced
            chunk by chunk on the active Dask scheduler.
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights; weight 2 equals a duplicated row.

        Returns
        -------
        self
        """
        validate_params(self)
        reduce = _class_covariances if self.within == "sum" else None
        stats = resolvable(self, fit_class_stats(self, X, y, sample_weight, reduce)[1])
        K, D = stats.n_classes, stats.n_features
        limit = min(K - 1, D)
        r = limit if self.n_components is None else int(self.n_components)
        if r > limit:
            raise ValueError(f"n_components={r} is too large: Fisher's discriminant has at "
                             f"most min(K - 1, n_features) = min({K - 1}, {D}) = {limit} "
                             f"directions for {K} classes and {D} features")
        n = float(stats.counts.sum())
        self.priors_, log_pi = log_class_priors(stats.counts, self.priors, self.classes_)
        lambdas, W, rank = fisher_directions(within_covariance(stats, self.within),
                                             between_scatter(stats) / n)
        if rank == 0:
            raise ValueError("every class has all its samples at one point: the within-class "
                             "scatter is zero and Fisher's criterion is undefined")
        if rank < D:
            warn_at_caller(f"The within-class scatter is singular (rank {rank} of {D}: collinear "
                           "or constant features, or fewer rows than features). Fisher's ratio "
                           "is unbounded along its null space; the directions are found in the "
                           "rest.", CollinearityWarning)
        r = min(r, W.shape[1])
        W = W[:, :r]
        self.means_ = stats.means.copy()
        # The class means about the overall mean m, from the statistics' offsets:
        # every digit of their spread survives however far the data sit from zero.
        dev = stats.centred_means()
        centre = stats.counts @ self.means_ / n
        gap = dev[-1] - dev[0]
        # Orientation: the sign of gap^T w, trusted where it exceeds the rounding of
        # its terms (a unit-free test); else (no gap along w) the sign of w's
        # largest effect w_j sd_j. Either way scaling a column keeps the sign.
        shift = gap @ W
        scale = np.abs(gap) @ np.abs(W)
        effect = W * np.sqrt(stats.total_var())[:, None]
        largest = W[np.argmax(np.abs(effect), axis=0), np.arange(r)]
        sign = np.where(np.abs(shift) > 1e-12 * scale, np.sign(shift), np.sign(largest))
        self.components_ = np.ascontiguousarray((W * sign).T)
        positive = np.clip(lambdas, 0.0, None)
        total = positive.sum()
        self.explained_variance_ratio_ = positive[:r] / total if total > 0 else np.zeros(r)
        # Projected class means about the projected overall mean, K x r. The
        # scores mu_k^T (z - z_m) - |mu_k|^2 / 2 + log pi_k differ from the
        # uncentred ones by a term shared by all classes; centred, a shift of a
        # feature changes only the intercepts (and no |mu_k|^2 of size |m|^2
        # cancels against x^T w_k).
        mu = dev @ self.components_.T
        self.coef_ = mu @ self.components_
        self.intercept_ = -0.5 * np.sum(mu * mu, axis=1) + log_pi - self.coef_ @ centre
        if K == 2:
            step = mu[1, 0] - mu[0, 0]
            self.threshold_ = float(centre @ self.components_[0] + 0.5 * (mu[0, 0] + mu[1, 0])
                                    - (log_pi[1] - log_pi[0]) / step)
        return self

    @property
    def _n_features_out(self) -> int:
        return self.components_.shape[0]

    @lazy_on_dask(columns=lambda self: self.components_.shape[0])
    def transform(self, X: MatrixLike) -> np.ndarray:
        """Project onto the Fisher directions: ``X @ components_.T``, shape (n, n_components)."""
        return np.asarray(validated_X(self, X) @ self.components_.T, dtype=np.float64)

    def _jll(self, X: MatrixLike) -> np.ndarray:
        """Class scores of the projected Gaussian model, ``log p(z, C_k)`` up to a shared
        term: ``mu_k^T z - |mu_k|^2 / 2 + log pi_k = coef_ @ x + intercept_``. From
        them :class:`SoftmaxPosteriorMixin` gives ``predict_proba``,
        ``predict_log_proba`` and ``predict`` (the nearest projected mean after the
        log-prior shift). Shifted per row where they overflow (rows at 1e308)."""
        return linear_scores(self, X, relative=True)

    @lazy_on_dask(columns=lambda self: class_layout(self.classes_.size).score_columns)
    def decision_function(self, X: MatrixLike) -> np.ndarray:
        """Log posterior odds ``log p(C_2|x)/p(C_1|x)`` (two classes, shape (n,)), else the
        K class scores ``mu_k^T z - |mu_k|^2 / 2 + log pi_k`` (shape (n, K))."""
        scores = self._jll(X)  # (checks that the model is fitted)
        return class_layout(self.classes_.size).decision(scores)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
