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
"""
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray
from scipy import special


from ..types import FloatArray
from .dispersion import gamma_scale_derivatives
from .tweedie_series import tweedie_log_likelihood, tweedie_scale_derivatives

__all__ = ["Distribution", "Gaussian", "Poisson", "Gamma", "InverseGaussian", "Tweedie",
           "Binomial", "Bernoulli", "NegativeBinomial", "DISTRIBUTIONS", "make_distribution",
           "binomial_proportions", "offending_rows", "kl_div", "log_factorial"]

_LOG_2PI = float(np.log(2.0 * np.pi))
BoolArray = NDArray[np.bool_]


def _float(a: FloatArray | float) -> FloatArray:
    return np.asarray(a, dtype=np.float64)


def offending_rows(bad: BoolArray, values: FloatArray, what: str, shown: int = 5) -> str:
    """``"y[3] = -1, y[7] = -2 (2 rows)"``: the first offending rows of a check."""
    rows = np.flatnonzero(bad)
    listed = ", ".join(f"{what}[{i}] = {values[i]:g}" for i in rows[:shown])
    more = f" (and {rows.size - shown} more rows)" if rows.size > shown else \
        f" ({rows.size} row{'s' if rows.size > 1 else ''})"
    return listed + more


_VECTORISED_FROM = 10_000  # values: kl_div and log_factorial's own kernels pay from here


def kl_div(a: FloatArray | float, b: FloatArray | float) -> FloatArray:
    """scipy's ``kl_div(a, b) = a log(a / b) - a + b`` (``b`` at ``a = 0``; ``inf`` below
    ``a = 0`` or at ``b = 0 < a``), by numpy's vectorised logarithm in the same order of
    operations: scipy's ufunc loop costs ~30 ns a value, this ~12 (1e6 rows: the Poisson
    and Gamma derivatives of every Newton pass, and the deviances). Non-finite rows
    (outside the domain, NaN) are scipy's, and so are small arrays (below ~10,000 values
    the few numpy calls here cost more than scipy's loop)."""
    if max(np.size(a), np.size(b)) < _VECTORISED_FROM:
        return special.kl_div(a, b)
    a, b = np.broadcast_arrays(_float(a), _float(b))
    with np.errstate(all="ignore"):
        out = np.log(a / b)
        out *= a
        out -= a
        out += b
    np.copyto(out, b, where=(a == 0) & (b >= 0))  # (0 log 0 = 0: the counts of zero)
    if not np.isfinite(np.add.reduce(out)):
        bad = ~np.isfinite(out)
        out[bad] = special.kl_div(a[bad], b[bad])
    return out


def log_factorial(y: FloatArray) -> FloatArray:
    """``log y! = gammaln(y + 1)``; for many counts (whole ``0 <= y < len(y)``) from a
    table of ``gammaln(k + 1)``, the same numbers: scipy's gammaln costs ~100 ns a value."""
    y = _float(y)
    if y.ndim and y.size >= _VECTORISED_FROM:
        low, top = float(y.min()), float(y.max())
        if 0.0 <= low and top < y.size:  # (NaN fails both)
            k = y.astype(np.intp)
            if np.array_equal(k, y):
                return special.gammaln(np.arange(int(top) + 1) + 1.0)[k]
    return special.gammaln(y + 1.0)


