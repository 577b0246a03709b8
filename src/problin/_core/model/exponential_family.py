"""A GLM family: a distribution composed with a link, as the Newton engine sees it.

``ExponentialFamily(distribution, link)`` gives the engine's contract (the
:class:`Family` protocol): ``derivatives(y, eta, sample_weight, information)`` ->
``(loss, g, h)`` with

    loss = sum_i s_i d(y_i, mu_i) / 2,   mu_i = g^-1(eta_i),

so that the deviance is twice the loss; ``g_i = d loss_i / d eta_i`` and ``h_i`` its
second derivative (``"observed"``) or its expectation (``"expected"``, Fisher scoring).
With ``mu' = d mu / d eta``, ``mu''`` and ``V`` the variance function
(McCullagh & Nelder 1989, §2.5):

    g = -s (y - mu) mu' / V
    h_expected = s mu'² / V
    h_observed = s [mu'² - (y - mu)(mu'' - mu'² V' / V)] / V.

Canonical links make the bracket vanish (``mu' = V``), so the two coincide. A point
whose mean leaves the valid range (an inverse link at ``eta <= 0`` for the Gamma, the
identity at ``mu <= 0`` for the Poisson) has ``loss = +inf`` and zero derivatives,
without a warning, so that a line search backtracks.

Binary means (binomial, Bernoulli) are computed in log space from the link's
``log F``, ``log(1 - F)`` and their derivatives (the loss is linear in ``y``), and the
log link of the power-variance and negative binomial distributions has its own
kernels (a few exponentials, limits kept where the mean under- or overflows). The
estimators' statistics (deviance, Pearson chi², log-likelihood, dispersion, the null
model) are in :mod:`~problin._core.model.family_statistics`.
"""
from dataclasses import dataclass
from typing import Callable, Protocol, runtime_checkable

import numpy as np
from scipy import special

from ..types import FloatArray
from .distributions import (DISTRIBUTIONS, Bernoulli, Binomial, Distribution, Gaussian,
                            NegativeBinomial, kl_div, make_distribution)
from .family_statistics import FamilyStatistics, NullModel
from .links import LINKS, BinaryLink, Link, make_link

__all__ = ["Family", "FamilyBase", "ParameterLayout", "ExponentialFamily", "make_family",
           "check_information", "NullModel", "family_to_params", "family_from_params"]

Rows = tuple[FloatArray, FloatArray, FloatArray]  # per-row (loss, g, h), unweighted


@runtime_checkable
class Family(Protocol):
    """What the engine (``GLMObjective``, the Newton solver) needs of a family."""

    name: str
    canonical: bool
    curvature_lipschitz: float | None

    def derivatives(self, y: FloatArray, eta: FloatArray,
                    sample_weight: FloatArray | None = None,
                    information: str = "observed") -> tuple[float, FloatArray, FloatArray]:
        """``(loss, g, h)``: the summed weighted loss and per-row derivatives in eta."""

    def mean(self, eta: FloatArray) -> FloatArray:
        """``mu = g^-1(eta)``."""

    def link(self, mu: FloatArray) -> FloatArray:
        """``eta = g(mu)``."""


@dataclass(frozen=True)
class ParameterLayout:
    """How a family's parameters are laid out: ``n_blocks`` linear predictors (one for
    the GLMs, K - 1 for the softmax) and ``extra`` named parameters outside them (the
    negative binomial's ``alpha`` where it is estimated; ordinal cut-points later)."""

    n_blocks: int = 1
    extra: tuple[str, ...] = ()


def check_information(information: str) -> None:
    if information not in ("observed", "expected"):
        raise ValueError(f"information must be 'observed' or 'expected', got {information!r}")


class FamilyBase:
    """Defaults of every family: one linear predictor, no extra parameters, no bound
    on how fast the curvature moves."""

    layout: ParameterLayout = ParameterLayout()
    curvature_lipschitz: float | None = None
    # Whether the observed curvature h is >= 0 for every valid y and eta (the loss is
    # convex in eta): then Newton with the observed information converges
    # quadratically where Fisher scoring converges only linearly (a Gamma-log fit: 4
    # iterations against 14), and the expected information can still give the
    # covariance at the answer.
    observed_convex: bool = False


