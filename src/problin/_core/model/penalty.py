"""The penalty axis: the term ``r(theta)`` an objective adds to its data term.

    f(theta) = sum_i s_i loss(y_i, eta_i) + r(theta)

An objective *composes* a penalty (``objective.penalty``) and asks it, at
each evaluation, to add its value, gradient and Hessian to the data term's;
the solvers ask it for what they scale or precondition by (its curvature's
diagonal, whether it is flat, or a Gaussian prior whose precision has the
Kronecker start's structure). The objectives and the solvers never test
which penalty they hold: a new penalty is a new implementation of
:class:`Penalty`, with no edit to an objective.

Two implementations today:

* :class:`FlatPenalty`, ``r = 0`` (maximum likelihood): a null object whose
  ``add_*`` return their arguments untouched, so the objectives' hot paths
  have no ``None`` test and no arithmetic;
* :class:`GaussianPenalty`, ``r = 1/2 (theta - m)^T P (theta - m)``, the
  negative log-density of a Gaussian prior ``N(m, P^-1)`` (Bishop 2006,
  §4.5.1; ridge with ``P = alpha I`` on the slopes, the intercept
  unpenalised, and for softmax a rank-one term on the intercepts' sum:
  ``prior.PriorPrecision``); any ``N(m_0, S_0^-1)`` on the raw parameters
  (``prior.GaussianPrior``, the estimators' ``prior_mean``/``prior_precision``)
  is the same penalty mapped to the solver's basis (:meth:`GaussianPenalty.on_raw`).

Room for the penalties to come. A *data-dependent* penalty (Firth's
``-1/2 log |I(theta)|``, whose gradient needs the leverages of the weighted
design) is built bound to its rows and evaluates its own passes at
``theta``; :meth:`Penalty.subsample` gives its share of a row sketch, and
``exact_hessian`` says where its Hessian is an approximation (the Fisher
information alone, as logistf's). A *non-smooth* penalty (L1) says so with
``smooth`` False and adds a proximal step; solvers that need a gradient refuse
it by that flag.
"""
from contextlib import AbstractContextManager, nullcontext
from typing import NamedTuple, Protocol

import numpy as np
import numpy.typing as npt

from .prior import GaussianPrior, PriorPrecision, ParameterBasis

__all__ = ["Penalty", "PenaltyBase", "FlatPenalty", "GaussianPenalty", "objective_penalty",
           "add_penalty", "Information"]


class Information(NamedTuple):
    """The data term's Fisher information at ``theta``, as the objective formed it in
    the pass that a penalty is added to (a penalty of the information, Firth's, reads
    it instead of forming it anew). ``rounded``: its products were float32 (good for a
    step's direction, not for a covariance)."""

    gram: np.ndarray
    rounded: bool


