"""The base of the response distributions (exponential dispersion models), and the
numerical kernels their deviances and likelihoods share.

:class:`Distribution` says what a new distribution must define (``V(mu)`` and its
derivative, the unit deviance, the per-row log-likelihood) and gives the defaults (the
checks of ``y``, start means, Pearson residuals, the dispersion's maximum likelihood). The
distributions themselves are in :mod:`.distributions_continuous` and
:mod:`.distributions_counts`, found by name through :mod:`.distributions`; the base is
apart so that those import it without importing the registry that imports them.
"""
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray
from scipy import special

from ..types import FloatArray

__all__ = ["Distribution", "BoolArray", "offending_rows", "kl_div", "log_factorial"]

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
