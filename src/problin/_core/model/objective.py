"""The penalised GLM objective that every solver minimises.

    f(theta) = sum_i s_i loss(y_i, eta_i) + r(theta),
    eta = [1, X] theta,

where ``r`` is the objective's penalty (:mod:`~problin._core.model.penalty`:
the Gaussian prior's ``1/2 (theta - m)^T P (theta - m)``, or none for maximum
likelihood), which it composes and asks. Solvers see only n-vectors (``eta``) and p-sized
results; the data are read through :class:`~problin._core.model.design.Design`.
It follows the solvers' contract (:mod:`~problin._core.model.contract`),
fusing the step into one pass over X (``advance``) and bounding the change of
its Hessian from per-row curvatures (``hessian_change``). Softmax regression's
objective is :mod:`~problin._core.model.objective_softmax`'s.
"""
from typing import Generic, Protocol, TypeAlias, TypeVar

import numpy as np
import scipy.sparse as sp
from scipy.linalg import lapack

from ..blocks import ELEMENTWISE_ROWS, map_rows, one_blas_thread, reduce_row_ranges, small_blas
from .contract import CurvatureChange, ObjectiveBase, RowCount, Trial
from .layout import gradient_certainty
from .design import Design, Gram
from .exponential_family import Family
from .families import CurvatureBound, largest_change, uniform_curvature_change
from .penalty import Information, Penalty, add_penalty, objective_penalty
from .prior import PriorPrecision

__all__ = ["GLMObjective", "InMemoryObjective", "CurvatureBound", "PriorPrecision",
           "bound_row_limit", "range_basis"]

#: The row derivatives at the most recent eta, ``(eta, (loss, g, h))``, tagged
#: ``"advance"`` where their arrays are the fused step's (reused by the next one).
_Cached: TypeAlias = (tuple[np.ndarray, tuple[float, np.ndarray, np.ndarray]]
                      | tuple[np.ndarray, tuple[float, np.ndarray, np.ndarray], str])



class InMemoryObjective(ObjectiveBase[np.ndarray]):
    """An objective whose rows are in memory: ``eta`` an ndarray, the design a
    :class:`~.design.Design`, the Hessian's change bounded by its family's uniform bound."""

    design: Design
    family: CurvatureBound

    def _step_predictor(self, eta: np.ndarray, Xd: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray | None]:
        # eta + X d in X d's own array (a fresh n x M array per step costs twice the
        # sum): the trial then carries no X d (a rejected step's search takes
        # eta_new - eta, to rounding).
        return np.add(Xd, eta, out=Xd), None

    def column(self, j: int) -> np.ndarray:
        """Column ``j`` of ``[1, X]`` (the coordinate solver's)."""
        return self.design.column(j)

    def count_rows(self, func: RowCount, eta: np.ndarray) -> int:
        """``func(self, eta)``: the rows are at hand."""
        return int(func(self, eta))

    def row_certainty(self, eta: np.ndarray) -> np.ndarray:
        """``1 - p`` of each row's observed class at ``eta`` (~0 where it is fitted with
        certainty), as the family reads it off the row derivatives (the separation
        diagnostics' trigger)."""
        raise NotImplementedError  # pragma: no cover - the GLM and softmax objectives'

    def hessian_change(self, eta_old: np.ndarray, eta_new: np.ndarray, H: np.ndarray,
                       cut: float, rowwise: bool = True) -> CurvatureChange:
        """The family's uniform bound (:func:`~.families.uniform_curvature_change`) of
        the largest change of a linear predictor (``inf`` where it has none)."""
        uniform = uniform_curvature_change(self.family, largest_change(eta_old, eta_new))
        return CurvatureChange(uniform, uniform)


def bound_row_limit(n_samples: int) -> int:
    """Rows whose curvature may move beyond the cut before the Hessian change bound
    of :meth:`GLMObjective.hessian_change` gives up (``inf``): its leverage solve for
    more rows than a sixteenth of the data costs about what a new Hessian does
    (on small data, where most rows move, the new Hessian is the cheaper)."""
    return n_samples // 16


#: The family type of a GLM objective (its callers may read more of it than the objective).
F = TypeVar("F", bound=Family)


