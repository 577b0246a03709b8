"""The public GLM regressors: ``GLM(family, link)`` and one class per common family.

Each is a :class:`~problin.glm.regression.GLMRegressor` that only says which family
(distribution x link, :mod:`problin._core.model.exponential_family`) its parameters
name; fitting, inference and prediction are the base class's.
"""
from numbers import Real
from typing import Any

from sklearn.utils._param_validation import Interval

from .._core.model.exponential_family import ExponentialFamily, make_family
from .regression import GLMRegressor

__all__ = ["GLM", "PoissonRegression", "GammaRegression", "InverseGaussianRegression",
           "TweedieRegression", "BinomialRegression"]

_COMMON = """
    alpha : float, default=0.0
        Precision of the Gaussian prior on the weights (L2 penalty
        ``alpha/2 |w|^2`` added to the negative log-likelihood at unit dispersion);
        the intercept is not penalised. scikit-learn's ``PoissonRegressor(alpha=a)``
        etc. minimise ``mean deviance / 2 + a/2 |w|^2``: the same fit is
        ``alpha = a n`` here (``a`` times the sum of the weights).
    fit_intercept : bool, default=True
        Whether to fit an (unpenalised) intercept ``b``.
    cov_type : {"nonrobust", "HC0", "HC1", "HC2", "HC3", "cluster"}, default="nonrobust"
        The covariance of ``covariance_`` and ``summary()``: ``scale_`` times the
        inverse information, or a sandwich (:mod:`problin.glm.robust`;
        ``fit(..., groups=...)`` for ``"cluster"``), which does not depend on the scale.
    scale : float, {"X2", "dev", "ml"} or None, default=None
        The dispersion ``phi``: None is the family's (1 for Poisson, binomial and
        negative binomial, else Pearson's ``X² / df_resid``), ``"X2"`` Pearson's,
        ``"dev"`` ``deviance / df_resid``, ``"ml"`` the maximum-likelihood dispersion
        at the fitted means (Gaussian and inverse Gaussian: ``deviance / n``; Gamma:
        MASS's ``gamma.shape``; Tweedie: by its series density; a ValueError where
        the family fixes the dispersion at 1), a number that value (statsmodels'
        ``GLM.fit(scale=...)``). An estimated scale makes the statistics t; the
        covariance, log-likelihood, AIC and BIC are at ``scale_``.
    solver : {"auto", "newton", "lbfgs", "gradient", "coordinate"}, default="auto"
        As in :class:`problin.LogisticRegression`.
    max_iter : int or None, default=None
        Iterations; None means 100, 5000, 10000 and 1000 for newton, lbfgs, gradient
        and coordinate.
    tol : float, default=1e-8
        The convergence tolerance: the answer lies within a few ``tol`` standard
        errors of the optimum (in the likelihood's units where the dispersion is
        estimated), as in :class:`problin.LogisticRegression`.
    information : {"expected", "observed"}, default="expected"
        The curvature of Newton's steps and of ``covariance_``: the expected
        information (Fisher scoring, IRLS: statsmodels ``GLM`` and R ``glm``, whose
        standard errors this matches for every link) or the observed (statsmodels
        ``GLM.fit(method="newton")``). Equal for canonical links.
    penalty : {"l2", "firth"}, default="l2"
        ``"l2"``: the Gaussian prior of ``alpha``. ``"firth"``: Firth's bias-reduced
        likelihood ``l(theta) + 1/2 log |I(theta)|`` (the Jeffreys prior; Kosmidis &
        Firth 2009's adjusted score) for families of a fixed dispersion (Poisson,
        binomial, Bernoulli): finite estimates where the ML ones diverge, standard
        errors from the information with the leverages held (as logistf's). In
        memory, Newton, ``alpha = 0``, the expected information.
    prior_mean : array-like of shape (p,) or None, default=None
    prior_precision : array-like of shape (p, p) or (p,) or None, default=None
        A Gaussian prior ``N(m_0, S_0^-1)`` on the raw parameters ``[intercept,
        coef...]`` (the intercept first where ``fit_intercept``), the penalty
        ``1/2 (theta - m_0)^T S_0 (theta - m_0)``: ``prior_precision`` is ``S_0``
        (symmetric positive semidefinite; a vector: its diagonal; then ``alpha``
        must be 0), ``prior_mean`` is ``m_0`` (None: zero; alone, it centres
        ``alpha``'s ridge). Not with ``penalty="firth"``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    covariance_ : ndarray of shape (p, p)
        ``[intercept, coef...]``; ``scale_`` times the inverse information, or robust.
    scale_ : float
        The dispersion ``phi``.
    deviance_, null_deviance_, pearson_chi2_ : float
        The deviance, that of the intercept-only model (with the offset), Pearson's chi².
    log_likelihood_, null_log_likelihood_, aic_, bic_ : float
        At ``scale_`` (the Gaussian with the identity link at ``RSS / n``);
        ``-2 l + 2 k`` and ``-2 l + k log n`` (statsmodels' ``aic`` and ``bic``).
    df_model_, df_resid_, n_obs_ : float
        ``k - 1``, ``n - k``, ``n`` the sum of ``sample_weight``.
    n_iter_, converged_, identified_ :
        As in :class:`problin.LogisticRegression`.
    separated_ : ndarray of bool of shape (n_samples,)
        Set only where rows are fitted at the boundary of the mean's range (all-zero
        counts, a column nonzero only where ``y = 0``, proportions of 0 or 1 in a group
        of their own; a ``PerfectFitWarning``): those rows, whose coefficients diverge.
"""


