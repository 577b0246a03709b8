"""``partial_fit`` of the GLM classifiers: stochastic Newton steps on a stream.

The mathematics (the per-row Newton step, its standardised coordinates, the warm-up
start and the remainder's correction) is :mod:`problin._core.solvers.stochastic`; this
mixin validates each batch, keeps the stream's state between calls and publishes the
estimate as the estimator's :class:`~problin.glm.result.GLMFit`, so that
``coef_``, ``intercept_``, ``predict``, ``predict_proba`` and ``decision_function``
read it as they read a ``fit``'s. See docs/streaming.md.
"""
from collections.abc import Callable
from typing import Any, Self

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from .._core.labels import stream_labels
from .._core.model.families import BinaryFamily, ClassFamily, class_family
from .._core.solvers.stochastic import (
    StochasticNewton,
    StochasticState,
    raw_parameters,
    sgd_rows,
    start_state,
)
from .._core.validation import check_finite_magnitude, check_sample_weight, label_values
from .._frames import encode_frame
from .._params import validate_params
from .._source import data_source
from .._state import AllOrNothingFit
from .result import GLMFit

__all__ = ["StochasticGradientMixin"]


class StochasticGradientMixin(AllOrNothingFit):
    """``partial_fit`` by stochastic Newton steps (for a ``GLMClassifier``)."""

    _family: BinaryFamily
    _multiclass: bool
    fit_intercept: bool
    #: The stochastic Newton algorithm's constants (see the core module).
    _newton = StochasticNewton()

    def partial_fit(self, X: Any, y: Any, classes: Any = None,
                    sample_weight: Any = None) -> Self:
        """One stochastic Newton step per row of the batch, continuing the stream.

        Row ``n`` of the stream (counted over all calls) moves the parameters by its
        own score, ``theta <- theta + S_n^-1 (y - p) x`` for the logit (the texts'
        per-sample rule with the inverse of the summed curvature ``S_n = sum_k p_k (1 -
        p_k) x_k x_k^T`` as its gain; the probit's and softmax's score and curvature
        likewise): the stochastic Newton algorithm of Bercu, Godichon-Baggioni &
        Portier (2020), with no learning rate to tune. ``S_n / n`` tends to the Fisher
        information, so the estimate is asymptotically efficient and, being
        affine-invariant, does not slow down on correlated or differently scaled
        columns: on a long stream it differs from the maximum-likelihood estimate by a
        small fraction of a standard error (measured: under 0.2 with 50 columns at
        1,000,000 rows). The first ``10 (D + 1)`` rows only feed the columns'
        statistics and give the start; ``S_n^-1`` is updated by Sherman–Morrison,
        ``O(D^2)`` a row. The rows are visited in order, so a stream cut into batches
        in any way gives exactly the same model. With numba (``problin[fast]``) the
        per-row loop runs compiled (~1-2 million rows a second at 5 columns,
        60,000-370,000 at 50; without it, numpy: a few thousand).

        * ``classes``: every label of the stream, needed on the first call unless
          its batch already holds them all (or the estimator's ``classes`` does);
          ignored afterwards. The first is the reference class of softmax's
          contrasts. A label outside them later is an error.
        * Maximum likelihood only: with ``alpha > 0``, ``prior_precision`` or Firth's
          penalties the estimator has no ``partial_fit`` (an ``AttributeError`` that
          says why, as scikit-learn hides unavailable methods; a penalty on the sum of
          the log-likelihoods has no per-row share while the stream's length is
          unknown).
          ``solver``, ``max_iter`` and ``tol`` are ``fit``'s.
        * ``covariance_`` is None (``S_n`` is taken at the moving iterates, not at the
          estimate). ``compute_covariance(X, y)`` forms the inverse information at the
          streamed estimate from the rows given (all the stream's, or a sample:
          the matrix then describes a sample of that size), after which ``summary``
          and the tests work.
        * ``fit`` starts over (a later ``partial_fit`` starts a new stream from
          zero); a refused batch leaves the estimator as it was.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), in memory
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,), optional
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative; a row's score and curvature are scaled by its weight (a
            common factor changes nothing; weight 0: the row is skipped).

        Returns
        -------
        self
        """
        # The stream continues while its own record is the estimator's (compute_covariance
        # adds to it); a fit since (another solver's record) starts a new one.
        stream: StochasticState | None = self.__dict__.get("_stream")
        result = self.__dict__.get("_result")
        first = stream is None or result is None or result.solver != "sgd"
        if first:
            validate_params(self)
        data_source(X).require_in_memory(
            f"{type(self).__name__}.partial_fit takes batches in memory: compute each "
            "chunk of a Dask collection and pass it (or call fit on the whole of it)",
            TypeError)
        X = validate_data(self, encode_frame(self, X, first), accept_sparse=["csr", "csc"],
                          dtype=[np.float64, np.float32], reset=first,
                          ensure_all_finite=False)
        check_finite_magnitude(X, self)
        y = label_values(y)
        if first:  # (later batches: _codes refuses any label outside classes_)
            check_classification_targets(y)
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(f"y has shape {y.shape}, expected ({X.shape[0]},): one label "
                             "per row of X")
        if first:
            self.classes_ = self._stream_classes(y, classes)
        codes = self._codes(y)
        sw = check_sample_weight(sample_weight, X.shape[0], allow_zero=not first)
        family: ClassFamily = class_family(self._family, self.classes_.size, True)
        if first or stream is None:
            state = start_state(family.n_blocks, X.shape[1], self.fit_intercept)
        else:
            state = stream
            if state.intercept != self.fit_intercept:
                raise ValueError("fit_intercept changed since the stream's first batch; "
                                 "call fit, or set it back")
        dense = X.toarray() if sp.issparse(X) else X
        state = sgd_rows(state, family, np.asarray(dense, dtype=np.float64), codes, sw,
                         self._newton)
        self._set_fit(_record(state, family))  # type: ignore[attr-defined]  # (GLMClassifier's)
        self._stream = state
        self.t_ = state.rows
        return self

    def _stream_classes(self, y: np.ndarray, classes: Any) -> np.ndarray:
        """``classes_`` of a new stream: ``classes``, else the estimator's ``classes``,
        else the batch's sorted labels (at least two)."""
        given = classes if classes is not None else getattr(self, "classes", None)
        labels = stream_labels(y, given, type(self).__name__, ordered=True)
        if labels.size > 2 and not self._multiclass:
            raise ValueError(f"{type(self).__name__} is a binary model, but the stream has "
                             f"{labels.size} classes: {labels[:10].tolist()}")
        return labels

    def _codes(self, y: np.ndarray) -> np.ndarray:
        """Class index of every label; a label outside ``classes_`` is an error."""
        order = np.argsort(self.classes_, kind="stable")
        ordered = self.classes_[order]
        at = np.minimum(np.searchsorted(ordered, y), ordered.size - 1)
        unseen = ordered[at] != y
        if np.any(unseen):
            raise ValueError(f"y holds labels {np.unique(y[unseen])[:10].tolist()} that are "
                             f"not among the stream's classes {self.classes_[:10].tolist()} "
                             "(fixed by the first partial_fit call: pass every label with "
                             "classes= there)")
        return np.asarray(order[at], dtype=np.intp)

    def _no_covariance_message(self) -> str:
        if self.__dict__["_result"].solver == "sgd":
            return ("covariance_ is not estimated by partial_fit (its summed curvature "
                    "is taken at the moving iterates). Call compute_covariance(X, y) "
                    "with the stream's rows (or a sample of them) for the inverse "
                    "information at the streamed estimate.")
        message: str = super()._no_covariance_message()  # type: ignore[misc]
        return message


