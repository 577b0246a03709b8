"""Gaussian discriminant analysis: LDA, QDA and the diagonal and spherical cases."""
import functools
from collections.abc import Callable
from numbers import Integral, Real
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._core.model.layout import class_layout
from .._core.moments.class_stats import ClassStats, class_stats
from .._core.types import Matrix, MatrixLike
from .._core.validation import resolvable
from .._dask.lazy import lazy_on_dask
from .._dask.reductions import _class_stats_of, dask_class_stats
from .._params import validate_params
from .._source import data_source
from .._linear_boundary import LinearBoundaryMixin
from ._gaussian import draw, feature_variances, gaussian_model, joint_log_likelihood
from ._generative import GenerativeClassifier, log_class_priors

__all__ = ["GaussianDiscriminantAnalysis", "LinearDiscriminantAnalysis",
           "QuadraticDiscriminantAnalysis"]

# Which sufficient statistics each covariance type needs.
_STATS_KIND = {"full": "full", "tied": "tied", "diag": "diag", "spherical": "diag"}


def _finite(stats: ClassStats) -> ClassStats:
    """``stats``, or an error if NaN or infinity reached them (every value of X does)."""
    if not (np.all(np.isfinite(stats.means)) and np.all(np.isfinite(stats.sq))):
        raise ValueError("Input X contains NaN or infinity (or values so large that "
                         "their squares overflow).")
    return stats


