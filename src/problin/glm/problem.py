"""The fitting problem of a GLM classifier: rows, family, prior, objective and start.

Shared by :mod:`problin.glm` and :mod:`problin.bayesian` (whose MAP is the same
penalised GLM fit with a proper prior on the intercepts). The rows come from the
data source (:mod:`problin._source`: in memory, or Dask chunks read by distributed
passes), the parameter layout from the family (:mod:`problin._core.model.layout`:
one linear predictor, or softmax's class blocks); this module composes the two
once per fit, into a :class:`ClassifierProblem`.
"""
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._core.model.contract import DesignShape, Objective
from .._core.model.families import BinaryFamily, ClassFamily, class_family
from .._core.model.objective import InMemoryObjective, PriorPrecision
from .._core.model.penalty import GaussianPenalty
from .._core.model.prior import GaussianPrior
from .._core.model.penalty_firth import Jeffreys
from ._firth_corrections import FIRTH_PENALTIES
from .._core.types import FloatArray
from .._source import ClassifierDesign, ClassifierRows
from .._source.classifier_data import _plain_arrays, check_classifier_data  # noqa: F401
from .statistics import null_log_likelihood, offset_null_log_likelihood

__all__ = [
    "ClassifierDesign",
    "ClassifierProblem",
    "check_classifier_data",
    "classifier_family",
    "check_penalty",
    "classifier_problem",
    "design_prior",
    "parameter_index",
    "prior_precision",
]


@dataclass(frozen=True, eq=False)
class ClassifierProblem:
    """What one fit minimises (``objective``, from ``theta0``), of which family and on
    which rows, with the rows' known offset (binary models in memory, or None)."""

    rows: ClassifierRows
    family: ClassFamily
    objective: Objective
    theta0: FloatArray
    offset: FloatArray | None = None

    def row_scores(self, eta: FloatArray) -> tuple[FloatArray, FloatArray | None]:
        """Each row's scores at the objective's linear predictor ``eta`` (the offset
        added here), as the family's layout forms them (``robust.RowScores``)."""
        eta_full = eta if self.offset is None else eta + self.offset
        return self.family.score_weights(self.rows.targets(), eta_full, self.rows.sample_weight)

    def in_memory(self) -> InMemoryObjective:
        """The objective, whose rows are held here: what robust covariances and the
        overlap certificate read row by row (refused on Dask before they are asked)."""
        objective = self.objective
        assert isinstance(objective, InMemoryObjective), "asked of rows in memory only"
        return objective

    def null_log_likelihood(self) -> float:
        """The intercept-only model's log-likelihood on these rows: closed form from
        the class totals without an offset, else fitted (binary models in memory)."""
        if self.offset is None:
            return null_log_likelihood(self.family.class_totals(self.rows))
        return offset_null_log_likelihood(self.family, self.rows.targets().astype(np.float64),
                                          self.offset, self.rows.sample_weight)


def parameter_index(family: ClassFamily, names: list[str], classes: np.ndarray,
                    n_blocks: int) -> pd.Index:
    """The index of a table of the parameters: by name, or for class blocks by
    ``(class, parameter)``, one block per free class (the last ``n_blocks``)."""
    return family.on_layout(_ParameterIndex(names, classes, n_blocks))


class _ParameterIndex:
    """:func:`parameter_index` of each parameter layout (``family.on_layout``)."""

    def __init__(self, names: list[str], classes: np.ndarray, n_blocks: int) -> None:
        self.names, self.classes, self.n_blocks = names, classes, n_blocks

    def one_predictor(self) -> pd.Index:
        return pd.Index(self.names, name="parameter")

    def class_blocks(self) -> pd.Index:
        free = self.classes[self.classes.size - self.n_blocks:]
        return pd.MultiIndex.from_product([free.tolist(), self.names],
                                          names=["class", "parameter"])


def check_penalty(est: Any) -> None:
    """One clear error for what Firth's penalty and its refits do not combine with
    (:meth:`Jeffreys.check_options`; FLIC and FLAC: the logit, logistf's covariance)."""
    if est.penalty not in FIRTH_PENALTIES:
        return
    name = est.penalty
    Jeffreys.check_options(name, est.alpha, est.solver)
    if name != "firth" and est._family.link_function.name != "logit":
        raise ValueError(f"penalty={name!r} (Puhr et al. 2017) calibrates Firth's logistic "
                         f"regression: use LogisticRegression, or penalty='firth'")
    if name != "firth" and getattr(est, "cov_type", "nonrobust") != "nonrobust":
        raise ValueError(f"penalty={name!r} reports logistf's standard errors: "
                         f"cov_type='nonrobust' only")


