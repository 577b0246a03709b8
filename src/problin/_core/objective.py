"""The penalised GLM objective that every solver minimises.

    f(theta) = sum_i s_i loss(y_i, eta_i) + 1/2 (theta - m)^T P (theta - m),
    eta = [1, X] theta,

where ``P`` is the precision of a Gaussian prior ``N(m, P^-1)`` (``P = 0``:
maximum likelihood). Solvers see only n-vectors (``eta``) and p-sized
results; the data are read through :class:`~problin._core.design.Design`.
"""
import numpy as np

__all__ = ["GLMObjective"]


class GLMObjective:
    """Negative log-posterior of a GLM with a Gaussian prior on the parameters.

    Parameters
    ----------
    design : Design
    family : a family from ``problin._core.families``
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
        p = design.n_params
        self.n_params = p
        self.P = None if prior_precision is None else np.asarray(prior_precision, dtype=np.float64)
        self.m = np.zeros(p) if prior_mean is None else np.asarray(prior_mean, dtype=np.float64)
        self.information = information
        # Expected information is exact only for canonical links.
        self.exact_hessian = information == "observed" or getattr(family, "canonical", False)

    @property
    def total_weight(self):
        if self.sample_weight is None:
            return float(self.design.n_samples)
        return float(np.sum(self.sample_weight))

    def linear_predictor(self, theta):
        return self.design.matvec(theta)

    def penalty(self, theta):
        if self.P is None:
            return 0.0
        r = theta - self.m
        return 0.5 * float(r @ self.P @ r)

    def value(self, theta, eta):
        """``f(theta)`` given its linear predictor ``eta`` (no pass over X)."""
        return self.family.loss(self.y, eta, self.sample_weight) + self.penalty(theta)

    def row_derivatives(self, eta):
        """Loss and per-row gradient / curvature weights at ``eta``."""
        return self.family.derivatives(self.y, eta, self.sample_weight, self.information)

    def _add_prior(self, theta, f, grad, hess=None):
        if self.P is None:
            return f, grad, hess
        r = theta - self.m
        f = f + 0.5 * float(r @ self.P @ r)
        grad = grad + self.P @ r
        if hess is not None:
            hess = hess + self.P
        return f, grad, hess

    def value_grad_hess(self, theta, eta):
        """``(f, gradient, Hessian)`` at ``theta``: one fused pass over X."""
        loss, g, h = self.row_derivatives(eta)
        grad, hess = self.design.grad_and_gram(g, h)
        return self._add_prior(theta, loss, grad, hess)

    def value_grad(self, theta, eta):
        """``(f, gradient)`` at ``theta``: one ``X^T v`` pass."""
        loss, g, _ = self.row_derivatives(eta)
        f, grad, _ = self._add_prior(theta, loss, self.design.rmatvec(g))
        return f, grad

    def observed_hessian(self, theta, eta):
        """Hessian with the observed information, whatever ``information`` says."""
        _, _, h = self.family.derivatives(self.y, eta, self.sample_weight, "observed")
        hess = self.design.gram(h)
        return hess if self.P is None else hess + self.P
