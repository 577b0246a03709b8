"""Rows in memory: numpy arrays (a row-blocked ``Design``, or ``SmallDenseDesign`` for
small dense data) and scipy.sparse matrices (which L-BFGS reads in raw units)."""
from collections.abc import Callable
from typing import TypeVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.base import BaseEstimator
from sklearn.utils.validation import validate_data

from .._core.bayes.logistic import JJTerms
from .._core.bayes.mcmc import LogitLogPosterior
from .._core.labels import encode_classes
from .._core.model.basis import ColumnBasis
from .._core.model.contract import Objective
from .._core.model.design import Design
from .._core.model.design_small import SmallDenseDesign, is_small_dense
from .._core.model.families import ClassFamily
from .._core.model.family_ordinal import CumulativeLink
from .._core.model.family_softmax import CategoricalSoftmax
from .._core.model.objective import GLMObjective
from .._core.model.objective_ordinal import OrdinalObjective
from .._core.model.objective_softmax import SoftmaxObjective
from .._core.model.penalty_firth import Jeffreys
from .._core.model.prior import PriorPrecision
from .._core.model.penalty import GaussianPenalty
from .._core.moments.class_stats import ClassStats
from .._core.moments.standardize import column_stats
from .._core.types import FloatArray, MatrixLike
from .._core.validation import check_sample_weight
from .._frames import encode_frame
from .classifier_data import OFFSET_SUPPORT, check_classifier_data

__all__ = ["InMemory", "MemoryRows", "SparseRows"]

_T = TypeVar("_T")


class MemoryRows:
    """A classifier's rows in memory: the design, class indices ``t`` and weights."""

    def __init__(self, design: Design, t: NDArray[np.intp], sample_weight: FloatArray | None,
                 n_classes: int) -> None:
        self.design, self.t, self.sample_weight = design, t, sample_weight
        self.n_classes = n_classes
        self._y01: FloatArray | None = None

    @property
    def rows_in_memory(self) -> int:
        return int(self.design.n_samples)

    @property
    def y01(self) -> FloatArray:
        """The binary targets 0/1 (formed once)."""
        if self._y01 is None:
            self._y01 = self.t.astype(np.float64)
        return self._y01

    def targets(self) -> NDArray[np.intp]:
        return self.t

    def check_solver(self, solver: str) -> None:
        return None  # every solver reads rows in memory

    def for_solver(self, solver: str) -> "MemoryRows":
        return self

    def exact_final(self, affordable: bool) -> bool:
        return affordable

    def objective(self, family: ClassFamily, prior: GaussianPenalty | None, information: str,
                  offset: FloatArray | None, penalty: Jeffreys | None = None) -> Objective:
        return family.on_layout(_Objectives(self, family, prior, information, offset, penalty))

    def ordinal_objective(self, family: CumulativeLink, prior: PriorPrecision | None
                          ) -> Objective:
        return OrdinalObjective(self.design, family, self.t, self.sample_weight, prior)

    def positive_fraction(self) -> float:
        y01, sw = self.y01, self.sample_weight  # (np.average costs ~10 us of a 0.6 ms fit)
        return float(y01.sum() / y01.size if sw is None else (sw @ y01) / sw.sum())

    def binary_totals(self) -> FloatArray:
        y, sw = self.y01, self.sample_weight
        ones = float(np.sum(y if sw is None else y * sw))
        total = float(self.design.n_samples) if sw is None else float(np.sum(sw))
        return np.array([total - ones, ones])

    def class_weights(self) -> FloatArray:
        counts: FloatArray = np.bincount(self.t, weights=self.sample_weight,
                                         minlength=self.n_classes).astype(np.float64)
        return counts

    def jj_terms(self) -> JJTerms:
        return JJTerms(self.design, self.t, self.sample_weight)

    def log_posterior(self, prior: GaussianPenalty | None) -> LogitLogPosterior:
        return LogitLogPosterior(self.design, self.t, self.sample_weight,
                                 None if prior is None else prior.precision,
                                 None if prior is None else prior.mean)


class SparseRows(MemoryRows):
    """Sparse rows: L-BFGS runs in its own standardised coordinates (full-data
    moments) and sparse columns are never centred, so it reads them in raw units
    (the design's rescaling would only change the rounding of its path)."""

    def for_solver(self, solver: str) -> MemoryRows:
        if solver != "lbfgs":
            return self
        return SparseRows(Design(self.design.X, self.design.intercept), self.t,
                          self.sample_weight, self.n_classes)


