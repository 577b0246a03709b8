"""The penalised GLM objective that every solver minimises.

    f(theta) = sum_i s_i loss(y_i, eta_i) + 1/2 (theta - m)^T P (theta - m),
    eta = [1, X] theta,

where ``P`` is the precision of a Gaussian prior ``N(m, P^-1)`` (``P = 0``:
maximum likelihood). Solvers see only n-vectors (``eta``) and p-sized
results; the data are read through :class:`~problin._core.model.design.Design`.
"""
import numpy as np
import scipy.sparse as sp

from ..blocks import ELEMENTWISE_ROWS, map_rows
from .families import SoftmaxState

__all__ = ["GLMObjective", "SoftmaxObjective", "PriorPrecision"]


class PriorPrecision:
    """Precision matrix of a Gaussian prior, kept structured: diagonal plus rank one terms.

    ``P = diag(d) + sum_i c_i v_i v_i^T``. A dense p x p matrix would not fit
    in memory for wide data (p = 50,001 is 20 GB); products cost O(p) here.
    A 2-D array is also accepted and used as given.
    """

    def __init__(self, diag, rank_one=()):
        diag = np.asarray(diag, dtype=np.float64)
        self.dense_matrix = diag if diag.ndim == 2 else None
        self.diag = None if diag.ndim == 2 else diag
        self.rank_one = [(np.asarray(v, dtype=np.float64), float(c)) for v, c in rank_one]

    def matvec(self, r):
        out = self.dense_matrix @ r if self.dense_matrix is not None else self.diag * r
        for v, c in self.rank_one:
            out = out + c * v * float(v @ r)
        return out

    def quad(self, r):
        """``r^T P r``."""
        return float(r @ self.matvec(r))

    def add_to(self, H):
        """``H + P`` as a new dense matrix."""
        H = H + self.dense_matrix if self.dense_matrix is not None else H.copy()
        if self.diag is not None:
            H[np.diag_indices_from(H)] += self.diag
        for v, c in self.rank_one:
            H += c * np.outer(v, v)
        return H


class _GaussianPrior:
    """The prior term ``1/2 (theta - m)^T P (theta - m)`` shared by every objective."""

    n_blocks = 1

    def _init_prior(self, prior_precision, prior_mean):
        p = self.n_params
        if prior_precision is not None and not isinstance(prior_precision, PriorPrecision):
            prior_precision = PriorPrecision(prior_precision)
        self.P = prior_precision
        self.m = np.zeros(p) if prior_mean is None else np.asarray(prior_mean, dtype=np.float64)

    @property
    def total_weight(self):
        if self.sample_weight is None:
            return float(self.design.n_samples)
        return float(np.sum(self.sample_weight))

    def penalty(self, theta):
        if self.P is None:
            return 0.0
        return 0.5 * self.P.quad(theta - self.m)

    def _add_prior(self, theta, f, grad, hess=None):
        if self.P is None:
            return f, grad, hess
        Pr = self.P.matvec(theta - self.m)
        f = f + 0.5 * float((theta - self.m) @ Pr)
        grad = grad + Pr
        if hess is not None:
            hess = self.P.add_to(hess)
        return f, grad, hess


