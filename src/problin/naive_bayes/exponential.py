"""Naive Bayes over per-column exponential families (Gaussian, Bernoulli, categorical,
Poisson, exponential, Gamma), mixable column by column."""
from collections.abc import Mapping, Sequence
from dataclasses import replace
from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import Interval, StrOptions

from .._core.blocks import iter_blocks
from .._core.model.feature_families import FEATURE_FAMILIES, FeatureFamily
from .._core.moments.class_stats import ClassStats, class_stats
from .._core.types import Matrix, MatrixLike
from ..discriminant._gaussian import GaussianModel, gaussian_model, joint_log_likelihood
from ..discriminant._generative import GenerativeClassifier, log_class_priors
from ._unsmoothed import limit_log_likelihood, limit_posterior_scores
from .gaussian import within_class_variances

__all__ = ["ExponentialFamilyNB"]

FAMILIES = ("gaussian", *FEATURE_FAMILIES)
# The statistics of a fit: class weights, the Gaussian columns' class statistics (None
# without any), and each other column's summed sufficient statistics (K, m).
State = tuple[np.ndarray, ClassStats | None, list[np.ndarray]]



def _rows(X: np.ndarray, columns: np.ndarray | list[int]) -> np.ndarray:
    """The Gaussian columns as row-major float64: a column subset by index is column-major,
    and the class statistics of column-major blocks sum in another order, so this keeps
    the Gaussian columns bit-identical to GaussianNB on the same columns."""
    return np.ascontiguousarray(X[:, columns], dtype=np.float64)


