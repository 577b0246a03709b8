"""Shared machinery of the GLM classifiers (logit, probit and softmax).

The estimator classes only choose a family; everything else — validation,
the prior, the solver call, inference and diagnostics — lives here once.
"""
from numbers import Integral, Real

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core.labels import encode_classes
from .._core.model.basis import ColumnBasis
from .._core.model.design import Design
from .._core.model.families import CategoricalSoftmax
from .._core.model.objective import GLMObjective, PriorPrecision, SoftmaxObjective
from .._core.numerics import log_softmax
from .._core.solvers.ascent import coordinate_descent, gradient_descent
from .._core.solvers.newton import newton, sketch_rows
from .._core.solvers.quasi_newton import lbfgs
from .._core.validation import (
    check_class_weights,
    check_finite_magnitude,
    check_label_types,
    check_sample_weight,
)
from .._dask.chunks import is_dask
from .._dask.lazy import lazy_on_dask
from ._diagnostics import (
    check_fits_in_memory,
    diagnose,
    hessian_affordable,
    set_covariance,
    watch_fit,
)
from ._predict import linear_predictors
from .inference import parameter_names, wald_table

SOLVERS = {"newton": newton, "lbfgs": lbfgs, "gradient": gradient_descent,
           "coordinate": coordinate_descent}
DEFAULT_MAX_ITER = {"newton": 100, "lbfgs": 5000, "gradient": 10000, "coordinate": 1000}
# solver="auto" uses Newton up to this many parameters: beyond it, building and
# factoring the p x p Hessian every iteration costs more than L-BFGS's passes
# (and at p = 50,000 the Hessian alone would need 20 GB).
NEWTON_MAX_PARAMS = 1000