class GLMObjective(_GaussianPrior):
    """Negative log-posterior of a GLM with a Gaussian prior on the parameters.

    Parameters
    ----------
    design : Design
    family : a family from ``problin._core.model.families``
    y : ndarray of shape (n,)
    sample_weight : ndarray of shape (n,) or None
    prior_precision : ndarray of shape (p, p) or None
    prior_mean : ndarray of shape (p,) or None (zero)
    information : {"observed", "expected"}
        Curvature used for the Hessian (Newton vs Fisher scoring).
    """

    def __init__(self, design, family, y, sample_weight=None, prior_precision=None,
                 prior_mean=None, information="observed"):
        self.design = design
        self.family = family
        self.y = np.asarray(y, dtype=np.float64)
        self.sample_weight = sample_weight
        self.n_params = design.n_params
        self._init_prior(prior_precision, prior_mean)
        self.information = information
        # Expected information is exact only for canonical links.
        self.exact_hessian = information == "observed" or getattr(family, "canonical", False)

    def linear_predictor(self, theta):
        return self.design.matvec(theta)

    def subsample(self, rows):
        """The same objective on a subset of rows, weights scaled to the full total."""
        return GLMObjective(self.design.subsample(rows), self.family, self.y[rows],
                            _scaled_weights(self, rows), self.P, self.m, self.information)

    def value(self, theta, eta):
        """``f(theta)`` given its linear predictor ``eta`` (no pass over X).

        Evaluates (and keeps) the per-row derivatives too: a line search's
        accepted trial point is where the next gradient is needed.
        """
        return self.row_derivatives(eta)[0] + self.penalty(theta)

    def row_derivatives(self, eta):
        """Loss and per-row gradient / curvature weights at ``eta`` (cached for
        the most recent ``eta`` array)."""
        cached = getattr(self, "_cached", None)
        if cached is not None and cached[0] is eta:
            return cached[1]
        self._cached = cached = None  # free the old derivatives before building new ones
        y, sw, info = self.y, self.sample_weight, self.information
        g, h = np.empty(eta.shape[0]), np.empty(eta.shape[0])

        def chunk(lo, hi):
            return self.family.derivatives(y[lo:hi], eta[lo:hi],
                                           None if sw is None else sw[lo:hi], info)

        out = (map_rows(chunk, eta.shape[0], (g, h)), g, h)
        self._cached = (eta, out)
        return out

    def value_grad_hess(self, theta, eta, single=False):
        """``(f, gradient, Hessian)`` at ``theta``: one fused pass over X
        (``single``: Hessian products in float32)."""
        loss, g, h = self.row_derivatives(eta)
        grad, hess = self.design.grad_and_gram(g, h, single)
        return self._add_prior(theta, loss, grad, hess)

    def advance(self, theta, eta, d, gram=None):
        """The point ``theta + d`` in one pass: ``(eta_new, f, gradient, Hessian)``.

        ``eta`` is the linear predictor at ``theta`` (None: ``theta`` is zero).
        ``gram``: None (no Hessian), "single" or "double" (see
        ``value_grad_hess``). The row derivatives at ``eta_new`` are kept for
        the next ``value``/``gradient`` at that point; their arrays are reused
        by the next ``advance`` (a fresh n-vector costs a page fault per 4 KB,
        ~10 % of a large fit), so they are valid until then.
        """
        cached, self._cached = getattr(self, "_cached", None), None
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
        f, grad, hess = self._add_prior(theta + d, loss, grad, hess)
        return eta_new, f, grad, hess

    def _block_derivatives(self, lo, hi, eta_b):
        """``(loss, g, h)`` of rows ``lo:hi`` at their linear predictor ``eta_b``."""
        sw = self.sample_weight
        return self.family.derivatives(self.y[lo:hi], eta_b,
                                       None if sw is None else sw[lo:hi], self.information)

    def summed_derivatives(self, theta, gram=None):
        """``(f, gradient, Hessian)`` at ``theta`` in one pass that keeps no
        n-vector (for a chunk's share of a distributed pass; dense X)."""
        if sp.issparse(self.design.X):
            return self.advance(np.zeros_like(theta), None, theta, gram)[1:]
        _, loss, _, _, grad, hess = self.design.advance(None, theta, self._block_derivatives,
                                                        gram, keep=False)
        return self._add_prior(theta, loss, grad, hess)

    def value_grad(self, theta, eta):
        """``(f, gradient)`` at ``theta``: one ``X^T v`` pass."""
        loss, g, _ = self.row_derivatives(eta)
        f, grad, _ = self._add_prior(theta, loss, self.design.rmatvec(g))
        return f, grad

    def hessp(self, theta, eta, v):
        """Hessian-vector product ``H v`` at ``theta``: two passes, no p x p matrix."""
        _, _, h = self.row_derivatives(eta)
        Hv = self.design.rmatvec(h * self.design.matvec(v))
        return Hv if self.P is None else Hv + self.P.matvec(v)

    def coordinate_derivatives(self, eta, c, block=0):
        """First and second derivative of the data term along ``eta += delta c``."""
        _, g, h = self.row_derivatives(eta)
        return float(c @ g), float(h @ np.square(c))

    def block_direction(self, c, block=0):
        """The change of ``eta`` when one coefficient moves along column ``c``."""
        return c

    def recentre(self, theta):
        """No invariant directions in a single-block model."""
        return theta

    def data_range_basis(self):
        """Orthonormal basis of the parameter directions the data can see."""
        return _range_basis(self.design, self.sample_weight)

    def observed_hessian(self, theta, eta):
        """Hessian with the observed information, whatever ``information`` says."""
        _, _, h = self.family.derivatives(self.y, eta, self.sample_weight, "observed")
        hess = self.design.gram(h)
        return hess if self.P is None else self.P.add_to(hess)


