"""Negative binomial (NB2) regression of overdispersed counts, ``alpha`` fixed or by ML.

``Var(y) = mu + alpha mu²`` (Hilbe 2011, ch. 8). With ``nb_alpha`` given, the model is
the GLM of the negative binomial family with that ``alpha``. With ``nb_alpha=None``,
``alpha`` and the coefficients are estimated jointly by maximum likelihood, as
statsmodels' ``NegativeBinomial(loglike_method="nb2")``: the coefficients by the
Newton engine at fixed ``alpha``, warm-started, alternating with ``alpha`` by Newton's
method in ``log alpha`` at fixed means (:mod:`problin._core.model.negative_binomial`;
``alpha`` and the coefficients are orthogonal in expectation, so the alternation
converges in a few rounds). The standard errors are the joint observed information's:
the coefficients' covariance at fixed ``alpha`` updated by the rank-one term of
``alpha`` (:func:`~problin._core.model.negative_binomial.joint_covariance`), and
``alpha_se_`` that of ``alpha``.

What ``alpha`` needs of the rows (its score and curvature at fixed means, the moment
start, the joint information's cross term) is a sum over rows of per-row terms in
``y``, the means and the weights, which the rows reduce (``RegressionRows.row_sums``):
at once in memory, dense or sparse, and one distributed pass over Dask chunks, so Dask
input is fitted by the same code (a pass per Newton step of the coefficients and per
evaluation in ``alpha``).
"""
import functools
from numbers import Real
from typing import Any

import numpy as np
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from .._core.model import negative_binomial as nb
from .._core.model.exponential_family import ExponentialFamily, make_family
from .._core.model.fitted_rows import RowProducts, SumRows
from .._core.solvers.newton import newton
from ..exceptions import ConvergenceWarning, warn_at_caller
from ._covariance import to_raw
from ._regression_data import RegressionObjective, RegressionRows
from .regression import Obj
from .regressors import _doc, _OneFamily
from .result import GLMFit

__all__ = ["NegativeBinomialRegression"]