class ExponentialFamilyNB(GenerativeClassifier):
    """Naive Bayes whose class conditionals are exponential families, column by column.

    ``p(x | C_k) = prod_j p_j(x_j | theta_kj)``, each ``p_j`` one of ``"gaussian"``
    (mean and variance), ``"bernoulli"`` (0/1), ``"categorical"`` (levels coded
    0, 1, ...), ``"poisson"`` (counts), ``"exponential"`` or ``"gamma"`` (positive
    values), with maximum-likelihood parameters per class: the class means of the
    sufficient statistics, and for the Gamma's shape a Newton solve of
    ``log a - digamma(a) = log(mean x) - mean(log x)``. The Gaussian variances are
    smoothed as :class:`~problin.GaussianNB`'s (``var_smoothing``), the Bernoulli and
    categorical frequencies as :class:`~problin.BernoulliNB`'s (``alpha``
    pseudo-counts). Since every family's base measure is the same in every class, the
    log-odds of two classes are linear in the sufficient statistics ``T(x)``
    (``x``, ``x²``, ``log x``, indicators): with a variance shared by the classes a
    Gaussian column enters linearly in ``x``, the logistic model's form (Bishop 2006,
    §4.2.4).

    A value outside a column's support (a negative count, a non-positive Gamma or
    exponential value, a Bernoulli value other than 0 and 1, a non-integer level) is a
    ValueError naming the column and rows, at fit and at predict. A row of probability
    0 in a class (a positive count where a class saw only zeros, a category level no
    class saw) scores ``-inf`` there; a row of probability 0 in every class gets the
    posterior of the classes it contradicts in the fewest columns, by the rest of its
    likelihood, never NaN. The Gaussian columns are :class:`~problin.GaussianNB`'s model,
    whose posteriors at rows far from the data (1e20, 1e300) are exact. One pass over
    row blocks (sums of the statistics), and ``partial_fit`` over chunks equals one fit.

    Parameters
    ----------
    distributions : dict or list of str, optional
        Family per column: a dict whose keys are column names (a DataFrame's) or
        indices, or a list with one family per column; the families are
        ``"gaussian"``, ``"bernoulli"``, ``"categorical"``, ``"poisson"``,
        ``"exponential"``, ``"gamma"``. Columns not named get ``default``. (A model
        file stores a dict by column names or a list, not a dict keyed by indices.)
    default : str, default="gaussian"
        The family of the columns ``distributions`` does not name.
    alpha : float, default=1.0
        Pseudo-count of the Bernoulli and categorical columns (0: maximum likelihood).
    var_smoothing : float, default=0.1
        Fraction of each Gaussian column's pooled within-class variance added to its
        class variances (as :class:`~problin.GaussianNB`).
    priors : array-like of shape (n_classes,), optional
        Class priors to use instead of the class frequencies.

    Attributes
    ----------
    classes_, class_count_, priors_, class_log_prior_ : ndarray
    distributions_ : list of str
        The family of every column.
    params_ : list of ndarray
        Per column, the (n_classes, q) parameters: ``[mean, variance]`` (Gaussian,
        smoothing included), ``[p]`` (Bernoulli), level probabilities (categorical),
        ``[lambda]`` (Poisson), ``[mean]`` (exponential), ``[mean, shape]`` (Gamma).
    epsilon_ : ndarray of shape (n_features,)
        The variance added to each Gaussian column's variances (0 for the others).

    Examples
    --------
    >>> import numpy as np
    >>> from problin.naive_bayes import ExponentialFamilyNB
    >>> X = np.array([[1.0, 0, 2.5], [3.0, 1, 0.5], [2.0, 0, 1.5], [7.0, 1, 4.0],
    ...               [5.0, 2, 6.0], [6.0, 1, 3.0]])
    >>> nb = ExponentialFamilyNB({0: "poisson", 1: "categorical", 2: "gamma"})
    >>> nb = nb.fit(X, [0, 0, 0, 1, 1, 1])
    >>> nb.params_[0].ravel()  # each class's mean count
    array([2., 6.])
    >>> nb.predict([[6.0, 2, 4.0], [1.0, 0, 1.0]])
    array([1, 0])
    """

    _parameter_constraints = {
        "distributions": [dict, list, tuple, None],
        "default": [StrOptions(set(FAMILIES))],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "var_smoothing": [Interval(Real, 0, None, closed="neither")],
        "priors": ["array-like", None],
    }

    def __init__(self, distributions: Mapping[Any, str] | Sequence[str] | None = None,
                 default: str = "gaussian", alpha: float = 1.0,
                 var_smoothing: float = 0.1, priors: ArrayLike | None = None) -> None:
        self.distributions = distributions
        self.default = default
        self.alpha = alpha
        self.var_smoothing = var_smoothing
        self.priors = priors

    # ----------------------------------------------------------- columns
    def _resolve(self, n_features: int) -> list[str]:
        """The family of every column, from ``distributions`` and ``default``."""
        names = list(getattr(self, "feature_names_in_", []))
        out = [self.default] * n_features
        given = self.distributions
        spec: Mapping[Any, str] = {}
        if isinstance(given, Mapping):
            spec = given
        elif given is not None:
            if len(given) != n_features:
                raise ValueError(f"distributions lists {len(given)} families for "
                                 f"{n_features} columns")
            spec = dict(enumerate(given))
        for key, family in spec.items():
            if family not in FAMILIES:
                raise ValueError(f"unknown distribution {family!r} for column {key!r}; "
                                 f"the distributions are {', '.join(FAMILIES)}")
            if isinstance(key, str) and key in names:
                out[names.index(key)] = family
            elif isinstance(key, (int, np.integer)) and -n_features <= key < n_features:
                out[int(key)] = family
            else:
                raise ValueError(f"distributions names column {key!r}, which X does not "
                                 f"have (columns: {names[:10] or f'0..{n_features - 1}'})")
        return out

    def _label(self, j: int) -> str:
        names = getattr(self, "feature_names_in_", None)
        return f"{names[j]!r} (index {j})" if names is not None else str(j)

    def _families(self) -> list[FeatureFamily | None]:
        return [None if d == "gaussian" else FEATURE_FAMILIES[d]()
                for d in self.distributions_]

    def _validate_Xy(self, X: MatrixLike, y: Any, reset: bool) -> tuple[Matrix, np.ndarray]:
        if reset:
            for name in ("distributions_", "feature_names_in_"):
                self.__dict__.pop(name, None)
        X, y = super()._validate_Xy(X, y, reset)
        if reset:
            self.distributions_ = self._resolve(X.shape[1])
        return self._check_support(X), y

    def _validate_X(self, X: MatrixLike, reset: bool) -> Matrix:
        return self._check_support(super()._validate_X(X, reset))

    def _check_support(self, X: Matrix) -> Matrix:
        for j, family in enumerate(self._families()):
            if family is not None:
                family.check(np.asarray(X[:, j], dtype=np.float64), self._label(j))
        return X

    # ---------------------------------------------------------- statistics
    def _accumulate(self, X: Matrix, codes: np.ndarray,
                    sample_weight: np.ndarray | None) -> State:
        K = self.classes_.size
        families = self._families()
        gauss = np.flatnonzero([f is None for f in families])
        counts = np.zeros(K)
        stats: ClassStats | None = None
        sums: list[np.ndarray] = [np.zeros((K, 0)) for _ in families]
        for lo, hi, Xb in iter_blocks(X):
            cb = codes[lo:hi]
            wb = None if sample_weight is None else sample_weight[lo:hi]
            Y = np.zeros((hi - lo, K))
            Y[np.arange(hi - lo), cb] = 1.0 if wb is None else wb
            counts += Y.sum(axis=0)
            if gauss.size:
                block = class_stats(_rows(Xb, gauss), cb, K, wb,
                                    kind="diag")
                stats = block if stats is None else stats + block
            for j, family in enumerate(families):
                if family is not None:
                    part = family.statistics(np.asarray(Xb[:, j], dtype=np.float64), Y)
                    sums[j] = family.merge(sums[j], part) if sums[j].size else part
        return counts, stats, sums

    def _merge(self, a: State, b: State) -> State:
        stats = a[1] if b[1] is None else b[1] if a[1] is None else a[1] + b[1]
        sums = [s if f is None else f.merge(s, t)
                for f, s, t in zip(self._families(), a[2], b[2])]
        return a[0] + b[0], stats, sums

    def _total_weight(self, stats: State) -> float:
        return float(np.sum(stats[0]))

    # --------------------------------------------------------- parameters
    def _set_model(self, strict: bool) -> None:
        counts, stats, sums = self._stats
        self.class_count_ = counts.copy()
        self.priors_, log_pi = log_class_priors(counts, self.priors, self.classes_,
                                                require_samples=strict)
        # (While streaming, a class given a prior but no samples yet has no parameters:
        # it is not predicted until its samples arrive, as GaussianNB's.)
        self.class_log_prior_ = np.where(counts > 0, log_pi, -np.inf)
        families = self._families()
        self.epsilon_ = np.zeros(len(families))
        params: list[np.ndarray] = []
        gauss = [j for j, f in enumerate(families) if f is None]
        # The Gaussian columns are GaussianNB's model (the priors in it): its scores at
        # rows far from the data are exact (discriminant._far_posterior).
        self._model: GaussianModel | None = None
        if stats is not None:
            eps = float(self.var_smoothing) * within_class_variances(stats)
            self.epsilon_[gauss] = eps
            self._model, var = gaussian_model(stats, "diag", self.class_log_prior_, eps,
                                              self.classes_.tolist())
            mean = stats.means
        for j, family in enumerate(families):
            if family is None:
                i = gauss.index(j)
                params.append(np.stack([mean[:, i], var[:, i]], axis=1))
            else:
                params.append(family.fit(counts, sums[j], float(self.alpha)))
        self.params_ = params

    # ---------------------------------------------------------- prediction
    def _log_parts(self, X: Matrix, relative: bool,
                   model: GaussianModel | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(F, Z)``: per row and class the log prior plus the summed log-densities of
        probability > 0 (``relative``: less a per-row term, as GaussianNB's posterior
        scores), and the number of columns of probability 0 (the non-Gaussian ones)."""
        families = self._families()
        model = self._model if model is None else model
        if model is None:
            F = np.tile(self.class_log_prior_, (X.shape[0], 1))
        else:
            gauss = [j for j, f in enumerate(families) if f is None]
            F = joint_log_likelihood(_rows(X, gauss), model,
                                     relative=relative)
        Z = np.zeros_like(F)
        for j, (family, params) in enumerate(zip(families, self.params_)):
            if family is not None:
                part = family.log_density(np.asarray(X[:, j], dtype=np.float64), params)
                zero = np.isneginf(part)
                Z += zero
                F += np.where(zero, 0.0, part)
        return F, Z

    def _joint_log_likelihood(self, X: Matrix) -> np.ndarray:
        return limit_log_likelihood(*self._log_parts(X, relative=False))

    def _relative_log_likelihood(self, X: Matrix) -> np.ndarray:
        scores = limit_posterior_scores(*self._log_parts(X, relative=True),
                                        self.class_log_prior_)
        # A far row whose Gaussian columns favour a class of probability 0 elsewhere
        # left the others below the float range: those rows again, among their own
        # classes (rare; one row at a time).
        for i in np.flatnonzero(np.all(np.isneginf(scores), axis=1)):
            Z = self._log_parts(X[i:i + 1], relative=False)[1][0]
            keep = self.class_log_prior_ > -np.inf
            keep &= Z == Z[keep].min()
            F = np.zeros(keep.size)
            if self._model is not None:
                model = replace(self._model, log_priors=np.where(
                    keep, self._model.log_priors, -np.inf))
                F = self._log_parts(X[i:i + 1], relative=True, model=model)[0][0]
            # (still below the float range in every class: they share the row equally)
            scores[i] = np.where(keep, F, -np.inf) if np.any(np.isfinite(F[keep])) \
                else np.where(keep, 0.0, -np.inf)
        return scores