class Penalty(Protocol):
    """What an objective and the solvers may ask of the penalty ``r(theta)``."""

    @property
    def flat(self) -> bool:
        """``r = 0`` everywhere: the fit is maximum likelihood."""
        ...

    @property
    def smooth(self) -> bool:
        """Twice differentiable everywhere (False: a proximal step is needed)."""
        ...

    @property
    def exact_hessian(self) -> bool:
        """Whether :meth:`add_hessian` adds the exact Hessian of ``r``."""
        ...

    @property
    def reads_information(self) -> bool:
        """Whether ``r``'s value at a new ``theta`` needs the data's Fisher information
        there (Firth's ``log |I|``): a Gram pass of its own unless the objective's pass
        formed one (:class:`Information`), so that the Newton engine forms a Gram in
        every pass."""
        ...

    @property
    def gaussian(self) -> "GaussianPenalty | None":
        """This penalty as a Gaussian prior ``N(m, P^-1)`` (the Bayesian posteriors and
        the Kronecker start need ``P`` itself), or None where it is not one."""
        ...

    def value(self, theta: np.ndarray) -> float:
        """``r(theta)``."""
        ...

    def gradient(self, theta: np.ndarray) -> np.ndarray:
        """``grad r(theta)``."""
        ...

    def hessp(self, theta: np.ndarray, v: np.ndarray) -> np.ndarray:
        """``Hess r(theta) v``."""
        ...

    def add_gradient(self, theta: np.ndarray, f: float, grad: np.ndarray
                     ) -> tuple[float, np.ndarray]:
        """The data term's value and gradient at ``theta`` with ``r``'s added."""
        ...

    def add_hessian(self, theta: np.ndarray, H: np.ndarray) -> np.ndarray:
        """``H + Hess r(theta)`` (a new matrix unless ``r`` is flat)."""
        ...

    def add_hessp(self, theta: np.ndarray, v: np.ndarray, Hv: np.ndarray) -> np.ndarray:
        """``Hv + Hess r(theta) v``."""
        ...

    def add_derivatives(self, theta: np.ndarray, f: float, grad: np.ndarray,
                        hess: np.ndarray | None, information: Information | None = None
                        ) -> tuple[float, np.ndarray, np.ndarray | None]:
        """:meth:`add_gradient` and (``hess`` not None) :meth:`add_hessian` at once;
        ``information``: the data term's, where the objective formed it in this pass."""
        ...

    def hessian_diagonal(self) -> np.ndarray | None:
        """The diagonal part of ``r``'s curvature, for a solver's scaling (L-BFGS's);
        None where there is none to scale by."""
        ...

    def lagged(self, gradient: np.ndarray) -> AbstractContextManager[None]:
        """Within it, where a pass forms only a float32 information (a step's direction,
        never the answer), ``gradient`` stands in for ``grad r`` there (a penalty whose
        gradient costs a pass of its own: Firth's leverages, lagged; the fixed point is
        unchanged). A penalty of ``theta`` alone ignores it."""
        ...

    def reported_curvature(self) -> AbstractContextManager[bool]:
        """Within it, :meth:`add_hessian` adds the curvature a covariance is read from;
        it yields whether the steps used another (then the engine's last Hessian is not
        the one to report)."""
        ...

    def subsample(self, rows: np.ndarray, sample_weight: np.ndarray) -> "Penalty":
        """The penalty of the same objective on ``rows`` reweighted by ``sample_weight``
        (the engine's row sketch); a penalty of ``theta`` alone is itself."""
        ...


class PenaltyBase:
    """The defaults of :class:`Penalty`: a smooth penalty of ``theta`` alone, its
    fused additions by :meth:`value`, :meth:`gradient` and :meth:`hessp`."""

    flat = False
    smooth = True
    exact_hessian = True
    reads_information = False

    @property
    def gaussian(self) -> "GaussianPenalty | None":
        return None

    def value(self, theta: np.ndarray) -> float:
        raise NotImplementedError  # pragma: no cover - every penalty has one

    def gradient(self, theta: np.ndarray) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover

    def hessp(self, theta: np.ndarray, v: np.ndarray) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover

    def add_hessian(self, theta: np.ndarray, H: np.ndarray) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover

    def add_gradient(self, theta: np.ndarray, f: float, grad: np.ndarray
                     ) -> tuple[float, np.ndarray]:
        return f + self.value(theta), grad + self.gradient(theta)

    def add_hessp(self, theta: np.ndarray, v: np.ndarray, Hv: np.ndarray) -> np.ndarray:
        return Hv + self.hessp(theta, v)

    def add_derivatives(self, theta: np.ndarray, f: float, grad: np.ndarray,
                        hess: np.ndarray | None, information: Information | None = None
                        ) -> tuple[float, np.ndarray, np.ndarray | None]:
        f, grad = self.add_gradient(theta, f, grad)
        return f, grad, None if hess is None else self.add_hessian(theta, hess)

    def reported_curvature(self) -> AbstractContextManager[bool]:
        return nullcontext(False)

    def lagged(self, gradient: np.ndarray) -> AbstractContextManager[None]:
        return nullcontext()

    def hessian_diagonal(self) -> np.ndarray | None:
        return None

    def subsample(self, rows: np.ndarray, sample_weight: np.ndarray) -> "Penalty":
        return self


