"""Shared machinery of the GLM classifiers (logit, probit and softmax).

The estimator classes only choose a family; everything else — validation,
the prior, the solver call, inference and diagnostics — lives here once.
"""
from collections.abc import Callable
from dataclasses import replace
from numbers import Integral, Real
from typing import Any, Self, cast

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core.model.families import BinaryFamily, ClassFamily, class_family
from .._core.model.penalty_firth import JEFFREYS
from .._core.model.sandwich import COV_TYPES
from .._core.solvers.ascent import coordinate_descent, gradient_descent
from .._core.solvers.newton import newton, sketch_rows, sketch_size
from .._core.solvers.quasi_newton import lbfgs
from .._core.solvers.steps import SolverResult
from .._dask.lazy import lazy_on_dask
from .._effects_methods import EffectsMethods
from .._frames import encode_frame
from .._params import validate_params
from .._source import ClassifierRows, data_source
from .._source.classifier_data import CALIBRATED_CLASSES
from .._state import AllOrNothingFit
from ..inference.effects import EffectsModel
from ..inference.hypothesis import LikelihoodModel, Restrictions, TestResult, table_wald_test
from ..inference.summaries import glm_summary_text
from ..inference.text import SummaryText
from ._effects import classifier_effects_model
from ._gaussian_prior import PRIOR_CONSTRAINTS, glm_prior, has_prior, penalised
from ._diagnostics import (
    available_memory,
    check_fits_in_memory,
    covariance_on_request,
    diagnose,
    hessian_affordable,
    lbfgs_budget,
    lbfgs_pairs,
    watch_fit,
)
from ._firth_corrections import FIRTH_PENALTIES, flac, flic
from ._predict import linear_predictors
from ._penalized_lr import check_lr_inputs, check_pvalues, lr_pvalue_table, restricted_lr_test
from ._profile import Refit, check_ci, profile_table, raw_map
from .inference import parameter_names, wald_table
from .interval import check_offset, interval_table
from .marginal import marginal_effects_table
from .problem import (
    ClassifierProblem,
    check_penalty,
    classifier_family,
    classifier_problem,
    parameter_index,
)
from .result import GLMFit
from .robust import check_groups, robust_covariance

# (each called as solver(objective, theta0, max_iter=, tol=, **options); their other
# keywords differ, so the table's type is the common call)
SOLVERS: dict[str, Callable[..., SolverResult]] = {
    "newton": newton, "lbfgs": lbfgs, "gradient": gradient_descent,
    "coordinate": coordinate_descent}
DEFAULT_MAX_ITER = {"newton": 100, "lbfgs": 5000, "gradient": 10000, "coordinate": 1000}
# solver="auto" uses Newton up to this many parameters: beyond it, building and
# factoring the p x p Hessian every iteration costs more than L-BFGS's passes
# (and at p = 50,000 the Hessian alone would need 20 GB).
NEWTON_MAX_PARAMS = 1000
# ... and up to this many on dense rows in memory that are many enough for a row
# sketch: the engine then forms no Hessian of all rows (a sketch's warm start, BFGS
# from a larger sketch's Hessian; the p x p matrices it keeps are 32 MB at most).
# Measured at 200,000 x 1,000: 31 s against L-BFGS's 66 s (69 iterations), loaded.
WIDE_NEWTON_MAX_PARAMS = 2000
_IN_MEMORY_ONLY = "Dask input supports cov_type='nonrobust' without offset only"
# A float32 copy of X for truncated Newton's Hessian-vector products up to this many
# bytes without reading the available memory (where it runs, X is far larger).
_COPY_UNCHECKED = 256 * 2**20


def float32_copy_fits(rows: int, n_features: int) -> bool:
    """Whether a float32 copy of ``rows`` x ``n_features`` (``newton(float32_copy=True)``)
    takes at most a quarter of the available memory."""
    need = 4.0 * rows * n_features
    return need <= _COPY_UNCHECKED or need <= 0.25 * available_memory()


