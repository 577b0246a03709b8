"""Link functions ``eta = g(mu)`` of the GLM families, and their inverses.

A link maps a mean ``mu`` to the linear predictor ``eta``; the families need its
inverse and the inverse's first two derivatives in ``eta`` (McCullagh & Nelder 1989,
§2.2.2). Each link declares the open interval of ``eta`` on which its inverse is
defined and monotone (``eta_low``, ``eta_high``): outside it the family's loss is
``+inf``. The inverse is evaluated without warnings: an overflow becomes ``inf``, and
the family treats a non-finite mean as outside the valid range.

The links of binary means (logit, probit, cloglog, loglog) are :class:`BinaryLink`\\ s:
they also give ``log F(eta)`` and ``log(1 - F(eta))`` with their derivatives in log
space, so that Bernoulli and binomial losses keep their digits where ``mu`` rounds to
0 or 1 (the logit's ``log_sigmoid``, the probit's ``log_ndtr``, the cloglog's
``log(1 - exp(-u))`` by ``log1mexp``).
"""
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray
from scipy import special

from ..numerics import inverse_mills, log_normal_pdf, probit_curvature
from ..types import FloatArray

__all__ = ["Link", "BinaryLink", "Identity", "Log", "Logit", "Probit", "CLogLog", "LogLog",
           "InversePower", "InverseSquared", "Sqrt", "LINKS", "make_link", "log1mexp"]

_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)
_LN2 = float(np.log(2.0))


def _float(a: FloatArray | float) -> FloatArray:
    return np.asarray(a, dtype=np.float64)


def log1mexp(u: FloatArray) -> FloatArray:
    """``log(1 - exp(-u))`` for ``u >= 0`` without cancellation (Mächler 2012: by
    ``log(-expm1(-u))`` below ``log 2``, ``log1p(-exp(-u))`` above)."""
    u = _float(u)
    with np.errstate(divide="ignore"):  # u = 0: log 0 = -inf, the exact value
        return np.where(u < _LN2, np.log(-np.expm1(-np.minimum(u, _LN2))),
                        np.log1p(-np.exp(-np.maximum(u, _LN2))))


def _u_plus_expm1_neg(u: FloatArray) -> FloatArray:
    """``u + expm1(-u) = u²/2 - u³/6 + ...`` for ``u >= 0``: by its series below 0.5
    (the difference loses ``log10(2/u)`` digits there), directly above."""
    small = u < 0.5
    out = u + np.expm1(-u)
    if small.any():
        s = u[small]
        term, total = np.square(s) / 2.0, np.zeros_like(s)
        for k in range(3, 21):  # |term| < 0.5^20 / 20! relative: converged
            total += term
            term = term * (-s / k)
        out[small] = total
    return out


class Link:
    """A link ``eta = g(mu)``: the base of every link (no behaviour of its own).

    ``eta_low``, ``eta_high``: the open interval of linear predictors whose inverse is
    defined and monotone; ``mean_low``, ``mean_high``: the open interval of means the
    link maps (its inverse's image).
    """

    name: ClassVar[str]
    eta_low: ClassVar[float] = -np.inf
    eta_high: ClassVar[float] = np.inf
    mean_low: ClassVar[float] = -np.inf
    mean_high: ClassVar[float] = np.inf

    def __call__(self, mu: FloatArray) -> FloatArray:
        """``eta = g(mu)``."""
        raise NotImplementedError  # pragma: no cover - abstract

    def link(self, mu: FloatArray) -> FloatArray:
        """``eta = g(mu)`` (the same as calling the link)."""
        return self(mu)

    def derivative(self, mu: FloatArray) -> FloatArray:
        """``d eta / d mu = g'(mu)``."""
        return 1.0 / self.inverse_derivative(self(mu))

    def inverse(self, eta: FloatArray) -> FloatArray:
        """``mu = g^-1(eta)``."""
        return self.inverse_derivatives(eta)[0]

    def inverse_derivative(self, eta: FloatArray) -> FloatArray:
        """``d mu / d eta``."""
        return self.inverse_derivatives(eta)[1]

    def inverse_second_derivative(self, eta: FloatArray) -> FloatArray:
        """``d² mu / d eta²``."""
        return self.inverse_derivatives(eta)[2]

    def inverse_derivatives(self, eta: FloatArray
                            ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``(mu, d mu / d eta, d² mu / d eta²)`` at once (they share their exponentials).
        Overflow gives ``inf`` without a warning."""
        raise NotImplementedError  # pragma: no cover - abstract

    def in_domain(self, eta: FloatArray) -> NDArray[np.bool_]:
        """Rows whose ``eta`` lies in the link's open domain (and is not NaN)."""
        eta = _float(eta)
        return (eta > self.eta_low) & (eta < self.eta_high)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))


