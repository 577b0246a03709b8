"""The cumulative-link (ordinal) objective, in memory: a family with extra parameters.

    f(b, w, gamma) = -sum_i s_i log p_i(eta_i, a(gamma)) + r(b, w),   eta = [1, X] [b, w],

(:mod:`.family_ordinal`). The parameter vector is ``[b, w]`` of the design (in its
basis) followed by the ``K - 2`` log gaps ``gamma``, so the engine sees one vector and
one Hessian: the design's Gram ``[1,X]^T diag(h) [1,X]`` for ``[b, w]``, the border
``[1,X]^T C J`` (``C`` the rows' ``d2 loss / d eta d a``, two entries per row; ``J`` the
cuts' Jacobian in ``gamma``) and the small cut block ``J^T H_a J + diag(grad_gamma)``.
Every term is a sum over rows, so a Dask chunk's objective is this one on its rows
(``problin._dask.objective_ordinal``).

The likelihood is concave in ``(eta, a)`` for a log-concave latent density (Pratt 1981);
the log gaps add ``diag(grad_gamma)``, which may be negative away from the optimum. The
Newton steps take the exact Hessian where it is positive definite (near the optimum:
quadratic convergence, the engine's last step squares the error) and its positive part
elsewhere (``value_grad_hess``: a descent direction); :meth:`OrdinalObjective.
observed_hessian` is always the exact one (the covariance's).
"""
import numpy as np
import scipy.sparse as sp
from scipy.linalg import block_diag, lapack

from .contract import Trial
from .design import Design, Gram
from .family_ordinal import CumulativeLink, OrdinalRows
from .objective import InMemoryObjective, _range_basis, _scaled_weights
from .penalty import Penalty, objective_penalty
from .prior import PriorPrecision

__all__ = ["OrdinalObjective", "descent_hessian"]


def descent_hessian(H: np.ndarray, grad: np.ndarray, n_design: int) -> np.ndarray:
    """The Newton steps' Hessian: the exact (penalised) ``H`` where Cholesky factors it
    (near the optimum: quadratic convergence), else with the log gaps' negative gradient
    terms dropped from its diagonal (positive semi-definite for a log-concave latent
    density: a descent direction). Decided on the whole sum (a Dask chunk's share of a
    positive definite Hessian need not be one). ``H`` is changed in place."""
    grad_gaps = grad[n_design:]
    negative = np.minimum(grad_gaps, 0.0)
    if not negative.any() or int(lapack.dpotrf(H, lower=0, clean=0, overwrite_a=0)[1]) == 0:
        return H
    k = np.arange(n_design, H.shape[0])
    H[k, k] -= negative
    return H


