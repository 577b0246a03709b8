"""GLM regressors: counts, rates, sizes and grouped outcomes with problin's full inference.

``GLM(family, link)`` and the convenience regressors of :mod:`problin.glm.regressors`
fit ``E[y | x] = g^-1(b + x^T w + o)`` (McCullagh & Nelder 1989, ch. 2) by the one
Newton/IRLS engine the classifiers use (:class:`~problin._core.model.objective.
GLMObjective` on the standardised design, :func:`~problin.glm.problem.prior_precision`
for ``alpha``). Everything that depends on the distribution or the link (derivatives,
deviance, Pearson statistic, log-likelihood, dispersion, valid targets) is asked of
the family object; nothing here branches on which family it is.

Inference dispatches on the family's dispersion: where it is fixed (Poisson,
binomial, negative binomial) the Wald statistics are z; where it is estimated
(Gaussian, Gamma, inverse Gaussian, Tweedie) the covariance is multiplied by the
estimate ``phi`` and the statistics are referred to t on ``df_resid_`` (R's
``summary.glm``), likelihood-ratio tests to F (R's ``anova(test="F")``).

Where the rows are is the data source's (:func:`problin._source.data_source`): a Dask
array or DataFrame is fitted by distributed passes (one per Newton step; the targets,
weights, offsets, exposures and trials travel in its chunks,
:mod:`problin._dask.regression`), and ``predict`` is lazy on it. What needs all the
rows in one place is refused for Dask input by name: robust and cluster covariances,
``score``, ``predict_interval`` and ``marginal_effects``; the boundary's linear program
(rows fitted at an end of the mean's range) is not run there. The negative binomial's
alpha is estimated from sums over the chunks (``RegressionRows.row_sums``).
"""
import functools
from numbers import Integral, Real
from typing import Any, Literal, Self, TypeVar

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core.model.contract import DesignShape
from .._core.model.design import Design
from .._core.model.design_small import SmallDenseDesign, is_small_dense
from .._core.model.exponential_family import ExponentialFamily
from .._core.model.layout import ONE_PREDICTOR
from .._core.model.objective import GLMObjective
from .._core.model.penalty_firth import JEFFREYS
from .._core.model.sandwich import COV_TYPES
from .._core.validation import check_finite_magnitude
from .._dask.lazy import lazy_on_dask
from .._effects_methods import EffectsMethods
from .._frames import encode_frame
from .._params import validate_params
from .._source import data_source, regression_chunks
from .._state import AllOrNothingFit
from ..inference.effects import EffectsModel
from ..inference.hypothesis import LikelihoodModel, Restrictions, TestResult, table_wald_test
from ..inference.summaries import glm_regression_summary_text
from ..inference.text import SummaryText
from ._covariance import covariance
from ._effects import regressor_effects_model
from ._predict import linear_predictors
from ._penalized_lr import check_lr_inputs, check_pvalues, lr_pvalue_table, restricted_lr_test
from ._profile import Refit, check_ci, profile_table, raw_map
from ._regression_data import (
    RegressionData,
    RegressionObjective,
    RegressionRows,
    log_exposure,
    regression_data,
)
from ._regression_inference import dispersion_source, mean_effects_table, mean_interval_table
from ._regression_solve import solve_regression
from .inference import parameter_names, wald_table
from .interval import check_offset
from ._gaussian_prior import PRIOR_CONSTRAINTS, glm_prior, has_prior, penalised
from .problem import _plain_arrays, design_prior
from .result import GLMFit
from .robust import check_groups, one_predictor_scores, robust_covariance

__all__ = ["GLMRegressor"]

Obj = TypeVar("Obj", bound=RegressionObjective)


