"""The objective contract: what the solvers may ask of an objective, declared.

The solvers (``problin._core.solvers``) minimise a penalised negative
log-likelihood ``f(theta)`` through the linear predictor ``eta = [1, X] theta``
(Nocedal & Wright 2006, ch. 3: line-search methods; ch. 7: Newton-CG). What
they call is the :class:`Objective` protocol: values, gradients, Hessians and
Hessian-vector products at ``(theta, eta)``, the fused step ``advance``, the
sketch ``subsample``, the data's ``data_range_basis``, and so on.

**Capabilities are methods with defaults, not probes.** Some objectives can
do more cheaply what every objective can do: a GLM on dense data forms the
step's linear predictor, value, gradient and Hessian in one pass over X
(``advance``); a binary GLM can bound how much its Hessian moved over a step
from its per-row curvatures (``hessian_change``). Every objective inherits
:class:`ObjectiveBase`, whose defaults are the unfused computations (the
step by ``linear_predictor`` then ``value_grad``/``value_grad_hess``; no
bound, ``inf``, where there is no per-row curvature to compare), so a solver
calls one method and has one code path; the unfused arithmetic lives here,
once. A default *is* the capability's slow form, which boolean capability
flags would leave every caller to write out again. The protocol is what the
solvers are typed against (structural: an objective need not inherit to be
checked); the base class is where the defaults live.

**The backend is a type.** :class:`DistributedObjective` marks objectives
whose every evaluation is a distributed pass (Dask): they add what the
diagnostics ask of rows that are never in one place (counting rows,
watching a count in the solver's last pass, separation certificates), and
declare the row-wise methods it does not offer (they raise, saying why).

**The seams are typed.** ``eta`` is an n-vector (n x M for softmax) in
memory; on Dask a lazy stand-in for one (``problin._dask.objective.LazyEta``).
Both are a :class:`LinearPredictor`, the arithmetic the solvers do on it
(``eta + t * Xd``, ``eta_new - eta``), and an objective is an
``Objective[Eta]`` for its own kind, so a solver never mixes an array with a
lazy predictor. Of the design the solvers read only its shape and column
moments (:class:`DesignShape`); the penalty is a :class:`~.penalty.Penalty`.
"""
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, Self, TypeAlias, TypeVar

import numpy as np

from .basis import ColumnBasis
from .design import Gram
from .penalty import Penalty

__all__ = ["Objective", "ObjectiveBase", "DistributedObjective", "Trial", "Gram", "Eta",
           "LinearPredictor", "DesignShape", "FitPoint", "RowMask", "RowCount", "RowsAtHand"]


class LinearPredictor(Protocol):
    """What the solvers do with a linear predictor: ``eta + t * Xd``, ``eta_new - eta``."""

    def __add__(self, other: Self, /) -> Self: ...

    def __sub__(self, other: Self, /) -> Self: ...

    def __rmul__(self, t: float, /) -> Self: ...


#: The linear predictor of one objective: an ndarray in memory, a ``LazyEta`` on Dask.
Eta = TypeVar("Eta", bound=LinearPredictor)
Eta_co = TypeVar("Eta_co", bound=LinearPredictor, covariant=True)