class OrdinalObjective(InMemoryObjective):
    """Penalised negative log-likelihood of a cumulative-link model; ``theta`` is
    ``[b, w]`` (the design's ``n_params``) then the ``K - 2`` log gaps."""

    design: Design
    family: CumulativeLink

    def __init__(self, design: Design, family: CumulativeLink, t: np.ndarray,
                 sample_weight: np.ndarray | None = None,
                 prior_precision: PriorPrecision | np.ndarray | None = None, *,
                 penalty: Penalty | None = None, chunk: bool = False) -> None:
        self.design = design
        # a Dask chunk's share: exact Hessians (their sum decides the Newton steps')
        self.chunk = chunk
        self.family = family
        self.t = np.asarray(t, dtype=np.intp)
        self.sample_weight = sample_weight
        self.n_params = design.n_params + family.n_gaps
        self.penalty = objective_penalty(penalty, prior_precision, None, self.n_params)
        self.exact_hessian = self.penalty.exact_hessian
        self._cached: tuple[np.ndarray, np.ndarray, OrdinalRows] | None = None
        self._buffers: list[np.ndarray] | None = None

    # ---------------------------------------------------------------- parts
    def _split(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p = self.design.n_params
        theta = np.asarray(theta, dtype=np.float64)
        return theta[:p], theta[p:]

    def row_terms(self, theta: np.ndarray, eta: np.ndarray) -> OrdinalRows:
        """The family's row terms at ``(eta, gaps of theta)`` (cached for the last pair:
        a value and the derivatives at the same point cost one evaluation)."""
        gaps = self._split(theta)[1]
        cached = self._cached
        if cached is not None and cached[0] is eta and np.array_equal(cached[1], gaps):
            return cached[2]
        self._cached = None  # (its arrays are the buffers written below)
        rows = self.family.rows(self.t, eta, gaps, self.sample_weight, self._buffers)
        self._buffers = [rows.g, rows.h, rows.cross_upper, rows.cross_lower, rows.upper,
                         rows.lower]
        self._cached = (eta, gaps.copy(), rows)
        return rows

    def linear_predictor(self, theta: np.ndarray) -> np.ndarray:
        return self.design.matvec(self._split(theta)[0])

    def subsample(self, rows: np.ndarray) -> "OrdinalObjective":
        """The same objective on a subset of rows, weights scaled to the full total."""
        w = _scaled_weights(self, rows)
        return OrdinalObjective(self.design.subsample(rows), self.family, self.t[rows], w,
                                penalty=self.penalty.subsample(rows, w))

    # ------------------------------------------------------------ evaluations
    def value(self, theta: np.ndarray, eta: np.ndarray) -> float:
        return self.row_terms(theta, eta).loss + self.penalty.value(theta)

    def _gradient(self, theta: np.ndarray, rows: OrdinalRows) -> np.ndarray:
        J = self.family.gaps_jacobian(self._split(theta)[1])
        return np.concatenate((self.design.rmatvec(rows.g), rows.grad_cuts @ J))

    def value_grad(self, theta: np.ndarray, eta: np.ndarray) -> tuple[float, np.ndarray]:
        rows = self.row_terms(theta, eta)
        return self.penalty.add_gradient(theta, rows.loss, self._gradient(theta, rows))

    def advance(self, theta: np.ndarray, eta: np.ndarray | None, d: np.ndarray,
                gram: Gram = None, accept_below: float | None = None) -> Trial[np.ndarray]:
        """The point ``theta + d`` in one fused pass over dense X (the design's
        ``advance``: ``eta + [1,X] d``, the row kernel on each block, ``[1,X]^T g`` and
        the Gram), and with ``gram`` one more for the border ``[1,X]^T C``. Its
        derivatives are formed whether or not it passes ``accept_below`` (Newton's full
        step is nearly always the accepted one). Sparse X: the unfused default."""
        if sp.issparse(self.design.X):
            return super().advance(theta, eta, d, gram, accept_below)
        p = self.design.n_params
        theta_new = d if eta is None else theta + d
        gaps = self._split(theta_new)[1]
        rows = self.family.row_pass(self.t, gaps, self.sample_weight, self._buffers)
        g, h = rows.outputs[:2]
        eta_new, loss, _, _, grad_design, H_design = self.design.advance(
            eta, d[:p], rows.block, "double" if gram else None, out=(g, h))
        terms = rows.finish(loss)
        self._buffers = rows.outputs
        self._cached = (eta_new, gaps.copy(), terms)
        J = self.family.gaps_jacobian(gaps)
        f, grad = self.penalty.add_gradient(theta_new, loss,
                                            np.concatenate((grad_design, terms.grad_cuts @ J)))
        if H_design is None:
            return Trial(eta_new, f, grad, None)
        H = self.penalty.add_hessian(theta_new, self._assemble(gaps, terms, H_design, None))
        return Trial(eta_new, f, grad, H if self.chunk else descent_hessian(H, grad, p))

    def _assemble(self, gaps: np.ndarray, rows: OrdinalRows, gram: np.ndarray,
                  border: np.ndarray | None) -> np.ndarray:
        """The Hessian from the design's Gram, the border ``[1,X]^T C`` (formed here
        where None) and the cut block."""
        p, family, t = self.design.n_params, self.family, self.t
        H = np.empty((self.n_params, self.n_params))
        H[:p, :p] = gram
        if gaps.size:
            J = family.gaps_jacobian(gaps)
            if border is None:
                border = self.design.rmatmat(
                    lambda lo, hi: family.cross_block(t, rows, lo, hi, False), family.n_gaps)
            # only a_1.. move with gamma (a_0 = 0): the border's columns are theirs
            B = border.T @ J[1:]
            H[:p, p:] = B
            H[p:, :p] = B.T
            H[p:, p:] = J.T @ rows.hess_cuts @ J + np.diag(rows.grad_cuts @ J)
        return H

    def _derivatives(self, theta: np.ndarray, rows: OrdinalRows
                     ) -> tuple[np.ndarray, np.ndarray]:
        """The exact gradient and Hessian: the design's gradient and the border in one
        backward pass (``[g, C]``, formed block by block), the Gram in another."""
        gaps = self._split(theta)[1]
        J = self.family.gaps_jacobian(gaps)
        t, family = self.t, self.family
        GC = self.design.rmatmat(lambda lo, hi: family.cross_block(t, rows, lo, hi),
                                 1 + family.n_gaps)  # (1 + K - 2) x p
        grad = np.concatenate((GC[0], rows.grad_cuts @ J))
        return grad, self._assemble(gaps, rows, self.design.gram(rows.h), GC[1:])

    def value_grad_hess(self, theta: np.ndarray, eta: np.ndarray, single: bool = False
                        ) -> tuple[float, np.ndarray, np.ndarray]:
        rows = self.row_terms(theta, eta)
        grad, H = self._derivatives(theta, rows)
        f, grad = self.penalty.add_gradient(theta, rows.loss, grad)
        H = self.penalty.add_hessian(theta, H)
        return f, grad, H if self.chunk else descent_hessian(H, grad, self.design.n_params)

    def hessp(self, theta: np.ndarray, eta: np.ndarray, v: np.ndarray, single: bool = False
              ) -> np.ndarray:
        """``H v`` with the exact Hessian (formed: the ordinal model is fitted by
        Newton, whose Hessian this is; truncated Newton would call it per CG step)."""
        return self.observed_hessian(theta, eta) @ v

    def observed_hessian(self, theta: np.ndarray, eta: np.ndarray) -> np.ndarray:
        """The exact Hessian (the log gaps' gradient term with its sign)."""
        return self.penalty.add_hessian(theta, self._derivatives(theta, self.row_terms(theta,
                                                                                    eta))[1])

    def row_scores(self, theta: np.ndarray, eta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(g, G)``: each row's ``d loss_i / d eta_i`` and its gradient in the log gaps
        (n x (K-2)), weighted (robust covariances)."""
        rows = self.row_terms(theta, eta)
        K, n = self.family.n_classes, self.t.size
        D = np.zeros((n, K + 1))
        D[np.arange(n), self.t + 1] = rows.upper
        D[np.arange(n), self.t] = rows.lower
        J = self.family.gaps_jacobian(self._split(theta)[1])
        return rows.g, D[:, 1:K] @ J

    # The coordinate-wise solvers' questions: the ordinal model is fitted by Newton only.
    def coordinate_derivatives(self, eta: np.ndarray, c: np.ndarray, block: int = 0
                               ) -> tuple[float, float]:
        raise NotImplementedError("the ordinal model is fitted by Newton's method")

    def block_direction(self, c: np.ndarray, block: int = 0) -> np.ndarray:
        raise NotImplementedError("the ordinal model is fitted by Newton's method")

    def recentre(self, theta: np.ndarray) -> np.ndarray:
        """No direction leaves the likelihood flat (the cut-points pin the location)."""
        return theta

    def row_certainty(self, eta: np.ndarray) -> np.ndarray:
        raise NotImplementedError("the ordinal model's separation is read off its cut-points")

    def data_range_basis(self) -> np.ndarray:
        """The data's range in ``[b, w]``; the log gaps are always seen."""
        return block_diag(_range_basis(self.design, self.sample_weight),
                          np.eye(self.family.n_gaps))
