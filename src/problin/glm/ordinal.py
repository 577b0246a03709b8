"""Ordinal (cumulative-link) regression: ordered classes with full inference.

Fitted attributes (stable: the CLI, reports, Bayesian and Brant code read them):

* ``coef_`` (D,): the slopes ``beta``; ``cutpoints_`` (K-1,): the increasing
  cut-points ``theta``; ``P(y <= classes_[k] | x) = F(theta_k - x^T beta)``; with
  ``nominal=`` columns, ``coef_`` is (K-1, D): each cut's slopes ``beta_k`` (the other
  columns' repeated), ``P(y <= classes_[k] | x) = F(theta_k - x^T beta_k)``;
* ``classes_`` (K,): the ordered labels (``classes=``, else sorted); ``link``: the
  latent distribution's name (a parameter);
* ``covariance_`` ((D + K - 1) x (D + K - 1)): in the order ``[slopes, cut-points]``,
  as ``summary()`` and ``wald_test``; the cut-points are named ``"a|b"`` after the two
  labels they separate (R ``MASS::polr``); a nominal column ``x`` has one slope per cut,
  ``"x:a|b"``, in its place among the slopes (D + (K-2) * len(nominal) slopes);
* ``n_iter_``, ``converged_``; ``log_likelihood_``, ``null_log_likelihood_``, ``aic_``,
  ``bic_``, ``deviance_``, ``df_model_``, ``df_resid_``, ``n_obs_``, ``pseudo_r2_``,
  ``lr_statistic_``, ``lr_pvalue_`` (as the GLM classifiers').
"""
from numbers import Integral, Real
from dataclasses import replace
from typing import Any, Self

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core.model.family_ordinal import LATENT, CumulativeLink
from .._core.model.objective_ordinal import OrdinalObjective
from .._core.model.prior import PriorPrecision
from .._core.model.sandwich import COV_TYPES
from .._core.solvers.newton import newton, sketch_rows
from .._dask.lazy import lazy_on_dask
from .._effects_methods import EffectsMethods
from .._frames import encode_frame
from .._params import validate_params
from .._source import ClassifierDesign, data_source
from .._state import AllOrNothingFit
from ..exceptions import ConvergenceWarning, SingularCovarianceWarning, warn_at_caller
from ..inference.effects import EffectsModel
from ..inference.hypothesis import LikelihoodModel, Restrictions, TestResult, table_wald_test
from ..inference.text import SummaryText
from ._ordinal_checks import check_start, check_three_classes, separated_cuts
from ._ordinal_effects import ordinal_effects_model, ordinal_interval, ordinal_summary_text
from ._ordinal_fit import (OrdinalFit, model_covariance, raw_jacobian, robust_standard,
                           solver_start)
from ._ordinal_nominal import cumulative_bounds, nominal_fit, nominal_mask
from ._ordinal_tests import BrantResult, NonParallelFit, brant_test, proportional_odds_lr_test
from .inference import wald_table
from .robust import check_groups
from .statistics import likelihood_statistics, null_log_likelihood

__all__ = ["OrdinalRegression"]

_IN_MEMORY_ONLY = "Dask input supports cov_type='nonrobust' only"