class Distribution:
    """The base of the distributions: what a new one must define, and the defaults.

    Class attributes: ``name``; ``default_link`` (what ``link=None`` gives: the
    canonical link where it is among ``links``, else the common choice, log for the
    Tweedie and the negative binomial); ``canonical_link`` (None where the canonical
    link is not among ``links``); ``links`` (the link names defined for it);
    ``fixed_dispersion`` (True: the dispersion is 1, else it is estimated);
    ``mean_low``, ``mean_high`` (the open interval of valid means); ``has_ml_scale``
    (whether the maximum-likelihood dispersion is defined: by ``ml_scale`` in closed
    form, else by a search on ``scale_score``).
    """

    name: ClassVar[str]
    default_link: ClassVar[str]
    canonical_link: ClassVar[str | None] = None
    links: ClassVar[tuple[str, ...]]
    fixed_dispersion: ClassVar[bool] = False
    mean_low: ClassVar[float] = 0.0
    mean_high: ClassVar[float] = np.inf
    y_rule: ClassVar[str] = "finite"  # what check_y demands, for its message
    # whether fit(X, successes, trials=n) is defined (from_trials): the binomial's
    has_trials: ClassVar[bool] = False
    # whether the dispersion's maximum likelihood is defined (ml_scale or scale_score)
    has_ml_scale: ClassVar[bool] = False
    # p with V(mu) = mu^p (None: not a power): with the log link, the intercept-only
    # model has a closed form for any offset (exponential_family.null_model)
    variance_power: float | None = None

    # -- the distribution's functions (to define) -------------------------------------
    def variance(self, mu: FloatArray) -> FloatArray:
        """``V(mu)``: the variance of a row is ``scale V(mu) / var_weight``."""
        raise NotImplementedError  # pragma: no cover - abstract

    def variance_derivative(self, mu: FloatArray) -> FloatArray:
        """``V'(mu)``."""
        raise NotImplementedError  # pragma: no cover - abstract

    def unit_deviance(self, y: FloatArray, mu: FloatArray) -> FloatArray:
        """``d(y, mu) = 2 [l(y; y) - l(mu; y)]`` per row (unit weight and dispersion)."""
        raise NotImplementedError  # pragma: no cover - abstract

    def log_likelihood(self, y: FloatArray, mu: FloatArray,
                       var_weights: FloatArray | float = 1.0,
                       scale: float = 1.0) -> FloatArray:
        """Per-row log-likelihood with its normalising constants (statsmodels'
        ``loglike_obs``)."""
        raise NotImplementedError  # pragma: no cover - abstract

    def invalid_y(self, y: FloatArray) -> BoolArray:
        """Rows whose ``y`` the distribution cannot have (a boolean mask)."""
        return ~np.isfinite(y)

    # -- defaults -------------------------------------------------------------------
    def check_y(self, y: FloatArray) -> None:
        """Raise a ValueError naming the first rows whose ``y`` is not valid."""
        y = _float(y)
        bad = self.invalid_y(y) | np.isnan(y)
        if bad.any():
            raise ValueError(f"{self.name} requires {self.y_rule}: "
                             f"{offending_rows(bad, y, 'y')}")

    def valid_mean(self, mu: FloatArray) -> BoolArray:
        """Rows whose mean lies in the open valid range (NaN and infinity are not)."""
        return (mu > self.mean_low) & (mu < self.mean_high)

    def clip_mean(self, mu: FloatArray | float) -> FloatArray:
        """``mu`` moved into the valid range by a relative margin of 1e-10 (start values
        of a response at its boundary, such as all-zero counts)."""
        lo, hi = self.mean_low, self.mean_high
        lo_in = lo + 1e-10 * max(1.0, abs(lo)) if np.isfinite(lo) else lo
        hi_in = hi - 1e-10 * max(1.0, abs(hi)) if np.isfinite(hi) else hi
        return np.clip(_float(mu), lo_in, hi_in)

    def start_mean(self, y: FloatArray) -> FloatArray:
        """Per-row start means ``(y + mean(y)) / 2`` (statsmodels' ``starting_mu``)."""
        y = _float(y)
        return self.clip_mean((y + y.mean()) / 2.0)

    def pearson_residual_squared(self, y: FloatArray, mu: FloatArray) -> FloatArray:
        """``(y - mu)² / V(mu)`` per row; 0 where ``y = mu`` at an end of the range, where
        ``V = 0`` (the limit: a zero count fitted by a mean rounded to 0)."""
        r2 = np.square(y - mu)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = r2 / self.variance(mu)
        if not np.isfinite(np.add.reduce(out)):
            out = np.where(r2 == 0, 0.0, out)
        return out

    def profile_scale(self, link: str, deviance: float, n_obs: float) -> float | None:
        """The dispersion at which the reported log-likelihood is evaluated where it is
        not the estimated one (the concentrated likelihood of statsmodels' Gaussian
        with the identity link); None: at the estimated dispersion."""
        return None

    def ml_scale(self, deviance: float, n_obs: float) -> float | None:
        """The maximum-likelihood dispersion in closed form from the deviance ``D`` and
        the observations ``n`` (the sum of the frequency weights), where it has one;
        None: found by a search on :meth:`scale_score` (``has_ml_scale``)."""
        return None

    def scale_score(self, y: FloatArray, mu: FloatArray, var_weights: FloatArray | float,
                    scale: float) -> tuple[FloatArray, FloatArray]:
        """Per row the first and second derivatives of :meth:`log_likelihood` in
        ``log scale`` (:mod:`~problin._core.model.dispersion`), where ``has_ml_scale``
        and no closed form."""
        raise NotImplementedError(f"the {self.name} distribution defines no "
                                  "derivatives in the dispersion")

    def from_trials(self, successes: FloatArray, trials: FloatArray
                    ) -> tuple[FloatArray, FloatArray]:
        """``(y, variance weights)`` of successes out of ``trials`` (``fit(X, successes,
        trials=n)``): a ValueError where the distribution has no trials."""
        raise ValueError(f"trials are the binomial's: the {self.name} family has none "
                         "(fit(X, successes, trials=n) with the binomial family)")

    def to_params(self) -> dict[str, str | float]:
        """The distribution as data: its ``name`` and numeric parameters (a model file
        stores this; :func:`make_distribution` ``(**params)`` rebuilds it)."""
        return {"name": self.name, **{k: float(v) for k, v in sorted(vars(self).items())
                                      if k != "variance_power"}}

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self) -> int:
        return hash((type(self), tuple(sorted(vars(self).items()))))


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