class GaussianDiscriminantAnalysis(GenerativeClassifier):
    """Gaussian class conditionals with maximum-likelihood parameters.

    ``p(C_k) = pi_k``, ``x | C_k ~ N(mu_k, Sigma_k)``;
    ``p(C_k | x) = softmax_k a_k(x)`` with ``a_k(x) = log pi_k + log N(x | mu_k, Sigma_k)``;
    ML: ``pi_k = n_k / n``, ``mu_k`` the class mean, ``Sigma_k = S_k`` (the class
    scatter over ``n_k``) or, shared, ``Sigma = sum_k (n_k / n) S_k``.

    Parameters
    ----------
    covariance_type : {"tied", "full", "diag", "spherical"}, default="tied"
        ``"tied"``: one shared covariance (LDA, linear boundaries); ``"full"``: one
        per class (QDA, quadratic boundaries); ``"diag"``: one diagonal per class
        (Gaussian naive Bayes); ``"spherical"``: one shared ``lambda I`` with
        ``lambda = tr(Sigma) / D`` of the tied estimate (linear boundaries).
    priors : array-like of shape (n_classes,), optional
        Class priors ``pi`` to use instead of the class frequencies (e.g. the
        prevalence of a rare disease where the training data were balanced).
    reg_covar : float, default=0.0
        A fraction of each feature's variance (over all the data) added to
        the diagonal of every covariance: ``Sigma_k + reg_covar diag(v)``,
        ``v_j = var(x_j)`` (for a feature constant over all the data, the mean
        variance of the others); relative, so that the model transforms with the
        units of each feature (scikit-learn's ``GaussianMixture.reg_covar`` is
        an absolute variance instead). Without it a singular covariance is
        regularised by one fixed rule, with a
        :class:`~problin.SingularCovarianceWarning` naming the class: a feature
        constant within it gets ``1e-6`` times its variance over all the data,
        and collinear features (or fewer samples than features) get ``1e-6``
        times each variance added to the diagonal. A well-conditioned
        covariance is left as it is.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
        Weighted number of samples per class, ``n_k``.
    priors_ : ndarray of shape (n_classes,)
    means_ : ndarray of shape (n_classes, n_features)
    covariances_ : ndarray
        (n_classes, n_features, n_features) for "full", (n_features, n_features)
        for "tied", (n_classes, n_features) for "diag", a float ``lambda`` for
        "spherical"; ``reg_covar`` (and any regularisation) included.
    coef_, intercept_ : ndarray of shape (n_classes, n_features), (n_classes,)
        For the linear cases ("tied", "spherical") only: with the class means
        taken about the overall mean ``mu`` (``d_k = mu_k - mu``),
        ``w_k = Sigma^{-1} d_k`` and ``w_k0 = log pi_k - d_k^T Sigma^{-1} d_k / 2 -
        w_k^T mu``, so that ``a_k(x) = w_k^T x + w_k0`` plus a term shared by all
        classes. (Bishop's ``w_k = Sigma^{-1} mu_k``, 2006 eq. 4.69, differ from these by a term
        shared by all classes; centred, a shift of a feature changes only the
        intercepts, and the weights keep every digit however far the data
        sit from zero.)

    Examples
    --------
    >>> import numpy as np
    >>> from problin import GaussianDiscriminantAnalysis
    >>> X = np.array([[0.0, 0.0], [1.0, 0.5], [0.5, 1.0], [3.0, 3.0], [4.0, 3.5], [3.5, 4.0]])
    >>> model = GaussianDiscriminantAnalysis(covariance_type="tied").fit(X, [0, 0, 0, 1, 1, 1])
    >>> model.means_
    array([[0.5, 0.5],
           [3.5, 3.5]])
    >>> model.predict([[1.0, 1.0], [3.0, 4.0]])
    array([0, 1])
    """

    _parameter_constraints = {
        "covariance_type": [StrOptions({"tied", "full", "diag", "spherical"})],
        "priors": ["array-like", None],
        "reg_covar": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, covariance_type: str = "tied", priors: ArrayLike | None = None,
                 reg_covar: float = 0.0) -> None:
        self.covariance_type = covariance_type
        self.priors = priors
        self.reg_covar = reg_covar

    # --------------------------------------------------- hooks of the base
    def fit(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        return data_source(X).reduce(lambda X: self._fit_chunks(X, y, sample_weight),
                                     lambda X: super(GaussianDiscriminantAnalysis, self).fit(
                                         X, y, sample_weight))

    def _fit_chunks(self, X: MatrixLike, y: ArrayLike,
                    sample_weight: ArrayLike | None) -> Self:
        """The fit of Dask rows: the class statistics, one reduction over the chunks."""
        validate_params(self)
        stats = dask_class_stats(self, X, y, sample_weight, _STATS_KIND[self._kind()])
        self._stats = _finite(stats)
        self._set_model(strict=True)
        return self

    fit.__doc__ = (GenerativeClassifier.fit.__doc__ or "").replace(  # (None under -OO)
        "X : array-like of shape (n_samples, n_features)\n",
        "X : array-like of shape (n_samples, n_features)\n            Or a Dask array/DataFrame: "
        "the class statistics are then reduced\n            chunk by chunk on the active Dask "
        "scheduler.\n", 1)

    def _dask_reduce(self) -> tuple[Callable[..., Any], bool, Callable[[Any], Any]]:
        return functools.partial(_class_stats_of, kind=_STATS_KIND[self._kind()]), False, _finite

    def _accumulate(self, X: Matrix, codes: np.ndarray,
                    sample_weight: np.ndarray | None) -> ClassStats:
        return _finite(class_stats(X, codes, self.classes_.size, sample_weight,
                                   _STATS_KIND[self._kind()]))

    def _merge(self, a: ClassStats, b: ClassStats) -> ClassStats:
        return a + b

    def _kind(self) -> str:
        return self.covariance_type

    def _reg(self, stats: ClassStats) -> np.ndarray:
        """The variance added to each feature's diagonal: ``reg_covar`` times its
        variance over all the data (relative, so it transforms with the feature)."""
        return float(self.reg_covar) * feature_variances(stats)

    def _set_model(self, strict: bool) -> None:
        stats, kind = resolvable(self, self._stats), self._kind()
        reg = self._reg(stats)
        if strict and not np.any(reg > 0) and kind in ("full", "diag"):
            # (While streaming, a class may get more samples: regularised, with a warning.)
            # Identical samples of more weight (weight 2 = a duplicated row) have an
            # exactly zero scatter too: a singular covariance, regularised with a warning.
            # (Weights are frequencies here: one row of weight 0.5 is "half a sample", an
            # error, where weight 2 is two identical samples; scikit-learn's check that
            # weights equal duplicated rows needs exactly that.)
            flat = np.flatnonzero((stats.counts > 0) & (stats.counts <= 1)
                                  & np.all(stats.sq == 0, axis=1))
            if flat.size:
                raise ValueError(
                    f"classes {self.classes_[flat].tolist()} have a single sample (or only "
                    f"identical samples): a '{kind}' covariance of zero has no density. Set "
                    "reg_covar > 0, or use covariance_type='tied' or 'spherical'.")
        # While streaming, a class given a prior but no samples yet has no parameters:
        # it is not predicted until its samples arrive (fit refuses it).
        self.priors_, log_pi = log_class_priors(stats.counts, self.priors, self.classes_,
                                                require_samples=strict)
        log_pi = np.where(stats.counts > 0, log_pi, -np.inf)
        self._model, self.covariances_ = gaussian_model(stats, kind, log_pi, reg,
                                                          self.classes_.tolist())
        self.class_count_ = stats.counts.copy()
        self.means_ = stats.means.copy()
        if kind in ("tied", "spherical"):
            self._set_linear(log_pi)
        else:  # quadratic boundaries: no linear form (drop one from an earlier fit)
            self.__dict__.pop("coef_", None)
            self.__dict__.pop("intercept_", None)

    def _set_linear(self, log_pi: np.ndarray) -> None:
        """``w_k = Sigma^{-1} d_k = P P^T d_k`` and ``w_k0 = log pi_k - |P^T d_k|^2 / 2 -
        w_k^T mu``, with ``d_k = mu_k - mu`` the class means about the overall mean
        (formed from the statistics' offsets: accurate however far the data sit
        from zero)."""
        m = self._model
        dev = self._stats.centred_means()
        if m.kind == "tied":
            MP = dev @ m.prec_chol
            self.coef_ = MP @ m.prec_chol.T
        else:
            MP = dev * m.prec_chol
            self.coef_ = MP * m.prec_chol
        self.intercept_ = log_pi - 0.5 * np.sum(MP * MP, axis=1) - self.coef_ @ m.shift

    def _joint_log_likelihood(self, X: Matrix) -> np.ndarray:
        return joint_log_likelihood(X, self._model)

    def _relative_log_likelihood(self, X: Matrix) -> np.ndarray:
        return joint_log_likelihood(X, self._model, relative=True)

    # ------------------------------------------------------------- public
    @lazy_on_dask(columns=lambda self: class_layout(self.classes_.size).score_columns)
    def decision_function(self, X: MatrixLike) -> np.ndarray:
        """``a_k(x) = log p(x, C_k)``, shape (n_samples, n_classes); for two classes
        the log-odds ``a_1(x) - a_0(x)``, shape (n_samples,). Lazy Dask output for
        Dask ``X``."""
        check_is_fitted(self)
        return class_layout(self.classes_.size).decision_from(  # (the shifted scores are
            lambda: self._jll(X), lambda: self._posterior_scores(X))  # finite at far rows)

    def sample(self, n_samples: int = 1, random_state: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Draw from the fitted generative model: classes from ``priors_``, then
        ``x ~ N(means_[k], covariances_[k])``.

        Parameters
        ----------
        n_samples : int, default=1
        random_state : int, RandomState or None

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
        y : ndarray of shape (n_samples,), labels from ``classes_``
        """
        check_is_fitted(self)
        if not isinstance(n_samples, Integral) or n_samples < 1:
            raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}")
        rng = np.random.default_rng(check_random_state(random_state).randint(2**32 - 1))
        X, codes = draw(self._model, int(n_samples), rng)
        return X, self.classes_[codes]


class LinearDiscriminantAnalysis(LinearBoundaryMixin, GaussianDiscriminantAnalysis):
    """Linear discriminant analysis: Gaussian classes sharing one covariance.

    ``x | C_k ~ N(mu_k, Sigma)``, ``p(C_k) = pi_k``; the posterior is the softmax of
    the linear functions ``a_k(x) = w_k^T x + w_k0`` with ``w_k = Sigma^{-1} mu_k``,
    ``w_k0 = -mu_k^T Sigma^{-1} mu_k / 2 + log pi_k``; ``Sigma = sum_k (n_k / n) S_k``.

    The tied case of :class:`GaussianDiscriminantAnalysis` (see there for the
    parameters and attributes).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from problin import LinearDiscriminantAnalysis
    >>> X, y = load_iris(return_X_y=True)
    >>> lda = LinearDiscriminantAnalysis().fit(X, y)
    >>> lda.coef_.shape, round(float(lda.score(X, y)), 2)
    ((3, 4), 0.98)
    """

    _parameter_constraints = {k: v for k, v in GaussianDiscriminantAnalysis
                              ._parameter_constraints.items() if k != "covariance_type"}

    def __init__(self, priors: ArrayLike | None = None, reg_covar: float = 0.0) -> None:
        self.priors = priors
        self.reg_covar = reg_covar

    def _kind(self) -> str:
        return "tied"


class QuadraticDiscriminantAnalysis(GaussianDiscriminantAnalysis):
    """Quadratic discriminant analysis: one Gaussian covariance per class.

    ``x | C_k ~ N(mu_k, Sigma_k)``, ``p(C_k) = pi_k``;
    ``a_k(x) = log pi_k - log|Sigma_k| / 2 - (x - mu_k)^T Sigma_k^{-1} (x - mu_k) / 2``
    (quadratic boundaries); ``Sigma_k = S_k``, the class scatter divided by ``n_k``.

    The full case of :class:`GaussianDiscriminantAnalysis` (see there for the
    parameters and attributes). A class with a single sample has no covariance:
    an error unless ``reg_covar > 0``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from problin import QuadraticDiscriminantAnalysis
    >>> X, y = load_iris(return_X_y=True)
    >>> qda = QuadraticDiscriminantAnalysis().fit(X, y)
    >>> qda.covariances_.shape, round(float(qda.score(X, y)), 2)
    ((3, 4, 4), 0.98)
    """

    _parameter_constraints = LinearDiscriminantAnalysis._parameter_constraints

    def __init__(self, priors: ArrayLike | None = None, reg_covar: float = 0.0) -> None:
        self.priors = priors
        self.reg_covar = reg_covar

    def _kind(self) -> str:
        return "full"