class FlatPenalty(PenaltyBase):
    """``r = 0``: maximum likelihood. Adds nothing and allocates nothing."""

    flat = True

    def value(self, theta: np.ndarray) -> float:
        return 0.0

    def gradient(self, theta: np.ndarray) -> np.ndarray:
        return np.zeros_like(theta, dtype=np.float64)

    def hessp(self, theta: np.ndarray, v: np.ndarray) -> np.ndarray:
        return np.zeros_like(v, dtype=np.float64)

    def add_gradient(self, theta: np.ndarray, f: float, grad: np.ndarray
                     ) -> tuple[float, np.ndarray]:
        return f, grad

    def add_hessian(self, theta: np.ndarray, H: np.ndarray) -> np.ndarray:
        return H

    def add_hessp(self, theta: np.ndarray, v: np.ndarray, Hv: np.ndarray) -> np.ndarray:
        return Hv


class GaussianPenalty(PenaltyBase):
    """``r = 1/2 (theta - m)^T P (theta - m)``: a Gaussian prior ``N(m, P^-1)``.

    ``P`` is kept structured (:class:`~problin._core.model.prior.PriorPrecision`:
    a diagonal plus rank-one terms, or a dense matrix), so that its products
    cost O(p) on wide data.
    """

    def __init__(self, precision: PriorPrecision | npt.ArrayLike,
                 mean: npt.ArrayLike) -> None:
        self.precision = precision if isinstance(precision, PriorPrecision) \
            else PriorPrecision(precision)
        self.mean = np.asarray(mean, dtype=np.float64)

    @classmethod
    def on_raw(cls, prior: GaussianPrior, basis: ParameterBasis | None) -> "GaussianPenalty":
        """The penalty of a prior ``N(m_0, S_0^-1)`` on the raw parameters, in the
        solver's coordinates of ``basis`` (:meth:`GaussianPrior.standardised`)."""
        precision, mean = prior.standardised(basis)
        return cls(precision, mean)

    @property
    def gaussian(self) -> "GaussianPenalty":
        return self

    def value(self, theta: np.ndarray) -> float:
        return 0.5 * self.precision.quad(theta - self.mean)

    def gradient(self, theta: np.ndarray) -> np.ndarray:
        return self.precision.matvec(theta - self.mean)

    def hessp(self, theta: np.ndarray, v: np.ndarray) -> np.ndarray:
        return self.precision.matvec(v)

    def add_gradient(self, theta: np.ndarray, f: float, grad: np.ndarray
                     ) -> tuple[float, np.ndarray]:
        # One product P r for both terms.
        r = theta - self.mean
        Pr = self.precision.matvec(r)
        return f + 0.5 * float(r @ Pr), grad + Pr

    def add_hessian(self, theta: np.ndarray, H: np.ndarray) -> np.ndarray:
        return self.precision.add_to(H)

    def hessian_diagonal(self) -> np.ndarray | None:
        return self.precision.diag


def objective_penalty(penalty: Penalty | None,
                      prior_precision: PriorPrecision | npt.ArrayLike | None,
                      prior_mean: npt.ArrayLike | None, n_params: int) -> Penalty:
    """An objective's penalty from its arguments: ``penalty``, or the Gaussian prior
    ``N(prior_mean, prior_precision^-1)`` (mean None: zero), flat without either."""
    if penalty is not None:
        if prior_precision is not None or prior_mean is not None:
            raise TypeError("give either a penalty or prior_precision/prior_mean, not both")
        return penalty
    if prior_precision is None:
        return FlatPenalty()
    return GaussianPenalty(prior_precision,
                           np.zeros(n_params) if prior_mean is None else prior_mean)


def add_penalty(penalty: Penalty, theta: np.ndarray, f: float, grad: np.ndarray,
                hess: np.ndarray | None, information: Information | None = None
                ) -> tuple[float, np.ndarray, np.ndarray | None]:
    """The data term's ``(f, gradient, Hessian or None)`` at ``theta`` with the
    penalty's added (a fused step's, whose Hessian is optional; ``information``: see
    :meth:`Penalty.add_derivatives`)."""
    return penalty.add_derivatives(theta, f, grad, hess, information)
