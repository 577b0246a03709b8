"""What every generative classifier shares: labels, streaming fits, posteriors.

A generative classifier models ``p(x, C_k) = pi_k p(x | C_k)``. Subclasses
supply the joint log-likelihood ``a_k(x) = log pi_k + log p(x | C_k)`` of each
class (:meth:`GenerativeClassifier._joint_log_likelihood`); the posterior is
then the softmax of the ``a_k``, computed in log space, and ``log p(x)`` is
their ``logsumexp``. ``fit`` and ``partial_fit`` both feed sufficient
statistics that merge exactly, so streaming over chunks gives the fit on all
of the data.
"""
from collections.abc import Callable
from typing import Any, Self

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core.labels import encode_classes, stream_labels
from .._core.numerics import log_softmax, logsumexp
from .._core.types import Matrix, MatrixLike
from .._core.validation import (
    check_class_weights,
    check_finite_magnitude,
    check_priors,
    check_sample_weight,
    check_total_weight,
    label_values,
)
from .._source import data_source
from .._dask.lazy import lazy_on_dask
from .._dask.stream import dask_stream_batch
from .._frames import encode_frame
from .._params import validate_params
from .._state import AllOrNothingFit, unchanged_on_error

__all__ = ["GenerativeClassifier", "SoftmaxPosteriorMixin", "log_class_priors"]


def log_class_priors(counts: np.ndarray, priors: ArrayLike | None, classes: np.ndarray, *,
                     require_samples: Any = True) -> tuple[np.ndarray, np.ndarray]:
    """``(pi, log pi)``: the given ``priors`` or the ML estimate ``n_k / n``.

    A class with prior zero (no samples yet in a stream, or ``priors`` says so)
    has ``log pi_k = -inf`` and is never predicted. With ``require_samples``,
    a class given a positive prior but holding no samples (so no parameters)
    is an error.
    """
    if priors is None:
        pi = counts / counts.sum()
    else:
        pi = check_priors(priors, classes.size)
        empty = (pi > 0) & (counts <= 0) & require_samples
        if np.any(empty):
            raise ValueError(f"classes {classes[empty].tolist()} have a positive prior but no "
                             "samples (or zero total weight): their parameters are undefined")
    log_pi = np.full(pi.shape, -np.inf)
    np.log(pi, out=log_pi, where=pi > 0)
    return pi, log_pi


class SoftmaxPosteriorMixin:
    """Posteriors from class scores: ``p(C_k | x) = softmax_k a_k(x)``, in log space.

    For every classifier whose ``a_k(x)`` is ``log p(x, C_k)`` up to a term
    shared by all classes (the generative classifiers, and Fisher's
    discriminant in its projected space). The class supplies ``_jll(X)``: the
    ``a_k`` of raw ``X`` (checks that it is fitted and validates ``X``), shape
    (n_samples, n_classes), columns in the order of ``classes_``; and may
    supply ``_posterior_scores(X)``: the ``a_k`` minus any per-row term, formed
    so that rows far from the data (1e200) keep the posterior the model
    implies where the ``a_k`` themselves overflow to ``-inf``.
    """

    # What the class supplies (annotations for mypy only: no attributes).
    classes_: np.ndarray
    _jll: Callable[[Any], np.ndarray]

    def _posterior_scores(self, X: MatrixLike) -> np.ndarray:
        return self._jll(X)

    @lazy_on_dask(columns=lambda self: self.classes_.size)
    def predict_log_proba(self, X: MatrixLike) -> np.ndarray:
        """Log posteriors ``log p(C_k | x) = a_k - logsumexp_j a_j`` (never ``log(p)``)."""
        scores = self._posterior_scores(X)
        with np.errstate(over="ignore"):  # a_k - max_j a_j below the float range: -inf
            return log_softmax(scores, axis=1)

    @lazy_on_dask(columns=lambda self: self.classes_.size)
    def predict_proba(self, X: MatrixLike) -> np.ndarray:
        """Posterior class probabilities ``p(C_k | x)``; columns follow ``classes_``."""
        return np.exp(self.predict_log_proba(X))

    @lazy_on_dask(dtype=lambda self: self.classes_.dtype)
    def predict(self, X: MatrixLike) -> np.ndarray:
        """The class of largest posterior probability (lazy Dask output for Dask ``X``)."""
        best = np.argmax(self._posterior_scores(X), axis=1)
        return self.classes_[best]


