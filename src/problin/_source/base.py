"""What the estimators ask of their rows, declared: the data source's interface.

:class:`DataSource` is the input ``X`` as the estimators read it: its checks
(what a source does not support), the validated training rows of a classifier
(:class:`ClassifierRows`), and the passes of the sufficient-statistics models
(``reduce``, ``column_stats``), the sequential learners and the predictions.

:class:`ClassifierRows` are a classifier's validated training rows: the design,
the objectives built on it (one per family layout: :meth:`ClassifierRows.one_predictor`
and :meth:`ClassifierRows.class_blocks`, chosen by the family's ``on_layout``), the
class weights of the start values and the null model, and the Bayesian logistic
model's passes.
"""
from collections.abc import Callable
from typing import Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator

from .._core.bayes.logistic import JJTerms
from .._core.bayes.mcmc import LogitLogPosterior
from .._core.model.basis import ColumnBasis
from .._core.model.contract import Objective
from .._core.model.design import Design
from .._core.model.families import ClassFamily
from .._core.model.family_ordinal import CumulativeLink
from .._core.model.penalty_firth import Jeffreys
from .._core.model.prior import PriorPrecision
from .._core.model.penalty import GaussianPenalty
from .._core.moments.class_stats import ClassStats
from .._core.types import FloatArray, MatrixLike
from .._dask.bayes import DaskJJTerms
from .._dask.design import DaskDesign

__all__ = ["ClassifierDesign", "ClassifierRows", "DataSource"]

_T = TypeVar("_T")

#: The design of a classifier's training data, in memory or on Dask.
ClassifierDesign = Design | DaskDesign


class ClassifierRows(Protocol):
    """A classifier's validated training rows (labels as class indices, weights)."""

    @property
    def design(self) -> ClassifierDesign: ...

    @property
    def sample_weight(self) -> FloatArray | None: ...

    @property
    def rows_in_memory(self) -> int:
        """Rows held in this process (0: in chunks elsewhere): L-BFGS's memory."""
        ...

    def targets(self) -> NDArray[np.intp]:
        """The class index of every row (rows in memory only)."""
        ...

    def check_solver(self, solver: str) -> None:
        """Raise ``ValueError`` for a solver these rows cannot run."""
        ...

    def for_solver(self, solver: str) -> "ClassifierRows":
        """The rows in the coordinates ``solver`` reads them in."""
        ...

    def exact_final(self, affordable: bool) -> bool:
        """Whether Newton's final Hessian is exact (``affordable``: a full one in memory)."""
        ...

    def objective(self, family: ClassFamily, prior: GaussianPenalty | None, information: str,
                  offset: FloatArray | None, penalty: Jeffreys | None = None) -> Objective:
        """The negative log-posterior of ``family`` on these rows (``penalty``: Firth's,
        bound to these rows, instead of ``prior``)."""
        ...

    def ordinal_objective(self, family: CumulativeLink, prior: PriorPrecision | None
                          ) -> Objective:
        """The cumulative-link model's negative log-posterior on these rows (its cut-points'
        log gaps after the design's parameters)."""
        ...

    def positive_fraction(self) -> float: ...

    def binary_totals(self) -> FloatArray: ...

    def class_weights(self) -> FloatArray: ...

    def jj_terms(self) -> JJTerms | DaskJJTerms:
        """The Jaakkola-Jordan bound's passes over the rows (binary logit)."""
        ...

    def log_posterior(self, prior: GaussianPenalty | None) -> LogitLogPosterior:
        """Batches of binary-logit log posteriors over the rows (MCMC)."""
        ...


class DataSource(Protocol):
    """The rows ``X`` an estimator was given, in memory or in Dask chunks."""

    def require_in_memory(self, message: str, error: type[Exception] = ValueError) -> None:
        """Raise ``error(message)`` unless the rows are in memory."""
        ...

    def classifier_rows(self, est: BaseEstimator, y: MatrixLike, sample_weight: MatrixLike,
                        multiclass: bool, intercept: bool, standardise: bool | str = False
                        ) -> ClassifierRows:
        """Validated training rows; sets ``est.classes_`` (and the feature names)."""
        ...

    def fitted_rows(self, est: BaseEstimator, y: MatrixLike, sample_weight: MatrixLike,
                    basis: ColumnBasis | None) -> ClassifierRows:
        """Rows for a fitted classifier (its classes, features and basis)."""
        ...

    def reduce(self, on_chunks: Callable[[MatrixLike], _T],
               in_memory: Callable[[MatrixLike], _T]) -> _T:
        """A pass over the rows: ``on_chunks(X)`` reduces the Dask chunks (by
        :func:`~problin._dask.chunks.reduce_chunks`), ``in_memory(X)`` the rows at hand."""
        ...

    def column_stats(self) -> ClassStats:
        """The columns' count, mean and scatter (one pass)."""
        ...

    def map_rows(self, est: BaseEstimator, method: str, columns: int | None,
                 in_memory: Callable[[MatrixLike], _T], outputs: int | None = None,
                 kwargs: dict[str, object] | None = None) -> _T | MatrixLike:
        """``in_memory(X)`` for rows at hand; on Dask ``est.method(X_k, **kwargs)`` mapped
        lazily over the chunks (``columns`` per row, None: one value; ``outputs``: the
        method returns a tuple of that many, mapped each)."""
        ...