class GLMRegressor(AllOrNothingFit, LikelihoodModel, EffectsMethods, RegressorMixin,
                   BaseEstimator):
    """A GLM ``E[y | x] = g^-1(b + x^T w + o)`` of one family, with a Gaussian prior
    (L2 penalty ``alpha/2 |w|^2``) on ``w``; subclasses say which family
    (:meth:`_make_family`). One :class:`~problin.glm.result.GLMFit` per fit (``_result``)."""

    _parameter_constraints: dict[str, list[Any]] = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "solver": [StrOptions({"auto", "newton", "lbfgs", "gradient", "coordinate"})],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "cov_type": [StrOptions(set(COV_TYPES))],
        "scale": [Interval(Real, 0, None, closed="neither"), StrOptions({"X2", "dev", "ml"}),
                  None],
        "information": [StrOptions({"observed", "expected"})],
        "penalty": [StrOptions({"l2", "firth"})],
        **PRIOR_CONSTRAINTS,
    }
    #: The default of a regressor without the parameter (the negative binomial's: its
    #: dispersion is estimated, which Firth's penalty does not take).
    penalty = "l2"
    #: No Gaussian prior of the estimator's own (``prior_mean``/``prior_precision``).
    prior_mean: Any = None
    prior_precision: Any = None

    def _make_family(self) -> ExponentialFamily:  # pragma: no cover - abstract
        """The family object (distribution x link) of the current parameters."""
        raise NotImplementedError

    def _effects_model(self, type: str) -> EffectsModel:
        """What slopes, comparisons and predictions read (:mod:`problin.glm._effects`)."""
        return regressor_effects_model(self, type)

    def get_family(self) -> ExponentialFamily:
        """The fitted model's family (distribution x link, the negative binomial's at its
        fitted ``alpha_``): its mean, variance, unit deviance and log-likelihood
        functions (:class:`~problin._core.model.exponential_family.ExponentialFamily`)."""
        check_is_fitted(self)
        return self._make_family()

    def extra_parameters(self) -> list[tuple[str, float, float]]:
        """``(name, estimate, std_err)`` of the fitted parameters outside the linear
        predictor's coefficients (the summary's header lists them): none here; the
        negative binomial's ``alpha``."""
        return []

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None, offset: Any = None,
            exposure: Any = None, var_weights: Any = None, groups: Any = None,
            trials: Any = None) -> Self:
        """Fit by maximising the (penalised) log-likelihood.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            The targets (counts, sizes, ...); for the binomial with ``trials``, the
            numbers of successes.
        sample_weight : array-like of shape (n_samples,), optional
            Frequency weights: weight 2 is the same as a duplicated row (they count in
            ``n_obs_`` and ``df_resid_``; statsmodels ``GLM(freq_weights=...)``).
        offset : array-like of shape (n_samples,), optional
            A known term of the linear predictor, ``b + x^T w + o``.
        exposure : array-like of shape (n_samples,), optional
            Positive exposures (time at risk, population): ``log(exposure)`` is added
            to the offset, so that the mean is proportional to it (log link only).
        var_weights : array-like of shape (n_samples,), optional
            Variance weights: row i's dispersion is ``phi / var_weights[i]``
            (statsmodels ``GLM(var_weights=...)``; not observations).
        groups : array-like of shape (n_samples,), optional
            The cluster of each row, for ``cov_type="cluster"`` (required then).
        trials : array-like of shape (n_samples,), optional
            Binomial trials: ``y`` are the successes out of ``trials``.

        Returns
        -------
        self
        """
        validate_params(self)
        family = self._make_family()
        if self.scale == "ml":  # (before any pass: a ValueError where it is not defined)
            family.require_ml_dispersion()
        arguments = {"sample_weight": sample_weight, "offset": offset, "exposure": exposure,
                     "var_weights": var_weights, "trials": trials}
        # (the data source: rows at hand, or a Dask collection's chunks fitted by passes)
        fit = data_source(X).reduce(
            functools.partial(self._fit_chunks, y=y, family=family, groups=groups,
                              arguments=arguments),
            functools.partial(self._fit_rows, y=y, family=family, groups=groups,
                              arguments=arguments))
        attributes = fit.attributes()  # (one output: a vector and a number)
        attributes.update(coef_=attributes["coef_"][0],
                          intercept_=float(attributes["intercept_"][0]))
        self.__dict__.pop("separated_", None)  # a refit inside the range has none
        self.__dict__.update(attributes)
        self._result = fit
        return self

    def _fit_rows(self, X: Any, y: Any, family: ExponentialFamily, groups: Any,
                  arguments: dict[str, Any]) -> GLMFit:
        """The fit on rows in memory (dense or sparse)."""
        # (X's finiteness: check_finite_magnitude, on both cores; y's: the family's check_y)
        X = encode_frame(self, X, True)
        plain = _plain_arrays(self, X, y)  # (validate_data: ~0.15 ms, a sixth of a small fit)
        X, y = plain if plain is not None else validate_data(
            self, X, y, accept_sparse=["csr", "csc"], dtype=[np.float64, np.float32],
            y_numeric=True, ensure_all_finite=False)
        if sp.issparse(X):
            X = X.tocsr()
        check_finite_magnitude(X, self)
        data = regression_data(family, y, X.shape[0], **arguments)
        clusters = check_groups(self.cov_type, groups, X.shape[0])
        kind = SmallDenseDesign if is_small_dense(X, self.fit_intercept) else Design
        design = kind.standardised(X, self.fit_intercept, sample_weight=data.weights)
        objective, fit = self._fit_model(design, family, data)
        if self.cov_type != "nonrobust" and fit.covariance_standard is not None:
            fit = self._robust(fit, objective, data, clusters)
        return fit

    def _fit_chunks(self, X: Any, y: Any, family: ExponentialFamily, groups: Any,
                    arguments: dict[str, Any]) -> GLMFit:
        """The fit on a Dask collection's chunks, a distributed pass per Newton step; the
        robust covariances need each row's score (HC0, HC1), leverage (HC2, HC3) or
        cluster in one place: refused."""
        if self.cov_type != "nonrobust" or groups is not None:
            raise ValueError(f"cov_type={self.cov_type!r} (and groups) needs the rows in "
                             "memory: use cov_type='nonrobust' for Dask arrays and "
                             "DataFrames, or fit in memory")
        rows = regression_chunks(self, X, y, family, functools.partial(regression_data, family),
                                 self.fit_intercept, **arguments)
        return self._fit_model(rows.design, family, rows)[1]

    def _robust(self, fit: GLMFit, objective: GLMObjective, data: RegressionData,
                clusters: Any) -> GLMFit:
        """``fit`` with the sandwich covariance of ``cov_type`` (:mod:`problin.glm.robust`),
        whose bread is the inverse observed information whatever ``information`` says
        (the estimating equation's derivative; statsmodels ``GLM``'s too), unscaled: the
        dispersion cancels."""
        eta = objective.linear_predictor(fit.theta_standard)
        _, _, bread = covariance(objective, objective.observed_hessian(fit.theta_standard, eta))
        copies = data.frequency
        if data.variance is not None and copies is None:
            copies = np.ones(data.y.size)
        cov, cov_z = robust_covariance(objective, one_predictor_scores(objective, eta), bread,
                                       self.cov_type, clusters, fit.n_estimated, copies)
        return fit.replace(cov_type=self.cov_type, covariance=cov, covariance_standard=cov_z)

    def _objective(self, design: DesignShape, family: ExponentialFamily,
                   data: RegressionRows[Obj],
                   information: str | None = None) -> Obj:
        """The penalised negative log-likelihood at unit dispersion. Newton's curvature
        (``information`` None): the observed information where the family's is never
        negative (``observed_convex``: Newton converges quadratically there, Fisher
        scoring only linearly, Gamma-log 4 iterations against 14), else ``information``;
        the covariance is ``information``'s whichever it is (:meth:`_solve`)."""
        raw = glm_prior(self, design.n_features)  # (refused with Firth's penalty)
        if self.penalty == "firth":
            self._check_firth(family)
            # (scored with the expected information, whose inverse it reports)
            return data.objective(design, family, None, "expected", JEFFREYS)
        if information is None:
            information = "observed" if family.observed_convex else self.information
        return data.objective(design, family,
                              design_prior(design, 1, self.alpha, raw=raw), information)

    def _check_firth(self, family: ExponentialFamily) -> None:
        """One clear error for what Firth's penalty does not combine with."""
        JEFFREYS.check(family)
        JEFFREYS.check_options("firth", self.alpha, self.solver)
        if self.information != "expected":
            raise ValueError("penalty='firth' scores with the expected information and "
                             "reports its inverse: information='expected' only")

    def _fit_model(self, design: DesignShape, family: ExponentialFamily,
                   data: RegressionRows[Obj]) -> tuple[Obj, GLMFit]:
        """The objective of ``family`` on ``design`` and the fit that minimises it (a
        subclass with parameters of its own, such as the negative binomial's alpha,
        fits them here)."""
        objective = self._objective(design, family, data)
        return objective, self._solve(objective, family, data)

    def _solve(self, objective: Obj, family: ExponentialFamily,
               data: RegressionRows[Obj], theta0: NDArray[np.float64] | None = None,
               extra_params: int = 0) -> GLMFit:
        """Minimise ``objective`` from ``theta0`` (None: the family's start) and make the
        fit's record (:func:`~problin.glm._regression_solve.solve_regression`)."""
        return solve_regression(self, objective, family, data, theta0, extra_params)

    # ------------------------------------------------------------- predict
    def _eta(self, X: Any, offset: Any, exposure: Any) -> Any:
        """The linear predictor of new rows (their offset and exposure added)."""
        check_is_fitted(self)
        data_source(X).require_in_memory(
            "this method needs the rows in memory (a table or an interval per row, a "
            "score over all rows); for Dask X, predict(X) is lazy: compute from it, or "
            "pass the rows in memory")
        X = validate_data(self, encode_frame(self, X, False), accept_sparse=["csr", "csc"],
                          dtype=[np.float64, np.float32], reset=False)
        eta = linear_predictors(self._result, X, ONE_PREDICTOR)
        off = check_offset(offset, X.shape[0])
        if off is not None:
            eta = eta + off
        if exposure is not None:  # (the log link's only: a ValueError for another)
            eta = eta + log_exposure(self._make_family(), exposure, X.shape[0])
        return X, eta

    @lazy_on_dask(in_memory_only=("offset", "exposure"))
    def predict(self, X: Any, offset: Any = None, exposure: Any = None,
                linear: bool = False) -> Any:
        """The fitted mean ``g^-1(b + x^T w + o)`` (``linear=True``: the linear
        predictor ``b + x^T w + o``). ``offset``, ``exposure``: the new rows' (None: 0
        and 1, also for a model fitted with them). For a Dask ``X``, a lazy Dask array
        mapped over its chunks (without ``offset`` or ``exposure``)."""
        _, eta = self._eta(X, offset, exposure)
        return eta if linear else self._make_family().mean(eta)

    def score(self, X: Any, y: Any, sample_weight: Any = None, offset: Any = None,
              exposure: Any = None, trials: Any = None) -> float:
        """D², the fraction of deviance explained: ``1 - D(y, mu) / D(y, ybar)``, the
        null model the weighted mean of ``y`` (scikit-learn's ``d2_tweedie_score`` for
        the Tweedie family of that power). ``trials``: the binomial's, ``y`` successes.
        Where the null model fits exactly (all ``y`` equal) D² is 1 for an exact fit,
        else 0 (scikit-learn's ``r2_score(force_finite=True)``)."""
        family = self.get_family()
        Xv, eta = self._eta(X, offset, exposure)
        data = regression_data(family, np.asarray(y, dtype=np.float64), Xv.shape[0],
                               sample_weight, None, None, None, trials)
        mu = family.mean(eta)
        ybar = np.average(data.y, weights=data.weights)
        null = family.deviance(data.y, np.full_like(data.y, ybar), data.weights)
        deviance = family.deviance(data.y, mu, data.weights)
        if null == 0:
            return 1.0 if deviance == 0 else 0.0
        return float(1.0 - deviance / null)

    def predict_interval(self, X: Any, level: float = 0.95, offset: Any = None,
                         exposure: Any = None) -> pd.DataFrame:
        """The fitted mean with its confidence interval, formed on the linear predictor's
        scale (``eta -+ q se``, robust with ``cov_type``) and mapped through the inverse
        link, which keeps it in the mean's range; ``std_err`` is the delta method's
        ``|d mu / d eta| se`` (statsmodels ``GLM.get_prediction().summary_frame()``).
        ``q``: normal, or t on ``df_resid_`` where the dispersion is estimated.

        Returns
        -------
        DataFrame
            ``mean, std_err, ci_low, ci_high``, one row per row of ``X``.
        """
        index = X.index if isinstance(X, pd.DataFrame) else None
        Xv, eta = self._eta(X, offset, exposure)
        return mean_interval_table(self._result, self._make_family(), Xv, eta, level, index)

    # ----------------------------------------------------------- inference
    def summary(self, level: float = 0.95, ci: str = "wald", *, pvalues: str = "wald",
                X: Any = None, y: Any = None, **rows: Any) -> pd.DataFrame:
        """Coefficient table ``coef, std_err, z (or t), p_value, ci_low, ci_high``.

        ``ci="profile"``: profile-likelihood intervals refitted on the training rows
        ``X, y`` (and the fit's ``sample_weight``, ``offset``, ... as ``rows``): the
        deviance profile scaled by the fitted dispersion, cut at the normal quantile,
        as R's ``confint.glm`` (:mod:`problin.glm._profile`). ``pvalues="lr"``:
        likelihood-ratio p-values, each parameter fixed at 0 and the model refitted
        (the deviance change over the fitted dispersion, chi²(1): R's
        ``drop1(test="Chisq")``); column ``chi2`` replaces ``z``/``t``.

        Standard errors are ``sqrt(phi)`` times those of the inverse information
        (expected by default: statsmodels' ``GLM`` IRLS and R's ``glm``), ``phi`` the
        dispersion ``scale_``. Where ``phi`` is estimated the statistic is t on
        ``df_resid_`` degrees of freedom (column ``t``; R's ``summary.glm``), else z;
        ``attrs["statistic"]`` says which.
        """
        check_is_fitted(self)
        fit = self._result
        if fit.covariance is None:
            raise ValueError("covariance_ was not computed during fit (too many parameters)")
        names = parameter_names(self, self.n_features_in_)
        table = wald_table(names, fit.theta, fit.covariance, level, fit.identified,
                           df=fit.t_df)
        family = self._make_family()
        table.attrs.update(model=type(self).__name__, family=family.distribution.name,
                           link=family.link_function.name, n_obs=self.n_obs_, scale=fit.dispersion,
                           statistic="z" if fit.t_df is None else "t",
                           dispersion=dispersion_source(self.scale, family.fixed_dispersion),
                           df=fit.t_df, objective=fit.objective, converged=fit.converged,
                           n_iter=fit.n_iter, level=float(level), cov_type=fit.cov_type,
                           log_likelihood=self.log_likelihood_,
                           boundary_rows=0 if fit.separated is None else int(fit.separated.sum()))
        check_ci(ci, X, y)
        check_pvalues(pvalues, X, y, self.alpha, has_prior(self))
        table.attrs["ci"] = ci
        if ci == "profile" or pvalues == "lr":
            refit = self._refit(X, y, rows)
            if ci == "profile":
                table = profile_table(table, refit, level)
            if pvalues == "lr":
                table = lr_pvalue_table(table, refit)
        return table

    def restricted_lr_test(self, R: Restrictions, q: Any = None, *, X: Any, y: Any,
                           **rows: Any) -> TestResult:
        """Likelihood-ratio test of ``R beta = q`` (``beta`` in the order of
        ``summary()``; ``R`` a matrix or text such as ``"x1 = 0"``) by refitting the
        model under the restrictions on its training rows ``X, y`` (and ``rows``, as
        :meth:`summary`): the deviance change over the fitted dispersion, chi²(J)."""
        check_is_fitted(self)
        check_lr_inputs(X, y, self.alpha, "restricted_lr_test", has_prior(self))
        return restricted_lr_test(self.summary(), self._refit(X, y, rows), R, q)

    def _refit(self, X: Any, y: Any, rows: dict[str, Any]) -> Refit:
        """The fit's objective rebuilt on the rows (in memory), its estimate mapped into
        the rebuilt design's basis (:mod:`problin.glm._profile`)."""
        family = self._make_family()
        X = encode_frame(self, X, False)
        X, y = validate_data(self, X, y, accept_sparse=["csr", "csc"],
                             dtype=[np.float64, np.float32], y_numeric=True, reset=False)
        if sp.issparse(X):
            X = X.tocsr()
        data = regression_data(family, y, X.shape[0], **rows)
        kind = SmallDenseDesign if is_small_dense(X, self.fit_intercept) else Design
        design = kind.standardised(X, self.fit_intercept, sample_weight=data.weights)
        objective = self._objective(design, family, data)
        fit = self._result
        T = raw_map(design.basis, fit.theta.size)
        theta = np.linalg.solve(T, fit.theta)
        return Refit.of(objective, theta, T, fit.dispersion,
                        penalised(self) or self.penalty == "firth")

    def summary_text(self, level: float = 0.95, ci: str = "wald", *, pvalues: str = "wald",
                     X: Any = None, y: Any = None, **rows: Any) -> SummaryText:
        """statsmodels' GLM summary: family, link, deviance, Pearson chi², scale,
        log-likelihood, AIC, BIC and degrees of freedom above the :meth:`summary`
        table (with a note where a Poisson or binomial fit looks overdispersed)."""
        family = self._make_family()
        return glm_regression_summary_text(self, self.summary(level, ci, pvalues=pvalues, X=X, y=y,
                                                                **rows),
                                           family.distribution.name,
                                           family.link_function.name,
                                           not family.fixed_dispersion)

    def wald_test(self, R: Restrictions, q: Any = None, *, use_f: bool | None = None
                  ) -> TestResult:
        """Wald test of ``R theta = q`` (``theta`` in the order of ``summary()``):
        ``W = d^T (R V R^T)^-1 d ~ chi2(J)``, ``V = covariance_``; the F form ``W / J``
        on ``(J, df_resid_)`` where the dispersion is estimated (``use_f=None``), as
        R and statsmodels ``wald_test(use_f=True)``. ``R``: a matrix or text such as
        ``"x1 = x2, x3 = 0"``."""
        if use_f is None:
            use_f = self._result.t_df is not None
        return table_wald_test(self.summary(), self.covariance_, R, q, use_f=use_f,
                               df_resid=self.df_resid_ if use_f else None)

    def lr_reference(self) -> Literal["chi2", "F"]:
        """F where the dispersion was estimated (``scale_estimated_``: :func:`problin.
        lr_test` then compares the deviances, R's ``anova(test="F")``), else chi²."""
        check_is_fitted(self)
        return "F" if self._result.t_df is not None else "chi2"

    def marginal_effects(self, X: Any, at: str = "overall", *, sample_weight: Any = None,
                         level: float = 0.95, offset: Any = None,
                         exposure: Any = None) -> pd.DataFrame:
        """Marginal effects on the mean, ``d mu / d x_j = (d mu / d eta) w_j``, averaged
        over the rows of ``X`` (``"overall"``) or at their column means (``"mean"``),
        with delta-method standard errors (Greene, *Econometric Analysis*, 8th ed.,
        §4.6 and §18.4; statsmodels ``Poisson(...).get_margeff(at=at)``)."""
        return mean_effects_table(self, X, at, sample_weight, level, offset, exposure)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.positive_only = self._make_family().distribution.mean_low >= 0
        return tags