class SoftmaxObjective(_GaussianPrior):
    """Negative log-posterior of softmax regression.

    ``theta`` stacks one parameter block ``[intercept, coef...]`` per free
    class (class-major); ``eta = [1, X] Theta^T`` is n x M.
    """

    exact_hessian = True

    def __init__(self, design, family, t, sample_weight=None, prior_precision=None,
                 prior_mean=None):
        self.design = design
        self.family = family
        self.t = np.asarray(t, dtype=np.intp)
        self.sample_weight = sample_weight
        self.n_blocks = family.n_free
        self.n_params = self.n_blocks * design.n_params
        self._init_prior(prior_precision, prior_mean)

    def subsample(self, rows):
        """The same objective on a subset of rows, weights scaled to the full total."""
        return SoftmaxObjective(self.design.subsample(rows), self.family, self.t[rows],
                                _scaled_weights(self, rows), self.P, self.m)

    def _blocks(self, theta):
        return np.asarray(theta, dtype=np.float64).reshape(self.n_blocks, self.design.n_params)

    def linear_predictor(self, theta):
        return self.design.matmat(self._blocks(theta))

    def value(self, theta, eta):
        """``f(theta)``; keeps the row derivatives for the next gradient (see GLMObjective)."""
        return self.row_derivatives(eta)[0] + self.penalty(theta)

    def row_derivatives(self, eta):
        """Loss, gradient weights and probabilities at ``eta`` (cached for the
        most recent ``eta`` array).

        The state's n x M probability array is reused by the next call at
        another ``eta`` (a fresh array costs a page fault per 4 KB: ~5 % of
        a large softmax fit), so a state is valid until then.
        """
        cached = getattr(self, "_cached", None)
        if cached is not None and cached[0] is eta:
            return cached[1]
        self._cached = None
        P = cached[1][1].P if cached is not None else None
        if P is None or P.shape != eta.shape:
            P = np.empty(eta.shape)
        cached = None
        t, sw = self.t, self.sample_weight
        parts = []

        def chunk(lo, hi):  # writes P[lo:hi] in place
            loss, state = self.family.derivatives(t[lo:hi], eta[lo:hi],
                                                  None if sw is None else sw[lo:hi],
                                                  out=P[lo:hi])
            parts.append((lo, state))
            return (loss,)

        loss = map_rows(chunk, eta.shape[0], (), rows=max(1024, 2 * ELEMENTWISE_ROWS // P.shape[1]))
        parts.sort(key=lambda part: part[0])
        free_t = t - 1 if self.family.contrast else t
        out = (loss, SoftmaxState.concatenate(P, parts, free_t, sw))
        self._cached = (eta, out)
        return out

    def value_grad(self, theta, eta):
        loss, state = self.row_derivatives(eta)
        grad = self.design.rmatmat(state.gradient_weights, self.n_blocks).ravel()
        f, grad, _ = self._add_prior(theta, loss, grad)
        return f, grad

    def hessp(self, theta, eta, v):
        """``H v`` in one fused pass over X (see ``Design.softmax_hessp``)."""
        _, state = self.row_derivatives(eta)
        Hv = self.design.softmax_hessp(state.P, self.sample_weight, self._blocks(v)).ravel()
        return Hv if self.P is None else Hv + self.P.matvec(v)

    def value_grad_hess(self, theta, eta, single=False):
        loss, state = self.row_derivatives(eta)
        hess = self.design.softmax_gram(state, self.sample_weight, single)
        grad = self.design.rmatmat(state.gradient_weights, self.n_blocks).ravel()
        return self._add_prior(theta, loss, grad, hess)

    def coordinate_derivatives(self, eta, c, block=0):
        """Derivatives along ``eta[:, block] += delta c`` (curvature ``p_k (1 - p_k)``)."""
        _, state = self.row_derivatives(eta)
        curv = state.P[:, block] * state.complements()[:, block]
        if self.sample_weight is not None:
            curv = curv * self.sample_weight
        return float(c @ state.gradient_weights()[:, block]), float(curv @ np.square(c))

    def recentre(self, theta):
        """Exact minimiser along the directions the likelihood cannot see.

        With all K blocks free, shifting every class's parameters by the same
        vector changes no probability, only the prior; for a prior that is
        the same on every block, centring the blocks is its minimum there.
        Coordinate-wise methods crawl along these flat directions otherwise.
        """
        if self.family.contrast:
            return theta
        Theta = self._blocks(theta)
        return (Theta - Theta.mean(axis=0)).ravel()

    def data_range_basis(self):
        """The data's range basis in every class block (prior invariances excluded)."""
        return np.kron(np.eye(self.n_blocks), _range_basis(self.design, self.sample_weight))

    def block_direction(self, c, block=0):
        D = np.zeros((self.design.n_samples, self.n_blocks))
        D[:, block] = c
        return D

    def observed_hessian(self, theta, eta):
        return self.value_grad_hess(theta, eta)[2]


def _range_basis(design, sample_weight, rtol=1e-10):
    """Eigenvectors of ``[1,X]^T diag(s > 0) [1,X]`` with non-negligible eigenvalues."""
    used = np.ones(design.n_samples) if sample_weight is None else \
        (np.asarray(sample_weight) > 0).astype(np.float64)
    return range_basis(design.gram(used), rtol)


def range_basis(G, rtol=1e-10):
    """Eigenvectors of the Gram matrix ``G`` with non-negligible eigenvalues."""
    vals, vecs = np.linalg.eigh(G)
    return vecs[:, vals > rtol * max(float(vals[-1]), 0.0)]


def _scaled_weights(objective, rows):
    """Sample weights of ``rows``, scaled so that they sum to the full total weight."""
    sw = np.ones(rows.size) if objective.sample_weight is None else objective.sample_weight[rows]
    return sw * (objective.total_weight / max(float(sw.sum()), 1e-300))

