"""The cumulative-link (ordinal) objective on Dask input: one distributed pass each.

Every chunk builds the in-memory :class:`~problin._core.model.objective_ordinal.
OrdinalObjective` of its rows and the parameter vector (``[b, w]`` and the log gaps) is
what :class:`~problin._dask.objective.LazyEta` carries, so the loss, gradient and Hessian
of a Newton step are the chunks' sums, as for the GLM and softmax objectives.
"""
import functools

import numpy as np
from scipy.linalg import block_diag

from .._core.model.contract import CurvatureChange, FitPoint, Gram, Trial
from .._core.model.design import Design
from .._core.model.family_ordinal import CumulativeLink
from .._core.model.objective_ordinal import OrdinalObjective, descent_hessian
from .._core.model.penalty import Penalty, objective_penalty
from .._core.model.prior import PriorPrecision
from .design import DaskDesign
from .objective import LazyEta, _DaskObjective, range_basis

__all__ = ["DaskOrdinalObjective"]


def _ordinal_model(design: Design, t: np.ndarray, w: np.ndarray | None, *,
                   family: CumulativeLink) -> OrdinalObjective:
    return OrdinalObjective(design, family, np.asarray(t, dtype=np.intp), w, chunk=True)


class DaskOrdinalObjective(_DaskObjective):
    """:class:`~problin._core.model.objective_ordinal.OrdinalObjective` of a
    :class:`~problin._dask.design.DaskDesign`."""

    family: CumulativeLink

    def __init__(self, design: DaskDesign, family: CumulativeLink,
                 prior_precision: PriorPrecision | np.ndarray | None = None) -> None:
        model = functools.partial(_ordinal_model, family=family)
        super().__init__(design, model, 1, None, None, None)  # type: ignore[arg-type]
        self.family = family
        self.n_params = design.n_params + family.n_gaps
        self.penalty = objective_penalty(None, prior_precision, None, self.n_params)
        self.exact_hessian = self.penalty.exact_hessian

    def _in_memory(self, design: Design, t: np.ndarray, w: np.ndarray,  # type: ignore[override]
                   penalty: Penalty) -> OrdinalObjective:
        return OrdinalObjective(design, self.family, t, w, penalty=penalty)

    def value_grad_hess(self, theta: np.ndarray, eta: LazyEta, single: bool = False
                        ) -> tuple[float, np.ndarray, np.ndarray]:
        f, grad, H = super().value_grad_hess(theta, eta, single)
        return f, grad, descent_hessian(H, grad, self.design.n_params)

    def advance(self, theta: np.ndarray, eta: LazyEta | None, d: np.ndarray, gram: Gram = None,
                accept_below: float | None = None) -> Trial[LazyEta]:
        trial = super().advance(theta, eta, d, gram, accept_below)
        if trial.hess is None or trial.grad is None:
            return trial
        return Trial(trial.eta, trial.f, trial.grad,
                     descent_hessian(trial.hess, trial.grad, self.design.n_params), trial.Xd)

    def hessian_change(self, eta_old: LazyEta, eta_new: LazyEta, H: np.ndarray,
                       cut: float, rowwise: bool = True) -> CurvatureChange:
        """No bound (the row curvatures depend on the cuts too): H is rebuilt."""
        return CurvatureChange.unknown()

    def data_range_basis(self) -> np.ndarray:
        return block_diag(range_basis(self.design.used_gram()), np.eye(self.family.n_gaps))

    def separation(self, result: FitPoint[LazyEta]) -> None:
        """None: the ordinal model's separation is read off its fitted cut-points."""
        return None
