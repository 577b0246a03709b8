"""GLM families: the per-row loss and its derivatives in the linear predictor.

A family turns targets ``y`` and linear predictors ``eta`` into

* ``loss``: the summed negative log-likelihood ``-sum_i s_i log p(y_i | eta_i)``,
* ``grad``: per-row weights ``g_i = d loss_i / d eta_i`` (so ``X^T g`` is the gradient),
* ``curv``: per-row weights ``h_i = d^2 loss_i / d eta_i^2`` (so ``X^T diag(h) X``
  is the Hessian); ``information="expected"`` gives Fisher scoring weights.

``s_i`` are sample weights. Nothing here touches X: the Newton engine and the
design operator combine these n-vectors with the data by row blocks.
"""
import numpy as np

from .numerics import (inverse_mills, log_probit_cdf, log_sigmoid, probit_cdf,
                       probit_curvature, sigmoid)

__all__ = ["BernoulliLogit", "BernoulliProbit", "FAMILIES"]


def _weighted(v, sample_weight):
    return v if sample_weight is None else v * sample_weight


def _sign(y):
    """Map targets in {0, 1} to signs in {-1, +1}."""
    return 2.0 * y - 1.0


class _Bernoulli:
    """Binary targets ``y in {0, 1}`` with ``p(y=1 | eta) = F(eta)``."""

    def log_proba(self, eta):
        """``(n, 2)`` array of ``[log p(y=0), log p(y=1)]``, in log space."""
        return np.column_stack([self.log_cdf(-eta), self.log_cdf(eta)])

    def loss(self, y, eta, sample_weight=None):
        return -float(np.sum(_weighted(self.log_cdf(_sign(y) * eta), sample_weight)))

    def derivatives(self, y, eta, sample_weight=None, information="observed"):
        """Return ``(loss, g, h)``: summed loss and per-row gradient/curvature weights."""
        if information not in ("observed", "expected"):
            raise ValueError(f"information must be 'observed' or 'expected', got {information!r}")
        loss, g, h = self._derivatives(y, eta, information)
        if sample_weight is not None:
            loss, g, h = loss * sample_weight, g * sample_weight, h * sample_weight
        return -float(np.sum(loss)), g, h


class BernoulliLogit(_Bernoulli):
    """Logistic regression: ``p(y=1 | eta) = sigmoid(eta)`` (canonical link)."""

    name = "logit"
    canonical = True

    def log_cdf(self, eta):
        return log_sigmoid(eta)

    def mean(self, eta):
        return sigmoid(eta)

    def link(self, p):
        return np.log(p) - np.log1p(-p)

    def _derivatives(self, y, eta, information):
        # Canonical link: observed and expected information coincide.
        p = sigmoid(eta)
        loglik = log_sigmoid(_sign(y) * eta)
        curv = p * sigmoid(-eta)  # p (1 - p) without cancellation
        return loglik, p - y, curv


class BernoulliProbit(_Bernoulli):
    """Probit regression: ``p(y=1 | eta) = Phi(eta)``, the standard normal CDF."""

    name = "probit"
    canonical = False

    def log_cdf(self, eta):
        return log_probit_cdf(eta)

    def mean(self, eta):
        return probit_cdf(eta)

    def link(self, p):
        from scipy.special import ndtri
        return ndtri(p)

    def _derivatives(self, y, eta, information):
        s = _sign(y)
        z = s * eta
        mills = inverse_mills(z)  # d log Phi(z) / dz
        if information == "observed":
            # -d^2 log Phi(z) / dz^2 = lambda(z) (z + lambda(z)) >= 0 (log-concavity)
            curv = probit_curvature(z)
        else:
            # Fisher information phi^2 / (Phi (1 - Phi)) = lambda(eta) lambda(-eta).
            curv = inverse_mills(eta) * inverse_mills(-eta)
        return log_probit_cdf(z), -s * mills, curv


FAMILIES = {"logit": BernoulliLogit, "probit": BernoulliProbit}
