"""Shared machinery of the GLM classifiers (logit, probit and softmax).

The estimator classes only choose a family; everything else — validation,
the prior, the solver call, inference and diagnostics — lives here once.
"""
from numbers import Integral, Real
from typing import Any, Self

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core.labels import encode_classes
from .._core.model.design import Design
from .._core.numerics import log_softmax
from .._core.solvers.ascent import coordinate_descent, gradient_descent
from .._core.solvers.newton import newton, sketch_rows
from .._core.solvers.quasi_newton import lbfgs
from .._core.validation import check_sample_weight
from .._dask.chunks import is_dask
from .._dask.design import DaskDesign, dask_classifier_data
from .._dask.lazy import lazy_on_dask
from ._diagnostics import check_fits_in_memory, covariance, diagnose, hessian_affordable, watch_fit
from ._predict import linear_predictors
from .inference import parameter_names, wald_table
from .problem import ClassifierDesign, classifier_design, classifier_objective
from .result import GLMFit

SOLVERS = {"newton": newton, "lbfgs": lbfgs, "gradient": gradient_descent,
           "coordinate": coordinate_descent}
DEFAULT_MAX_ITER = {"newton": 100, "lbfgs": 5000, "gradient": 10000, "coordinate": 1000}
# solver="auto" uses Newton up to this many parameters: beyond it, building and
# factoring the p x p Hessian every iteration costs more than L-BFGS's passes
# (and at p = 50,000 the Hessian alone would need 20 GB).
NEWTON_MAX_PARAMS = 1000