def _power_log_lipschitz(power: float) -> float | None:
    """``L >= |d log h / d eta|`` for ``V = mu^p`` and the log link, under either
    information: ``h_expected = mu^(2-p)``; ``h_observed = (2-p) mu^(2-p) + (p-1) y mu^(1-p)``,
    two positive terms for ``1 <= p <= 2`` whose log-slopes are ``2-p`` and ``1-p``
    (outside, the observed curvature changes sign: no bound)."""
    if not 1.0 <= power <= 2.0:
        return None  # (Gaussian-log: observed h = 2 mu² - y mu changes sign)
    return max(2.0 - power, power - 1.0)


#: Non-canonical pairs whose loss is convex in eta for every valid y: the log link of
#: V = mu^p with 1 <= p <= 2 (h = (2-p) mu^(2-p) + (p-1) y mu^(1-p)) and of NB2
#: (h = mu (1 + a y) / (1 + a mu)²); the Poisson's identity (h = y / mu²) and square
#: root (2 + 2 y / eta²); the inverse Gaussian's inverse link (the loss is
#: (y eta - 1)² / 2y, h = y); and the log-concave binary links, whose log F and log(1 - F)
#: are both concave.
_CONVEX = frozenset({("gamma", "log"), ("tweedie", "log"), ("negative_binomial", "log"),
                     ("poisson", "identity"), ("poisson", "sqrt"),
                     ("inverse_gaussian", "inverse")}
                    | {(d, link) for d in ("binomial", "bernoulli")
                       for link in ("probit", "cloglog", "loglog")})


def _mix(y: FloatArray, a: FloatArray, z: FloatArray, b: FloatArray) -> FloatArray:
    """``y a + z b`` with ``0 * inf = 0`` (checked only where the plain sum is not finite:
    the rare saturated rows)."""
    out = y * a + z * b
    if not np.isfinite(np.add.reduce(out)):
        out = np.where(y > 0, y * a, 0.0) + np.where(z > 0, z * b, 0.0)
    return out