class GLMClassifier(AllOrNothingFit, LikelihoodModel, EffectsMethods, ClassifierMixin,
                    BaseEstimator):
    """GLM classifier ``p(y | x) = F(b + x^T w)`` with a Gaussian prior on ``w``.

    Each fit produces one :class:`~problin.glm.result.GLMFit` (kept as ``_result``);
    the fitted attributes, the predictions and ``summary()`` are read from it.
    """

    _family: BinaryFamily  # the binary family, set by subclasses
    _multiclass = False  # whether K > 2 classes fit a softmax model

    _parameter_constraints = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "penalty": [StrOptions({"l2", "firth", "flic", "flac"})],
        "fit_intercept": ["boolean"],
        "solver": [StrOptions({"auto", "newton", "lbfgs", "gradient", "coordinate"})],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "classes": ["array-like", None],
        "cov_type": [StrOptions(set(COV_TYPES))],
        **PRIOR_CONSTRAINTS,
    }
    #: No Gaussian prior of the estimator's own (``prior_mean``/``prior_precision``).
    prior_mean: Any = None
    prior_precision: Any = None

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None, groups: Any = None,
            offset: Any = None) -> Self:
        """Fit by maximising the (penalised) log-likelihood.

        Dask arrays or DataFrames are fitted where their chunks live: one
        distributed pass per Newton iteration (``problin._dask.objective``),
        equal to the in-memory fit to rounding; predictions on them are lazy.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), two distinct labels
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights; weight 2 is the same as a duplicated row.
        groups : array-like of shape (n_samples,), optional
            The cluster of each row, for ``cov_type="cluster"`` (required then).
        offset : array-like of shape (n_samples,), optional
            A known term added to the linear predictor, ``b + x^T w + o``
            (binary models, in memory; as statsmodels ``GLM(offset=...)``).
            Predictions then take the new rows' offset (default 0).

        Returns
        -------
        self
        """
        validate_params(self)
        check_penalty(self)
        cov_type = getattr(self, "cov_type", "nonrobust")
        source = data_source(X)  # the one choice of where the rows are
        if cov_type != "nonrobust" or offset is not None:
            source.require_in_memory(_IN_MEMORY_ONLY)
        if self.penalty == "flac":  # (its refit reads the rows one by one)
            source.require_in_memory("penalty='flac' refits in memory: Dask input takes "
                                     "penalty='firth' or 'flic'")
        rows = source.classifier_rows(self, y, sample_weight, self._multiclass,
                                      self.fit_intercept, standardise=True)
        design = rows.design
        clusters = check_groups(cov_type, groups, design.n_samples)
        offset = check_offset(offset, design.n_samples)
        family = classifier_family(self._family, self.classes_.size, self.alpha)
        if self.penalty in ("flic", "flac") and family.n_blocks > 1:
            raise ValueError(CALIBRATED_CLASSES)
        # L-BFGS's memory, checked before the objective allocates parameter-sized
        # vectors (its prior's, the start's).
        blocks = family.n_blocks
        if self.solver == "lbfgs" or (self.solver == "auto" and
                                      blocks * design.n_params > NEWTON_MAX_PARAMS):
            lbfgs_budget(blocks * design.n_params, rows.rows_in_memory, blocks)
        problem = self._problem(rows, family, offset)
        solver = self._choose_solver(problem)
        if rows.for_solver(solver) is not rows:  # (sparse rows for L-BFGS: in raw units)
            rows = rows.for_solver(solver)
            problem = self._problem(rows, family, offset)
        objective = problem.objective
        max_iter = self.max_iter if self.max_iter is not None else DEFAULT_MAX_ITER[solver]
        options: dict[str, Any] = {}
        if solver == "newton":
            options = {"sketch": sketch_rows(design.n_samples, objective.n_params),
                       "exact_final": rows.exact_final(
                           hessian_affordable(design.n_samples, objective.n_params)),
                       "float32_copy": float32_copy_fits(rows.rows_in_memory,
                                                         design.n_features)}
        elif solver == "lbfgs":  # the memory it needs, checked before any is allocated
            options = {"pairs": lbfgs_pairs(objective, rows.rows_in_memory)}
        watch_fit(objective)
        result = SOLVERS[solver](objective, problem.theta0, max_iter=max_iter, tol=self.tol,
                                 **options)
        found = diagnose(self, problem, result)
        if found.theta is not None:  # parameters not identified: held at 0, as R's glm
            result = replace(result, theta=found.theta)
        null = problem.null_log_likelihood()
        statistics = found._asdict()
        del statistics["theta"]
        fit = GLMFit.from_solver(objective, result, solver=solver, alpha=self.alpha,
                                 penalty_name="gaussian" if has_prior(self) else self.penalty,
                                 null_log_likelihood=null,
                                 reference_class=family.reference_class, **statistics)
        if self.penalty in ("flic", "flac"):
            fit = self._calibrated(fit, problem)
        if cov_type != "nonrobust" and fit.covariance_standard is not None:
            eta = objective.linear_predictor(result.theta)
            fit = self._robust(fit, problem, eta, clusters)
        self._set_fit(fit)
        return self

    def _robust(self, fit: GLMFit, problem: ClassifierProblem, eta: NDArray[np.float64],
                clusters: tuple[NDArray[np.intp], int] | None) -> GLMFit:
        """``fit`` with the sandwich covariance of ``cov_type`` (:mod:`problin.glm.robust`)."""
        assert fit.covariance_standard is not None, "the bread is the model-based covariance"
        cov, cov_z = robust_covariance(problem.in_memory(), problem.row_scores(eta),
                                       fit.covariance_standard, self.cov_type, clusters,
                                       fit.n_estimated)
        return fit.replace(cov_type=self.cov_type, covariance=cov, covariance_standard=cov_z)

    def _calibrated(self, fit: GLMFit, problem: ClassifierProblem) -> GLMFit:
        """The FLIC or FLAC fit from the Firth ``fit`` (:mod:`._firth_corrections`)."""
        if self.penalty == "flic":  # (the likelihood's passes, wherever the rows are)
            likelihood = classifier_problem(problem.rows, problem.family, 0.0,
                                            information="expected", offset=problem.offset)
            return flic(fit, likelihood.objective)
        objective = problem.in_memory()
        y = problem.rows.targets().astype(np.float64)

        def refit(X: Any, y: Any, sample_weight: Any, offset: Any) -> GLMFit:
            model = type(self)(alpha=0.0, fit_intercept=self.fit_intercept, tol=self.tol,
                               max_iter=self.max_iter)
            return model.fit(X, y, sample_weight=sample_weight, offset=offset)._result

        return flac(fit, objective, y, problem.offset, JEFFREYS.tau, refit)

    def _set_fit(self, fit: GLMFit) -> None:
        """Keep ``fit`` and set the fitted attributes from it: the one place they are set."""
        self.__dict__.pop("separated_", None)  # a refit without separation has none
        self.__dict__.update(fit.attributes())
        self._result = fit

    # ---------------------------------------------------------- the model
    def _problem(self, rows: ClassifierRows, family: ClassFamily,
                 offset: NDArray[np.float64] | None = None) -> ClassifierProblem:
        """The objective to minimise and its starting point. Newton's curvature
        is ``ProbitRegression``'s ``information`` parameter; for the logit (a
        canonical link) observed and expected information coincide. Firth's penalty
        scores with the expected information, whose inverse it reports (logistf)."""
        firth = self.penalty in FIRTH_PENALTIES
        information = "expected" if firth else getattr(self, "information", "observed")
        return classifier_problem(rows, family, self.alpha, information=information,
                                  offset=offset, penalty=JEFFREYS if firth else None,
                                  prior=glm_prior(self, rows.design.n_features))

    def _choose_solver(self, problem: ClassifierProblem) -> str:
        solver = self.solver
        if solver == "auto":
            p = problem.objective.n_params
            wide_dense = (p <= WIDE_NEWTON_MAX_PARAMS and problem.rows.rows_in_memory > 0
                          and problem.rows.for_solver("lbfgs") is problem.rows  # (not sparse)
                          and sketch_size(problem.objective.design.n_samples, p) is not None)
            solver = "newton" if p <= NEWTON_MAX_PARAMS or wide_dense else "lbfgs"
        problem.rows.check_solver(solver)
        return solver

    def _effects_model(self, type: str) -> EffectsModel:
        """What slopes, comparisons and predictions read (:mod:`problin.glm._effects`)."""
        return classifier_effects_model(self, type)

    def _fitted_family(self) -> ClassFamily:
        """The family of the fitted classes, whose parameter layout answers what the
        predictions' shapes and classes are (binary: one score per row; softmax: K)."""
        return class_family(self._family, self.classes_.size, self._result.reference_class)

    # ------------------------------------------------------------- predict
    @lazy_on_dask(columns=lambda self: self._fitted_family().score_columns,
                  in_memory_only=("offset",))
    def decision_function(self, X: Any, offset: Any = None) -> Any:
        """Linear predictors: the log-odds ``b + x^T w (+ offset)`` (binary, shape
        (n,)) or the K class logits (shape (n, K); the reference class's are 0
        for unpenalised softmax). ``offset``: the rows' known term (binary
        models; None is 0, also for models fitted with an offset)."""
        check_is_fitted(self)
        X = validate_data(self, encode_frame(self, X, False), accept_sparse=["csr", "csc"],
                          dtype=[np.float64, np.float32], reset=False)
        eta = linear_predictors(self._result, X, self._fitted_family())
        if offset is not None:
            eta = self._fitted_family().add_offset(
                eta, cast(NDArray[np.float64], check_offset(offset, X.shape[0])))
        return eta

    @lazy_on_dask(columns=lambda self: self.classes_.size, in_memory_only=("offset",))
    def predict_log_proba(self, X: Any, offset: Any = None) -> Any:
        """Log class probabilities, computed in log space (no ``log(p)``)."""
        scores = self.decision_function(X, offset)  # (checks that the model is fitted)
        return self._fitted_family().scores_log_proba(scores)

    @lazy_on_dask(columns=lambda self: self.classes_.size, in_memory_only=("offset",))
    def predict_proba(self, X: Any, offset: Any = None) -> Any:
        """Class probabilities; columns follow ``classes_`` (lazy for Dask ``X``).
        ``offset``: as in :meth:`decision_function`."""
        return np.exp(self.predict_log_proba(X, offset))

    @lazy_on_dask(dtype=lambda self: self.classes_.dtype, in_memory_only=("offset",))
    def predict(self, X: Any, offset: Any = None) -> Any:
        """The most probable class."""
        scores = self.decision_function(X, offset)
        return self.classes_[self._fitted_family().predicted_index(scores)]

    def predict_interval(self, X: Any, level: float = 0.95, offset: Any = None) -> pd.DataFrame:
        """The fitted probability of the second class (softmax: of every class) with
        its confidence interval.

        The interval is formed on the linear-predictor scale from
        ``covariance_`` (robust when ``cov_type`` says so) and mapped through
        the inverse link; ``std_err`` is the delta-method standard error of the
        probability (:mod:`problin.glm.interval`; as statsmodels
        ``GLM.get_prediction(X).summary_frame(alpha=1 - level)``'s ``mean,
        mean_se, mean_ci_lower, mean_ci_upper``, for a GLM fitted with the same
        covariance: statsmodels' probit ``GLM`` defaults to the expected information,
        problin's ``ProbitRegression`` to the observed one, which
        ``GLM.fit(method="newton")`` and ``Probit`` use). Softmax: each class's
        probability with an interval formed on its log-odds ``log(p_k / (1 - p_k))``
        and mapped back (in ``(0, 1)``), ``std_err`` the delta method's (statsmodels'
        ``MNLogit`` has no ``get_prediction``; its delta method over ``predict``
        gives the same standard errors).

        Returns
        -------
        DataFrame
            ``mean, std_err, ci_low, ci_high``, one row per row of ``X`` (with
            ``X``'s index when it is a DataFrame); softmax: one row per row of ``X``
            and class, indexed ``(row, class)``.
        """
        check_is_fitted(self)
        return interval_table(self, X, level, offset)

    # ----------------------------------------------------------- inference
    def summary(self, level: float = 0.95, ci: str = "wald", *, pvalues: str = "wald",
                X: Any = None, y: Any = None, sample_weight: Any = None, offset: Any = None
                ) -> pd.DataFrame:
        """Coefficient table: ``coef, std_err, z, p_value, ci_low, ci_high`` (Wald).

        ``ci="profile"``: ``ci_low, ci_high`` are profile-likelihood intervals instead
        (of the penalised likelihood for penalised fits, R ``logistf``'s default for
        Firth's), refitted on the training rows ``X, y`` (with the fit's
        ``sample_weight`` and ``offset``); ``attrs["ci"]`` says which.
        ``pvalues="lr"``: likelihood-ratio p-values, each parameter fixed at 0 and the
        model refitted on ``X, y``; column ``chi2`` replaces ``z`` (Firth's fits: the
        penalised likelihood ratio with the full model's penalty, logistf's p-values;
        ``ci="profile", pvalues="lr"`` is logistf's summary).

        Indexed by parameter name (``intercept`` first, then the feature
        names); for softmax by ``(class, parameter)``, one block per free
        class (the K-1 contrasts against the first class when ``alpha = 0``).
        With ``alpha > 0`` the standard errors are those of the penalised fit
        (the Laplace posterior around the MAP estimate).
        """
        check_is_fitted(self)
        fit = self._result
        if fit.covariance is None:
            raise ValueError(self._no_covariance_message())
        names = parameter_index(self._fitted_family(), parameter_names(self, self.n_features_in_),
                                self.classes_, fit.n_blocks)
        table = wald_table(names, fit.theta, fit.covariance, level, fit.identified)
        table.attrs.update(model=type(self).__name__, n_obs=fit.n_obs,
                           objective=fit.objective, converged=fit.converged,
                           n_iter=fit.n_iter, level=float(level), cov_type=fit.cov_type)
        if fit.log_likelihood is not None:
            table.attrs["log_likelihood"] = fit.log_likelihood
        check_ci(ci, X, y)
        check_pvalues(pvalues, X, y, self.alpha, has_prior(self))
        table.attrs["ci"] = ci
        if ci == "profile" or pvalues == "lr":
            refit = self._refit(X, y, sample_weight, offset, "ci='profile'" if ci ==
                                "profile" else "pvalues='lr'")
            if ci == "profile":
                table = profile_table(table, refit, level)
            if pvalues == "lr":
                table = lr_pvalue_table(table, refit)
        return table

    def restricted_lr_test(self, R: Restrictions, q: Any = None, *, X: Any, y: Any,
                           sample_weight: Any = None, offset: Any = None) -> TestResult:
        """Likelihood-ratio test of ``R beta = q`` (``beta`` in the order of
        ``summary()``; ``R`` a matrix or text such as ``"x1 = 0, x2 = 0"``) by refitting
        the model under the restrictions on its training rows ``X, y``:
        ``2 (l_hat - l_restricted) ~ chi2(J)``. For a Firth fit the penalised likelihood
        ratio, the restricted fit keeping the full model's Jeffreys penalty (R
        ``logistftest``; ``anova(full, smaller)`` of two logistf fits is this test of
        the smaller model's missing terms at 0)."""
        check_is_fitted(self)
        check_lr_inputs(X, y, self.alpha, "restricted_lr_test", has_prior(self))
        refit = self._refit(X, y, sample_weight, offset, "restricted_lr_test")
        return restricted_lr_test(self.summary(), refit, R, q)

    def _refit(self, X: Any, y: Any, sample_weight: Any, offset: Any, what: str) -> Refit:
        """The fit's objective rebuilt on the rows in the fit's basis, as
        ``compute_covariance`` (:mod:`problin.glm._profile`)."""
        fit = self._result
        if fit.n_blocks > 1:
            raise ValueError(f"{what} is for binary models; softmax shows Wald inference")
        if self.penalty in ("flic", "flac"):
            raise ValueError(f"{what} refits Firth's penalised likelihood, which a "
                             f"{self.penalty.upper()} fit does not maximise: use "
                             "penalty='firth' (FLIC/FLAC keep its slopes and tests)")
        source = data_source(X)
        if offset is not None:
            source.require_in_memory(_IN_MEMORY_ONLY)
        rows = source.fitted_rows(self, y, sample_weight, fit.basis)
        family = classifier_family(self._family, self.classes_.size, self.alpha)
        problem = self._problem(rows, family, check_offset(offset, rows.design.n_samples))
        objective = problem.objective
        theta = fit.theta_standard if fit.basis is not None else fit.theta
        return Refit.of(objective, theta, raw_map(fit.basis, theta.size), 1.0,
                        penalised(self) or self.penalty in FIRTH_PENALTIES)

    def marginal_effects(self, X: Any = None, at: str = "overall", *,
                         sample_weight: Any = None, level: float = 0.95,
                         offset: Any = None) -> pd.DataFrame:
        """Marginal effects ``dp/dx_j`` with delta-method standard errors.

        For ``p = F(b + x^T w)`` the effect of feature ``j`` is
        ``f(b + x^T w) w_j`` (``f = F'``); for softmax, on class ``k``,
        ``p_k (w_kj - sum_m p_m w_mj)`` (Greene, *Econometric Analysis*,
        sections 17.3 and 18.2.2). Standard errors by the delta method,
        ``J covariance_ J^T`` with the Jacobian ``J`` analytic (Greene, section
        4.6); equal to statsmodels' ``get_margeff(at=at, method="dydx")``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            The rows to average over (``"overall"``) or whose column means to
            use (``"mean"``); pass the training rows for statsmodels' numbers.
            Required: the estimator keeps no copy of its training data.
        at : {"overall", "mean"}, default="overall"
            The (weighted) average of the effects over the rows, or the
            effects at the (weighted) column means.
        sample_weight : array-like of shape (n_samples,), optional
            Weights of the rows in the average and the means (weight 2 is a
            duplicated row, as in the fit).
        level : float, default=0.95
            Confidence level of ``ci_low, ci_high``.
        offset : array-like of shape (n_samples,), optional
            The rows' known term of the linear predictor (binary models), as in
            :meth:`predict_proba`: None is 0, also for a model fitted with an
            offset, so pass the training offset with the training rows there
            (with ``at="mean"`` its weighted mean is used).

        Returns
        -------
        DataFrame
            ``dy/dx, std_err, z, p_value, ci_low, ci_high`` indexed by
            ``feature`` (binary: effects on the probability of the second
            class), or by ``(class, feature)`` for softmax (all K classes,
            the reference included, as statsmodels ``MNLogit``). With
            ``alpha > 0`` the delta method uses the Laplace covariance of the
            penalised fit, as ``summary()`` does.
        """
        return marginal_effects_table(self, X, at, sample_weight, level, offset)

    def wald_test(self, R: Restrictions, q: Any = None, *, use_f: bool = False) -> TestResult:
        """Wald test of ``R theta = q``, ``theta`` in the order of ``covariance_`` and
        ``summary()`` (softmax: class blocks, named ``"class:parameter"``).

        ``W = (R theta - q)^T (R V R^T)^-1 (R theta - q) ~ chi2(J)``, ``V = covariance_``
        (Wald 1943; Greene, *Econometric Analysis*, 8th ed., §14.9.1): statsmodels'
        ``Logit(...).fit().wald_test(R, scalar=True)``; ``use_f=True``: ``F = W / J`` on
        ``(J, df_resid_)`` degrees of freedom. ``R``: a (J, n_params) matrix (``q``
        default 0) or text over the parameter names, e.g. ``"x1 = x2, x3 = 0"``.

        Returns
        -------
        TestResult
            ``statistic, df, p_value`` (with ``df_denom`` and ``distribution``).
        """
        table = self.summary()
        return table_wald_test(table, self.covariance_, R, q, use_f=use_f,
                               df_resid=self.df_resid_ if use_f else None)

    def summary_text(self, level: float = 0.95, ci: str = "wald", *, pvalues: str = "wald",
                     X: Any = None, y: Any = None, sample_weight: Any = None,
                     offset: Any = None) -> SummaryText:
        """The fit's statistics (log-likelihood, pseudo R², LR test, AIC, BIC, ...)
        above the ``summary()`` table, as statsmodels prints a summary.

        ``print(model.summary_text())`` prints it in 78 columns; as the value of a
        notebook cell the :class:`~problin.inference.text.SummaryText` renders as HTML.
        The estimator's own ``_repr_html_`` stays scikit-learn's parameter diagram.
        """
        return glm_summary_text(self, self.summary(level, ci, pvalues=pvalues, X=X, y=y,
                                                   sample_weight=sample_weight,
                                                   offset=offset))

    def _no_covariance_message(self) -> str:
        p, n = self._result.n_params, self._result.n_obs
        return (f"covariance_ was not computed during fit: the {p} x {p} information matrix "
                f"({8 * p * p / 1e6:.0f} MB) costs {n * p * p / 2:.1e} multiply-adds over "
                f"the {n} rows. Call compute_covariance(X, y) to compute it on request "
                "(it checks that it fits in memory).")

    def compute_covariance(self, X: Any, y: Any, sample_weight: Any = None, groups: Any = None,
                           offset: Any = None) -> Self:
        """Compute ``covariance_`` (and so ``summary()``) for a model fitted without it.

        Wide models fitted by L-BFGS skip the p x p information matrix; this
        builds it at the fitted parameters from the same data (with the fit's
        ``groups`` and ``offset``; ``cov_type`` as fitted), if it fits in the
        memory available, and raises ``MemoryError`` otherwise. Parameters it finds not
        identified (collinear columns) are then held at 0, as ``fit`` holds them when it
        builds the matrix itself: ``coef_`` may change, the predictions do not.
        """
        check_is_fitted(self)
        fit = self._result
        cov_type = getattr(self, "cov_type", "nonrobust")
        source = data_source(X)
        if cov_type != "nonrobust" or offset is not None:
            source.require_in_memory(_IN_MEMORY_ONLY)
        rows = source.fitted_rows(self, y, sample_weight, fit.basis)
        n = rows.design.n_samples
        clusters = check_groups(cov_type, groups, n)
        family = classifier_family(self._family, self.classes_.size, self.alpha)
        problem = self._problem(rows, family, check_offset(offset, n))
        check_fits_in_memory(problem.objective.n_params)
        fit, eta = covariance_on_request(self, problem, fit)
        if cov_type != "nonrobust":
            fit = self._robust(fit, problem, eta, clusters)
        self._set_fit(fit)
        return self

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = self._multiclass
        return tags

