"""What the GLM estimators read off a fitted family: deviance, Pearson chi², the
log-likelihood, the dispersion estimate and the intercept-only (null) model.

Weights follow statsmodels' GLM: ``freq_weights`` repeat rows, ``var_weights`` divide a
row's variance (``Var y_i = scale V(mu_i) / var_weights_i``); the deviance and Pearson
statistics weigh row ``i`` by their product, the log-likelihood is
``sum_i freq_i loglike_i(y_i, mu_i, var_i, scale)``.
"""
import functools
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import special

from ..types import FloatArray
from .dispersion import ml_scale_search, scale_derivative_sums
from .fitted_rows import FittedRows, SumRows
from .distributions import DISTRIBUTIONS, Distribution, Gaussian
from .links import Link

__all__ = ["FamilyStatistics", "NullModel", "DISPERSION_METHODS"]

#: The dispersion estimates: Pearson's chi² / df (statsmodels' "X2", the default),
#: the deviance / df ("dev"), and maximum likelihood at the fitted means.
DISPERSION_METHODS = ("pearson", "deviance", "ml")


@dataclass(frozen=True)
class NullModel:
    """The intercept-only model ``mu_i = g^-1(b + o_i)``: its intercept ``b``, the means,
    and whether the solve converged (closed forms always do)."""

    intercept: float
    mean: FloatArray
    converged: bool = True
    n_iter: int = 0




def _weights(w: FloatArray | float | None, n: int) -> FloatArray:
    return np.ones(n) if w is None else np.broadcast_to(np.asarray(w, dtype=np.float64), (n,))