def _maximum_likelihood(est: Any) -> bool:
    """Whether ``est`` estimates by maximum likelihood (else no ``partial_fit``: the
    ``AttributeError`` says why)."""
    penalty, alpha = getattr(est, "penalty", "l2"), getattr(est, "alpha", 0.0)
    if penalty != "l2" or alpha != 0:
        raise AttributeError(f"{type(est).__name__}.partial_fit estimates by maximum "
                             f"likelihood: penalty={penalty!r} with alpha={alpha!r} needs fit "
                             "(the stochastic steps take penalty='l2' with alpha=0)")
    if getattr(est, "prior_precision", None) is not None:
        raise AttributeError(f"{type(est).__name__}.partial_fit estimates by maximum "
                             "likelihood: the Gaussian prior of prior_precision needs fit")
    return True


class _MaximumLikelihoodOnly:
    """The method on estimators that estimate by maximum likelihood; on the others,
    an ``AttributeError`` saying why (scikit-learn's ``available_if`` would replace the
    reason by "has no attribute"), so that ``hasattr`` is False there."""

    def __init__(self, method: Callable[..., Any]) -> None:
        self.method = method
        self.__doc__ = method.__doc__  # (what help() and the API pages read)
        self.__wrapped__ = method

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is not None:
            _maximum_likelihood(obj)
        return self.method.__get__(obj, owner)


# (after the class is made, so that AllOrNothingFit wrapped the plain function first)
StochasticGradientMixin.partial_fit = _MaximumLikelihoodOnly(  # type: ignore[method-assign,assignment]
    StochasticGradientMixin.partial_fit)


def _record(state: StochasticState, family: ClassFamily) -> GLMFit:
    """The streamed estimate as a fit record (no covariance, no likelihood)."""
    theta = raw_parameters(state).ravel()
    return GLMFit(theta=theta, theta_standard=theta.copy(), scale=None, center=None,
                  fit_intercept=state.intercept, n_blocks=family.n_blocks,
                  reference_class=bool(family.reference_class), objective=float("nan"),
                  alpha=0.0, n_obs=state.rows, solver="sgd", n_iter=state.rows,
                  converged=False,
                  message=f"stochastic Newton over {state.rows} rows",
                  history=np.empty(0), weight_total=state.weight)
