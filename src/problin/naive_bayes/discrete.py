"""Naive Bayes for counts: Bernoulli (how often a feature is present) and
multinomial (how often it occurs). Both take scipy.sparse input without densifying it: fitting is one sparse
product ``X^T Y`` (Y the weighted one-hot class matrix) and prediction one
``X W``.
"""
from collections.abc import Callable, Iterator
from numbers import Real
from typing import Any, Self

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.special import gammaln
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .._core.blocks import iter_blocks
from .._core.extreme import fix_linear_rows
from .._core.numerics import logsumexp
from .._core.types import Matrix, MatrixLike
from .._dask.chunks import is_dask
from .._dask.lazy import lazy_on_dask
from .._dask.reductions import ClassSums, dask_class_reduce
from .._params import validate_params
from ..discriminant._generative import GenerativeClassifier, canonical, log_class_priors
from ..discriminant.gaussian import GaussianDiscriminantAnalysis
from ..exceptions import SeparationWarning, warn_at_caller
from ._unsmoothed import limit_log, limit_log_likelihood, limit_posterior_scores

__all__ = ["BernoulliNB", "MultinomialNB"]


def _one_hot(codes: np.ndarray, n_classes: int, sample_weight: np.ndarray | None) -> Any:
    Y = np.zeros((codes.size, n_classes))
    Y[np.arange(codes.size), codes] = 1.0 if sample_weight is None else sample_weight
    return Y


