"""Per-feature exponential families for naive Bayes: sufficient statistics, maximum
likelihood, log-densities and support.

A naive Bayes model over mixed columns gives each column ``j`` and class ``k`` a density
``p(x_j | theta_kj)`` from an exponential family, ``h(x) exp(eta(theta)^T T(x) -
A(theta))``. What a class needs of a column is its weight ``n_k`` and the weighted sums
``sum_{t_n = k} w_n T(x_nj)`` of the sufficient statistics; they merge by addition,
so a fit is one pass over row blocks and ``partial_fit`` over chunks equals one fit.
Maximum likelihood matches the mean of ``T`` (Bishop 2006, §2.4.1): closed forms
for the Poisson (``lambda = mean x``), exponential (``mean x``), Bernoulli and
categorical (relative frequencies, with ``alpha`` pseudo-counts: Laplace smoothing)
and, for the Gamma, ``mean = mean x`` and the shape ``a`` solving
``log a - digamma(a) = log(mean x) - mean(log x)`` by Newton's method (Minka 2002).
The log-densities are those of the GLM distributions
(:mod:`~problin._core.model.distributions`), every constant included; the categorical
is added here. The Gaussian columns are the class statistics of
:mod:`~problin._core.moments.class_stats` (centred, exact merges).

Because ``h(x)`` is the same in every class, the log-odds between two classes are
linear in the sufficient statistics: ``(eta_k - eta_l)^T T(x) - (A_k - A_l)``, the
logistic model's form (Bishop 2006, §4.2.4).
"""
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray
from scipy import special

from .distributions import Bernoulli, Gamma, Poisson, offending_rows

__all__ = ["FeatureFamily", "PoissonFeature", "ExponentialFeature", "GammaFeature",
           "BernoulliFeature", "CategoricalFeature", "FEATURE_FAMILIES", "gamma_shape"]

BoolArray = NDArray[np.bool_]