class Identity(Link):
    name = "identity"

    def __call__(self, mu: FloatArray) -> FloatArray:
        return _float(mu).copy()

    def inverse_derivatives(self, eta: FloatArray
                            ) -> tuple[FloatArray, FloatArray, FloatArray]:
        eta = _float(eta)
        return eta.copy(), np.ones_like(eta), np.zeros_like(eta)


class Log(Link):
    name = "log"
    mean_low = 0.0

    def __call__(self, mu: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore"):  # mu = 0 -> -inf
            return np.log(_float(mu))

    def inverse_derivatives(self, eta: FloatArray
                            ) -> tuple[FloatArray, FloatArray, FloatArray]:
        with np.errstate(over="ignore"):
            mu = np.exp(_float(eta))
        return mu, mu, mu


class InversePower(Link):
    """``eta = 1 / mu`` (the Gamma's canonical link, statsmodels' ``InversePower``)."""

    name = "inverse"

    def __call__(self, mu: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore"):
            return 1.0 / _float(mu)

    def inverse_derivatives(self, eta: FloatArray
                            ) -> tuple[FloatArray, FloatArray, FloatArray]:
        eta = _float(eta)
        with np.errstate(divide="ignore", over="ignore"):
            mu = 1.0 / eta
            d1 = -np.square(mu)
            return mu, d1, -2.0 * d1 * mu


class InverseSquared(Link):
    """``eta = 1 / mu²`` (the inverse Gaussian's canonical link), for ``eta > 0``."""

    name = "inverse_squared"
    eta_low = 0.0
    mean_low = 0.0

    def __call__(self, mu: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore", over="ignore"):
            return 1.0 / np.square(_float(mu))

    def inverse_derivatives(self, eta: FloatArray
                            ) -> tuple[FloatArray, FloatArray, FloatArray]:
        eta = _float(eta)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            mu = 1.0 / np.sqrt(eta)  # eta <= 0: nan or inf, outside the domain
            d1 = -0.5 * mu / eta  # -eta^(-3/2) / 2
            return mu, d1, -1.5 * d1 / eta  # 3/4 eta^(-5/2)


class Sqrt(Link):
    """``eta = sqrt(mu)``, for ``eta > 0`` (where its inverse ``eta²`` is monotone)."""

    name = "sqrt"
    eta_low = 0.0
    mean_low = 0.0

    def __call__(self, mu: FloatArray) -> FloatArray:
        return np.sqrt(_float(mu))

    def inverse_derivatives(self, eta: FloatArray
                            ) -> tuple[FloatArray, FloatArray, FloatArray]:
        eta = _float(eta)
        with np.errstate(over="ignore"):
            return np.square(eta), 2.0 * eta, np.full_like(eta, 2.0)


class BinaryLink(Link):
    """A link of a probability ``mu = F(eta)`` in (0, 1), with ``log F``, ``log(1 - F)``
    and their derivatives in ``eta``, and the Fisher information of one Bernoulli trial
    ``F'² / (F (1 - F))``, all without cancellation."""

    mean_low = 0.0
    mean_high = 1.0

    def log_cdf(self, eta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``(log F, d log F / d eta, d² log F / d eta²)``."""
        raise NotImplementedError  # pragma: no cover - abstract

    def log_sf(self, eta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``(log(1 - F), its first and second derivative in eta)``."""
        raise NotImplementedError  # pragma: no cover - abstract

    def fisher(self, eta: FloatArray) -> FloatArray:
        """``F'(eta)² / (F (1 - F))``: one trial's expected information."""
        raise NotImplementedError  # pragma: no cover - abstract

    def log_density(self, eta: FloatArray) -> FloatArray:
        """``log F'(eta)``, the log of ``d mu / d eta`` (``log F + log(d log F / d eta)``;
        ``-inf`` where it underflows): a probability's delta-method standard error in
        logs, finite far from the data."""
        lf, d1, _ = self.log_cdf(eta)
        with np.errstate(divide="ignore"):
            return lf + np.log(d1)


class Logit(BinaryLink):
    name = "logit"

    def __call__(self, mu: FloatArray) -> FloatArray:
        mu = _float(mu)
        with np.errstate(divide="ignore"):
            return np.log(mu) - np.log1p(-mu)

    def inverse_derivatives(self, eta: FloatArray
                            ) -> tuple[FloatArray, FloatArray, FloatArray]:
        eta = _float(eta)
        mu, rest = special.expit(eta), special.expit(-eta)
        d1 = mu * rest
        return mu, d1, d1 * (rest - mu)

    def log_cdf(self, eta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        eta = _float(eta)
        rest = special.expit(-eta)
        return special.log_expit(eta), rest, -rest * special.expit(eta)

    def log_sf(self, eta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        eta = _float(eta)
        mu = special.expit(eta)
        return special.log_expit(-eta), -mu, -mu * special.expit(-eta)

    def fisher(self, eta: FloatArray) -> FloatArray:
        eta = _float(eta)
        return special.expit(eta) * special.expit(-eta)

    def log_density(self, eta: FloatArray) -> FloatArray:
        eta = _float(eta)
        return special.log_expit(eta) + special.log_expit(-eta)


class Probit(BinaryLink):
    name = "probit"

    def __call__(self, mu: FloatArray) -> FloatArray:
        return special.ndtri(_float(mu))

    def inverse_derivatives(self, eta: FloatArray
                            ) -> tuple[FloatArray, FloatArray, FloatArray]:
        eta = _float(eta)
        density = _INV_SQRT_2PI * np.exp(-0.5 * np.square(eta))
        return special.ndtr(eta), density, -eta * density

    def log_cdf(self, eta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        eta = _float(eta)
        mills = inverse_mills(eta)  # phi / Phi, exact in the left tail
        return special.log_ndtr(eta), mills, -probit_curvature(eta, mills)

    def log_sf(self, eta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        value, d1, d2 = self.log_cdf(-_float(eta))
        return value, -d1, d2

    def fisher(self, eta: FloatArray) -> FloatArray:
        eta = _float(eta)
        return inverse_mills(eta) * inverse_mills(-eta)

    def log_density(self, eta: FloatArray) -> FloatArray:
        return log_normal_pdf(eta)


class CLogLog(BinaryLink):
    """``eta = log(-log(1 - mu))``: ``F(eta) = 1 - exp(-exp(eta))``."""

    name = "cloglog"

    def __call__(self, mu: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore"):
            return np.log(-np.log1p(-_float(mu)))

    def inverse_derivatives(self, eta: FloatArray
                            ) -> tuple[FloatArray, FloatArray, FloatArray]:
        eta = _float(eta)
        with np.errstate(over="ignore", invalid="ignore"):
            u = np.exp(eta)
            d1 = np.exp(eta - u)  # (eta - inf = -inf: 0)
            return -np.expm1(-u), d1, d1 * (1.0 - u)

    def log_cdf(self, eta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        # d log F = u / expm1(u) =: A; d² log F = A (1 - A e^u), and
        # 1 - A e^u = -(u + expm1(-u)) / (-expm1(-u)), by its series for small u.
        eta = _float(eta)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            u = np.exp(eta)
            a = np.where(u > 0, u / np.expm1(u), 1.0)  # (u = inf: 0; u = 0: 1)
            a = np.where(np.isnan(a), 0.0, a)
            ratio = np.where(u > 0, _u_plus_expm1_neg(u) / -np.expm1(-u), 0.0)
            ratio = np.where(np.isinf(u), np.inf, ratio)
            d2 = np.where(a > 0, -a * ratio, 0.0)
        return log1mexp(u), a, d2

    def log_sf(self, eta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        with np.errstate(over="ignore"):
            u = np.exp(_float(eta))
        return -u, -u, -u

    def fisher(self, eta: FloatArray) -> FloatArray:
        # u² / expm1(u): ~u as u -> 0, 0 once expm1(u) overflows (also where u or u²
        # do: every non-finite quotient is one of those limits, all 0)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            u = np.exp(_float(eta))
            out = np.square(u) / np.expm1(u)
        return np.where(np.isfinite(out), out, 0.0)


class LogLog(BinaryLink):
    """``eta = -log(-log(mu))``: ``F(eta) = exp(-exp(-eta))``, the cloglog mirrored
    (``F(eta) = 1 - F_cloglog(-eta)``)."""

    name = "loglog"
    _mirror = CLogLog()

    def __call__(self, mu: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore"):
            return -np.log(-np.log(_float(mu)))

    def inverse_derivatives(self, eta: FloatArray
                            ) -> tuple[FloatArray, FloatArray, FloatArray]:
        eta = _float(eta)
        _, d1, d2 = self._mirror.inverse_derivatives(-eta)
        with np.errstate(over="ignore"):  # exp(-exp(-eta)) directly: 1 - F_cloglog(-eta)
            return np.exp(-np.exp(-eta)), d1, -d2  # would lose the small means' digits

    def log_cdf(self, eta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        value, d1, d2 = self._mirror.log_sf(-_float(eta))
        return value, -d1, d2

    def log_sf(self, eta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        value, d1, d2 = self._mirror.log_cdf(-_float(eta))
        return value, -d1, d2

    def fisher(self, eta: FloatArray) -> FloatArray:
        return self._mirror.fisher(-_float(eta))


#: The links by name (statsmodels' names where it has one).
LINKS: dict[str, type[Link]] = {link.name: link for link in (
    Identity, Log, Logit, Probit, CLogLog, LogLog, InversePower, InverseSquared, Sqrt)}


def make_link(name: str) -> Link:
    """The link called ``name`` (a ValueError lists the known names)."""
    try:
        return LINKS[name]()
    except (KeyError, TypeError):
        raise ValueError(f"unknown link {name!r}; the links are "
                         f"{', '.join(sorted(LINKS))}") from None