@_doc
class NegativeBinomialRegression(_OneFamily):
    """Negative binomial (NB2) regression: ``Var(y) = mu + alpha mu²``, log link.

    Parameters
    ----------
    nb_alpha : float or None, default=None
        The overdispersion ``alpha`` (> 0), or None to estimate it by maximum
        likelihood jointly with the coefficients (statsmodels ``NegativeBinomial``;
        ``alpha_`` and ``alpha_se_``). Where the counts show no overdispersion the
        likelihood rises towards the Poisson limit ``alpha -> 0``: a
        ``ConvergenceWarning`` gives the value reached (fit a Poisson model).
    link : {"log", "identity", "sqrt"}, default="log"
    {common}
    alpha_ : float
        The overdispersion used (``nb_alpha``, or its estimate).
    alpha_se_ : float
        Its standard error from the joint observed information (NaN when fixed).
    n_iter_ : int
        With ``alpha`` estimated, the Newton iterations of the coefficients over the
        whole fit: the Poisson start's, each solve at a fixed ``alpha`` of the
        alternation, and the final one (statsmodels' ``NegativeBinomial`` reports its
        joint optimiser's iterations; the updates of ``alpha`` between the solves, at
        fixed means, are not counted).

    Notes
    -----
    ``information`` defaults to ``"observed"`` here, whose inverse is what statsmodels'
    ``NegativeBinomial`` reports; AIC and BIC count ``alpha`` as a parameter when it is
    estimated (as statsmodels does).
    """

    _distribution = "negative_binomial"

    def __init__(self, nb_alpha: float | None = None, link: str = "log", alpha: float = 0.0, *,
                 fit_intercept: bool = True, cov_type: str = "nonrobust",
                 scale: float | str | None = None, solver: str = "auto",
                 max_iter: int | None = None, tol: float = 1e-8,
                 information: str = "observed", penalty: str = "l2",
                 prior_mean: Any = None, prior_precision: Any = None) -> None:
        self.nb_alpha = nb_alpha
        super().__init__(link, alpha, fit_intercept=fit_intercept, cov_type=cov_type,
                         scale=scale, solver=solver, max_iter=max_iter, tol=tol,
                         information=information, penalty=penalty, prior_mean=prior_mean,
                         prior_precision=prior_precision)

    _parameter_constraints = {**_OneFamily._parameter_constraints,
                              "nb_alpha": [Interval(Real, 0, None, closed="neither"), None]}

    def _make_family(self, nb_alpha: float | None = None) -> ExponentialFamily:
        # (the mean does not depend on alpha: before the fit, and for the mean, any value
        # serves; get_family gives the fitted alpha_'s)
        value = nb_alpha if nb_alpha is not None else self.nb_alpha \
            if self.nb_alpha is not None else 1.0
        return make_family(self._distribution, self.link, alpha=value)

    def get_family(self) -> ExponentialFamily:
        check_is_fitted(self)
        return self._make_family(self.alpha_)

    def extra_parameters(self) -> list[tuple[str, float, float]]:
        check_is_fitted(self)
        name = "alpha" if self.nb_alpha is None else "alpha (fixed)"
        return [(name, float(self.alpha_), float(self.alpha_se_))]

    def _check_firth(self, family: ExponentialFamily) -> None:
        if self.nb_alpha is None:
            raise ValueError("penalty='firth' needs a fixed nb_alpha: the adjusted score is "
                             "defined at a known dispersion, and alpha estimated alongside "
                             "it is not (set nb_alpha, or penalty='l2')")
        super()._check_firth(family)

    def _fit_model(self, design: Any, family: Any, rows: RegressionRows[Obj]
                   ) -> tuple[Obj, GLMFit]:
        if self.penalty == "firth":
            self._check_firth(family)  # (before the alternation's Poisson start)
        if self.nb_alpha is not None:
            fixed, fit = super()._fit_model(design, family, rows)
            return fixed, _with_alpha(fit, self.nb_alpha, np.nan)
        # Every question about alpha is a sum over the rows at fitted means, reduced by
        # the rows (all at once in memory, a pass over Dask chunks): one code path.
        poisson = make_family("poisson", self.link)
        theta = np.zeros(design.n_params)
        if design.intercept:
            theta[0] = rows.start_intercept(poisson)
        iterations = 0

        def fit_means(family: ExponentialFamily) -> SumRows:
            """The coefficients at ``family``'s alpha (Newton, warm-started), and the
            reduction over the rows at their means."""
            nonlocal theta, iterations
            objective = self._objective(design, family, rows)
            result = newton(objective, theta, tol=self.tol)
            theta, iterations = result.theta, iterations + result.n_iter
            eta = result.eta if result.eta is not None else objective.linear_predictor(theta)
            return functools.partial(rows.row_sums, design, family, eta)

        start = nb.moment_alpha(fit_means(poisson))
        found = nb.fit_alpha(lambda value: fit_means(self._make_family(value)), start)
        value = max(found.alpha, nb.ALPHA_FLOOR)
        if not found.converged:
            warn_at_caller(f"{type(self).__name__}: alpha did not converge (alpha = "
                           f"{found.alpha:.4g}: {found.message}); the coefficients are those "
                           "at that alpha", ConvergenceWarning)
        family = self._make_family(value)
        objective = self._objective(design, family, rows)
        fit = self._solve(objective, family, rows, theta0=theta, extra_params=1)
        # (n_iter_: every Newton iteration of the coefficients, the Poisson start's and
        # each of the alternation's solves included, not only the last solve's)
        fit = fit.replace(n_iter=iterations + fit.n_iter)
        return objective, _joint(fit, objective, rows, design, family, value)


def _with_alpha(fit: GLMFit, value: float, se: float) -> GLMFit:
    stats = dict(fit.regression_statistics or {})
    stats.update(alpha_=float(value), alpha_se_=float(se))
    return fit.replace(regression_statistics=stats)


def _joint(fit: GLMFit, objective: RegressionObjective, rows: RegressionRows[Obj],
           design: RowProducts, family: ExponentialFamily, value: float) -> GLMFit:
    """``fit`` with the joint covariance of ``(beta, alpha)``'s beta block (module
    docstring), in the solver's coordinates and in raw units, and ``alpha_se_``: the
    joint information's cross term and alpha's curvature in one reduction over the rows."""
    cov_z = fit.covariance_standard
    if cov_z is None or not np.all(np.isfinite(cov_z)):
        return _with_alpha(fit, value, np.nan)
    eta = objective.linear_predictor(fit.theta_standard)
    cross, second = rows.row_sums(design, family, eta,
                                  functools.partial(nb.joint_sums, alpha=value))
    cov_z, _, var_alpha = nb.joint_covariance(cov_z, np.asarray(cross), float(second))
    fit = fit.replace(covariance_standard=cov_z, covariance=to_raw(objective, cov_z))
    return _with_alpha(fit, value, float(np.sqrt(var_alpha)))