class _DiscreteNB(GenerativeClassifier):
    """Shared by the count models: ``a_k(x) = x^T W_k + b_k`` from per-class feature counts."""

    _parameter_constraints = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "priors": ["array-like", None],
    }

    _input_spec: dict[str, Any] = {"accept_sparse": "csr", "dtype": [np.float64, np.float32]}

    def _features(self, X: Matrix) -> Matrix:
        """The features the model counts (binarised for Bernoulli)."""
        return X

    def _transforms(self) -> bool:
        """Whether :meth:`_features` changes X (then passes go block by block)."""
        return False

    def _feature_blocks(self, X: Matrix) -> Iterator[tuple[int, int, Matrix]]:
        """``(lo, hi, features of rows lo:hi)``. CSR blocks of ~2^18 stored entries
        are views of X's index arrays with new values (no slicing copies)."""
        if not sp.issparse(X):
            for lo, hi, Xb in iter_blocks(X):
                yield lo, hi, self._features(Xb)
            return
        n, indptr = X.shape[0], X.indptr
        rows = max(1, int(n * (1 << 18) // max(1, X.nnz)))
        for lo in range(0, n, rows):
            hi = min(n, lo + rows)
            a, b = indptr[lo], indptr[hi]
            block = sp.csr_matrix((X.data[a:b], X.indices[a:b], indptr[lo:hi + 1] - a),
                                  shape=(hi - lo, X.shape[1]), copy=False)
            yield lo, hi, self._features(block)

    def fit(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        if not is_dask(X):
            return super().fit(X, y, sample_weight)
        validate_params(self)
        stats = dask_class_reduce(self, X, y, sample_weight, self._chunk_counts,
                                  accept_sparse=True)
        self._stats = stats.counts, stats.sums[0]
        self._set_model(strict=True)
        return self

    fit.__doc__ = GaussianDiscriminantAnalysis.fit.__doc__

    def _dask_reduce(self) -> tuple[Callable[..., Any], bool, Callable[[Any], Any]]:
        return self._chunk_counts, True, lambda stats: (stats.counts, stats.sums[0])

    def _chunk_counts(self, X: Matrix, codes: np.ndarray, sample_weight: np.ndarray | None,
                      n_classes: int) -> ClassSums:
        """The counts of one Dask chunk (dense, or CSR), to be summed over the chunks."""
        return ClassSums(*self._accumulate(self._check_input(canonical(X)), codes,
                                           sample_weight, n_classes))

    def _accumulate(self, X: Matrix, codes: np.ndarray, sample_weight: np.ndarray | None,
                    n_classes: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(n_k, sum_{t_n = k} w_n f(x_n))``: class counts and feature counts
        (``n_classes``: of a Dask chunk's own classes; default ``classes_``)."""
        Y = _one_hot(codes, self.classes_.size if n_classes is None else n_classes,
                     sample_weight)
        counts: Any
        if sp.issparse(X) and not self._transforms():
            counts = np.asarray(X.T @ Y).T  # one sparse product, X as it is
        else:  # transformed (or dense) features: block by block, no copy of X
            counts = sum(np.asarray(F.T @ Y[lo:hi]).T for lo, hi, F in self._feature_blocks(X))
        return Y.sum(axis=0), counts

    def _total_weight(self, stats: tuple[np.ndarray, np.ndarray]) -> float:
        return float(np.sum(stats[0]))  # (the class counts)

    def _merge(self, a: tuple[np.ndarray, np.ndarray],
               b: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        return a[0] + b[0], a[1] + b[1]

    def _set_model(self, strict: bool) -> None:
        self.class_count_, self.feature_count_ = self._stats[0].copy(), self._stats[1].copy()
        pi, self.class_log_prior_ = log_class_priors(self.class_count_, self.priors,
                                                     self.classes_, require_samples=False)
        self.priors_ = pi
        self._set_feature_probs()

    def _linear(self, X: Matrix, W: np.ndarray, b: np.ndarray,
                relative: bool = False) -> np.ndarray:
        """``f(X) @ W.T + b`` by row blocks (sparse: one sparse product). Counts so
        large that the products overflow (1e308) are recomputed scaled, never NaN
        (see :mod:`problin._core.extreme`; ``relative``: for the posterior)."""
        with np.errstate(over="ignore", invalid="ignore"):  # such rows are fixed below
            if sp.issparse(X) and not self._transforms():
                out = np.asarray(X @ W.T) + b
            else:
                out = np.empty((X.shape[0], W.shape[0]))
                for lo, hi, F in self._feature_blocks(X):
                    out[lo:hi] = F @ W.T
                out += b
        # Binarised features are 0 or 1: only counts as they are can overflow.
        return out if self._transforms() else fix_linear_rows(out, X, W, b, relative)

    def _linear_form(self) -> tuple[np.ndarray, np.ndarray]:
        """``(W, b)`` with ``a_k(x) = f(x)^T w_k + b_k`` (each model its own)."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _limit_forms(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``alpha=0``: ``(W, b, Wz, bz)``, the finite part ``F = f(X) W^T + b`` of the
        class scores and their count of zero-probability events ``Z = f(X) Wz^T + bz``
        (see :mod:`._unsmoothed`; each model its own)."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _limit_parts(self, X: Matrix, relative: bool) -> tuple[np.ndarray, np.ndarray]:
        W, b, Wz, bz = self._limit_forms()
        return self._linear(X, W, b, relative), self._linear(X, Wz, bz)

    def _joint_log_likelihood(self, X: Matrix) -> np.ndarray:
        if self.alpha == 0:
            return limit_log_likelihood(*self._limit_parts(X, relative=False))
        return self._linear(X, *self._linear_form())

    def _relative_log_likelihood(self, X: Matrix) -> np.ndarray:
        if self.alpha == 0:
            return limit_posterior_scores(*self._limit_parts(X, relative=True),
                                          self.class_log_prior_)
        return self._linear(X, *self._linear_form(), relative=True)

    def _warn_zero(self, zeros: np.ndarray, what: str) -> None:
        """The one warning of an unsmoothed fit with probabilities of 0 (``zeros``:
        their mask over classes with data) -- the count models' separation."""
        if np.any(zeros):
            warn_at_caller(
                f"{type(self).__name__}(alpha=0): {int(np.sum(zeros))} maximum-likelihood "
                f"{what} are 0 (a feature never seen in a class); a row holding one has "
                "probability 0 in that class, and where it has in every class, the "
                "posterior of vanishing smoothing (alpha -> 0: the classes with the "
                "fewest such features). Set alpha > 0 to smooth them", SeparationWarning)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.poor_score = True  # count models on continuous test data
        return tags


class BernoulliNB(_DiscreteNB):
    """Bernoulli naive Bayes for binary features (Bishop 2006, §4.2.3; McCallum & Nigam 1998).

    ``x_j | C_k ~ Bernoulli(p_kj)`` independently, ``p(C_k) = pi_k``;
    ``a_k(x) = log pi_k + sum_j [x_j log p_kj + (1 - x_j) log(1 - p_kj)]`` (linear in x);
    Laplace smoothing ``p_kj = (#{x_j = 1, C_k} + alpha) / (n_k + 2 alpha)``.

    Parameters
    ----------
    alpha : float, default=1.0
        Pseudo-count added to both outcomes of every feature (1: Laplace smoothing;
        0: the maximum-likelihood ``p_kj = #{x_j = 1, C_k} / n_k`` of the texts, with a
        :class:`~problin.SeparationWarning` where one is 0 or 1. A row that has
        probability 0 in every class then gets the posterior of vanishing smoothing,
        ``alpha -> 0``: the classes in which it has the fewest zero-probability
        features, in proportion to the rest of their likelihood; never NaN).
    binarize : float or None, default=0.0
        A feature counts as present when it exceeds this threshold; ``None``
        takes the input as already binary (0/1). Sparse input needs a
        threshold >= 0 (absent entries stay absent).
    priors : array-like of shape (n_classes,), optional
        Class priors to use instead of the class frequencies.

    Attributes
    ----------
    classes_, class_count_, priors_
    feature_count_ : ndarray of shape (n_classes, n_features)
        (Weighted) number of samples of each class in which each feature is present.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        ``log p_kj``.
    class_log_prior_ : ndarray of shape (n_classes,)

    Examples
    --------
    >>> import numpy as np
    >>> from problin import BernoulliNB
    >>> X = np.array([[1, 1, 0], [1, 0, 0], [0, 0, 1], [0, 1, 1]])
    >>> nb = BernoulliNB().fit(X, ["spam", "spam", "ham", "ham"])
    >>> np.exp(nb.feature_log_prob_)  # (count + 1) / (n_k + 2)
    array([[0.25, 0.5 , 0.75],
           [0.75, 0.5 , 0.25]])
    >>> nb.predict([[1, 0, 0]])
    array(['spam'], dtype='<U4')
    """

    _parameter_constraints = {**_DiscreteNB._parameter_constraints,
                              "binarize": [None, Interval(Real, None, None, closed="neither")]}

    def __init__(self, alpha: float = 1.0, binarize: float | None = 0.0,
                 priors: ArrayLike | None = None) -> None:
        self.alpha = alpha
        self.binarize = binarize
        self.priors = priors

    def _check_input(self, X: Matrix) -> Matrix:
        if self.binarize is None:
            values = X.data if sp.issparse(X) else X
            if not np.all((values == 0) | (values == 1)):
                raise ValueError("BernoulliNB(binarize=None) takes binary features, but X "
                                 "holds values other than 0 and 1; set binarize to the "
                                 "threshold above which a feature counts as present")
        elif sp.issparse(X) and self.binarize < 0:
            raise ValueError(f"binarize={self.binarize} < 0 would make every absent entry of "
                             "sparse X present (densifying it); use a threshold >= 0")
        return X

    def _transforms(self) -> bool:
        return self.binarize is not None

    def _features(self, X: Matrix) -> Matrix:
        if self.binarize is None:
            return X
        if sp.issparse(X):  # same sparsity pattern, no copy of the indices
            return sp.csr_matrix(((X.data > self.binarize).astype(np.float64), X.indices,
                                  X.indptr), shape=X.shape, copy=False)
        return (X > self.binarize).astype(np.float64)

    def _set_feature_probs(self) -> None:
        if self.alpha == 0:
            (F1, Z1), (F0, Z0) = self._limit_logs()
            self.feature_log_prob_ = limit_log_likelihood(F1, Z1)
            self._log_absent = limit_log_likelihood(F0, Z0)
            self._warn_zero(((Z1 > 0) | (Z0 > 0)), "probabilities of presence or absence")
            return
        n = self.class_count_[:, None] + 2.0 * self.alpha
        self.feature_log_prob_ = np.log(self.feature_count_ + self.alpha) - np.log(n)
        # log(1 - p) from the counts themselves: no cancellation when p ~ 1.
        absent = np.maximum(self.class_count_[:, None] - self.feature_count_, 0.0)
        self._log_absent = np.log(absent + self.alpha) - np.log(n)

    def _linear_form(self) -> tuple[np.ndarray, np.ndarray]:
        """``(W, b)`` with ``a_k(x) = x^T w_k + b_k``."""
        W = self.feature_log_prob_ - self._log_absent
        return W, self.class_log_prior_ + self._log_absent.sum(axis=1)

    def _limit_logs(self) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
        """``alpha=0``: ``(f, z)`` of ``log p_kj`` and of ``log(1 - p_kj)``."""
        n = self.class_count_[:, None]
        absent = np.maximum(n - self.feature_count_, 0.0)
        return limit_log(self.feature_count_, n, 2.0), limit_log(absent, n, 2.0)

    def _limit_forms(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        (F1, Z1), (F0, Z0) = self._limit_logs()
        return (F1 - F0, self.class_log_prior_ + F0.sum(axis=1), Z1 - Z0, Z0.sum(axis=1))


class MultinomialNB(_DiscreteNB):
    """Multinomial naive Bayes for counts (bag of words).

    ``x | C_k ~ Multinomial(theta_k)``, ``p(C_k) = pi_k``;
    ``a_k(x) = log pi_k + sum_j x_j log theta_kj`` (linear in x);
    ``theta_kj = (N_kj + alpha) / (sum_i N_ki + D alpha)``, ``N_kj`` the count of
    feature ``j`` in class ``k``.

    Parameters
    ----------
    alpha : float, default=1.0
        Pseudo-count added to every feature count (1: Laplace smoothing; 0: the
        maximum-likelihood ``theta_kj = N_kj / sum_i N_ki``, with a
        :class:`~problin.SeparationWarning` where one is 0; a row of probability 0 in
        every class gets the posterior of ``alpha -> 0``: the classes in which its
        counts of unseen features sum to the least, in proportion to the rest of
        their likelihood; never NaN).
    priors : array-like of shape (n_classes,), optional
        Class priors to use instead of the class frequencies.

    Attributes
    ----------
    classes_, class_count_, priors_, class_log_prior_
    feature_count_ : ndarray of shape (n_classes, n_features)
        ``N_kj``, the (weighted) feature counts per class.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        ``log theta_kj``.

    Examples
    --------
    >>> import numpy as np
    >>> from problin import MultinomialNB
    >>> X = np.array([[3, 0, 1], [2, 1, 0], [0, 2, 3], [1, 3, 2]])
    >>> nb = MultinomialNB().fit(X, [0, 0, 1, 1])
    >>> np.round(np.exp(nb.feature_log_prob_), 3)
    array([[0.6  , 0.2  , 0.2  ],
           [0.143, 0.429, 0.429]])
    >>> nb.predict([[0, 1, 4]])
    array([1])
    """

    def __init__(self, alpha: float = 1.0, priors: ArrayLike | None = None) -> None:
        self.alpha = alpha
        self.priors = priors

    def _check_input(self, X: Matrix) -> Matrix:
        """Counts are non-negative, at fit and at predict (where a negative count gave
        log p(x) above 0 or -inf from score_samples)."""
        lowest = (X.data.min(initial=0.0) if sp.issparse(X) else X.min(initial=0.0))
        if lowest < 0:
            raise ValueError(f"Negative values in data passed to MultinomialNB (the "
                             f"smallest is {lowest:g}): it models counts; use non-negative "
                             "features (e.g. counts or tf-idf) or GaussianNB")
        return X

    def _set_feature_probs(self) -> None:
        if self.alpha == 0:
            F, Z = self._limit_logs()
            self.feature_log_prob_ = limit_log_likelihood(F, Z)
            self._warn_zero(Z > 0, "word probabilities")
            return
        smoothed = self.feature_count_ + self.alpha
        self.feature_log_prob_ = (np.log(smoothed)
                                  - np.log(smoothed.sum(axis=1, keepdims=True)))

    def _linear_form(self) -> tuple[np.ndarray, np.ndarray]:
        return self.feature_log_prob_, self.class_log_prior_

    def _limit_logs(self) -> tuple[np.ndarray, np.ndarray]:
        """``alpha=0``: ``(f, z)`` of ``log theta_kj``."""
        total = self.feature_count_.sum(axis=1, keepdims=True)
        return limit_log(self.feature_count_, total, float(self.feature_count_.shape[1]))

    def _limit_forms(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        F, Z = self._limit_logs()
        return F, self.class_log_prior_, Z, np.zeros(Z.shape[0])

    @lazy_on_dask()
    def score_samples(self, X: MatrixLike) -> np.ndarray:
        """Log marginal probability of the counts, ``log p(x) = log (N! / prod_j x_j!)
        + logsumexp_k a_k(x)``: the class scores leave out the multinomial coefficient
        (the same for every class, so posteriors do not need it); ``log p(x)`` does
        (without it the probabilities of all count vectors of one total summed to
        less than 1). Non-integer counts take its gamma-function extension."""
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        return logsumexp(self._joint_log_likelihood(X), axis=1) + _log_multinomial_coefficient(X)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        return tags


def _log_multinomial_coefficient(X: Matrix) -> np.ndarray:
    """``log (N! / prod_j x_j!)`` per row (``N = sum_j x_j``), by ``gammaln``."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        terms = X.copy()
        terms.data = gammaln(terms.data + 1.0)
        total = np.asarray(X.sum(axis=1)).ravel()
        return gammaln(total + 1.0) - np.asarray(terms.sum(axis=1)).ravel()
    X = np.asarray(X, dtype=np.float64)
    return gammaln(X.sum(axis=1) + 1.0) - gammaln(X + 1.0).sum(axis=1)
