"""The response distributions of the GLM families (exponential dispersion models).

A distribution gives what does not depend on the link: the variance function
``V(mu)`` and its derivative, the unit deviance ``d(y, mu)`` (McCullagh & Nelder 1989,
§2.3: ``2 [l(y; y) - l(mu; y)]`` per unit of weight and dispersion), the per-row
log-likelihood with every normalising constant, in statsmodels' convention
(``family.loglike_obs(endog, mu, var_weights, scale)``: the variance of row ``i`` is
``scale V(mu_i) / var_weights_i``), the valid range of ``y`` and of the mean, start
values, and whether the dispersion is fixed at 1 or estimated.

Unit deviances are written with ``kl_div(a, b) = a log(a / b) - a + b`` (scipy), which
is exact at ``a = 0`` and never forms ``a / b`` for the logarithm by itself:
Poisson ``2 kl_div(y, mu)``, Gamma ``2 kl_div(1, y / mu)``, binomial
``2 [kl_div(y, mu) + kl_div(1 - y, 1 - mu)]``, NB2
``2 [kl_div(y, mu) - kl_div(y + 1/a, mu + 1/a)]``.

This module names them (``DISTRIBUTIONS``, :func:`make_distribution`); the base class and
the shared kernels are in :mod:`.distribution_base`, the distributions by kind of response
in :mod:`.distributions_continuous` and :mod:`.distributions_counts`.
"""
from .distribution_base import Distribution, kl_div, log_factorial, offending_rows
from .distributions_continuous import Gamma, Gaussian, InverseGaussian, Tweedie
from .distributions_counts import (Bernoulli, Binomial, NegativeBinomial, Poisson,
                                  binomial_proportions)

__all__ = ["Distribution", "Gaussian", "Poisson", "Gamma", "InverseGaussian", "Tweedie",
           "Binomial", "Bernoulli", "NegativeBinomial", "DISTRIBUTIONS", "make_distribution",
           "binomial_proportions", "offending_rows", "kl_div", "log_factorial"]


#: The distributions by name.
DISTRIBUTIONS: dict[str, type[Distribution]] = {d.name: d for d in (
    Gaussian, Poisson, Gamma, InverseGaussian, Tweedie, Binomial, Bernoulli,
    NegativeBinomial)}


def make_distribution(name: str, **parameters: float) -> Distribution:
    """The distribution called ``name`` (``power=`` for the Tweedie, ``alpha=`` for the
    negative binomial); a ValueError lists the known names."""
    kind = DISTRIBUTIONS.get(name.lower().replace("-", "_") if isinstance(name, str) else "")
    if kind is None:
        raise ValueError(f"unknown family {name!r}; the families are "
                         f"{', '.join(sorted(DISTRIBUTIONS))}")
    return kind(**parameters)