class DesignShape(Protocol):
    """What the solvers and the fit records read of any design (in memory or on Dask)."""

    @property
    def n_samples(self) -> int: ...

    @property
    def n_features(self) -> int: ...

    @property
    def n_params(self) -> int: ...

    @property
    def intercept(self) -> bool: ...

    @property
    def basis(self) -> ColumnBasis | None:
        """The standardised coordinates the parameters are in (None: raw units)."""
        ...

    def column_moments(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-column mean and standard deviation in the design's coordinates."""
        ...


class FitPoint(Protocol[Eta_co]):
    """What the separation certificates read of a solver's result."""

    @property
    def eta(self) -> Eta_co: ...

    @property
    def direction(self) -> np.ndarray | None: ...

    @property
    def direction_eta(self) -> Eta_co | None: ...


class RowMask(Protocol):
    """A boolean per row: an ndarray, or a lazy array of a distributed design."""

    @property
    def shape(self) -> tuple[int, ...]: ...


#: A question to the rows: ``func(in-memory objective, its eta)`` -> a count (a flag
#: counts as 0 or 1); a distributed objective sums it over its chunks' objectives.
class RowsAtHand(Protocol):
    """What a question to the rows reads of an objective whose rows are in memory."""

    sample_weight: np.ndarray | None

    def row_certainty(self, eta: np.ndarray) -> np.ndarray:
        """``1 - p`` of each row's observed class (~0: fitted with certainty)."""
        ...


RowCount: TypeAlias = Callable[[RowsAtHand, np.ndarray], int]


@dataclass(frozen=True)
class CurvatureChange:
    """How far a Hessian ``H`` built at one point is from the one at another, in ``H``'s
    own metric (``max_v |v^T (H_new - H) v| / v^T H v``; ``inf``: no bound).

    ``uniform`` is the family's bound from the largest move of a linear predictor
    (:func:`~problin._core.model.families.uniform_curvature_change`): it holds at every
    point between the two as well, which the last Newton step's bound on the gradient
    after it needs; ``bound`` is the tightest bound at the new point (a row-wise one
    where that is smaller), which decides whether ``H`` is the Hessian at the answer.
    """

    uniform: float
    bound: float

    @classmethod
    def unknown(cls) -> "CurvatureChange":
        return cls(float("inf"), float("inf"))


@dataclass(frozen=True)
class Trial(Generic[Eta]):
    """The point ``theta + d`` as one evaluation found it (see :meth:`Objective.advance`)."""

    eta: Eta  # the linear predictor there
    f: float  # the objective there
    grad: np.ndarray | None  # None only where the point failed the acceptance test
    hess: np.ndarray | None  # None unless a Hessian was asked for (and the point accepted)
    Xd: Eta | None = None  # X d where the evaluation formed it on its own


class Objective(Protocol[Eta]):
    """What the solvers may call: the penalised negative log-likelihood ``f``."""

    n_params: int
    n_blocks: int  # parameter blocks (classes of softmax; 1 for a GLM)
    exact_hessian: bool  # False for Fisher scoring with a non-canonical link
    sample_weight: np.ndarray | None
    penalty: Penalty  # the term added to the data's (model.penalty)

    @property
    def design(self) -> DesignShape: ...  # rows, columns and passes over X

    @property
    def total_weight(self) -> float: ...

    def linear_predictor(self, theta: np.ndarray) -> Eta: ...

    def value(self, theta: np.ndarray, eta: Eta) -> float: ...

    def value_grad(self, theta: np.ndarray, eta: Eta) -> tuple[float, np.ndarray]: ...

    def value_grad_hess(self, theta: np.ndarray, eta: Eta, single: bool = False
                        ) -> tuple[float, np.ndarray, np.ndarray]: ...

    def hessp(self, theta: np.ndarray, eta: Eta, v: np.ndarray, single: bool = False
              ) -> np.ndarray: ...

    def advance(self, theta: np.ndarray, eta: Eta | None, d: np.ndarray, gram: Gram = None,
                accept_below: float | None = None) -> Trial[Eta]: ...

    def summed_derivatives(self, theta: np.ndarray, gram: Gram = None
                           ) -> tuple[float, np.ndarray, np.ndarray | None]: ...

    def hessian_change(self, eta_old: Eta, eta_new: Eta, H: np.ndarray, cut: float,
                       rowwise: bool = True) -> CurvatureChange: ...

    def subsample(self, rows: np.ndarray) -> "Objective[np.ndarray]": ...

    def data_range_basis(self) -> np.ndarray: ...

    def observed_hessian(self, theta: np.ndarray, eta: Eta) -> np.ndarray: ...

    def shared_curvature(self, theta: np.ndarray) -> bool: ...

    def shared_hessian(self, theta: np.ndarray) -> np.ndarray: ...

    def shared_inverse(self, theta: np.ndarray) -> np.ndarray | None: ...

    def line_derivatives(self, eta: Eta, Xd: Eta) -> tuple[float, float] | None: ...

    def column(self, j: int) -> np.ndarray: ...

    def coordinate_derivatives(self, eta: Eta, c: np.ndarray, block: int = 0
                               ) -> tuple[float, float]: ...

    def block_direction(self, c: np.ndarray, block: int = 0) -> Eta: ...

    def recentre(self, theta: np.ndarray) -> np.ndarray: ...

    def block_curvatures(self, eta: Eta) -> np.ndarray | None: ...

    def start_preconditioner(self, theta: np.ndarray
                             ) -> Callable[[np.ndarray], np.ndarray] | None: ...

    def count_rows(self, func: RowCount, eta: Eta) -> int: ...

    def watch_rows(self, func: RowCount) -> None: ...

    def separation(self, result: FitPoint[Eta]) -> tuple[RowMask, int, int] | None: ...


class ObjectiveBase(Generic[Eta]):
    """The unfused defaults of the contract's optional capabilities.

    Subclasses implement the evaluations (``linear_predictor``, ``value``,
    ``value_grad``, ``value_grad_hess``) and override a default where they do
    it in fewer passes.
    """

    exact_hessian: bool = True
    n_blocks: int = 1  # (softmax: one per free class)
    n_params: int
    design: DesignShape
    sample_weight: np.ndarray | None
    penalty: Penalty

    @property
    def total_weight(self) -> float:
        """The sum of the sample weights (the number of rows without weights)."""
        if self.sample_weight is None:
            return float(self.design.n_samples)
        return float(np.sum(self.sample_weight))

    def linear_predictor(self, theta: np.ndarray) -> Eta:
        raise NotImplementedError  # pragma: no cover - every objective has one

    def value(self, theta: np.ndarray, eta: Eta) -> float:
        raise NotImplementedError  # pragma: no cover

    def value_grad(self, theta: np.ndarray, eta: Eta) -> tuple[float, np.ndarray]:
        raise NotImplementedError  # pragma: no cover

    def value_grad_hess(self, theta: np.ndarray, eta: Eta, single: bool = False
                        ) -> tuple[float, np.ndarray, np.ndarray]:
        raise NotImplementedError  # pragma: no cover

    def _step_predictor(self, eta: Eta, Xd: Eta) -> tuple[Eta, Eta | None]:
        """``(eta + X d, X d or None)``: the trial's linear predictor, and ``X d``
        where it is still there (None: the sum was formed in its array)."""
        return Xd + eta, Xd

    def advance(self, theta: np.ndarray, eta: Eta | None, d: np.ndarray, gram: Gram = None,
                accept_below: float | None = None) -> Trial[Eta]:
        """The point ``theta + d``: its ``eta``, ``f``, gradient and (with ``gram``) Hessian.

        ``eta`` is the linear predictor at ``theta`` (None: ``theta`` is zero,
        and the point is ``d`` itself). With ``accept_below``, the derivatives
        are formed only if ``f`` is finite and at most that (the line search's
        sufficient decrease): a rejected trial costs no gradient pass. This
        default takes separate passes (``X d``, then the derivatives, which
        reuse the row derivatives cached by ``value``); objectives that fuse
        them into one pass override it and may form the derivatives anyway.
        """
        Xd = self.linear_predictor(d)
        kept: Eta | None = Xd
        if eta is None:
            theta_new, eta_new = d, Xd
        else:
            theta_new = theta + d
            eta_new, kept = self._step_predictor(eta, Xd)
        f = np.nan
        if accept_below is not None:
            f = self.value(theta_new, eta_new)
            if not (np.isfinite(f) and f <= accept_below):
                return Trial(eta_new, f, None, None, kept)
        hess = None
        if gram is None:
            f, grad = self.value_grad(theta_new, eta_new)
        else:
            f, grad, hess = self.value_grad_hess(theta_new, eta_new, single=gram == "single")
        return Trial(eta_new, f, grad, hess, kept)

    def summed_derivatives(self, theta: np.ndarray, gram: Gram = None
                           ) -> tuple[float, np.ndarray, np.ndarray | None]:
        """``(f, gradient, Hessian)`` at ``theta`` (the share of one chunk in a
        distributed pass); objectives that can keep no n-vector override it."""
        trial = self.advance(np.zeros_like(theta), None, theta, gram)
        assert trial.grad is not None  # (no acceptance test: always formed)
        return trial.f, trial.grad, trial.hess

    def shared_curvature(self, theta: np.ndarray) -> bool:
        """Whether every row has the same curvature at ``theta``, so that
        :meth:`shared_hessian` forms the Hessian without a pass over X (and
        quasi-Newton steps from it beat Newton's while the Hessian costs many
        gradients: softmax). None does here."""
        return False

    def shared_hessian(self, theta: np.ndarray) -> np.ndarray:
        """The Hessian at a point where :meth:`shared_curvature` holds."""
        raise NotImplementedError  # pragma: no cover - only where shared_curvature says so

    def shared_inverse(self, theta: np.ndarray) -> np.ndarray | None:
        """The inverse of :meth:`shared_hessian` where its structure gives it for less
        than a factorisation of the whole (None: factor the Hessian)."""
        return None

    def line_derivatives(self, eta: Eta, Xd: Eta) -> tuple[float, float] | None:
        """The data term's first and second derivative in ``t`` along ``eta + t Xd``,
        at ``t = 0``, where the rows are at hand and they cost no pass over X (a
        quasi-Newton step's exact line search); None here: the solvers then search by
        values (on Dask each would be a distributed pass)."""
        return None

    def block_curvatures(self, eta: Eta) -> np.ndarray | None:
        """Each parameter block's summed row curvature ``sum_i s_i h_ik`` (the
        intercept's diagonal Hessian entry), where the objective forms all blocks' in
        one pass (softmax); None: L-BFGS's scaling takes them block by block."""
        return None

    def start_preconditioner(self, theta: np.ndarray
                             ) -> Callable[[np.ndarray], np.ndarray] | None:
        """``v -> H^-1 v`` at a point where :meth:`shared_curvature` holds, where its
        structure makes that cheap (L-BFGS's initial matrix); None: a multiple of the
        identity."""
        return None

    def hessian_change(self, eta_old: Eta, eta_new: Eta, H: np.ndarray, cut: float,
                       rowwise: bool = True) -> CurvatureChange:
        """Bounds on ``max_v |v^T (H_new - H) v| / v^T H v`` for the Hessian ``H``
        built at ``eta_old`` and the one at ``eta_new``; none here (``inf``).
        The in-memory objectives bound it by the family's uniform bound
        (:func:`~problin._core.model.families.uniform_curvature_change`) of the
        largest change of a linear predictor, ``GLMObjective`` by a row-wise one too."""
        return CurvatureChange.unknown()

    def count_rows(self, func: RowCount, eta: Eta) -> int:
        """``func(objective, eta)`` wherever the rows are (in memory: one call on them
        all; distributed: summed over the chunks' in-memory objectives)."""
        raise NotImplementedError  # pragma: no cover - the in-memory and Dask bases'

    def watch_rows(self, func: RowCount) -> None:
        """Count ``func`` in the solver's final pass too, where that saves a pass of its
        own (distributed); rows in memory are at hand afterwards: nothing to do."""
        return None

    def separation(self, result: FitPoint[Eta]) -> tuple[RowMask, int, int] | None:
        """``(rows, n_separated, n_used)`` from certificates at the fit, where the rows
        are never in one place (distributed); in memory the diagnostics read the rows."""
        raise NotImplementedError("the separation of rows in memory is found from the "
                                  "rows themselves (glm._diagnostics)")


class DistributedObjective(ObjectiveBase[Eta]):
    """An objective whose every evaluation is a distributed pass over row chunks.

    Its rows are never in one place: what the diagnostics read off the rows
    in memory, it answers by a pass (or from one the solver made anyway).
    The solvers that work row by row (coordinate descent: an n-vector update
    per coefficient) or by Hessian-vector products (truncated Newton: a pass
    each, where the exact Hessian is one pass) are not offered on it: their
    methods say so.
    """

    def hessp(self, theta: np.ndarray, eta: Eta, v: np.ndarray, single: bool = False
              ) -> np.ndarray:
        raise NotImplementedError("Hessian-vector products would each be a distributed "
                                  "pass: the Newton engine builds the Hessian in one")

    def column(self, j: int) -> np.ndarray:
        raise NotImplementedError("coordinate-wise solvers update an n-vector per "
                                  "coefficient, which a distributed objective never holds")

    def coordinate_derivatives(self, eta: Eta, c: np.ndarray, block: int = 0
                               ) -> tuple[float, float]:
        raise NotImplementedError("coordinate-wise solvers update an n-vector per "
                                  "coefficient, which a distributed objective never holds")

    def block_direction(self, c: np.ndarray, block: int = 0) -> Eta:
        raise NotImplementedError("coordinate-wise solvers update an n-vector per "
                                  "coefficient, which a distributed objective never holds")