class ExponentialFamily(FamilyStatistics, FamilyBase):
    """``distribution`` × ``link``: the loss, its derivatives and the mean.

    Parameters
    ----------
    distribution : Distribution
    link : Link (one of ``distribution.links``)
    """

    def __init__(self, distribution: Distribution, link: Link) -> None:
        if link.name not in distribution.links:
            raise ValueError(f"the {link.name!r} link is not defined for the "
                             f"{distribution.name} family; its links are "
                             f"{', '.join(distribution.links)}")
        self.distribution = distribution
        self.link_function = link
        self.name = f"{distribution.name}-{link.name}"
        self.canonical = link.name == distribution.canonical_link
        self.curvature_lipschitz = self._lipschitz()
        self.observed_convex = self.canonical or (distribution.name, link.name) in _CONVEX
        self._rows = self._kernel()

    # -- the engine's contract ------------------------------------------------------
    def mean(self, eta: FloatArray) -> FloatArray:
        return self.link_function.inverse(eta)

    def link(self, mu: FloatArray) -> FloatArray:
        return self.link_function(mu)

    def derivatives(self, y: FloatArray, eta: FloatArray,
                    sample_weight: FloatArray | None = None,
                    information: str = "observed") -> tuple[float, FloatArray, FloatArray]:
        """``(loss, g, h)``: ``loss = sum s d / 2`` and per-row weighted derivatives;
        ``loss = inf`` (and zero derivatives at the offending rows) outside the valid
        range of the mean."""
        check_information(information)
        with np.errstate(all="ignore"):  # non-finite rows are found and replaced below
            loss, g, h = self._rows(np.asarray(y, dtype=np.float64),
                                    np.asarray(eta, dtype=np.float64), information)
            if sample_weight is not None:
                loss, g, h = loss * sample_weight, g * sample_weight, h * sample_weight
            total = float(np.add.reduce(loss))
            if not np.isfinite(total) or not np.isfinite(np.add.reduce(g) + np.add.reduce(h)):
                bad = ~(np.isfinite(loss) & np.isfinite(g) & np.isfinite(h))
                if bad.any():
                    total = np.inf
                    g, h = np.where(bad, 0.0, g), np.where(bad, 0.0, h)
                else:
                    total = np.inf  # finite rows whose sum overflows
        return total, g, h

    # -- the kernels (unweighted rows) ----------------------------------------------
    def _kernel(self) -> Callable[[FloatArray, FloatArray, str], Rows]:
        dist, link = self.distribution, self.link_function
        if isinstance(dist, Binomial) and link.name == "logit":
            return self._binomial_logit_rows
        if isinstance(dist, Binomial) and isinstance(link, BinaryLink):
            return self._binary_rows
        if link.name == "log" and dist.variance_power is not None and dist.variance_power >= 1:
            return self._power_log_rows
        if link.name == "log" and isinstance(dist, NegativeBinomial):
            return self._negative_binomial_log_rows
        if link.name == "identity" and isinstance(dist, Gaussian):
            return self._gaussian_identity_rows
        return self._generic_rows

    def _generic_rows(self, y: FloatArray, eta: FloatArray, information: str) -> Rows:
        dist = self.distribution
        mu, d1, d2 = self.link_function.inverse_derivatives(eta)
        var = dist.variance(mu)
        r = y - mu
        ratio = d1 / var
        g = -r * ratio
        h = d1 * ratio
        if information == "observed":
            h = h - r * (d2 - d1 * d1 * dist.variance_derivative(mu) / var) / var
        loss = 0.5 * dist.unit_deviance(y, mu)
        valid = self.link_function.in_domain(eta) & dist.valid_mean(mu)
        if not valid.all():
            loss = np.where(valid, loss, np.inf)
        return loss, g, h

    def _gaussian_identity_rows(self, y: FloatArray, eta: FloatArray,
                                information: str) -> Rows:
        g = eta - y
        return 0.5 * np.square(g), g, np.ones_like(g)

    def _power_log_rows(self, y: FloatArray, eta: FloatArray, information: str) -> Rows:
        # V = mu^p, mu = e^eta: g = mu^(2-p) - y mu^(1-p), h as in _power_log_lipschitz.
        # y mu^(1-p) as exp(log y + (1-p) eta): 0 at y = 0 however small mu.
        p = self.distribution.variance_power
        assert p is not None
        if p == 1.0:  # Poisson
            mu = np.exp(eta)
            return kl_div(y, mu), mu - y, mu
        if p == 2.0:  # Gamma: y / mu
            ratio = np.exp(np.log(y) - eta)
            h = ratio if information == "observed" else np.ones_like(ratio)
            return kl_div(1.0, ratio), 1.0 - ratio, h
        b = np.exp((2.0 - p) * eta)  # mu^(2-p)
        ya = np.exp(np.log(y) + (1.0 - p) * eta)  # y mu^(1-p)
        y_term = y ** (2.0 - p) / ((1.0 - p) * (2.0 - p))
        loss = y_term - ya / (1.0 - p) + b / (2.0 - p)
        h = (2.0 - p) * b - (1.0 - p) * ya if information == "observed" else b
        return loss, b - ya, h

    def _negative_binomial_log_rows(self, y: FloatArray, eta: FloatArray,
                                    information: str) -> Rows:
        # t = a mu / (1 + a mu) = expit(eta + log a), q = 1 - t: g = (mu - y) q = t/a - y q,
        # h_expected = mu q = t / a, h_observed = (t / a)(1 + a y) q.
        dist = self.distribution
        assert isinstance(dist, NegativeBinomial)
        a = dist.alpha
        shifted = eta + np.log(a)
        t, q = special.expit(shifted), special.expit(-shifted)
        m = t / a
        h = m * (1.0 + a * y) * q if information == "observed" else m
        loss = 0.5 * dist.unit_deviance(y, np.exp(eta))
        return loss, m - y * q, h

    def _binomial_logit_rows(self, y: FloatArray, eta: FloatArray, information: str) -> Rows:
        # Canonical: loss = softplus(eta) - y eta + y log y + (1 - y) log(1 - y), where
        # softplus(eta) = -log_expit(-eta) (exact for any eta); g = p - y, h = p (1 - p).
        # (Rows of a Bernoulli have no saturated term: y log y = 0.)
        loss = -special.log_expit(-eta) - y * eta
        if not isinstance(self.distribution, Bernoulli):
            loss += special.xlogy(y, y) + special.xlogy(1.0 - y, 1.0 - y)
        p = special.expit(eta)
        return loss, p - y, p * special.expit(-eta)

    def _binary_rows(self, y: FloatArray, eta: FloatArray, information: str) -> Rows:
        # loss = -[y log F + (1 - y) log(1 - F)] + [y log y + (1 - y) log(1 - y)]: linear
        # in y, so are g and the observed h. 0 * (-inf) is 0: a row cannot lose what
        # it does not have (cloglog's log(1 - F) = -inf far right, at y = 1).
        link = self.link_function
        assert isinstance(link, BinaryLink)
        lf, df, ddf = link.log_cdf(eta)
        ls, ds, dds = link.log_sf(eta)
        z = 1.0 - y
        loss = special.xlogy(y, y) + special.xlogy(z, z) - _mix(y, lf, z, ls)
        g = -_mix(y, df, z, ds)
        h = -_mix(y, ddf, z, dds) if information == "observed" else link.fisher(eta)
        return loss, g, h

    def _lipschitz(self) -> float | None:
        dist, name = self.distribution, self.link_function.name
        if name == "log" and dist.variance_power is not None:
            return _power_log_lipschitz(dist.variance_power)
        if name == "log" and isinstance(dist, NegativeBinomial):
            return 1.0  # d log h / d eta: 1 / (1 + a mu) expected, (1 - a mu)/(1 + a mu) observed
        if name == "identity" and isinstance(dist, Gaussian):
            return 0.0
        if name == "logit" and isinstance(dist, Binomial):
            return 1.0  # d log(p (1 - p)) / d eta = 1 - 2p
        return None

    def __repr__(self) -> str:
        return f"ExponentialFamily({self.distribution!r}, {self.link_function!r})"

    def __eq__(self, other: object) -> bool:  # (a GLM's family parameter, compared as data)
        return type(other) is type(self) and isinstance(other, ExponentialFamily) \
            and other.distribution == self.distribution \
            and other.link_function == self.link_function

    def __hash__(self) -> int:
        return hash((type(self), self.distribution, self.link_function))


