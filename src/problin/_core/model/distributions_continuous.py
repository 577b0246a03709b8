"""The continuous response distributions: Gaussian, Gamma, inverse Gaussian, and the
Tweedie (compound Poisson-Gamma, continuous but for its point mass at 0).

Each estimates its dispersion (``fixed_dispersion`` False), by maximum likelihood in
closed form from the deviance (Gaussian, inverse Gaussian) or by a search on the
per-row derivatives in ``log scale`` (Gamma, Tweedie: :mod:`.dispersion`,
:mod:`.tweedie_series`).
"""
import numpy as np
from scipy import special

from ..types import FloatArray
from .dispersion import gamma_scale_derivatives
from .distribution_base import BoolArray, Distribution, _float, kl_div
from .tweedie_series import tweedie_log_likelihood, tweedie_scale_derivatives

__all__ = ["Gaussian", "Gamma", "InverseGaussian", "Tweedie"]

_LOG_2PI = float(np.log(2.0 * np.pi))


class Gaussian(Distribution):
    name = "gaussian"
    default_link = canonical_link = "identity"
    links = ("identity", "log", "inverse")
    mean_low = -np.inf
    variance_power = 0.0

    def variance(self, mu: FloatArray) -> FloatArray:
        return np.ones_like(_float(mu))

    def variance_derivative(self, mu: FloatArray) -> FloatArray:
        return np.zeros_like(_float(mu))

    def unit_deviance(self, y: FloatArray, mu: FloatArray) -> FloatArray:
        return np.square(_float(y) - mu)

    def log_likelihood(self, y: FloatArray, mu: FloatArray,
                       var_weights: FloatArray | float = 1.0,
                       scale: float = 1.0) -> FloatArray:
        w = _float(var_weights)
        return -0.5 * (w * np.square(_float(y) - mu) / scale + np.log(scale / w) + _LOG_2PI)

    def profile_scale(self, link: str, deviance: float, n_obs: float) -> float | None:
        # statsmodels' GLM reports least squares' log-likelihood, the scale profiled out
        # at RSS / n (as LinearRegression's), for the identity link only
        return deviance / n_obs if link == "identity" else None

    has_ml_scale = True

    def ml_scale(self, deviance: float, n_obs: float) -> float | None:
        # l = -(v d / scale + log scale) / 2 + const: the maximum is sum f v d / sum f
        return deviance / n_obs


class Gamma(Distribution):
    name = "gamma"
    default_link = canonical_link = "inverse"
    links = ("inverse", "log", "identity")
    y_rule = "y > 0"
    variance_power = 2.0

    def invalid_y(self, y: FloatArray) -> BoolArray:
        return ~(y > 0) | ~np.isfinite(y)

    def variance(self, mu: FloatArray) -> FloatArray:
        return np.square(mu)

    def variance_derivative(self, mu: FloatArray) -> FloatArray:
        return 2.0 * _float(mu)

    def unit_deviance(self, y: FloatArray, mu: FloatArray) -> FloatArray:
        return 2.0 * kl_div(1.0, _float(y) / mu)  # 2 (y/mu - 1 - log(y/mu))

    def log_likelihood(self, y: FloatArray, mu: FloatArray,
                       var_weights: FloatArray | float = 1.0,
                       scale: float = 1.0) -> FloatArray:
        # shape k = w / scale: log density of Gamma(shape k, mean mu) at y
        y, k = _float(y), _float(var_weights) / scale
        r = y / mu
        return k * np.log(k * r) - k * r - special.gammaln(k) - np.log(y)

    has_ml_scale = True

    def scale_score(self, y: FloatArray, mu: FloatArray, var_weights: FloatArray | float,
                    scale: float) -> tuple[FloatArray, FloatArray]:
        return gamma_scale_derivatives(self.unit_deviance(y, mu), var_weights, scale)


class InverseGaussian(Distribution):
    name = "inverse_gaussian"
    default_link = canonical_link = "inverse_squared"
    links = ("inverse_squared", "log", "inverse", "identity")
    y_rule = "y > 0"
    variance_power = 3.0

    def invalid_y(self, y: FloatArray) -> BoolArray:
        return ~(y > 0) | ~np.isfinite(y)

    def variance(self, mu: FloatArray) -> FloatArray:
        return _float(mu) ** 3

    def variance_derivative(self, mu: FloatArray) -> FloatArray:
        return 3.0 * np.square(mu)

    def unit_deviance(self, y: FloatArray, mu: FloatArray) -> FloatArray:
        y = _float(y)
        return np.square((y - mu) / mu) / y

    def log_likelihood(self, y: FloatArray, mu: FloatArray,
                       var_weights: FloatArray | float = 1.0,
                       scale: float = 1.0) -> FloatArray:
        y, w = _float(y), _float(var_weights)
        return -0.5 * (w * self.unit_deviance(y, mu) / scale
                       + np.log(scale / w) + 3.0 * np.log(y) + _LOG_2PI)

    has_ml_scale = True

    def ml_scale(self, deviance: float, n_obs: float) -> float | None:
        # l = -(v d / scale + log scale) / 2 + const, as the Gaussian's
        return deviance / n_obs


class Tweedie(Distribution):
    """Compound Poisson-Gamma, ``V(mu) = mu^p`` with ``1 < p < 2``: a point mass at 0
    and a density on ``y > 0``. The density's series is Dunn & Smyth's (2005), summed
    in numpy over blocks of rows (:mod:`~problin._core.model.tweedie_series`; the
    Wright Bessel function that statsmodels sums by scipy's ``log_wright_bessel``)."""

    name = "tweedie"
    default_link = "log"
    links = ("log", "identity")
    y_rule = "y >= 0"

    def __init__(self, power: float = 1.5) -> None:
        power = float(power)
        if not 1.0 < power < 2.0:
            raise ValueError(f"the Tweedie power must lie strictly between 1 and 2, "
                             f"got {power!r}")
        self.power = self.variance_power = power

    def __repr__(self) -> str:
        return f"Tweedie(power={self.power!r})"

    def invalid_y(self, y: FloatArray) -> BoolArray:
        return ~(y >= 0) | ~np.isfinite(y)

    def variance(self, mu: FloatArray) -> FloatArray:
        return _float(mu) ** self.power

    def variance_derivative(self, mu: FloatArray) -> FloatArray:
        return self.power * _float(mu) ** (self.power - 1.0)

    def unit_deviance(self, y: FloatArray, mu: FloatArray) -> FloatArray:
        p, y = self.power, _float(y)
        with np.errstate(divide="ignore", invalid="ignore"):  # (mu = 0: y = 0 has 0 here)
            cross = np.where(y > 0, y * _float(mu) ** (1.0 - p), 0.0)
        return 2.0 * (y ** (2.0 - p) / ((1.0 - p) * (2.0 - p))
                      - cross / (1.0 - p) + mu ** (2.0 - p) / (2.0 - p))

    def log_likelihood(self, y: FloatArray, mu: FloatArray,
                       var_weights: FloatArray | float = 1.0,
                       scale: float = 1.0) -> FloatArray:
        y = _float(y)
        phi = np.broadcast_to(scale / _float(var_weights), y.shape)
        return tweedie_log_likelihood(self.power, y, np.broadcast_to(_float(mu), y.shape),
                                      phi)

    has_ml_scale = True

    def scale_score(self, y: FloatArray, mu: FloatArray, var_weights: FloatArray | float,
                    scale: float) -> tuple[FloatArray, FloatArray]:
        return tweedie_scale_derivatives(self.power, y, mu, var_weights, scale)