def _contrasts(alpha: float) -> bool:
    """Whether a softmax is parametrised by the K-1 contrasts against the first class
    (without a prior, which alone identifies all K blocks)."""
    return alpha == 0


def classifier_family(binary: BinaryFamily, n_classes: int, alpha: float) -> ClassFamily:
    """The family of a classifier of ``n_classes`` classes whose two-class family is
    ``binary``: softmax for K > 2, with the K-1 contrasts against the first class when
    unpenalised (identifiable), all K blocks when ``alpha > 0`` (Bishop 2006, section
    4.3.4). Its ``n_blocks`` are the parameter blocks, each one coefficient per column
    of ``[1, X]``."""
    return class_family(binary, n_classes, contrast=_contrasts(alpha))


def classifier_problem(rows: ClassifierRows, family: ClassFamily, alpha: float, *,
                       information: str = "observed", intercept_alpha: float = 0.0,
                       offset: FloatArray | None = None, penalty: Jeffreys | None = None,
                       prior: GaussianPrior | None = None) -> ClassifierProblem:
    """The negative log-posterior of a GLM classifier on ``rows`` and its starting point
    (zero weights, the intercepts of the class frequencies). The prior is
    :func:`design_prior`'s (``prior``, on the raw parameters, or that of ``alpha`` and
    ``intercept_alpha``), or Firth's ``penalty`` (the Jeffreys prior, bound to the
    rows where they are). ``offset``: a known term of the binary linear predictor
    (in-memory data only)."""
    design = rows.design
    gaussian = design_prior(design, family.n_blocks, alpha, intercept_alpha, prior)
    objective = rows.objective(family, gaussian, information, offset, penalty)
    theta0 = family.start(rows, design.n_params, design.intercept)
    if offset is not None and design.intercept:
        theta0[0] -= float(np.average(offset, weights=rows.sample_weight))
    return ClassifierProblem(rows, family, objective, theta0, offset)


def design_prior(design: DesignShape, n_blocks: int, alpha: float,
                 intercept_alpha: float = 0.0, raw: GaussianPrior | None = None
                 ) -> GaussianPenalty | None:
    """The Gaussian prior of a fit as its penalty in the design's coordinates: ``raw``,
    a prior ``N(m_0, S_0^-1)`` on the raw parameters (the estimators'
    ``prior_mean``/``prior_precision``; one parameter block), or else the zero-mean
    prior of ``alpha`` and ``intercept_alpha`` (:func:`prior_precision`); None: flat.
    The one place where an estimator's prior becomes its objective's penalty."""
    if raw is not None:
        if n_blocks > 1:
            raise ValueError("prior_mean and prior_precision are on the parameters of one "
                             "linear predictor: binary models only (not softmax, "
                             f"{n_blocks} parameter blocks); use alpha for K > 2 classes")
        return GaussianPenalty.on_raw(raw, design.basis)
    precision = prior_precision(design, n_blocks, alpha, intercept_alpha)
    if precision is None:
        return None
    return GaussianPenalty(precision, np.zeros(n_blocks * design.n_params))


def prior_precision(design: DesignShape, n_blocks: int, alpha: float,
                    intercept_alpha: float = 0.0) -> PriorPrecision | None:
    """``alpha I`` on the weights of each block, ``intercept_alpha`` on the intercepts.

    The GLMs leave intercepts unpenalised (``intercept_alpha = 0``). With all
    K softmax blocks free, adding a constant to every intercept changes no
    probability; ``c (sum_k b_k)^2 / 2`` pins the intercepts to sum zero (as
    scikit-learn's solution does) without moving any prediction or the
    optimum. ``covariance_`` is corrected for this term.
    """
    p = design.n_params
    if alpha == 0 and intercept_alpha == 0:
        return None
    diag = np.full(p, float(alpha))
    if design.intercept:
        diag[0] = float(intercept_alpha)
    basis = design.basis
    if basis is not None:  # alpha |w|^2 = sum_j alpha / s_j^2 w_z,j^2
        diag = basis.precision_to_standard(diag)  # (intercept_alpha: at the centre)
    rank_one = []
    if n_blocks > 1 and design.intercept:
        v = np.zeros(n_blocks * p)
        v[::p] = 1.0
        rank_one.append((v, 1.0))
    return PriorPrecision(np.tile(diag, n_blocks), rank_one)