class GLMClassifier(ClassifierMixin, BaseEstimator):
    """GLM classifier ``p(y | x) = F(b + x^T w)`` with a Gaussian prior on ``w``."""

    _family = None  # the binary family, set by subclasses
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
    def fit(self, X, y, sample_weight=None):
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
        self.solver_ = self._choose_solver(objective)
        if self.solver_ == "lbfgs" and sp.issparse(getattr(design, "X", None)):
            # L-BFGS runs in its own standardised coordinates (ascent.Standardiser,
            # full-data moments) and sparse columns are never centred: the
            # design's rescaling would only change the rounding of its path.
            design = Design(design.X, design.intercept)
            objective, theta0 = self._objective(design, t, sw)
        max_iter = self.max_iter if self.max_iter is not None else DEFAULT_MAX_ITER[self.solver_]
        options = {}
        if self.solver_ == "newton":
            # On Dask the Hessian is one chunk-parallel pass, where truncated
            # Newton's Hessian-vector products would each be a pass: always exact.
            options = {"sketch": sketch_rows(design.n_samples, objective.n_params),
                       "exact_final": t is None or hessian_affordable(design.n_samples,
                                                                      objective.n_params)}
        watch_fit(objective)
        result = SOLVERS[self.solver_](objective, theta0, max_iter=max_iter, tol=self.tol,
                                       **options)
        self._store(objective, result)
        diagnose(self, objective, result)
        return self

    # ---------------------------------------------------------- the model
    def _objective(self, design, t, sw):
        """The objective to minimise and its starting point."""
        return classifier_objective(design, self._family, t, sw, self.classes_.size,
                                    self.alpha, information=self._information())

    def _choose_solver(self, objective):
        solver = self.solver
        if solver == "auto":
            solver = "newton" if objective.n_params <= NEWTON_MAX_PARAMS else "lbfgs"
        if getattr(objective.design, "distributed", False) and \
                solver not in ("newton", "lbfgs"):
            raise ValueError(f"solver={solver!r} updates an n-vector per coefficient, which "
                             "Dask input never collects: use solver='newton' or 'lbfgs' (or "
                             "'auto') for Dask arrays and DataFrames")
        return solver

    def _information(self):
        return "observed"

    def _store(self, objective, result):
        """Fitted attributes in raw units, from the standardised solution."""
        design = objective.design
        p, basis = design.n_params, design.basis
        theta = result.theta if basis is None else basis.to_raw(result.theta)
        Theta = theta.reshape(objective.n_blocks, p)
        if objective.n_blocks > 1 and objective.family.contrast:
            Theta = np.vstack([np.zeros((1, p)), Theta])  # the reference class
        intercepts = Theta[:, 0] if design.intercept else np.zeros(Theta.shape[0])
        self.coef_ = np.ascontiguousarray(Theta[:, int(design.intercept):])
        self.intercept_ = np.asarray(intercepts, dtype=np.float64).copy()
        self.n_iter_ = int(result.n_iter)
        self.converged_ = bool(result.converged)
        self.history_ = np.asarray(result.history, dtype=np.float64)
        self._fit_info = {"objective": float(result.value), "n_obs": int(design.n_samples),
                          "message": result.message, "n_blocks": objective.n_blocks,
                          "theta": np.array(theta, dtype=np.float64),
                          "theta_standard": result.theta.copy(),
                          "scale": None if basis is None else basis.scale.copy(),
                          "center": None if basis is None or basis.center is None
                          else basis.center.copy()}

    def _basis(self):
        """The fit's standardised coordinates (None for models fitted without)."""
        info = getattr(self, "_fit_info", {})
        if info.get("scale") is None:
            return None
        return ColumnBasis(info["scale"], info["center"], self.fit_intercept)

    # ------------------------------------------------------------- predict
    @lazy_on_dask(columns=lambda self: None if self.classes_.size == 2 else self.classes_.size)
    def decision_function(self, X):
        """Linear predictors: the log-odds ``b + x^T w`` (binary, shape (n,)) or
        the K class logits (shape (n, K); the reference class's are 0 for
        unpenalised softmax)."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=["csr", "csc"],
                          dtype=[np.float64, np.float32], reset=False)
        return linear_predictors(self, X)

    @lazy_on_dask(columns=lambda self: self.classes_.size)
    def predict_log_proba(self, X):
        """Log class probabilities, computed in log space (no ``log(p)``)."""
        eta = self.decision_function(X)
        if self.classes_.size == 2:
            return self._family.log_proba(eta)
        return log_softmax(eta, axis=1)

    @lazy_on_dask(columns=lambda self: self.classes_.size)
    def predict_proba(self, X):
        """Class probabilities; columns follow ``classes_`` (lazy for Dask ``X``)."""
        return np.exp(self.predict_log_proba(X))

    @lazy_on_dask(dtype=lambda self: self.classes_.dtype)
    def predict(self, X):
        """The most probable class."""
        eta = self.decision_function(X)
        if self.classes_.size == 2:
            return self.classes_[(eta > 0).astype(int)]
        return self.classes_[np.argmax(eta, axis=1)]

    # ----------------------------------------------------------- inference
    def summary(self, level=0.95):
        """Coefficient table: ``coef, std_err, z, p_value, ci_low, ci_high`` (Wald).

        Indexed by parameter name (``intercept`` first, then the feature
        names); for softmax by ``(class, parameter)``, one block per free
        class (the K-1 contrasts against the first class when ``alpha = 0``).
        With ``alpha > 0`` the standard errors are those of the penalised fit
        (the Laplace posterior around the MAP estimate).
        """
        check_is_fitted(self)
        if getattr(self, "covariance_", None) is None:
            raise ValueError(self._no_covariance_message())
        info = self._fit_info
        names = parameter_names(self, self.n_features_in_)
        if info["n_blocks"] > 1:
            free = self.classes_[self.classes_.size - info["n_blocks"]:]
            names = pd.MultiIndex.from_product([free.tolist(), names],
                                               names=["class", "parameter"])
        table = wald_table(names, info["theta"], self.covariance_, level, self.identified_)
        table.attrs.update(model=type(self).__name__, n_obs=info["n_obs"],
                           objective=info["objective"], converged=self.converged_,
                           n_iter=self.n_iter_, level=float(level))
        if self.alpha == 0:
            table.attrs["log_likelihood"] = -info["objective"]
        return table

    def _no_covariance_message(self):
        p, n = self._fit_info["theta"].size, self._fit_info["n_obs"]
        return (f"covariance_ was not computed during fit: the {p} x {p} information matrix "
                f"({8 * p * p / 1e6:.0f} MB) costs {n * p * p / 2:.1e} multiply-adds over "
                f"the {n} rows. Call compute_covariance(X, y) to compute it on request "
                "(it checks that it fits in memory).")

    def compute_covariance(self, X, y, sample_weight=None):
        """Compute ``covariance_`` (and so ``summary()``) for a model fitted without it.

        Wide models fitted by L-BFGS skip the p x p information matrix; this
        builds it at the fitted parameters from the same data, if it fits in
        the memory available, and raises ``MemoryError`` otherwise.
        """
        check_is_fitted(self)
        if is_dask(X):  # a distributed pass (problin._dask.objective)
            from .._dask.design import dask_classifier_data
            design = dask_classifier_data(self, X, y, sample_weight, True, self.fit_intercept,
                                          reset=False, basis=self._basis())
            t = sw = None
        else:
            X, y = validate_data(self, X, y, accept_sparse=["csr", "csc"],
                                 dtype=[np.float64, np.float32], reset=False)
            if sp.issparse(X):
                X = X.tocsr()
            _, t = encode_classes(y, self.classes_, owner=type(self).__name__)
            sw = check_sample_weight(sample_weight, X.shape[0])
            design = Design(X, self.fit_intercept, basis=self._basis())
        objective, _ = self._objective(design, t, sw)
        check_fits_in_memory(objective.n_params)
        theta = self._fit_info["theta_standard" if design.basis is not None else "theta"]
        eta = objective.linear_predictor(theta)
        set_covariance(self, objective, objective.observed_hessian(theta, eta))
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = self._multiclass
        return tags


def classifier_design(est, X, y, sample_weight, multiclass, intercept, standardise=False):
    """``(design, t, sw)`` of validated training data (see :func:`check_classifier_data`).

    ``standardise``: the design works in the equilibrated, centred coordinates
    of :class:`~problin._core.model.basis.ColumnBasis` (results map back exactly);
    ``"centred"``: centred whenever dense (a prior on the intercept at the centre).

    Dask input gives a :class:`~problin._dask.design.DaskDesign`, which
    carries its labels and weights (``t`` and ``sw`` are None): the rows stay
    in their chunks, and the objectives of :func:`classifier_objective` on it
    read them by distributed passes.
    """
    if is_dask(X):
        from .._dask.design import dask_classifier_data
        return dask_classifier_data(est, X, y, sample_weight, multiclass, intercept,
                                    standardise=standardise), None, None
    X, t, sw = check_classifier_data(est, X, y, sample_weight, multiclass)
    if standardise:
        centre = "always" if standardise == "centred" else "auto"
        return Design.standardised(X, intercept, sample_weight=sw, centre=centre), t, sw
    return Design(X, intercept), t, sw


def check_classifier_data(est, X, y, sample_weight, multiclass):
    """Validate a classifier's training data: returns ``(X, t, sw)`` and sets ``classes_``.

    ``t`` holds class indices ``0..K-1`` (the order of ``est.classes_``, fixed
    by ``est.classes`` where the estimator has that parameter); ``sw`` the
    validated sample weights or None. K > 2 is an error unless ``multiclass``.
    """
    check_label_types(y)
    # X's finiteness is checked below, on both cores (scikit-learn's check
    # reads it on one: ~14 ms per 400 MB); y's by validate_data.
    X, y = validate_data(est, X, y, accept_sparse=["csr", "csc"],
                         dtype=[np.float64, np.float32], y_numeric=False,
                         ensure_all_finite=False)
    if sp.issparse(X):
        X = X.tocsr()
    check_finite_magnitude(X, est)  # NaN, infinity, or values whose squares overflow
    name = type(est).__name__
    est.classes_, t = encode_classes(y, getattr(est, "classes", None), owner=name)
    if est.classes_.size > 2 and not multiclass:
        raise ValueError(f"Only binary classification is supported. {name} got y with "
                         f"{est.classes_.size} classes: {est.classes_[:10].tolist()}")
    sw = check_sample_weight(sample_weight, X.shape[0])
    check_class_weights(t, sw, est.classes_, why="their parameters would be minus infinity")
    return X, t, sw


def classifier_objective(design, family, t, sw, n_classes, alpha, *, information="observed",
                         intercept_alpha=0.0):
    """The negative log-posterior of a GLM classifier and its starting point.

    Binary: ``family`` on 0/1 targets; K > 2: softmax with the K-1 contrasts
    against the first class when unpenalised (identifiable), all K blocks
    when ``alpha > 0``. The prior is :func:`prior_precision`'s. ``t`` None:
    a Dask design (:func:`classifier_design`), whose objectives run by passes.
    """
    if t is None:
        from .._dask.objective import DaskGLMObjective, DaskSoftmaxObjective
    if n_classes == 2:
        prior = prior_precision(design, 1, alpha, intercept_alpha)
        if t is None:
            objective = DaskGLMObjective(design, family, prior, information=information)
        else:
            y01 = t.astype(np.float64)
            objective = GLMObjective(design, family, y01, sw, prior, information=information)
        theta0 = np.zeros(design.n_params)
        if design.intercept:
            mean = float(np.average(y01, weights=sw)) if t is not None else \
                float(design.class_weights[1] / design.total_weight)
            theta0[0] = float(family.link(np.clip(mean, 1e-10, 1.0 - 1e-10)))
        return objective, theta0
    softmax = CategoricalSoftmax(n_classes, contrast=alpha == 0)
    M, p = softmax.n_free, design.n_params
    prior = prior_precision(design, M, alpha, intercept_alpha)
    objective = SoftmaxObjective(design, softmax, t, sw, prior) if t is not None else \
        DaskSoftmaxObjective(design, softmax, prior)
    theta0 = np.zeros((M, p))
    if design.intercept:
        counts = np.bincount(t, weights=sw, minlength=n_classes) if t is not None else \
            design.class_weights
        log_freq = np.log(counts)
        theta0[:, 0] = (log_freq[1:] - log_freq[0]) if softmax.contrast \
            else log_freq - log_freq.mean()
    return objective, theta0.ravel()


def prior_precision(design, n_blocks, alpha, intercept_alpha=0.0):
    """``alpha I`` on the weights of each block, ``intercept_alpha`` on the intercepts.

    The GLMs leave intercepts unpenalised (``intercept_alpha = 0``). With all
    K softmax blocks free, adding a constant to every intercept changes no
    probability; ``c (sum_k b_k)^2 / 2`` pins the intercepts to sum zero (as
    scikit-learn's solution does) without moving any prediction or the
    optimum. ``covariance_`` is corrected for this term.
    """
    p = design.n_params
    if alpha == 0 and intercept_alpha == 0:
        return None
    diag = np.full(p, float(alpha))
    if design.intercept:
        diag[0] = float(intercept_alpha)
    basis = getattr(design, "basis", None)
    if basis is not None:  # alpha |w|^2 = sum_j alpha / s_j^2 w_z,j^2
        diag = basis.precision_to_standard(diag)  # (intercept_alpha: at the centre)
    rank_one = []
    if n_blocks > 1 and design.intercept:
        v = np.zeros(n_blocks * p)
        v[::p] = 1.0
        rank_one.append((v, 1.0))
    return PriorPrecision(np.tile(diag, n_blocks), rank_one)
