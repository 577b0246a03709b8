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
whose every evaluation is a distributed pass (Dask): they answer what the
diagnostics ask of rows that are never in one place (counting rows, watching
a count in the solver's last pass, separation certificates) where the base
class answers it from the rows at hand (``count_rows``: one call on them all;
``watch_rows``: nothing to watch), and declare the row-wise methods they do
not offer (they raise, saying why).

``eta`` is an n-vector (n x M for softmax) in memory; on Dask a lazy
stand-in for one (``problin._dask.objective.LazyEta``) that supports the
arithmetic the solvers do on it: ``eta + t * Xd`` and ``eta_new - eta``.
"""
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias

import numpy as np

from .families import largest_change, uniform_curvature_change
from .prior import PriorPrecision

__all__ = ["Objective", "ObjectiveBase", "DistributedObjective", "Trial", "Gram", "Eta",
           "RowCount"]

#: Which Hessian a pass forms with the gradient: none, float32 products, or float64.
Gram: TypeAlias = Literal["single", "double"] | None
#: The linear predictor: an ndarray in memory, a lazy stand-in on Dask (see above).
Eta: TypeAlias = Any


@dataclass(frozen=True)
class Trial:
    """The point ``theta + d`` as one evaluation found it (see :meth:`Objective.advance`)."""

    eta: Eta  # the linear predictor there
    f: float  # the objective there
    grad: np.ndarray | None  # None only where the point failed the acceptance test
    hess: np.ndarray | None  # None unless a Hessian was asked for (and the point accepted)
    Xd: np.ndarray | None = None  # X d where the evaluation formed it on its own


class Objective(Protocol):
    """What the solvers may call: the penalised negative log-likelihood ``f``."""

    design: Any  # rows, columns and passes over X (in memory or on Dask)
    n_params: int
    n_blocks: int  # parameter blocks (classes of softmax; 1 for a GLM)
    exact_hessian: bool  # False for Fisher scoring with a non-canonical link
    sample_weight: np.ndarray | None
    P: PriorPrecision | None  # the Gaussian prior's precision (None: flat)
    m: np.ndarray  # and its mean

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
                accept_below: float | None = None) -> Trial: ...

    def summed_derivatives(self, theta: np.ndarray, gram: Gram = None
                           ) -> tuple[float, np.ndarray, np.ndarray | None]: ...

    def hessian_change(self, eta_old: Eta, eta_new: Eta, H: np.ndarray, cut: float,
                       rowwise: bool = True) -> float: ...

    def subsample(self, rows: np.ndarray) -> "Objective": ...

    def data_range_basis(self) -> np.ndarray: ...

    def observed_hessian(self, theta: np.ndarray, eta: Eta) -> np.ndarray: ...

    def shared_curvature(self, theta: np.ndarray) -> bool: ...

    def shared_hessian(self, theta: np.ndarray) -> np.ndarray: ...

    def shared_inverse(self, theta: np.ndarray) -> np.ndarray | None: ...

    def coordinate_derivatives(self, eta: Eta, c: np.ndarray, block: int = 0
                               ) -> tuple[float, float]: ...

    def block_direction(self, c: np.ndarray, block: int = 0) -> np.ndarray: ...

    def recentre(self, theta: np.ndarray) -> np.ndarray: ...

    def block_curvatures(self, eta: Eta) -> np.ndarray | None: ...

    def start_preconditioner(self, theta: np.ndarray
                             ) -> Callable[[np.ndarray], np.ndarray] | None: ...

    def count_rows(self, func: "RowCount", eta: Eta) -> int: ...

    def watch_rows(self, func: "RowCount") -> None: ...

    def separation(self, result: Any) -> tuple[Any, int, int] | None: ...


#: A count over rows held in memory: ``func(in-memory objective, its eta)``.
RowCount: TypeAlias = Callable[[Any, Eta], "int | bool"]


class ObjectiveBase:
    """The unfused defaults of the contract's optional capabilities.

    Subclasses implement the evaluations (``linear_predictor``, ``value``,
    ``value_grad``, ``value_grad_hess``) and override a default where they do
    it in fewer passes.
    """

    exact_hessian: bool = True

    def linear_predictor(self, theta: np.ndarray) -> Eta:
        raise NotImplementedError  # pragma: no cover - every objective has one

    def value(self, theta: np.ndarray, eta: Eta) -> float:
        raise NotImplementedError  # pragma: no cover

    def value_grad(self, theta: np.ndarray, eta: Eta) -> tuple[float, np.ndarray]:
        raise NotImplementedError  # pragma: no cover

    def value_grad_hess(self, theta: np.ndarray, eta: Eta, single: bool = False
                        ) -> tuple[float, np.ndarray, np.ndarray]:
        raise NotImplementedError  # pragma: no cover

    def advance(self, theta: np.ndarray, eta: Eta | None, d: np.ndarray, gram: Gram = None,
                accept_below: float | None = None) -> Trial:
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
        if eta is None:
            theta_new, eta_new = d, Xd
        elif isinstance(Xd, np.ndarray) and isinstance(eta, np.ndarray):
            # eta + X d in X d's own array (a fresh n x M array per step costs
            # twice the sum): the trial then carries no X d (a rejected step's
            # search takes eta_new - eta, to rounding).
            theta_new, eta_new, Xd = theta + d, np.add(Xd, eta, out=Xd), None
        else:
            theta_new, eta_new = theta + d, Xd + eta
        f = np.nan
        if accept_below is not None:
            f = self.value(theta_new, eta_new)
            if not (np.isfinite(f) and f <= accept_below):
                return Trial(eta_new, f, None, None, Xd)
        hess = None
        if gram is None:
            f, grad = self.value_grad(theta_new, eta_new)
        else:
            f, grad, hess = self.value_grad_hess(theta_new, eta_new, single=gram == "single")
        return Trial(eta_new, f, grad, hess, Xd)

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
                       rowwise: bool = True) -> float:
        """A bound on ``max_v |v^T (H_new - H) v| / v^T H v`` for the Hessian ``H``
        built at ``eta_old`` and the one at ``eta_new``: the family's uniform bound
        (:func:`~problin._core.model.families.uniform_curvature_change`) of the
        largest change of a linear predictor in memory; ``inf`` without a family or
        such a bound. ``GLMObjective`` adds a row-wise bound (``rowwise``)."""
        family = getattr(self, "family", None)
        if family is None or not isinstance(eta_new, np.ndarray):
            return np.inf
        return uniform_curvature_change(family, largest_change(eta_old, eta_new))

    def count_rows(self, func: RowCount, eta: Eta) -> int:
        """``func(objective, eta)`` wherever the rows are: here, one call on them all (a
        distributed objective sums it over its chunks' in-memory objectives)."""
        return int(func(self, eta))

    def watch_rows(self, func: RowCount) -> None:
        """Count ``func`` in the solver's final pass too, where that saves a pass of its
        own (a distributed objective); rows in memory are at hand afterwards."""
        return None

    def separation(self, result: Any) -> tuple[Any, int, int] | None:
        """``(rows, n_separated, n_used)`` from certificates at the fit, where the rows
        are never in one place (distributed); in memory the diagnostics read the rows."""
        raise NotImplementedError("the separation of rows in memory is found from the "
                                  "rows themselves (glm._diagnostics)")


class DistributedObjective(ObjectiveBase):
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

    def coordinate_derivatives(self, eta: Eta, c: np.ndarray, block: int = 0
                               ) -> tuple[float, float]:
        raise NotImplementedError("coordinate-wise solvers update an n-vector per "
                                  "coefficient, which a distributed objective never holds")

    def block_direction(self, c: np.ndarray, block: int = 0) -> np.ndarray:
        raise NotImplementedError("coordinate-wise solvers update an n-vector per "
                                  "coefficient, which a distributed objective never holds")