class _Objectives:
    """The in-memory objective of each family layout (``family.on_layout``)."""

    def __init__(self, rows: MemoryRows, family: ClassFamily, prior: GaussianPenalty | None,
                 information: str, offset: FloatArray | None, penalty: Jeffreys | None
                 ) -> None:
        self.rows, self.family, self.prior = rows, family, prior
        self.information, self.offset, self.penalty = information, offset, penalty

    def one_predictor(self) -> Objective:
        family = self.family  # (the family called this case: it is a binary one)
        assert not isinstance(family, CategoricalSoftmax)
        rows = self.rows
        if self.penalty is not None:
            return GLMObjective(rows.design, family, rows.y01, rows.sample_weight,
                                information=self.information, offset=self.offset,
                                penalty=self.penalty.bind(rows.design, family, rows.y01,
                                                          rows.sample_weight, self.offset))
        return GLMObjective(rows.design, family, rows.y01, rows.sample_weight,
                            information=self.information, offset=self.offset,
                            penalty=self.prior)

    def class_blocks(self) -> Objective:
        family = self.family  # (the family called this case: softmax)
        assert isinstance(family, CategoricalSoftmax)
        if self.offset is not None:
            raise ValueError(OFFSET_SUPPORT)
        rows = self.rows
        penalty = self.prior if self.penalty is None else self.penalty.bind_classes(
            rows.design, family, rows.t, rows.sample_weight)
        return SoftmaxObjective(rows.design, family, rows.t, rows.sample_weight,
                                penalty=penalty)


def memory_rows(X: MatrixLike, t: NDArray[np.intp], sw: FloatArray | None, n_classes: int,
                intercept: bool, standardise: bool | str,
                basis: ColumnBasis | None = None) -> MemoryRows:
    """The rows of validated ``X``, the one place where the design's kind is chosen:
    sparse, small dense (whole-matrix products) or row-blocked dense."""
    kind = SparseRows if sp.issparse(X) else MemoryRows
    if not standardise:
        return kind(Design(X, intercept, basis=basis), t, sw, n_classes)
    centre = "always" if standardise == "centred" else "auto"
    design = SmallDenseDesign if is_small_dense(X, intercept) else Design
    return kind(design.standardised(X, intercept, sample_weight=sw, centre=centre), t, sw,
                n_classes)


class InMemory:
    """Rows in memory: numpy arrays, scipy.sparse matrices, DataFrames, lists."""

    def __init__(self, X: MatrixLike) -> None:
        self.X = X

    def require_in_memory(self, message: str, error: type[Exception] = ValueError) -> None:
        return None

    def classifier_rows(self, est: BaseEstimator, y: MatrixLike, sample_weight: MatrixLike,
                        multiclass: bool, intercept: bool, standardise: bool | str = False
                        ) -> MemoryRows:
        X, t, sw = check_classifier_data(est, self.X, y, sample_weight, multiclass)
        return memory_rows(X, t, sw, est.classes_.size, intercept, standardise)

    def fitted_rows(self, est: BaseEstimator, y: MatrixLike, sample_weight: MatrixLike,
                    basis: ColumnBasis | None) -> MemoryRows:
        X, y = validate_data(est, encode_frame(est, self.X, False), y,
                             accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32],
                             reset=False)
        if sp.issparse(X):
            X = X.tocsr()
        _, t = encode_classes(y, est.classes_, owner=type(est).__name__)
        sw = check_sample_weight(sample_weight, X.shape[0])
        return memory_rows(X, t, sw, est.classes_.size, est.fit_intercept, False, basis)

    def reduce(self, on_chunks: Callable[[MatrixLike], _T],
               in_memory: Callable[[MatrixLike], _T]) -> _T:
        return in_memory(self.X)

    def column_stats(self) -> ClassStats:
        return column_stats(self.X)

    def map_rows(self, est: BaseEstimator, method: str, columns: int | None,
                 in_memory: Callable[[MatrixLike], _T], outputs: int | None = None,
                 kwargs: dict[str, object] | None = None) -> _T | MatrixLike:
        return in_memory(self.X)
