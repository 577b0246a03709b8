"""The distributions of counts and proportions: Poisson, binomial (successes out of
trials), Bernoulli, and the NB2 negative binomial.

Each has its dispersion fixed at 1 (``fixed_dispersion``: the binomial's log-likelihood
ignores a scale, as statsmodels' does; the negative binomial's ``alpha`` carries the extra
variance), and log-likelihoods with the counts' normalising constants (``log y!``, the
binomial coefficient).
"""
import numpy as np
from scipy import special

from ..types import FloatArray
from .distribution_base import (BoolArray, Distribution, _float, kl_div, log_factorial,
                                offending_rows)

__all__ = ["Poisson", "Binomial", "Bernoulli", "NegativeBinomial", "binomial_proportions"]


class Poisson(Distribution):
    name = "poisson"
    default_link = canonical_link = "log"
    links = ("log", "identity", "sqrt")
    fixed_dispersion = True
    y_rule = "y >= 0 (counts)"
    variance_power = 1.0

    def invalid_y(self, y: FloatArray) -> BoolArray:
        return ~(y >= 0) | ~np.isfinite(y)

    def variance(self, mu: FloatArray) -> FloatArray:
        return _float(mu).copy()

    def variance_derivative(self, mu: FloatArray) -> FloatArray:
        return np.ones_like(_float(mu))

    def unit_deviance(self, y: FloatArray, mu: FloatArray) -> FloatArray:
        return 2.0 * kl_div(_float(y), mu)

    def log_likelihood(self, y: FloatArray, mu: FloatArray,
                       var_weights: FloatArray | float = 1.0,
                       scale: float = 1.0) -> FloatArray:
        y = _float(y)
        return _float(var_weights) / scale * (special.xlogy(y, mu) - mu
                                              - log_factorial(y))


class Binomial(Distribution):
    """Successes out of trials: ``y`` is the proportion of successes and the row's
    variance weight is its number of trials (statsmodels' two-column ``endog``). The
    log-likelihood is that of the count ``n y`` of ``n`` trials, binomial coefficient
    included, with ``n = var_weights``."""

    name = "binomial"
    default_link = canonical_link = "logit"
    links = ("logit", "probit", "cloglog", "loglog")
    fixed_dispersion = True
    mean_high = 1.0
    y_rule = "proportions 0 <= y <= 1 (counts of successes: fit(X, successes, trials=n))"
    has_trials = True

    def invalid_y(self, y: FloatArray) -> BoolArray:
        return ~((y >= 0) & (y <= 1))

    def variance(self, mu: FloatArray) -> FloatArray:
        mu = _float(mu)
        return mu * (1.0 - mu)

    def variance_derivative(self, mu: FloatArray) -> FloatArray:
        return 1.0 - 2.0 * _float(mu)

    def unit_deviance(self, y: FloatArray, mu: FloatArray) -> FloatArray:
        y, mu = _float(y), _float(mu)
        return 2.0 * (special.kl_div(y, mu) + special.kl_div(1.0 - y, 1.0 - mu))

    def log_likelihood(self, y: FloatArray, mu: FloatArray,
                       var_weights: FloatArray | float = 1.0,
                       scale: float = 1.0) -> FloatArray:
        n = _float(var_weights)
        k = _float(y) * n  # successes
        return (special.gammaln(n + 1.0) - special.gammaln(k + 1.0)
                - special.gammaln(n - k + 1.0)
                + special.xlogy(k, mu) + special.xlog1py(n - k, -_float(mu)))  # (no scale:
        # statsmodels' binomial log-likelihood ignores it, as a quasi-likelihood's would)

    def start_mean(self, y: FloatArray) -> FloatArray:
        """``(y + 1/2) / 2`` (statsmodels' binomial ``starting_mu``)."""
        return (_float(y) + 0.5) / 2.0

    def from_trials(self, successes: FloatArray, trials: FloatArray
                    ) -> tuple[FloatArray, FloatArray]:
        """``(successes / trials, trials)``: proportions weighted by their trials
        (:func:`binomial_proportions`, which checks them)."""
        return binomial_proportions(successes, trials)


class Bernoulli(Binomial):
    """One trial per row: ``y`` in {0, 1}."""

    name = "bernoulli"
    y_rule = "y in {0, 1}"

    def invalid_y(self, y: FloatArray) -> BoolArray:
        return ~((y == 0) | (y == 1))


class NegativeBinomial(Distribution):
    """NB2: ``V(mu) = mu + alpha mu²`` with a known ``alpha > 0`` (a Poisson-Gamma
    mixture; Hilbe 2011). The dispersion is fixed at 1 (``alpha`` carries the extra
    variance)."""

    name = "negative_binomial"
    default_link = "log"
    links = ("log", "identity", "sqrt")
    fixed_dispersion = True
    y_rule = "y >= 0 (counts)"

    def __init__(self, alpha: float = 1.0) -> None:
        alpha = float(alpha)
        if not (alpha > 0 and np.isfinite(alpha)):
            raise ValueError(f"the negative binomial's alpha must be positive and finite, "
                             f"got {alpha!r}")
        self.alpha = alpha

    def __repr__(self) -> str:
        return f"NegativeBinomial(alpha={self.alpha!r})"

    def invalid_y(self, y: FloatArray) -> BoolArray:
        return ~(y >= 0) | ~np.isfinite(y)

    def variance(self, mu: FloatArray) -> FloatArray:
        mu = _float(mu)
        return mu + self.alpha * np.square(mu)

    def variance_derivative(self, mu: FloatArray) -> FloatArray:
        return 1.0 + 2.0 * self.alpha * _float(mu)

    def unit_deviance(self, y: FloatArray, mu: FloatArray) -> FloatArray:
        y, k = _float(y), 1.0 / self.alpha
        return 2.0 * (special.kl_div(y, mu) - special.kl_div(y + k, mu + k))

    def log_likelihood(self, y: FloatArray, mu: FloatArray,
                       var_weights: FloatArray | float = 1.0,
                       scale: float = 1.0) -> FloatArray:
        y, mu, a = _float(y), _float(mu), self.alpha
        k = 1.0 / a
        ll = (special.xlogy(y, a * mu) - (y + k) * np.log1p(a * mu)
              + special.gammaln(y + k) - special.gammaln(k) - special.gammaln(y + 1.0))
        return _float(var_weights) / scale * ll


def binomial_proportions(successes: FloatArray, trials: FloatArray
                         ) -> tuple[FloatArray, FloatArray]:
    """``(successes / trials, trials)`` after checking ``trials > 0`` and
    ``0 <= successes <= trials`` (a ValueError naming the first offending rows)."""
    k, n = _float(successes), _float(trials)
    bad = ~(n > 0) | ~np.isfinite(n)
    if bad.any():
        raise ValueError(f"binomial trials must be positive: {offending_rows(bad, n, 'trials')}")
    bad = ~((k >= 0) & (k <= n))
    if bad.any():
        raise ValueError("binomial successes must lie between 0 and the trials: "
                         + ", ".join(f"row {i}: {k[i]:g} of {n[i]:g}"
                                     for i in np.flatnonzero(bad)[:5]))
    return k / n, n