class FamilyStatistics:
    """The statistics of a family with ``distribution`` and ``link_function`` (a mixin of
    :class:`~problin._core.model.exponential_family.ExponentialFamily`)."""

    distribution: Distribution
    link_function: Link

    def derivatives(self, y: FloatArray, eta: FloatArray,
                    sample_weight: FloatArray | None = None,
                    information: str = "observed") -> tuple[float, FloatArray, FloatArray]:
        raise NotImplementedError  # pragma: no cover - defined by the family

    # -- per-row and summed statistics ----------------------------------------------
    @property
    def fixed_dispersion(self) -> bool:
        return self.distribution.fixed_dispersion

    def check_y(self, y: FloatArray) -> None:
        """A ValueError naming the first rows whose ``y`` the distribution cannot have."""
        self.distribution.check_y(y)

    def variance(self, mu: FloatArray) -> FloatArray:
        return self.distribution.variance(mu)

    def unit_deviance(self, y: FloatArray, mu: FloatArray) -> FloatArray:
        return self.distribution.unit_deviance(y, mu)

    def deviance(self, y: FloatArray, mu: FloatArray,
                 weights: FloatArray | None = None) -> float:
        """``sum_i w_i d(y_i, mu_i)`` (``w = freq_weights * var_weights``)."""
        d = self.distribution.unit_deviance(np.asarray(y, dtype=np.float64), mu)
        return float(np.sum(d if weights is None else weights * d))

    def deviance_from_eta(self, y: FloatArray, eta: FloatArray,
                          weights: FloatArray | None = None) -> float:
        """The deviance at the linear predictors ``eta`` (offset included): twice the
        family's loss, in log space where the family computes it so (binary means that
        round to 0 or 1 keep their digits, which ``deviance(y, mean(eta))`` cannot)."""
        return 2.0 * self.derivatives(np.asarray(y, dtype=np.float64),
                                      np.asarray(eta, dtype=np.float64), weights)[0]

    def pearson_chi2(self, y: FloatArray, mu: FloatArray,
                     weights: FloatArray | None = None) -> float:
        """``sum_i w_i (y_i - mu_i)² / V(mu_i)``."""
        r2 = self.distribution.pearson_residual_squared(np.asarray(y, dtype=np.float64), mu)
        return float(np.sum(r2 if weights is None else weights * r2))

    def log_likelihood(self, y: FloatArray, mu: FloatArray,
                       var_weights: FloatArray | None = None,
                       freq_weights: FloatArray | None = None, scale: float = 1.0) -> float:
        """``sum_i freq_i loglike(y_i, mu_i, var_i, scale)`` with every constant
        (statsmodels' ``GLMResults.llf`` at the same scale)."""
        ll = self.distribution.log_likelihood(np.asarray(y, dtype=np.float64), mu,
                                              1.0 if var_weights is None else var_weights,
                                              scale)
        return float(np.sum(ll if freq_weights is None else freq_weights * ll))

    def log_likelihood_scale(self, phi: float, deviance: float, n_obs: float) -> float:
        """The dispersion at which the fit's log-likelihood is reported: the estimate
        ``phi``, or the distribution's profiled one (the Gaussian with the identity link:
        ``RSS / n``, as statsmodels' ``GLM`` and least squares report it)."""
        profiled = self.distribution.profile_scale(self.link_function.name, deviance, n_obs)
        return phi if profiled is None else profiled

    def from_trials(self, successes: FloatArray, trials: FloatArray
                    ) -> tuple[FloatArray, FloatArray]:
        """``(y, variance weights)`` of successes out of trials (the binomial's; a
        ValueError for the distributions without trials)."""
        return self.distribution.from_trials(successes, trials)

    def boundary_signs(self, y: FloatArray) -> NDArray[np.int8] | None:
        """Per row -1 where ``y`` lies at the lower end of the mean's range and the link
        reaches that end only as ``eta -> -inf`` (the log link's 0, a binary link's 0),
        +1 likewise at the upper end (a binary link's 1, as ``eta -> +inf``), else 0
        (:mod:`~problin._core.model.boundary`). None where the link reaches neither end
        in a limit (the identity's and the square root's ends are at a finite ``eta``):
        no fit runs off there. (The links with unbounded ``eta`` that map onto an end
        of the range are increasing.)"""
        dist, link = self.distribution, self.link_function
        low = bool(np.isfinite(dist.mean_low)) and link.mean_low == dist.mean_low \
            and link.eta_low == -np.inf
        high = bool(np.isfinite(dist.mean_high)) and link.mean_high == dist.mean_high \
            and link.eta_high == np.inf
        if not (low or high):
            return None
        y = np.asarray(y, dtype=np.float64)
        signs = np.zeros(y.size, dtype=np.int8)
        if low:
            signs[y == dist.mean_low] = -1
        if high:
            signs[y == dist.mean_high] = 1
        return signs

    # -- dispersion -----------------------------------------------------------------
    def dispersion(self, y: FloatArray, mu: FloatArray, var_weights: FloatArray | None = None,
                   freq_weights: FloatArray | None = None, df_resid: float | None = None,
                   method: str = "pearson") -> float:
        """The dispersion ``scale``: 1 for the distributions where it is fixed; else
        ``"pearson"`` (chi² / df_resid), ``"deviance"`` (deviance / df_resid) or
        ``"ml"`` (maximum likelihood at the means ``mu``: closed form for the Gaussian
        and inverse Gaussian, a one-dimensional search in ``log scale`` otherwise)."""
        if method not in DISPERSION_METHODS:
            raise ValueError(f"the dispersion method must be one of "
                             f"{', '.join(DISPERSION_METHODS)}, got {method!r}")
        if self.distribution.fixed_dispersion:
            return 1.0
        y = np.asarray(y, dtype=np.float64)
        v, f = _weights(var_weights, y.size), _weights(freq_weights, y.size)
        if method == "ml":
            rows = FittedRows(y, np.asarray(mu, dtype=np.float64), np.full(y.size, np.nan),
                              frequency=freq_weights, variance=var_weights)
            return self.ml_dispersion(lambda op: op(rows), self.deviance(y, mu, v * f),
                                      float(np.sum(f)))
        if df_resid is None or not df_resid > 0:
            raise ValueError(f"the {method} dispersion needs positive residual degrees of "
                             f"freedom, got {df_resid!r}")
        stat = self.pearson_chi2 if method == "pearson" else self.deviance
        return stat(y, mu, v * f) / df_resid

    def require_ml_dispersion(self) -> None:
        """A ValueError where the maximum-likelihood dispersion is not defined: the
        dispersion is fixed at 1, or the distribution does not define the likelihood's
        dependence on it (``has_ml_scale``)."""
        dist = self.distribution
        able = ", ".join(name for name, kind in sorted(DISTRIBUTIONS.items())
                         if kind.has_ml_scale and not kind.fixed_dispersion)
        if dist.fixed_dispersion:
            raise ValueError(f"scale='ml': the {dist.name} family's dispersion is fixed at 1, "
                             "there is none to estimate (scale='X2' or 'dev' estimates a "
                             f"quasi-likelihood's); the maximum-likelihood dispersion is "
                             f"defined for the {able} families")
        if not dist.has_ml_scale:
            raise ValueError(f"scale='ml': the {dist.name} family defines no maximum-"
                             f"likelihood dispersion (has_ml_scale); the {able} families "
                             "do. Use scale=None, 'X2' or 'dev'")

    def ml_dispersion(self, sum_rows: SumRows, deviance: float, n_obs: float) -> float:
        """The maximum-likelihood dispersion at the fitted means (a ValueError where it
        is not defined, :meth:`require_ml_dispersion`): the distribution's closed form
        from the deviance ``D`` and the observations ``n`` (the Gaussian's and inverse
        Gaussian's ``D / n``), else the root of the score in ``log scale``
        (:func:`~problin._core.model.dispersion.ml_scale_search`), each evaluation
        ``sum_rows(op)``: ``op`` summed over all rows by their data source. 0 for an
        exact fit (``D = 0``: the likelihood grows as the scale falls)."""
        self.require_ml_dispersion()
        dist = self.distribution
        closed = dist.ml_scale(deviance, n_obs)
        if closed is not None:
            return float(closed)
        if not deviance > 0 or not n_obs > 0:
            return 0.0

        def derivatives(log_scale: float) -> tuple[float, float]:
            s, ds = sum_rows(functools.partial(scale_derivative_sums, distribution=dist,
                                               log_scale=log_scale))
            return float(s), float(ds)

        return ml_scale_search(derivatives, deviance / n_obs)

    # -- the null model -------------------------------------------------------------
    def null_model(self, y: FloatArray, weights: FloatArray | None = None,
                   offset: FloatArray | None = None, max_iter: int = 100) -> NullModel:
        """The intercept-only fit (weights ``freq * var``). Without an offset its mean is
        the weighted mean of ``y`` for every link (the score ``sum w (y - mu) mu' / V``
        vanishes there); with one, a closed form for the log link of ``V = mu^p``
        (``e^b = sum w y e^((1-p) o) / sum w e^((2-p) o)``) and the identity-link
        Gaussian, else Newton's method in ``b`` (Fisher scoring, step halving)."""
        y = np.asarray(y, dtype=np.float64)
        w = _weights(weights, y.size)
        link, dist = self.link_function, self.distribution
        if offset is None:
            mean = float(np.sum(w * y) / np.sum(w))
            with np.errstate(divide="ignore"):  # (all-zero counts: log 0 = -inf)
                b = float(link(np.array(mean)))
            return NullModel(b, np.full(y.size, mean))
        o = np.asarray(offset, dtype=np.float64)
        p = dist.variance_power
        if link.name == "log" and p is not None:
            with np.errstate(divide="ignore"):
                b = float(special.logsumexp((1.0 - p) * o, b=w * y)
                          - special.logsumexp((2.0 - p) * o, b=w))
            return NullModel(b, link.inverse(b + o))
        if link.name == "identity" and isinstance(dist, Gaussian):
            b = float(np.sum(w * (y - o)) / np.sum(w))
            return NullModel(b, b + o)
        return self._null_newton(y, w, o, max_iter)

    def _null_newton(self, y: FloatArray, w: FloatArray, o: FloatArray,
                     max_iter: int) -> NullModel:
        mean = self.distribution.clip_mean(np.sum(w * y) / np.sum(w))
        b = float(self.link_function(mean)) - float(np.sum(w * o) / np.sum(w))
        loss, g, h = self.derivatives(y, o + b, w, "expected")
        if not np.isfinite(loss):  # the mean's intercept is outside the range at some row
            for shift in (np.max(o), np.min(o)):
                cand = float(self.link_function(mean)) - float(shift)
                loss, g, h = self.derivatives(y, o + cand, w, "expected")
                if np.isfinite(loss):
                    b = cand
                    break
        for it in range(1, max_iter + 1):
            grad, curv = float(np.sum(g)), float(np.sum(h))
            if not (curv > 0 and np.isfinite(curv)):
                return NullModel(b, self.link_function.inverse(b + o), False, it)
            step = -grad / curv
            if abs(step) <= 1e-15 * max(1.0, abs(b)):
                return NullModel(b, self.link_function.inverse(b + o), True, it)
            for _ in range(60):
                new, g_new, h_new = self.derivatives(y, o + b + step, w, "expected")
                if new <= loss:
                    break
                step *= 0.5
            else:  # no decrease at the rounding of the loss: converged if the step was tiny
                return NullModel(b, self.link_function.inverse(b + o),
                                 0.5 * grad * grad / curv <= 1e-10 * max(1.0, abs(loss)), it)
            b, loss, g, h = b + step, new, g_new, h_new
            # Newton's error squares: after a step of 1e-11 relative the next is ~1e-22
            if abs(step) <= 1e-11 * max(1.0, abs(b)):
                return NullModel(b, self.link_function.inverse(b + o), True, it)
        return NullModel(b, self.link_function.inverse(b + o), False, max_iter)

    def start_intercept(self, y: FloatArray, weights: FloatArray | None = None,
                        offset: FloatArray | None = None) -> float:
        """A start value of the intercept: the link of the weighted mean (moved into the
        valid range), less the offsets' weighted mean."""
        y = np.asarray(y, dtype=np.float64)
        w = _weights(weights, y.size)
        b = float(self.link_function(self.distribution.clip_mean(np.sum(w * y) / np.sum(w))))
        return b if offset is None else b - float(np.sum(w * offset) / np.sum(w))