def _doc(cls: type) -> type:
    cls.__doc__ = (cls.__doc__ or "").replace("    {common}\n", _COMMON.strip("\n") + "\n")
    return cls


@_doc
class GLM(GLMRegressor):
    """A generalised linear model ``E[y | x] = g^-1(b + x^T w + o)`` of any family.

    Parameters
    ----------
    family : str, distribution or family object, default="poisson"
        ``"gaussian"``, ``"poisson"``, ``"gamma"``, ``"inverse_gaussian"``,
        ``"tweedie"`` (power 1.5), ``"binomial"``, ``"bernoulli"``,
        ``"negative_binomial"`` (alpha 1); a distribution with its parameters
        (``problin._core.model.distributions.Tweedie(power=1.2)``); or a family
        object, distribution and link composed
        (:func:`problin._core.model.exponential_family.make_family`).
    link : str or None, default=None
        The link: None is the family's canonical link (log for the Tweedie and the
        negative binomial); a link the family does not define is an error.
    {common}
    Examples
    --------
    >>> import numpy as np
    >>> from problin import GLM
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([1.0, 2.0, 4.0, 9.0])
    >>> GLM("poisson").fit(X, y).coef_.round(3)
    array([0.748])
    """

    def __init__(self, family: Any = "poisson", link: str | None = None, alpha: float = 0.0, *,
                 fit_intercept: bool = True, cov_type: str = "nonrobust",
                 scale: float | str | None = None, solver: str = "auto",
                 max_iter: int | None = None, tol: float = 1e-8,
                 information: str = "expected", penalty: str = "l2",
                 prior_mean: Any = None, prior_precision: Any = None) -> None:
        self.family = family
        self.link = link
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.cov_type = cov_type
        self.scale = scale
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.information = information
        self.penalty = penalty
        self.prior_mean = prior_mean
        self.prior_precision = prior_precision

    _parameter_constraints = {**GLMRegressor._parameter_constraints,
                              "family": [str, object], "link": [str, None]}

    def _make_family(self) -> ExponentialFamily:
        if isinstance(self.family, ExponentialFamily):  # distribution and link composed
            if self.link is not None and self.link != self.family.link_function.name:
                raise ValueError(f"link={self.link!r} contradicts the family object's "
                                 f"{self.family.link_function.name!r} link: pass link=None")
            return self.family
        return make_family(self.family, self.link)


class _OneFamily(GLMRegressor):
    """A regressor of one distribution: ``_distribution`` with the ``link`` parameter."""

    _distribution = ""

    def __init__(self, link: str = "log", alpha: float = 0.0, *, fit_intercept: bool = True,
                 cov_type: str = "nonrobust", scale: float | str | None = None,
                 solver: str = "auto", max_iter: int | None = None, tol: float = 1e-8,
                 information: str = "expected", penalty: str = "l2",
                 prior_mean: Any = None, prior_precision: Any = None) -> None:
        self.link = link
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.cov_type = cov_type
        self.scale = scale
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.information = information
        self.penalty = penalty
        self.prior_mean = prior_mean
        self.prior_precision = prior_precision

    _parameter_constraints = {**GLMRegressor._parameter_constraints, "link": [str]}

    def _make_family(self) -> ExponentialFamily:
        return make_family(self._distribution, self.link)


