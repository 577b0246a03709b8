"""Decision theory on top of any probabilistic classifier: deployment priors and costs."""
from typing import Any, Self, cast

import numpy as np
from numpy.typing import ArrayLike
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    check_array,
    check_is_fitted,
    column_or_1d,
    validate_data,
)

from ._core.numerics import log_softmax
from ._core.types import MatrixLike
from ._core.validation import check_priors, check_sample_weight, label_values
from ._dask.chunks import is_dask
from ._dask.lazy import lazy_on_dask
from ._dask.reductions import dask_class_counts
from ._frames import check_frame
from ._params import validate_params
from ._state import AllOrNothingFit

__all__ = ["BayesDecision"]


def _log(p: ArrayLike) -> np.ndarray:
    """``log p`` with ``log 0 = -inf`` and no divide-by-zero warning."""
    with np.errstate(divide="ignore"):
        return np.log(p)


class BayesDecision(AllOrNothingFit, MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Bayes decision rule: deployment priors and a cost matrix over a probabilistic classifier.

    .. math::

        p'(C_k | x) \\propto p(C_k | x) \\, \\pi'_k / \\pi_k, \\qquad
        \\hat{y}(x) = \\arg\\min_j \\sum_k p'(C_k | x) \\, L_{kj}

    The wrapped classifier, fitted on data whose class frequencies were
    ``pi`` (training priors), gives posteriors ``p(C_k | x)``. When classes
    are deployed with other frequencies ``pi'`` (a rare disease is rarer in
    the clinic than in a balanced study), Bayes' theorem re-weights each
    posterior by ``pi'_k / pi_k`` and renormalises; this is done in log
    space, ``log p' = log_softmax(log p + log pi' - log pi)``. The prediction
    is then the class of least expected cost (least risk).

    Parameters
    ----------
    estimator : classifier with ``fit`` and ``predict_log_proba``
        Cloned and fitted on the training data in :meth:`fit`.
    priors : array-like of shape (K,), default=None
        Deployment priors ``pi'``, in the order of ``classes_``; non-negative,
        summing to 1. None keeps the training priors (no re-weighting).
    cost : array-like of shape (K, K), default=None
        ``cost[k, j]`` is the loss of predicting class ``classes_[j]`` when the
        truth is ``classes_[k]`` (rows: true class, columns: decision); any
        finite reals. None is the 0-1 loss, i.e. predict the most probable
        class.

    Attributes
    ----------
    estimator_ : the fitted clone of ``estimator``
    classes_ : ndarray of shape (K,)
    training_priors_ : ndarray of shape (K,)
        ``pi``: the wrapped model's own priors (``class_log_prior_``,
        ``priors_`` or ``class_prior_``, if it has one of them; looked for in a
        Pipeline's last step, a search's ``best_estimator_``, a Formula's
        ``estimator_``), otherwise the (weighted) class frequencies of ``y``, times
        the model's ``class_weight`` where it has one (``"balanced"``: equal priors).

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from problin import BayesDecision, LogisticRegression
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> X = X[:, :2]                      # mean radius, mean texture; class 0: malignant
    >>> missed_cancer = [[0, 10], [1, 0]]  # missing a malignant tumour costs 10 false alarms
    >>> careful = BayesDecision(LogisticRegression(), cost=missed_cancer).fit(X, y)
    >>> plain = LogisticRegression().fit(X, y)
    >>> int((plain.predict(X) == 0).sum()), int((careful.predict(X) == 0).sum())
    (196, 329)
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict_log_proba"])],
        "priors": ["array-like", None],
        "cost": ["array-like", None],
    }

    def __init__(self, estimator: Any, *, priors: ArrayLike | None = None,
                 cost: ArrayLike | None = None) -> None:
        self.estimator = estimator
        self.priors = priors
        self.cost = cost

    def fit(self, X: MatrixLike, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Fit a clone of ``estimator`` and check ``priors`` and ``cost`` against its classes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Passed on to the estimator unchanged (it does its own validation).
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Passed on to the estimator (a Pipeline's last step, the classifier whose
            posteriors are re-weighted: its ``<name>__sample_weight``); also weights
            the class frequencies.

        Returns
        -------
        self
        """
        validate_params(self)
        fit_params = _weight_params(self.estimator, sample_weight)
        if is_dask(y) and not is_dask(X):  # rows in memory: their labels are too
            y = np.asarray(cast(Any, y).compute())
        if is_dask(X) or is_dask(y):
            # Dask input: the estimator validates it chunk by chunk; nothing is
            # collected here (the class frequencies, if needed, are one pass over y).
            self.estimator_ = clone(self.estimator).fit(X, y, **fit_params)
            self.n_features_in_ = self.estimator_.n_features_in_
            if hasattr(self.estimator_, "feature_names_in_"):
                self.feature_names_in_ = self.estimator_.feature_names_in_
        else:
            y = label_values(y)
            X, y = validate_data(self, check_frame(X), y, skip_check_array=True)
            y = check_array(column_or_1d(y, warn=True), ensure_2d=False, dtype=None,
                            input_name="y")  # rejects NaN/inf labels
            check_classification_targets(y)
            self.estimator_ = clone(self.estimator).fit(X, y, **fit_params)
        self.classes_ = np.asarray(self.estimator_.classes_)
        K = self.classes_.size
        self.training_priors_ = self._training_priors(X, y, sample_weight)
        self._log_ratio = None
        if self.priors is not None:
            deploy = check_priors(self.priors, K)
            unsupported = (self.training_priors_ == 0) & (deploy > 0)
            if np.any(unsupported):
                raise ValueError(f"classes {self.classes_[unsupported].tolist()} have training "
                                 "prior 0 but a positive deployment prior: their posterior "
                                 "cannot be re-weighted")
            self._log_ratio = _log(deploy) - _log(np.where(deploy > 0, self.training_priors_, 1.0))
        self._cost = None
        if self.cost is not None:
            try:
                cost = np.asarray(self.cost, dtype=np.float64)
            except (TypeError, ValueError):
                raise TypeError("cost must be a numeric K x K matrix") from None
            if cost.shape != (K, K):
                raise ValueError(f"cost has shape {cost.shape}, expected ({K}, {K}): "
                                 "cost[true class, predicted class] for the classes "
                                 f"{self.classes_.tolist()}")
            if not np.all(np.isfinite(cost)):
                raise ValueError("cost contains NaN or infinity")
            self._cost = cost
        return self

    def _training_priors(self, X: MatrixLike, y: Any,
                         sample_weight: ArrayLike | None) -> np.ndarray:
        est = _final_classifier(self.estimator_)
        for name, is_log in (("class_log_prior_", True), ("priors_", False),
                             ("class_prior_", False)):
            value = getattr(est, name, None)
            if value is not None and np.shape(value) == (self.classes_.size,):
                value = np.asarray(value, dtype=np.float64)
                return np.exp(value) if is_log else value
        order = np.argsort(self.classes_, kind="stable")
        if is_dask(X) or is_dask(y):
            counts = dask_class_counts(X, y, sample_weight, self.classes_, order)
            rows = counts if sample_weight is None else \
                dask_class_counts(X, y, None, self.classes_, order)
        else:
            codes = order[np.searchsorted(self.classes_[order], y)]
            sw = check_sample_weight(sample_weight, y.shape[0])
            counts = np.bincount(codes, weights=sw, minlength=self.classes_.size) \
                .astype(np.float64)
            rows = np.bincount(codes, minlength=self.classes_.size).astype(np.float64)
        # A class_weight multiplies each class's rows' weights: the model was fitted to
        # those priors ("balanced": n / (K n_k) per row, i.e. equal classes).
        class_weight = est.get_params(deep=False).get("class_weight") \
            if hasattr(est, "get_params") else None
        if isinstance(class_weight, str) and class_weight == "balanced":
            counts = np.divide(counts, rows, out=np.zeros_like(counts), where=rows > 0)
        elif isinstance(class_weight, dict):
            counts = counts * np.array([float(class_weight.get(c, 1.0)) for c in self.classes_])
        return counts / counts.sum()

    @lazy_on_dask(columns=lambda self: self.classes_.size)
    def predict_log_proba(self, X: MatrixLike) -> np.ndarray:
        """Log posteriors under the deployment priors, ``log p'(C_k | x)``, all in log space."""
        check_is_fitted(self)
        log_p = np.asarray(self.estimator_.predict_log_proba(X), dtype=np.float64)
        if self._log_ratio is None:
            return log_p
        z = log_p + self._log_ratio
        lost = np.flatnonzero(~np.isfinite(np.max(z, axis=1, initial=-np.inf)))
        if lost.size:  # (log_softmax would give NaN: 0 / 0)
            raise ValueError(
                f"rows {lost[:10].tolist()} of X: every class with a positive deployment "
                "prior has posterior probability 0 (below the float range) under the model, "
                "so their posteriors under the new priors are undefined; such rows lie far "
                "outside the training data.")
        return log_softmax(z, axis=1)

    @lazy_on_dask(columns=lambda self: self.classes_.size)
    def predict_proba(self, X: MatrixLike) -> np.ndarray:
        """Posteriors under the deployment priors; rows sum to 1, columns follow ``classes_``."""
        return np.exp(self.predict_log_proba(X))

    @lazy_on_dask(columns=lambda self: self.classes_.size)
    def expected_cost(self, X: MatrixLike) -> np.ndarray:
        """Risk of each decision, ``R_j(x) = sum_k p'(C_k | x) cost[k, j]``: shape (n, K)."""
        P = self.predict_proba(X)
        cost = self._cost if self._cost is not None else 1.0 - np.eye(self.classes_.size)
        return P @ cost

    @lazy_on_dask(dtype=lambda self: self.classes_.dtype)
    def predict(self, X: MatrixLike) -> np.ndarray:
        """The decision of least expected cost (with no ``cost``: the most probable class)."""
        check_is_fitted(self)
        if self._cost is None:
            k = np.argmax(self.predict_log_proba(X), axis=1)
        else:
            k = np.argmin(self.expected_cost(X), axis=1)
        return self.classes_[k]

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        inner = self.estimator.__sklearn_tags__()
        tags.input_tags.sparse = inner.input_tags.sparse
        tags.input_tags.allow_nan = inner.input_tags.allow_nan
        tags.input_tags.positive_only = inner.input_tags.positive_only
        if inner.classifier_tags is not None:  # (its posteriors: its scores too)
            tags.classifier_tags.poor_score = inner.classifier_tags.poor_score
        return tags


def _final_classifier(estimator: Any) -> Any:
    """The fitted classifier whose posteriors ``estimator`` returns: a Pipeline's last
    step, a search's ``best_estimator_``, a problin Formula's ``estimator_`` (in turn)."""
    while True:
        steps = getattr(estimator, "steps", None)
        inner = (steps[-1][1] if steps else getattr(estimator, "best_estimator_", None)
                 or getattr(estimator, "estimator_", None))
        if inner is None or inner is estimator:
            return estimator
        estimator = inner


def _weight_params(estimator: Any, sample_weight: ArrayLike | None) -> dict[str, Any]:
    """The fit parameters that give ``estimator`` the rows' weights: a Pipeline takes
    them as its last step's (it accepts no plain ``sample_weight``)."""
    if sample_weight is None:
        return {}
    steps = getattr(estimator, "steps", None)
    if steps:
        return {f"{steps[-1][0]}__sample_weight": sample_weight}
    return {"sample_weight": sample_weight}