class GLMClassifier(ClassifierMixin, BaseEstimator):
    """GLM classifier ``p(y | x) = F(b + x^T w)`` with a Gaussian prior on ``w``.

    Each fit produces one :class:`~problin.glm.result.GLMFit` (kept as ``_result``);
    the fitted attributes, the predictions and ``summary()`` are read from it.
    """

    _family: Any = None  # the binary family, set by subclasses
    _multiclass = False  # whether K > 2 classes fit a softmax model

    _parameter_constraints = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "solver": [StrOptions({"auto", "newton", "lbfgs", "gradient", "coordinate"})],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "classes": ["array-like", None],
    }

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> Self:
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

        Returns
        -------
        self
        """
        self._validate_params()
        design, t, sw = classifier_design(self, X, y, sample_weight, self._multiclass,
                                          self.fit_intercept, standardise=True)
        objective, theta0 = self._objective(design, t, sw)
        solver = self._choose_solver(objective)
        if solver == "lbfgs" and sp.issparse(design.X):
            # L-BFGS runs in its own standardised coordinates (ascent.Standardiser,
            # full-data moments) and sparse columns are never centred: the
            # design's rescaling would only change the rounding of its path.
            design = Design(design.X, design.intercept)
            objective, theta0 = self._objective(design, t, sw)
        max_iter = self.max_iter if self.max_iter is not None else DEFAULT_MAX_ITER[solver]
        options: dict[str, Any] = {}
        if solver == "newton":
            # On Dask the Hessian is one chunk-parallel pass, where truncated
            # Newton's Hessian-vector products would each be a pass: always exact.
            options = {"sketch": sketch_rows(design.n_samples, objective.n_params),
                       "exact_final": isinstance(design, DaskDesign) or
                       hessian_affordable(design.n_samples, objective.n_params)}
        watch_fit(objective)
        result = SOLVERS[solver](objective, theta0, max_iter=max_iter, tol=self.tol, **options)
        found = diagnose(self, objective, result)
        self._set_fit(GLMFit.from_solver(objective, result, solver=solver, alpha=self.alpha,
                                         **found._asdict()))
        return self

    def _set_fit(self, fit: GLMFit) -> None:
        """Keep ``fit`` and set the fitted attributes from it: the one place they are set."""
        self.__dict__.pop("separated_", None)  # a refit without separation has none
        self.__dict__.update(fit.attributes())
        self._result = fit

    # ---------------------------------------------------------- the model
    def _objective(self, design: ClassifierDesign, t: NDArray[np.intp] | None,
                   sw: NDArray[np.float64] | None) -> tuple[Any, NDArray[np.float64]]:
        """The objective to minimise and its starting point. Newton's curvature
        is ``ProbitRegression``'s ``information`` parameter; for the logit (a
        canonical link) observed and expected information coincide."""
        return classifier_objective(design, self._family, t, sw, self.classes_.size,
                                    self.alpha,
                                    information=getattr(self, "information", "observed"))

    def _choose_solver(self, objective: Any) -> str:
        solver = self.solver
        if solver == "auto":
            solver = "newton" if objective.n_params <= NEWTON_MAX_PARAMS else "lbfgs"
        if isinstance(objective.design, DaskDesign) and solver not in ("newton", "lbfgs"):
            raise ValueError(f"solver={solver!r} updates an n-vector per coefficient, which "
                             "Dask input never collects: use solver='newton' or 'lbfgs' (or "
                             "'auto') for Dask arrays and DataFrames")
        return solver

    # ------------------------------------------------------------- predict
    @lazy_on_dask(columns=lambda self: None if self.classes_.size == 2 else self.classes_.size)
    def decision_function(self, X: Any) -> Any:
        """Linear predictors: the log-odds ``b + x^T w`` (binary, shape (n,)) or
        the K class logits (shape (n, K); the reference class's are 0 for
        unpenalised softmax)."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=["csr", "csc"],
                          dtype=[np.float64, np.float32], reset=False)
        return linear_predictors(self._result, X, self.classes_.size)

    @lazy_on_dask(columns=lambda self: self.classes_.size)
    def predict_log_proba(self, X: Any) -> Any:
        """Log class probabilities, computed in log space (no ``log(p)``)."""
        eta = self.decision_function(X)
        if self.classes_.size == 2:
            return self._family.log_proba(eta)
        return log_softmax(eta, axis=1)

    @lazy_on_dask(columns=lambda self: self.classes_.size)
    def predict_proba(self, X: Any) -> Any:
        """Class probabilities; columns follow ``classes_`` (lazy for Dask ``X``)."""
        return np.exp(self.predict_log_proba(X))

    @lazy_on_dask(dtype=lambda self: self.classes_.dtype)
    def predict(self, X: Any) -> Any:
        """The most probable class."""
        eta = self.decision_function(X)
        if self.classes_.size == 2:
            return self.classes_[(eta > 0).astype(int)]
        return self.classes_[np.argmax(eta, axis=1)]

    # ----------------------------------------------------------- inference
    def summary(self, level: float = 0.95) -> pd.DataFrame:
        """Coefficient table: ``coef, std_err, z, p_value, ci_low, ci_high`` (Wald).

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
        names: Any = parameter_names(self, self.n_features_in_)
        if fit.n_blocks > 1:
            free = self.classes_[self.classes_.size - fit.n_blocks:]
            names = pd.MultiIndex.from_product([free.tolist(), names],
                                               names=["class", "parameter"])
        table = wald_table(names, fit.theta, fit.covariance, level, fit.identified)
        table.attrs.update(model=type(self).__name__, n_obs=fit.n_obs,
                           objective=fit.objective, converged=fit.converged,
                           n_iter=fit.n_iter, level=float(level))
        if fit.log_likelihood is not None:
            table.attrs["log_likelihood"] = fit.log_likelihood
        return table

    def _no_covariance_message(self) -> str:
        p, n = self._result.n_params, self._result.n_obs
        return (f"covariance_ was not computed during fit: the {p} x {p} information matrix "
                f"({8 * p * p / 1e6:.0f} MB) costs {n * p * p / 2:.1e} multiply-adds over "
                f"the {n} rows. Call compute_covariance(X, y) to compute it on request "
                "(it checks that it fits in memory).")

    def compute_covariance(self, X: Any, y: Any, sample_weight: Any = None) -> Self:
        """Compute ``covariance_`` (and so ``summary()``) for a model fitted without it.

        Wide models fitted by L-BFGS skip the p x p information matrix; this
        builds it at the fitted parameters from the same data, if it fits in
        the memory available, and raises ``MemoryError`` otherwise.
        """
        check_is_fitted(self)
        fit = self._result
        design: ClassifierDesign
        t = sw = None
        if is_dask(X):  # a distributed pass (problin._dask.objective)
            design = dask_classifier_data(self, X, y, sample_weight, True, self.fit_intercept,
                                          classes=self.classes_, reset=False, basis=fit.basis)
        else:
            X, y = validate_data(self, X, y, accept_sparse=["csr", "csc"],
                                 dtype=[np.float64, np.float32], reset=False)
            if sp.issparse(X):
                X = X.tocsr()
            _, t = encode_classes(y, self.classes_, owner=type(self).__name__)
            sw = check_sample_weight(sample_weight, X.shape[0])
            design = Design(X, self.fit_intercept, basis=fit.basis)
        objective, _ = self._objective(design, t, sw)
        check_fits_in_memory(objective.n_params)
        theta = fit.theta_standard if design.basis is not None else fit.theta
        eta = objective.linear_predictor(theta)
        cov, identified = covariance(objective, objective.observed_hessian(theta, eta))
        self._set_fit(fit.replace(covariance=cov, identified=identified))
        return self

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = self._multiclass
        return tags