def _shape_equation(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(log a - digamma(a), its derivative 1/a - trigamma(a))``. Large shapes (nearly
    constant data) take the asymptotic series (Abramowitz & Stegun 6.3.18): both sides
    are ~log a and differ by ~1/(2a), so the difference as written kept only
    ``1e-16 log(a) / f`` of itself (8e-6 at a = 5e9)."""
    big = a >= 30.0  # (the series' next term: < 1e-18 of f from here on)
    r = 1.0 / np.where(big, a, 1.0)
    r2 = r * r
    series = r * (0.5 + r * (1 / 12 + r2 * (-1 / 120 + r2 * (1 / 252 + r2 * (
        -1 / 240 + r2 / 132)))))
    slope = -r2 * (0.5 + r * (1 / 6 + r2 * (-1 / 30 + r2 * (1 / 42 + r2 * (
        -1 / 30 + r2 * 5 / 66)))))
    small = np.where(big, 1.0, a)
    with np.errstate(invalid="ignore"):
        f = np.where(big, series, np.log(small) - special.digamma(small))
        df = np.where(big, slope, 1.0 / small - special.polygamma(1, small))
    return f, df


def gamma_shape(s: np.ndarray, tol: float = 1e-15, max_iter: int = 100) -> np.ndarray:
    """The Gamma's maximum-likelihood shape ``a`` with ``log a - digamma(a) = s``
    (``s = log(mean x) - mean(log x) > 0``), elementwise: Minka's (2002) start and
    Newton steps on ``1/a``, to ``tol`` relative. ``s <= 0`` (a class whose values
    are all equal, to rounding) has no finite maximum: the shape of ``s = 1e-12``
    (~5e11: a density as narrow as the data allow), never inf."""
    s = np.maximum(np.asarray(s, dtype=np.float64), 1e-12)
    a = (3.0 - s + np.sqrt((s - 3.0) ** 2 + 24.0 * s)) / (12.0 * s)
    for _ in range(max_iter):
        f, df = _shape_equation(a)
        f = f - s
        # Newton on 1/a (Minka's generalised step): converges from either side
        new = 1.0 / (1.0 / a + f / (a * a * df))
        done = np.abs(new - a) <= tol * a
        a = new
        if np.all(done):
            break
    return a


class FeatureFamily:
    """One column's family: ``name``, the support it checks (``rule``), the width of
    its statistics, and the maximum likelihood and log-densities from them."""

    name: ClassVar[str]
    rule: ClassVar[str]

    def invalid(self, x: np.ndarray) -> BoolArray:
        """Rows whose value lies outside the family's support."""
        return ~np.isfinite(x)

    def check(self, x: np.ndarray, column: str) -> None:
        """A ValueError naming the column and the first offending rows."""
        bad = self.invalid(x)
        if bad.any():
            raise ValueError(f"column {column} is modelled as {self.name}, which takes "
                             f"{self.rule}: {offending_rows(bad, x, 'x')}")

    def statistics(self, x: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """``(K, m)``: the sums over each class's rows of the sufficient statistics
        ``T(x)`` (``Y`` the (n, K) one-hot class matrix, weighted)."""
        return (Y.T @ x)[:, None]

    def merge(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return a + b

    def fit(self, n: np.ndarray, sums: np.ndarray, alpha: float) -> np.ndarray:
        """``(K, q)`` parameters from the class weights ``n`` (K,) and ``sums``."""
        raise NotImplementedError  # pragma: no cover - abstract

    def log_density(self, x: np.ndarray, params: np.ndarray) -> np.ndarray:
        """``log p(x_i | class k)``, shape (n, K)."""
        raise NotImplementedError  # pragma: no cover - abstract


def _mean(n: np.ndarray, total: np.ndarray) -> np.ndarray:
    return total / np.where(n > 0, n, 1.0)


class PoissonFeature(FeatureFamily):
    """Counts: ``lambda_k = mean x`` (a class of zeros: ``lambda = 0``, where a positive
    count has probability 0). Non-integer values take ``gammaln``'s extension of ``x!``."""

    name, rule = "poisson", "counts x >= 0"

    def invalid(self, x: np.ndarray) -> BoolArray:
        return ~(x >= 0) | ~np.isfinite(x)

    def fit(self, n: np.ndarray, sums: np.ndarray, alpha: float) -> np.ndarray:
        return _mean(n, sums[:, 0])[:, None]

    def log_density(self, x: np.ndarray, params: np.ndarray) -> np.ndarray:
        return Poisson().log_likelihood(x[:, None], params[None, :, 0])


class ExponentialFeature(FeatureFamily):
    """Positive values: the Gamma of shape 1, ``mean_k = mean x``."""

    name, rule = "exponential", "values x > 0"

    def invalid(self, x: np.ndarray) -> BoolArray:
        return ~(x > 0) | ~np.isfinite(x)

    def fit(self, n: np.ndarray, sums: np.ndarray, alpha: float) -> np.ndarray:
        return np.where(n > 0, _mean(n, sums[:, 0]), 1.0)[:, None]  # (no data yet: 1)

    def log_density(self, x: np.ndarray, params: np.ndarray) -> np.ndarray:
        return Gamma().log_likelihood(x[:, None], params[None, :, 0])


class GammaFeature(ExponentialFeature):
    """Positive values: ``(mean_k, shape_k)``, the shape by :func:`gamma_shape`;
    statistics ``(sum x, sum log x)``."""

    name = "gamma"

    def statistics(self, x: np.ndarray, Y: np.ndarray) -> np.ndarray:
        return np.stack([Y.T @ x, Y.T @ np.log(x)], axis=1)

    def fit(self, n: np.ndarray, sums: np.ndarray, alpha: float) -> np.ndarray:
        mean = _mean(n, sums[:, 0])
        seen = (n > 0) & (mean > 0)
        s = np.log(np.where(seen, mean, 1.0)) - _mean(n, sums[:, 1])
        shape = np.where(seen, gamma_shape(np.where(seen, s, 1.0)), 1.0)
        return np.stack([np.where(seen, mean, 1.0), shape], axis=1)

    def log_density(self, x: np.ndarray, params: np.ndarray) -> np.ndarray:
        return Gamma().log_likelihood(x[:, None], params[None, :, 0], params[None, :, 1])


class BernoulliFeature(FeatureFamily):
    """0/1 values: ``p_k = (sum x + alpha) / (n_k + 2 alpha)``."""

    name, rule = "bernoulli", "values 0 and 1"

    def invalid(self, x: np.ndarray) -> BoolArray:
        return ~((x == 0) | (x == 1))

    def fit(self, n: np.ndarray, sums: np.ndarray, alpha: float) -> np.ndarray:
        total = n + 2.0 * alpha
        p = np.where(total > 0, _mean(total, sums[:, 0] + alpha), 0.5)  # (no data: 1/2)
        return p[:, None]

    def log_density(self, x: np.ndarray, params: np.ndarray) -> np.ndarray:
        return Bernoulli().log_likelihood(x[:, None], params[None, :, 0])


class CategoricalFeature(FeatureFamily):
    """Levels coded 0, 1, ..., L - 1: ``p_kl = (c_kl + alpha) / (n_k + L alpha)``, ``L``
    the levels seen so far (a level never seen in training has probability 0 in
    every class: it moves no posterior)."""

    name, rule = "categorical", "levels coded as integers 0, 1, 2, ..."

    def invalid(self, x: np.ndarray) -> BoolArray:
        return ~((x >= 0) & (x == np.round(x)) & np.isfinite(x))

    def statistics(self, x: np.ndarray, Y: np.ndarray) -> np.ndarray:
        codes = x.astype(np.intp)
        levels = int(codes.max(initial=-1)) + 1
        out = np.zeros((Y.shape[1], levels))
        for k in range(Y.shape[1]):
            out[k] = np.bincount(codes, weights=Y[:, k], minlength=levels)
        return out

    def merge(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        width = max(a.shape[1], b.shape[1])
        out = np.zeros((a.shape[0], width))
        out[:, :a.shape[1]] += a
        out[:, :b.shape[1]] += b
        return out

    def fit(self, n: np.ndarray, sums: np.ndarray, alpha: float) -> np.ndarray:
        total = n + sums.shape[1] * alpha
        even = np.full_like(sums, 1.0 / max(sums.shape[1], 1))
        return np.where((total > 0)[:, None], (sums + alpha) / np.where(total > 0, total,
                                                                        1.0)[:, None], even)

    def log_density(self, x: np.ndarray, params: np.ndarray) -> np.ndarray:
        codes = x.astype(np.intp)
        known = codes < params.shape[1]
        with np.errstate(divide="ignore"):  # a probability of 0: log 0 = -inf, its value
            logp = np.log(params)
        out = np.full((x.size, params.shape[0]), -np.inf)
        out[known] = logp[:, codes[known]].T
        return out


#: The families by name (the Gaussian's are the estimator's class statistics).
FEATURE_FAMILIES: dict[str, type[FeatureFamily]] = {f.name: f for f in (
    PoissonFeature, ExponentialFeature, GammaFeature, BernoulliFeature, CategoricalFeature)}