class GLMObjective(InMemoryObjective, Generic[F]):
    """Penalised negative log-likelihood of a GLM (with a Gaussian prior: its negative
    log-posterior).

    Parameters
    ----------
    design : Design
    family : Family (``exponential_family``: a distribution and link, or ``families``'s)
    y : ndarray of shape (n,)
    sample_weight : ndarray of shape (n,) or None
    prior_precision : PriorPrecision, ndarray of shape (p, p) or (p,), or None
    prior_mean : ndarray of shape (p,) or None (zero)
        A Gaussian prior ``N(m, P^-1)`` as the penalty (None: flat); or
    information : {"observed", "expected"}
        Curvature used for the Hessian (Newton vs Fisher scoring).
    offset : ndarray of shape (n,) or None
        A known term ``o`` of the linear predictor, ``eta_i + o_i`` (McCullagh &
        Nelder 1989, §6.2.3). It enters only the per-row derivatives: the
        solvers' ``eta`` stays ``[1, X] theta`` (so ``advance`` from ``eta=None``,
        ``linear_predictor`` and the solving basis are unchanged by it).
    penalty : Penalty or None
        Any penalty (then without ``prior_precision`` and ``prior_mean``).
    """

    family: F

    def __init__(self, design: Design, family: F, y: np.ndarray,
                 sample_weight: np.ndarray | None = None,
                 prior_precision: PriorPrecision | np.ndarray | None = None,
                 prior_mean: np.ndarray | None = None, information: str = "observed",
                 offset: np.ndarray | None = None, *, penalty: Penalty | None = None
                 ) -> None:
        self.design = design
        self.family = family
        self.y = np.asarray(y, dtype=np.float64)
        self.sample_weight = sample_weight
        self.offset = offset
        self.n_params = design.n_params
        self.penalty = objective_penalty(penalty, prior_precision, prior_mean, self.n_params)
        self.information = information
        # Expected information is exact only for canonical links.
        self.exact_hessian = (information == "observed" or bool(family.canonical)) \
            and self.penalty.exact_hessian
        # Whether the Hessian's Gram is the Fisher information (a penalty of it reads it).
        self._fisher = information == "expected" or bool(family.canonical)
        # The row derivatives at the most recent eta: (eta, (loss, g, h)[, "advance"]).
        self._cached: _Cached | None = None

    def linear_predictor(self, theta: np.ndarray) -> np.ndarray:
        return self.design.matvec(theta)

    def subsample(self, rows: np.ndarray) -> "GLMObjective[F]":
        """The same objective on a subset of rows, weights scaled to the full total."""
        w = _scaled_weights(self, rows)
        return GLMObjective(self.design.subsample(rows), self.family, self.y[rows], w,
                            information=self.information,
                            offset=None if self.offset is None else self.offset[rows],
                            penalty=self.penalty.subsample(rows, w))

    def value(self, theta: np.ndarray, eta: np.ndarray) -> float:
        """``f(theta)`` given its linear predictor ``eta`` (no pass over X).

        Evaluates (and keeps) the per-row derivatives too: a line search's
        accepted trial point is where the next gradient is needed.
        """
        return self.row_derivatives(eta)[0] + self.penalty.value(theta)

    def row_derivatives(self, eta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """Loss and per-row gradient / curvature weights at ``eta`` (cached for
        the most recent ``eta`` array)."""
        cached = self._cached
        if cached is not None and cached[0] is eta:
            return cached[1]
        self._cached = cached = None  # free the old derivatives before building new ones
        n = eta.shape[0]
        if n <= ELEMENTWISE_ROWS:  # one chunk: no threads, no copies
            out = self._block_derivatives(0, n, eta)
        else:
            g, h = np.empty(n), np.empty(n)
            out = (map_rows(lambda lo, hi: self._block_derivatives(lo, hi, eta[lo:hi]), n,
                            (g, h)), g, h)
        self._cached = (eta, out)
        return out

    def value_grad_hess(self, theta: np.ndarray, eta: np.ndarray, single: bool = False
                        ) -> tuple[float, np.ndarray, np.ndarray]:
        """``(f, gradient, Hessian)`` at ``theta``: one fused pass over X
        (``single``: Hessian products in float32)."""
        loss, g, h = self.row_derivatives(eta)
        grad, gram = self.design.grad_and_gram(g, h, single)
        f, grad, hess = add_penalty(self.penalty, theta, loss, grad, gram,
                                    self._information(gram, "single" if single else "double"))
        assert hess is not None
        return f, grad, hess

    def advance(self, theta: np.ndarray, eta: np.ndarray | None, d: np.ndarray,
                gram: Gram = None, accept_below: float | None = None) -> Trial:
        """The point ``theta + d`` in one pass: its ``eta``, ``f``, gradient and Hessian.

        ``eta`` is the linear predictor at ``theta`` (None: ``theta`` is zero).
        ``gram``: None (no Hessian), "single" or "double" (see
        ``value_grad_hess``). The derivatives come with the pass, accepted or
        not (``accept_below`` is not needed). The row derivatives at the new
        ``eta`` are kept for the next ``value``/``gradient`` at that point;
        their arrays are reused by the next ``advance`` (a fresh n-vector costs
        a page fault per 4 KB, ~10 % of a large fit), so they are valid until then.
        """
        cached, self._cached = self._cached, None
        if sp.issparse(self.design.X):
            eta_new = self.design.matvec(d)
            if eta is not None:
                eta_new += eta
            loss, g, h = self.row_derivatives(eta_new)
            if gram is None:
                grad, hess = self.design.rmatvec(g), None
            else:
                grad, hess = self.design.grad_and_gram(g, h, gram == "single")
        else:
            # The previous advance's derivative arrays (nobody else's) are reused.
            reuse = cached[1][1:] if cached is not None and len(cached) == 3 else None
            eta_new, loss, g, h, grad, hess = self.design.advance(
                eta, d, self._block_derivatives, gram, out=reuse)
            self._cached = (eta_new, (loss, g, h), "advance")
        f, grad, hess = add_penalty(self.penalty, theta + d, loss, grad, hess,
                                    self._information(hess, gram))
        return Trial(eta_new, f, grad, hess)

    def _information(self, hess: np.ndarray | None, gram: Gram) -> Information | None:
        """The data term's Hessian where it is the Fisher information."""
        if hess is None or not self._fisher:
            return None
        return Information(hess, gram == "single")

    def _block_derivatives(self, lo: int, hi: int, eta_b: np.ndarray
                           ) -> tuple[float, np.ndarray, np.ndarray]:
        """``(loss, g, h)`` of rows ``lo:hi`` at their linear predictor ``eta_b``."""
        sw, off = self.sample_weight, self.offset
        if off is not None:
            eta_b = eta_b + off[lo:hi]
        return self.family.derivatives(self.y[lo:hi], eta_b,
                                       None if sw is None else sw[lo:hi], self.information)

    def summed_derivatives(self, theta: np.ndarray, gram: Gram = None
                           ) -> tuple[float, np.ndarray, np.ndarray | None]:
        """``(f, gradient, Hessian)`` at ``theta`` in one pass that keeps no
        n-vector (for a chunk's share of a distributed pass; dense X)."""
        if sp.issparse(self.design.X):
            return super().summed_derivatives(theta, gram)
        _, loss, _, _, grad, hess = self.design.advance(None, theta, self._block_derivatives,
                                                        gram, keep=False)
        return add_penalty(self.penalty, theta, loss, grad, hess, self._information(hess, gram))

    def value_grad(self, theta: np.ndarray, eta: np.ndarray) -> tuple[float, np.ndarray]:
        """``(f, gradient)`` at ``theta``: one ``X^T v`` pass."""
        loss, g, _ = self.row_derivatives(eta)
        return self.penalty.add_gradient(theta, loss, self.design.rmatvec(g))

    def hessp(self, theta: np.ndarray, eta: np.ndarray, v: np.ndarray, single: bool = False
              ) -> np.ndarray:
        """Hessian-vector product ``H v`` at ``theta``: one fused pass over dense X, no
        p x p matrix (``single``: from a float32 copy of X, made once: see
        ``Design.hessian_product``)."""
        _, _, h = self.row_derivatives(eta)
        Hv = self.design.hessian_product(h, v, single)
        return self.penalty.add_hessp(theta, v, Hv)

    def hessian_change(self, eta_old: np.ndarray, eta_new: np.ndarray, H: np.ndarray,
                       cut: float, rowwise: bool = True) -> CurvatureChange:
        """A bound on ``max_v |v^T (H_new - H) v| / v^T H v``: how far the Hessian
        ``H`` in hand (built at ``eta_old``) is from the one at ``eta_new``, in
        its own metric (a generalised eigenvalue, Golub & Van Loan 2013 §8.7):
        the smaller of the family's uniform bound (:func:`uniform_curvature_change`
        of the largest ``|eta_new - eta_old|``) and, with ``rowwise``, this one.

        With ``r_i = |h_i(new) - h_i(old)| / h_i(old)``, rows with ``r_i <= cut``
        contribute at most ``cut`` and the few rows ``L`` above it at most
        ``trace(H^-1 sum_L |dh_i| x_i x_i^T) = sum_L |dh_i| x_i^T H^-1 x_i``. A
        final Newton step moves the curvature of tail rows, where ``h`` is tiny
        and ``|h' / h|`` large, by relatively much more than that of the others:
        the plain ``max_i r_i`` would condemn a Hessian these rows barely shape.
        (The row derivatives at ``eta_new`` stay cached for the next ``value``.)
        """
        change = super().hessian_change(eta_old, eta_new, H, cut)
        if change.uniform <= cut or not rowwise:
            return change
        return CurvatureChange(change.uniform, min(change.uniform,
                                                   self._rowwise_change(eta_old, eta_new, H, cut)))

    def _rowwise_change(self, eta_old: np.ndarray, eta_new: np.ndarray, H: np.ndarray,
                        cut: float) -> float:
        h_old = self.row_derivatives(eta_old)[2]
        h_new = self.row_derivatives(eta_new)[2]

        def rows_above(lo: int, hi: int) -> list[np.ndarray]:
            # |dh_i| > cut h_i (also h_i = 0 < |dh_i|)
            change = np.abs(h_new[lo:hi] - h_old[lo:hi])
            return [np.flatnonzero(~(change <= cut * h_old[lo:hi])) + lo]

        above = np.concatenate(reduce_row_ranges(rows_above, h_old.size, ELEMENTWISE_ROWS))
        if above.size == 0:
            return cut
        change = np.abs(h_new[above] - h_old[above])
        if above.size > bound_row_limit(h_old.size):
            return np.inf  # as costly as building the Hessian anew
        with small_blas(H.shape[0]):  # (LAPACK directly: scipy's checks cost more here)
            c, info = lapack.dpotrf(H, lower=1, clean=1, overwrite_a=0)
            if info != 0:
                return np.inf
            Z, info = lapack.dtrtrs(c, self.design.dense_rows(above).T, lower=1)
        leverage = np.einsum("ij,ij->j", Z, Z)  # x_i^T H^-1 x_i
        return cut + float(change @ leverage)

    def coordinate_derivatives(self, eta: np.ndarray, c: np.ndarray, block: int = 0
                               ) -> tuple[float, float]:
        """First and second derivative of the data term along ``eta += delta c``."""
        _, g, h = self.row_derivatives(eta)
        return float(c @ g), float(h @ np.square(c))

    def line_derivatives(self, eta: np.ndarray, Xd: np.ndarray) -> tuple[float, float]:
        """Along ``eta + t Xd`` at ``t = 0``: ``(g . Xd, h . Xd^2)`` from the row derivatives
        (two dot products on one BLAS thread: threaded, each waited ~20 ms on thread
        barriers on a busy two-core machine at n = 200,000)."""
        _, g, h = self.row_derivatives(eta)
        with one_blas_thread():
            return float(Xd @ g), float((h * Xd) @ Xd)

    def block_direction(self, c: np.ndarray, block: int = 0) -> np.ndarray:
        """The change of ``eta`` when one coefficient moves along column ``c``."""
        return c

    def row_certainty(self, eta: np.ndarray) -> np.ndarray:
        return gradient_certainty(self.row_derivatives(eta)[1], self.sample_weight)

    def recentre(self, theta: np.ndarray) -> np.ndarray:
        """No invariant directions in a single-block model."""
        return theta

    def data_range_basis(self) -> np.ndarray:
        """Orthonormal basis of the parameter directions the data can see."""
        return _range_basis(self.design, self.sample_weight)

    def observed_hessian(self, theta: np.ndarray, eta: np.ndarray) -> np.ndarray:
        """Hessian with the observed information, whatever ``information`` says."""
        eta = eta if self.offset is None else eta + self.offset
        _, _, h = self.family.derivatives(self.y, eta, self.sample_weight, "observed")
        return self.penalty.add_hessian(theta, self.design.gram(h))


def _range_basis(design: Design, sample_weight: np.ndarray | None,
                 rtol: float = 1e-10) -> np.ndarray:
    """Eigenvectors of ``[1,X]^T diag(s > 0) [1,X]`` with non-negligible eigenvalues."""
    used = np.ones(design.n_samples) if sample_weight is None else \
        (np.asarray(sample_weight) > 0).astype(np.float64)
    return range_basis(design.gram(used), rtol)


def range_basis(G: np.ndarray, rtol: float = 1e-10) -> np.ndarray:
    """Eigenvectors of the Gram matrix ``G`` with non-negligible eigenvalues."""
    vals, vecs = np.linalg.eigh(G)
    return vecs[:, vals > rtol * max(float(vals[-1]), 0.0)]


def _scaled_weights(objective: InMemoryObjective, rows: np.ndarray) -> np.ndarray:
    """Sample weights of ``rows``, scaled so that they sum to the full total weight."""
    sw = np.ones(rows.size) if objective.sample_weight is None else objective.sample_weight[rows]
    return sw * (objective.total_weight / max(float(sw.sum()), 1e-300))

