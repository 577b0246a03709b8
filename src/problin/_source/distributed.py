"""Rows in the chunks of a Dask collection: every pass is a distributed reduction
(:mod:`problin._dask`), and the rows never travel."""
import functools
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator

from .._core.model.basis import ColumnBasis
from .._core.model.contract import Objective
from .._core.model.exponential_family import ExponentialFamily
from .._core.model.families import ClassFamily
from .._core.model.family_ordinal import CumulativeLink
from .._core.model.family_softmax import CategoricalSoftmax
from .._core.model.penalty_firth import Jeffreys
from .._core.model.prior import PriorPrecision
from .._core.model.penalty import GaussianPenalty
from .._core.moments.class_stats import ClassStats
from .._core.types import FloatArray, MatrixLike
from .._dask.bayes import DaskJJTerms, DaskLogitLogPosterior
from .._dask.chunks import column_stats_chunk, reduce_chunks
from .._dask.design import DaskDesign, dask_classifier_data
from .._dask.fisher_rows import binary_fisher_rows, dask_jeffreys, dask_softmax_jeffreys
from .._dask.lazy import lazy_rows
from .._dask.objective import DaskGLMObjective, DaskSoftmaxObjective
from .._dask.objective_ordinal import DaskOrdinalObjective
from .._dask.regression import DaskRegressionRows, Validate, dask_regression_rows
from .._dask.rereads import warn_if_rereads
from .classifier_data import OFFSET_SUPPORT

__all__ = ["DaskRows", "OnDask", "regression_chunks"]


def regression_chunks(est: BaseEstimator, X: MatrixLike, y: MatrixLike,
                      family: ExponentialFamily, validate: Validate, intercept: bool,
                      **arguments: Any) -> DaskRegressionRows:
    """A GLM regressor's rows in Dask chunks (validated chunk by chunk by its own check;
    its objective, start and statistics each a distributed pass), as
    :func:`~problin._dask.regression.dask_regression_rows` makes them."""
    rows = dask_regression_rows(est, X, y, family, validate, intercept, **arguments)
    warn_if_rereads(type(est).__name__, rows.design.X, rows.design.y)
    return rows


_T = TypeVar("_T")


class DaskRows:
    """A classifier's rows in Dask chunks: a :class:`~problin._dask.design.DaskDesign`,
    which carries the labels and weights, and objectives that run by distributed passes."""

    rows_in_memory = 0

    def __init__(self, design: DaskDesign) -> None:
        self.design = design
        self.sample_weight: FloatArray | None = None  # (in the chunks, with the rows)

    def targets(self) -> NDArray[np.intp]:
        raise ValueError("the labels of Dask rows stay in their chunks")

    def check_solver(self, solver: str) -> None:
        if solver not in ("newton", "lbfgs"):
            raise ValueError(f"solver={solver!r} updates an n-vector per coefficient, which "
                             "Dask input never collects: use solver='newton' or 'lbfgs' (or "
                             "'auto') for Dask arrays and DataFrames")

    def for_solver(self, solver: str) -> "DaskRows":
        return self

    def exact_final(self, affordable: bool) -> bool:
        # The Hessian is one chunk-parallel pass, where truncated Newton's
        # Hessian-vector products would each be a pass: always exact.
        return True

    def objective(self, family: ClassFamily, prior: GaussianPenalty | None, information: str,
                  offset: FloatArray | None, penalty: Jeffreys | None = None) -> Objective:
        if offset is not None:
            raise ValueError(OFFSET_SUPPORT)
        return family.on_layout(_Objectives(self.design, family, prior, information, penalty))

    def ordinal_objective(self, family: CumulativeLink, prior: PriorPrecision | None
                          ) -> Objective:
        return DaskOrdinalObjective(self.design, family, prior)

    def positive_fraction(self) -> float:
        return float(self.design.class_weights[1] / self.design.total_weight)

    def binary_totals(self) -> FloatArray:
        return np.asarray(self.design.class_weights, dtype=np.float64)

    def class_weights(self) -> FloatArray:
        return np.asarray(self.design.class_weights, dtype=np.float64)

    def jj_terms(self) -> DaskJJTerms:
        return DaskJJTerms(self.design)

    def log_posterior(self, prior: GaussianPenalty | None) -> DaskLogitLogPosterior:
        if prior is None:
            return DaskLogitLogPosterior(self.design, None)
        return DaskLogitLogPosterior(self.design, prior.precision, prior.mean)


class _Objectives:
    """The distributed objective of each family layout (``family.on_layout``)."""

    def __init__(self, design: DaskDesign, family: ClassFamily, prior: GaussianPenalty | None,
                 information: str, penalty: Jeffreys | None) -> None:
        self.design, self.family, self.prior, self.information = design, family, prior, \
            information
        self.penalty = penalty

    def one_predictor(self) -> Objective:
        family = self.family  # (the family called this case: it is a binary one)
        assert not isinstance(family, CategoricalSoftmax)
        if self.penalty is not None:  # Firth's: its row sums over the chunks
            firth = dask_jeffreys(self.penalty, self.design, family,
                                  functools.partial(binary_fisher_rows, family=family))
            return DaskGLMObjective(self.design, family, information=self.information,
                                    penalty=firth)
        return DaskGLMObjective(self.design, family, information=self.information,
                                penalty=self.prior)

    def class_blocks(self) -> Objective:
        family = self.family  # (the family called this case: softmax)
        assert isinstance(family, CategoricalSoftmax)
        if self.penalty is not None:  # Firth's: the contrasts' row sums over the chunks
            firth = dask_softmax_jeffreys(self.penalty, self.design, family)
            return DaskSoftmaxObjective(self.design, family, penalty=firth)
        return DaskSoftmaxObjective(self.design, family, penalty=self.prior)


class OnDask:
    """The row chunks of a Dask array or DataFrame."""

    def __init__(self, X: MatrixLike) -> None:
        self.X = X

    def require_in_memory(self, message: str, error: type[Exception] = ValueError) -> None:
        raise error(message)

    def classifier_rows(self, est: BaseEstimator, y: MatrixLike, sample_weight: MatrixLike,
                        multiclass: bool, intercept: bool, standardise: bool | str = False
                        ) -> DaskRows:
        design = dask_classifier_data(est, self.X, y, sample_weight, multiclass, intercept,
                                      classes=getattr(est, "classes", None),
                                      standardise=standardise)
        warn_if_rereads(type(est).__name__, design.X, design.y)
        est.classes_ = design.classes
        return DaskRows(design)

    def fitted_rows(self, est: BaseEstimator, y: MatrixLike, sample_weight: MatrixLike,
                    basis: ColumnBasis | None) -> DaskRows:
        return DaskRows(dask_classifier_data(est, self.X, y, sample_weight, True,
                                             est.fit_intercept, classes=est.classes_,
                                             reset=False, basis=basis))

    def reduce(self, on_chunks: Callable[[MatrixLike], _T],
               in_memory: Callable[[MatrixLike], _T]) -> _T:
        return on_chunks(self.X)

    def column_stats(self) -> ClassStats:
        stats: ClassStats = reduce_chunks(column_stats_chunk, self.X)
        return stats

    def map_rows(self, est: BaseEstimator, method: str, columns: int | None,
                 in_memory: Callable[[MatrixLike], _T], outputs: int | None = None,
                 kwargs: dict[str, object] | None = None) -> _T | MatrixLike:
        if outputs is None:
            return lazy_rows(est, method, self.X, columns, kwargs=kwargs)
        return tuple(lazy_rows(est, method, self.X, columns, index=i, kwargs=kwargs)
                     for i in range(outputs))