@_doc
class PoissonRegression(_OneFamily):
    """Poisson regression of counts: ``y ~ Poisson(mu)``, ``log mu = b + x^T w + o``.

    Rates: ``fit(X, counts, exposure=time)`` fits ``mu = time exp(b + x^T w)``.
    Overdispersed counts (Pearson chi² / df well above 1, flagged by
    ``summary_text()``): ``scale="X2"`` (quasi-Poisson), ``cov_type="HC0"`` or
    :class:`NegativeBinomialRegression`.

    Parameters
    ----------
    link : {"log", "identity", "sqrt"}, default="log"
    {common}
    """

    _distribution = "poisson"


@_doc
class GammaRegression(_OneFamily):
    """Gamma regression of positive sizes and durations: ``Var(y) = phi mu²``.

    Parameters
    ----------
    link : {"log", "inverse", "identity"}, default="log"
        The log link (scikit-learn's ``GammaRegressor``, glum); the canonical inverse
        link is statsmodels' and R's default.
    {common}
    """

    _distribution = "gamma"


@_doc
class InverseGaussianRegression(_OneFamily):
    """Inverse Gaussian regression of positive outcomes: ``Var(y) = phi mu³``.

    Parameters
    ----------
    link : {"log", "inverse_squared", "inverse", "identity"}, default="log"
    {common}
    """

    _distribution = "inverse_gaussian"


@_doc
class BinomialRegression(_OneFamily):
    """Binomial regression of successes out of trials: ``fit(X, successes, trials=n)``
    (proportions ``y`` in [0, 1] without ``trials``, e.g. 0/1 outcomes); predictions
    are probabilities.

    Parameters
    ----------
    link : {"logit", "probit", "cloglog", "loglog"}, default="logit"
    {common}
    """

    _distribution = "binomial"

    def __init__(self, link: str = "logit", alpha: float = 0.0, *, fit_intercept: bool = True,
                 cov_type: str = "nonrobust", scale: float | str | None = None,
                 solver: str = "auto", max_iter: int | None = None, tol: float = 1e-8,
                 information: str = "expected", penalty: str = "l2",
                 prior_mean: Any = None, prior_precision: Any = None) -> None:
        super().__init__(link, alpha, fit_intercept=fit_intercept, cov_type=cov_type,
                         scale=scale, solver=solver, max_iter=max_iter, tol=tol,
                         information=information, penalty=penalty, prior_mean=prior_mean,
                         prior_precision=prior_precision)


@_doc
class TweedieRegression(_OneFamily):
    """Tweedie (compound Poisson-Gamma) regression, ``Var(y) = phi mu^p``, ``1 < p < 2``:
    non-negative outcomes with exact zeros (claim amounts).

    Parameters
    ----------
    power : float, default=1.5
        The variance power ``p``, strictly between 1 and 2.
    link : {"log", "identity"}, default="log"
    {common}
    """

    _distribution = "tweedie"

    def __init__(self, power: float = 1.5, link: str = "log", alpha: float = 0.0, *,
                 fit_intercept: bool = True, cov_type: str = "nonrobust",
                 scale: float | str | None = None, solver: str = "auto",
                 max_iter: int | None = None, tol: float = 1e-8,
                 information: str = "expected", penalty: str = "l2",
                 prior_mean: Any = None, prior_precision: Any = None) -> None:
        self.power = power
        super().__init__(link, alpha, fit_intercept=fit_intercept, cov_type=cov_type,
                         scale=scale, solver=solver, max_iter=max_iter, tol=tol,
                         information=information, penalty=penalty, prior_mean=prior_mean,
                         prior_precision=prior_precision)

    _parameter_constraints = {**_OneFamily._parameter_constraints,
                              "power": [Interval(Real, 1, 2, closed="neither")]}

    def _make_family(self) -> ExponentialFamily:
        return make_family(self._distribution, self.link, power=self.power)