def canonical(X: Matrix) -> Matrix:
    """``X`` with a sparse matrix's duplicate entries summed (scipy allows them; models
    that read stored entries, binarised or through gammaln, must see their sums)."""
    if sp.issparse(X) and not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


class GenerativeClassifier(AllOrNothingFit, SoftmaxPosteriorMixin, ClassifierMixin,
                           BaseEstimator):
    """Base class: ``p(C_k | x) = softmax_k a_k(x)`` with ``a_k = log pi_k + log p(x | C_k)``.

    Subclasses implement ``_validate_X``, ``_new_stats``, ``_accumulate(X, codes,
    sample_weight)`` (statistics of a batch), ``_merge`` (of two statistics),
    ``_set_model(strict)`` (parameters from ``self._stats``; ``strict`` is False
    while streaming, where a degenerate class may still get more samples) and
    ``_joint_log_likelihood(X)`` (``a_k``, shape (N, K), on validated X).
    """

    # ------------------------------------------------------------- fitting
    def fit(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Fit by maximum likelihood in one pass over the data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), class labels
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights; weight 2 is the same as a duplicated row.

        Returns
        -------
        self
        """
        validate_params(self)
        y = label_values(y)
        X, y = self._validate_Xy(X, y, reset=True)
        self.classes_, codes = encode_classes(y, owner=type(self).__name__)
        sw = check_sample_weight(sample_weight, X.shape[0])
        check_class_weights(codes, sw, self.classes_)
        self._stats = self._accumulate(X, codes, sw)
        self._set_model(strict=True)
        return self

    def partial_fit(self, X: MatrixLike, y: ArrayLike, classes: ArrayLike | None = None,
                    sample_weight: ArrayLike | None = None) -> Self:
        """Update the fit with one more batch of samples (streaming, exact).

        Fitting batch after batch gives the same model as one ``fit`` on all
        of them (to rounding): the per-class weights, means and scatters (or
        counts) merge by exact pairwise updates and the parameters are
        recomputed after every call, so the model predicts between calls. One
        difference while streaming: a class whose covariance is still zero (a
        single sample, ``reg_covar=0``) is regularised with a warning where
        ``fit`` would refuse it. ``fit`` after ``partial_fit`` starts over.
        See docs/streaming.md.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Or a Dask array/DataFrame: the batch's statistics are then reduced
            chunk by chunk on the active Dask scheduler.
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,), optional
            Every label the stream will hold. Needed on the first call unless
            that batch already holds every label; ignored afterwards. A label
            not known from the first call is an error (the batch is then not
            merged: the estimator stays as it was). A Gaussian model predicts a
            class only once the stream holds samples of it, whatever ``priors``.
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        first = not hasattr(self, "_stats")
        if first:
            validate_params(self)
        with unchanged_on_error(self):  # (a refused batch is not merged)
            self._partial_fit(X, y, classes, sample_weight, first)
        return self

    def _partial_fit(self, X: MatrixLike, y: ArrayLike, classes: ArrayLike | None,
                     sample_weight: ArrayLike | None, first: bool) -> None:
        def on_chunks(X: Any) -> Any:  # the batch's statistics, reduced chunk by chunk
            reduce, accept_sparse, finish = self._dask_reduce()
            return finish(dask_stream_batch(self, X, y, sample_weight, classes, first, reduce,
                                            accept_sparse=accept_sparse))

        batch = data_source(X).reduce(
            on_chunks, lambda X: self._batch(X, y, classes, sample_weight, first))
        if batch is None:
            return  # a later batch of no weight adds nothing (its data checked)
        self._stats = batch if first else self._merged(batch)
        self._set_model(strict=False)

    def _batch(self, X: MatrixLike, y: ArrayLike, classes: ArrayLike | None,
               sample_weight: ArrayLike | None, first: bool) -> Any:
        """The statistics of a batch in memory (None: a later batch of no weight)."""
        y = label_values(y)
        X, y = self._validate_Xy(X, y, reset=first)
        check_classification_targets(y)
        if first:
            self.classes_ = self._stream_classes(y, classes)
        codes = self._codes(y)
        sw = check_sample_weight(sample_weight, X.shape[0], allow_zero=not first)
        if sw is not None and not np.any(sw):
            return None
        return self._accumulate(X, codes, sw)

    def _merged(self, batch: Any) -> Any:
        """The statistics so far merged with ``batch``'s, their total weight held to the
        bound each batch's is (a stream of batches each within it could exceed it)."""
        merged = self._merge(self._stats, batch)
        check_total_weight(self._total_weight(merged))
        return merged

    def _total_weight(self, stats: Any) -> float:
        """The summed sample weight of ``stats`` (class statistics: their counts)."""
        return float(np.sum(stats.counts))

    def _dask_reduce(self) -> tuple[Callable[..., Any], bool, Callable[[Any], Any]]:
        """``(reduce, accept_sparse, finish)`` for a Dask batch: the per-chunk statistic
        (see :func:`~problin._dask.chunks.dask_class_reduce`) and what turns
        their merge into this estimator's statistics."""
        raise TypeError(f"{type(self).__name__}.partial_fit does not take Dask input; call "
                        "it on computed chunks")

    def _stream_classes(self, y: np.ndarray, classes: ArrayLike | None) -> np.ndarray:
        return stream_labels(y, classes, type(self).__name__)

    def _codes(self, y: np.ndarray) -> np.ndarray:
        """Class index of every label; a label not in ``classes_`` is an error."""
        y = np.asarray(y)
        idx = np.searchsorted(self.classes_, y)
        idx = np.minimum(idx, self.classes_.size - 1)
        unseen = self.classes_[idx] != y
        if np.any(unseen):
            raise ValueError(f"y holds labels {np.unique(y[unseen])[:10].tolist()} that are not "
                             f"among the classes {self.classes_[:10].tolist()} of the first "
                             "partial_fit call; pass every label with classes= on the first "
                             "call")
        return idx.astype(np.intp)

    # What validate_data accepts (subclasses may accept sparse input).
    _input_spec: dict[str, Any] = {"dtype": [np.float64, np.float32]}

    def _validate_X(self, X: MatrixLike, reset: bool) -> Matrix:
        return self._check_input(canonical(validate_data(
            self, encode_frame(self, X, reset), reset=reset, **self._input_spec)))

    def _validate_Xy(self, X: MatrixLike, y: Any, reset: bool) -> tuple[Matrix, np.ndarray]:
        X, y = validate_data(self, encode_frame(self, X, reset), y, reset=reset,
                             **self._input_spec,
                             ensure_all_finite=False)
        check_finite_magnitude(X, self)  # NaN, infinity, or values whose squares overflow
        return self._check_input(canonical(X)), y

    def _check_input(self, X: Matrix) -> Matrix:
        """Model-specific checks of validated X (e.g. non-negative counts)."""
        return X

    # ---------------------------------------------------------- prediction
    def _jll(self, X: MatrixLike) -> np.ndarray:
        check_is_fitted(self)
        return self._joint_log_likelihood(self._validate_X(X, reset=False))

    def _posterior_scores(self, X: MatrixLike) -> np.ndarray:
        check_is_fitted(self)
        return self._relative_log_likelihood(self._validate_X(X, reset=False))

    def _relative_log_likelihood(self, X: Matrix) -> np.ndarray:
        """``a_k(x)`` minus any per-row term, on validated ``X`` (see
        :class:`SoftmaxPosteriorMixin`); subclasses whose ``a_k`` can overflow
        form it by per-row scaling. Default: the ``a_k`` themselves."""
        return self._joint_log_likelihood(X)

    @lazy_on_dask()
    def score_samples(self, X: MatrixLike) -> np.ndarray:
        """Log marginal density ``log p(x) = logsumexp_k (log pi_k + log p(x | C_k))``.

        Low values flag points the fitted model finds unlikely (outliers). Lazy
        Dask output for Dask ``X``.
        """
        return logsumexp(self._jll(X), axis=1)