class OrdinalRegression(AllOrNothingFit, LikelihoodModel, EffectsMethods, ClassifierMixin,
                        BaseEstimator):
    """Cumulative-link regression of ordered classes (ordinal logit, probit, ...).

    .. math::

        P(y \\le k \\mid x) = F(\\theta_k - x^T \\beta), \\quad
        \\theta_1 < \\dots < \\theta_{K-1}, \\quad \\beta \\sim N(0, \\alpha^{-1} I)

    the latent-variable model ``y* = x^T beta + e``, ``e ~ F``, observed through the cut
    points ``theta`` (McCullagh 1980; Agresti 2010, ch. 3-5). Fitted by the Newton
    engine with the cut-points kept increasing as the first one and the logs of the
    gaps; reported as R ``MASS::polr`` and statsmodels ``OrderedModel`` report it
    (``theta``, no intercept: the cut-points are the intercepts).

    Parameters
    ----------
    link : {"logit", "probit", "cloglog", "loglog", "cauchit"}, default="logit"
        The latent distribution ``F``: logistic (proportional odds), normal, minimum
        extreme value (``1 - exp(-e^x)``, proportional hazards), maximum extreme value
        (``exp(-e^-x)``), Cauchy (R ``ordinal::clm``'s links).
    alpha : float, default=0.0
        Precision of the Gaussian prior on the slopes (L2 penalty ``alpha/2 |beta|^2``);
        the cut-points are not penalised.
    fit_intercept : bool, default=False
        Must stay False: the cut-points are the model's intercepts (kept for the common
        interface of problin's classifiers).
    max_iter : int or None, default=None
        Newton iterations (None: 100).
    tol : float, default=1e-8
        Stop when half the squared Newton decrement is below ``tol``.
    classes : array-like or None, default=None
        The labels in their order (default: sorted); every one must occur in y.
    cov_type : {"nonrobust", "HC0", "HC1", "cluster"}, default="nonrobust"
        The inverse observed information, or a sandwich (HC0, HC1; cluster over
        ``fit(..., groups=)``).
    nominal : list of column names or indices, or None, default=None
        Columns whose slopes differ between the cut-points: the partial
        proportional-odds model ``P(y <= k | x) = F(theta_k - x^T beta_k)`` (Peterson &
        Harrell 1990; R ``ordinal::clm(nominal = ~ x)``, whose ``"a|b.x"`` is minus
        problin's ``"x:a|b"``). Fitted by the same Newton engine from the
        proportional-odds fit, dense and in memory, ``alpha=0``. New rows whose cumulative probabilities cross get a
        warning and probability 0 for the crossed classes (``clm`` returns them
        negative); :meth:`predict_latent` has no single score to return.
    """

    _parameter_constraints = {
        "link": [StrOptions(set(LATENT))],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "classes": ["array-like", None],
        "cov_type": [StrOptions(set(COV_TYPES))],
        "nominal": ["array-like", None],
    }

    def __init__(self, link: str = "logit", alpha: float = 0.0, *, fit_intercept: bool = False,
                 max_iter: int | None = None, tol: float = 1e-8, classes: Any = None,
                 cov_type: str = "nonrobust", nominal: Any = None) -> None:
        self.link = link
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.classes = classes
        self.cov_type = cov_type
        self.nominal = nominal

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None, groups: Any = None,
            start: Any = None) -> Self:
        """Fit by maximum likelihood (or MAP with ``alpha > 0``).

        ``start``: optional initial ``[coef, cutpoints]`` (the cut-points strictly
        increasing). ``groups``: the clusters of ``cov_type="cluster"``. Dask arrays
        are fitted where their chunks are (one distributed pass per Newton step).
        """
        validate_params(self)
        if self.fit_intercept:
            raise ValueError("OrdinalRegression has no intercept: its cut-points are the "
                             "intercepts (fit_intercept must be False)")
        if self.cov_type in ("HC2", "HC3"):
            raise ValueError(f"cov_type={self.cov_type!r} needs each row's leverage, which "
                             "for the ordinal model is a matrix: use 'HC0', 'HC1' or 'cluster'")
        source = data_source(X)
        if self.cov_type != "nonrobust":
            source.require_in_memory(_IN_MEMORY_ONLY)
        if self.nominal is not None:
            self._check_nominal(source)
        rows = source.classifier_rows(self, y, sample_weight, True, True, standardise=True)
        check_three_classes(self.classes_)
        design = rows.design
        clusters = check_groups(self.cov_type, groups, design.n_samples)
        family = CumulativeLink(self.link, self.classes_.size)
        p = design.n_params
        objective = rows.ordinal_objective(family, self._prior(design, family))
        weights = rows.class_weights()
        if start is None:
            b, gaps = family.start(weights)
            theta0 = np.concatenate(([b], np.zeros(p - 1), gaps))
        else:
            theta0 = solver_start(family, design.basis,
                                  check_start(start, p - 1, self.classes_), p)
        max_iter = 100 if self.max_iter is None else self.max_iter
        result = newton(objective, theta0, max_iter=max_iter, tol=self.tol,
                        sketch=sketch_rows(design.n_samples, objective.n_params))
        theta = result.theta
        if not result.converged:
            warn_at_caller(f"OrdinalRegression did not converge in {max_iter} Newton "
                           f"iterations ({result.message}); increase max_iter",
                           ConvergenceWarning)
        params, J = raw_jacobian(family, design.basis, theta, p)
        separated_cuts(objective, theta, self.classes_, bool(result.converged))
        penalty = objective.penalty.value(theta)
        ll = -(float(result.value) - penalty)
        ll0 = null_log_likelihood(weights)
        n_obs = float(np.sum(weights))
        stats = likelihood_statistics(ll, ll0, n_obs, params.size, family.n_classes - 1,
                                      self.alpha > 0)
        stats["scale_"] = 1.0
        fit = OrdinalFit(family, design.basis, theta, params, J, None, None, "nonrobust",
                         ll, ll0, n_obs, result.n_iter, result.converged, result.message,
                         float(self.alpha), stats)
        cov_z, singular = model_covariance(objective, theta, result.hessian)
        if singular:
            warn_at_caller("the information matrix is singular: some standard errors are "
                           "not identified", SingularCovarianceWarning)
        fit = fit.with_covariance(cov_z, "nonrobust")
        if self.cov_type != "nonrobust":
            assert isinstance(objective, OrdinalObjective)  # (Dask refused above)
            fit = fit.with_covariance(robust_standard(objective, theta, cov_z, self.cov_type,
                                                      clusters), self.cov_type)
        if self.nominal is not None:
            fit = self._fit_nominal(fit, objective, X, clusters)
        self.__dict__.update(fit.attributes())
        self._result = fit
        return self

    def _check_nominal(self, source: Any) -> None:
        if self.alpha > 0:
            raise ValueError("nominal= (the partial proportional-odds model) is fitted by "
                             "maximum likelihood: use alpha=0")
        source.require_in_memory("nominal= (the partial proportional-odds model) is "
                                 "fitted in memory")

    def _fit_nominal(self, proportional: OrdinalFit, objective: Any, X: Any,
                     clusters: tuple[np.ndarray, int] | None) -> OrdinalFit:
        """The partial proportional-odds fit from the proportional-odds one
        (:mod:`._ordinal_nominal`), with its own statistics."""
        mask = nominal_mask(self._feature_names(), self.nominal, "nominal")
        Xd = self._design_rows(X)
        Xd = np.asarray(Xd.toarray() if hasattr(Xd, "toarray") else Xd, dtype=np.float64)
        max_iter = 100 if self.max_iter is None else self.max_iter
        fit, result, singular = nominal_fit(proportional, Xd, objective.t,
                                            objective.sample_weight, mask, max_iter, self.tol,
                                            self.cov_type, clusters)
        if not result.converged:
            warn_at_caller(f"OrdinalRegression(nominal=...) did not converge in {max_iter} "
                           f"Newton iterations ({result.message}); increase max_iter",
                           ConvergenceWarning)
        if singular:
            warn_at_caller("the information matrix is singular: some standard errors are "
                           "not identified", SingularCovarianceWarning)
        stats = likelihood_statistics(fit.log_likelihood, fit.null_log_likelihood, fit.n_obs,
                                      fit.params.size, fit.family.n_classes - 1, False)
        stats["scale_"] = 1.0
        return replace(fit, statistics=stats)

    def _prior(self, design: ClassifierDesign, family: CumulativeLink
               ) -> PriorPrecision | None:
        """``alpha`` on the slopes (in the solver's basis); none on ``b`` and the gaps."""
        if self.alpha == 0:
            return None
        diag = np.full(design.n_params, float(self.alpha))
        diag[0] = 0.0
        if design.basis is not None:
            diag = design.basis.precision_to_standard(diag)
        return PriorPrecision(np.concatenate((diag, np.zeros(family.n_gaps))))

    # ------------------------------------------------------------- predict
    def _design_rows(self, X: Any) -> Any:
        check_is_fitted(self)
        return validate_data(self, encode_frame(self, X, False), accept_sparse=["csr", "csc"],
                             dtype=[np.float64, np.float32], reset=False)

    def _eta(self, X: Any) -> np.ndarray:
        if self._result.nominal is not None:
            raise ValueError("a model with nominal= columns has a latent score per cut-point "
                             "(x^T beta_k), not one: use predict_proba")
        return np.asarray(self._design_rows(X) @ self.coef_, dtype=np.float64).ravel()

    def _bounds(self, X: Any) -> np.ndarray:
        """``theta_k - x^T beta_k`` (n, K-1), non-decreasing in k (:func:`cumulative_bounds`)."""
        check_is_fitted(self)
        return cumulative_bounds(self._result, self._design_rows(X))[0]

    @lazy_on_dask(columns=lambda self: None)
    def predict_latent(self, X: Any) -> Any:
        """The latent score ``x^T beta`` (the mean of ``y*`` less the error's location:
        ``P(y <= k) = F(theta_k - x^T beta)``). Not a ``decision_function``: no one score
        per class ranks the ordered classes."""
        return self._eta(X)

    @lazy_on_dask(columns=lambda self: self.classes_.size)
    def predict_log_proba(self, X: Any) -> Any:
        """Log class probabilities ``log(F(theta_k - eta) - F(theta_{k-1} - eta))``,
        in log space (survival functions above the median: exact in both tails)."""
        check_is_fitted(self)
        if self._result.nominal is not None:
            return self._result.family.log_proba_bounds(self._bounds(X))
        return self._result.family.log_proba(self._eta(X), self.cutpoints_)

    @lazy_on_dask(columns=lambda self: self.classes_.size)
    def predict_proba(self, X: Any) -> Any:
        """Class probabilities; columns follow ``classes_``."""
        return np.exp(self.predict_log_proba(X))

    @lazy_on_dask(dtype=lambda self: self.classes_.dtype)
    def predict(self, X: Any, kind: str = "mode") -> Any:
        """The most probable class (``kind="mode"``), or the median class
        (``kind="median"``: the first class whose cumulative probability reaches 1/2,
        i.e. the class of the latent median ``x^T beta + median(F)``)."""
        check_is_fitted(self)
        if kind == "mode":
            return self.classes_[np.argmax(self.predict_log_proba(X), axis=1)]
        if kind != "median":
            raise ValueError(f"kind must be 'mode' or 'median', got {kind!r}")
        median = self._result.family.dist.median
        index = np.sum(self._bounds(X) < median, axis=1)
        return self.classes_[index]

    def predict_interval(self, X: Any, level: float = 0.95) -> pd.DataFrame:
        """Each class's probability with its delta-method standard error and a
        confidence interval formed on its log-odds (in (0, 1)), indexed
        ``(row, class)``: ``mean, std_err, ci_low, ci_high``."""
        check_is_fitted(self)
        return ordinal_interval(self, X, level)

    # ----------------------------------------------------------- inference
    def _feature_names(self) -> list[str]:
        names = getattr(self, "feature_names_in_", None)
        return ([str(n) for n in names] if names is not None
                else [f"x{j}" for j in range(self.n_features_in_)])

    def parameter_names(self) -> list[str]:
        """``[features..., "a|b", ...]``: the order of ``covariance_`` (a nominal column
        ``x`` as ``"x:a|b"``, one per cut, in its place)."""
        labels = [str(c) for c in self.classes_]
        cuts = [f"{a}|{b}" for a, b in zip(labels[:-1], labels[1:])]
        nominal = self._result.nominal
        features: list[str] = []
        for d, name in enumerate(self._feature_names()):
            features += ([f"{name}:{cut}" for cut in cuts]
                         if nominal is not None and nominal[d] else [name])
        return features + cuts

    def summary(self, level: float = 0.95) -> pd.DataFrame:
        """``coef, std_err, z, p_value, ci_low, ci_high`` of the slopes, then the
        cut-points (named as R ``polr``: ``"1|2"``, ``"2|3"``, ...)."""
        check_is_fitted(self)
        fit = self._result
        assert fit.covariance is not None
        table = wald_table(self.parameter_names(), fit.params, fit.covariance, level)
        table.attrs.update(model=type(self).__name__, n_obs=fit.n_obs,
                           converged=fit.converged, n_iter=fit.n_iter, level=float(level),
                           cov_type=fit.cov_type, log_likelihood=fit.log_likelihood)
        return table

    def summary_text(self, level: float = 0.95) -> SummaryText:
        """The fit's statistics above the :meth:`summary` table."""
        return ordinal_summary_text(self, self.summary(level))

    def wald_test(self, R: Restrictions, q: Any = None, *, use_f: bool = False) -> TestResult:
        """Wald test of ``R psi = q``, ``psi = [coef, cutpoints]`` (``covariance_``'s order;
        text over :meth:`parameter_names`)."""
        return table_wald_test(self.summary(), self.covariance_, R, q, use_f=use_f,
                               df_resid=self.df_resid_ if use_f else None)

    def brant_test(self, X: Any, y: Any, sample_weight: Any = None) -> BrantResult:
        """Brant's test of proportional odds on the rows fitted
        (:func:`~problin.glm._ordinal_tests.brant_test`)."""
        return brant_test(self, X, y, sample_weight)

    def proportional_odds_lr_test(self, X: Any, y: Any, sample_weight: Any = None,
                                  variables: Any = None) -> NonParallelFit:
        """The likelihood-ratio test of proportional odds against slopes per cut for
        ``variables`` (default all) on the rows fitted
        (:func:`~problin.glm._ordinal_tests.proportional_odds_lr_test`)."""
        return proportional_odds_lr_test(self, X, y, sample_weight, variables)

    def _effects_model(self, type: str) -> EffectsModel:
        """The cumulative logits' blocks and the category probabilities' map."""
        return ordinal_effects_model(self, type)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = True
        # scikit-learn's training check scores three blobs that lie in no order on any
        # line: a model of ordered classes cannot reach its accuracy there
        tags.classifier_tags.poor_score = True
        return tags