def make_family(family: str | Distribution, link: str | Link | None = None,
                **parameters: float) -> ExponentialFamily:
    """The family ``family`` with ``link`` (None: the distribution's default link, the
    canonical one where it is defined for it). ``family`` is a name (``power=`` for the
    Tweedie, ``alpha=`` for the negative binomial) or a :class:`Distribution`; a link
    not defined for the family is a ValueError listing the defined ones."""
    if isinstance(family, Distribution):
        if parameters:
            raise TypeError(f"{', '.join(parameters)} belong in the distribution object "
                            f"{family!r}, not in make_family's arguments")
        dist = family
    else:
        dist = make_distribution(family, **parameters)
    if link is None:
        link = dist.default_link
    if isinstance(link, str) and link not in dist.links:
        raise ValueError(f"the {link!r} link is not defined for the {dist.name} family; "
                         f"its links are {', '.join(dist.links)}")
    return ExponentialFamily(dist, make_link(link) if isinstance(link, str) else link)


def family_to_params(family: Distribution | ExponentialFamily) -> dict[str, str | float]:
    """A distribution or a composed family as data: the distribution's name and numeric
    parameters (:meth:`Distribution.to_params`), and ``"link"``'s name for a family
    (``{"name": "tweedie", "power": 1.2, "link": "log"}``); what a model file stores of
    ``GLM(family=...)``. Only problin's own classes (a subclass may behave otherwise
    under the same name): a TypeError for others."""
    if isinstance(family, ExponentialFamily) and type(family) is ExponentialFamily:
        link = family.link_function
        if type(link) is not LINKS.get(link.name):
            raise TypeError(f"the link {link!r} is not one of problin's links")
        return {**family_to_params(family.distribution), "link": link.name}
    if isinstance(family, ExponentialFamily) or type(family) is not DISTRIBUTIONS.get(family.name):
        raise TypeError(f"{family!r} is not one of problin's distributions or families")
    return family.to_params()


def family_from_params(params: dict[str, object]) -> Distribution | ExponentialFamily:
    """The object :func:`family_to_params` described; a ValueError for an unknown name or
    link, or parameters the distribution does not take."""
    rest = dict(params)
    name, link = rest.pop("name", None), rest.pop("link", None)
    numbers = {k: float(v) for k, v in rest.items()
               if isinstance(v, (int, float)) and not isinstance(v, bool)}
    if not isinstance(name, str) or not (link is None or isinstance(link, str)) \
            or len(numbers) != len(rest):
        raise ValueError(f"a family is a name, numeric parameters and a link name, got "
                         f"{params!r}")
    try:
        dist = make_distribution(name, **numbers)
    except TypeError as exc:
        raise ValueError(f"the {name} distribution does not take {sorted(numbers)} ({exc})"
                         ) from None
    return dist if link is None else make_family(dist, link)
