"""Shared machinery of the binary GLM classifiers (logit and probit links).

The estimator classes only choose a family; everything else — validation,
the prior, the solver call, inference and diagnostics — lives here once.
"""
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core.ascent import coordinate_descent, gradient_descent
from .._core.design import Design
from .._core.linalg import cholesky, identified_columns
from .._core.newton import newton
from .._core.objective import GLMObjective
from .._core.separation import separated_rows
from .._core.validation import check_label_types, check_sample_weight
from ..exceptions import (CollinearityWarning, ConvergenceWarning, NumericalWarning,
                          SeparationWarning)
from .inference import parameter_names, wald_table

SOLVERS = {"newton": newton, "gradient": gradient_descent, "coordinate": coordinate_descent}
DEFAULT_MAX_ITER = {"newton": 100, "gradient": 10000, "coordinate": 1000}
# A fitted row whose loss is below this is fitted with probability ~1: a
# sign that some coefficients are running off to infinity (separation).
_SUSPICIOUS_LOSS = 1e-7


class BinaryGLMClassifier(ClassifierMixin, BaseEstimator):
    """Binary GLM ``p(y = 1 | x) = F(b + x^T w)`` with a Gaussian prior on ``w``."""

    _family = None  # a family instance, set by subclasses

    _parameter_constraints = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "solver": [StrOptions({"newton", "gradient", "coordinate"})],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0, None, closed="neither")],
    }

    def _information(self):
        return "observed"

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None):
        """Fit by maximising the (penalised) log-likelihood.

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
        check_label_types(y)
        X, y = validate_data(self, X, y, accept_sparse=["csr", "csc"],
                             dtype=[np.float64, np.float32], y_numeric=False)
        if sp.issparse(X):
            X = X.tocsr()
        t = self._binary_targets(y)
        sw = check_sample_weight(sample_weight, X.shape[0])
        design = Design(X, self.fit_intercept)
        objective = GLMObjective(design, self._family, t, sw, self._prior_precision(design),
                                 information=self._information())
        solver = SOLVERS[self.solver]
        max_iter = self.max_iter if self.max_iter is not None else DEFAULT_MAX_ITER[self.solver]
        result = solver(objective, self._start(design, t, sw), max_iter=max_iter, tol=self.tol)
        self._store(design, result)
        self._diagnose(objective, result)
        return self

    def _binary_targets(self, y):
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise ValueError(f"{type(self).__name__} needs samples of 2 classes, but the data "
                             f"contain only one class: {self.classes_[0]}")
        if self.classes_.size > 2:
            raise ValueError(self._multiclass_message())
        return (y == self.classes_[1]).astype(np.float64)

    def _multiclass_message(self):
        return (f"Only binary classification is supported. {type(self).__name__} got y "
                f"with {self.classes_.size} classes: {self.classes_[:10].tolist()}")

    def _prior_precision(self, design):
        """``alpha I`` on the weights; the intercept is never penalised."""
        if self.alpha == 0:
            return None
        diag = np.full(design.n_params, float(self.alpha))
        if design.intercept:
            diag[0] = 0.0
        return np.diag(diag)

    def _start(self, design, t, sw):
        """Zero weights and the intercept of the weighted class frequency."""
        theta = np.zeros(design.n_params)
        if design.intercept:
            mean = float(np.average(t, weights=sw))
            theta[0] = float(self._family.link(np.clip(mean, 1e-10, 1.0 - 1e-10)))
        return theta

    def _store(self, design, result):
        theta = result.theta
        b = theta[0] if design.intercept else 0.0
        w = theta[1:] if design.intercept else theta
        self.coef_ = w.reshape(1, -1).copy()
        self.intercept_ = np.array([b], dtype=np.float64)
        self.n_iter_ = int(result.n_iter)
        self.converged_ = bool(result.converged)
        self.history_ = np.asarray(result.history, dtype=np.float64)
        self._fit_info = {"objective": float(result.value), "n_obs": int(design.n_samples),
                          "message": result.message}

    # ------------------------------------------------------------ diagnose
    def _diagnose(self, objective, result):
        """Covariance, identifiability, separation and convergence checks."""
        H = result.hessian
        if H is None or not objective.exact_hessian:
            H = objective.observed_hessian(result.theta, result.eta)
        self.identified_ = identified_columns(H)
        names = parameter_names(self, objective.design.n_features)
        cov = np.full_like(H, np.nan)
        idx = np.flatnonzero(self.identified_)
        if idx.size:
            chol = cholesky(H[np.ix_(idx, idx)])
            cov[np.ix_(idx, idx)] = chol.inverse()
            if chol.jitter > 0:
                warnings.warn("the information matrix is numerically singular; standard "
                              "errors are regularised by a jitter of "
                              f"{chol.jitter:.2e}", NumericalWarning, stacklevel=3)
        self.covariance_ = cov
        separated = self._check_separation(objective, result)
        # Under separation the information matrix degenerates for that reason
        # alone: the separation warning says it all.
        if not self.identified_.all() and not separated:
            lost = [n for n, ok in zip(names, self.identified_) if not ok]
            warnings.warn(f"parameters not identified (collinear or constant columns): {lost}. "
                          "Predictions are unaffected; drop these columns or set alpha > 0 "
                          "for unique coefficients.", CollinearityWarning, stacklevel=3)
        if not result.converged and not separated:
            warnings.warn(f"{type(self).__name__} did not converge in {result.n_iter} "
                          f"iterations ({result.message}); increase max_iter or tol.",
                          ConvergenceWarning, stacklevel=3)

    def _check_separation(self, objective, result):
        if self.alpha > 0:
            return False
        row_loss = -objective.family.log_cdf((2.0 * objective.y - 1.0) * result.eta)
        if not np.any(row_loss < _SUSPICIOUS_LOSS) and result.converged:
            return False
        rows = separated_rows(objective.design, objective.y, objective.sample_weight)
        n_sep = int(rows.sum())
        if n_sep == 0:
            return False
        sw = objective.sample_weight
        n_used = rows.size if sw is None else int(np.count_nonzero(sw))
        kind = "completely" if n_sep == n_used else "quasi-completely"
        warnings.warn(f"the classes are {kind} separated: {n_sep} of {n_used} samples are "
                      "fitted with probability 0 or 1 and the maximum-likelihood "
                      "coefficients do not exist (they diverge). The returned coefficients "
                      "are finite because the iteration stopped; set alpha > 0 for a "
                      "well-defined fit.", SeparationWarning, stacklevel=4)
        self.separated_ = rows
        return True

    # ------------------------------------------------------------- predict
    def decision_function(self, X):
        """Linear predictor ``b + x^T w`` (the log-odds for the logit link)."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=["csr", "csc"],
                          dtype=[np.float64, np.float32], reset=False)
        theta = np.concatenate([self.intercept_, self.coef_.ravel()])
        return Design(X, True).matvec(theta)

    def predict_log_proba(self, X):
        """Log class probabilities, computed in log space (no ``log(p)``)."""
        return self._family.log_proba(self.decision_function(X))

    def predict_proba(self, X):
        """Class probabilities; columns follow ``classes_``."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """The more probable class (``eta > 0``)."""
        eta = self.decision_function(X)
        return self.classes_[(eta > 0).astype(int)]

    # ----------------------------------------------------------- inference
    def summary(self, level=0.95):
        """Coefficient table: ``coef, std_err, z, p_value, ci_low, ci_high`` (Wald).

        Indexed by parameter name (``intercept`` first, then the feature
        names). With ``alpha > 0`` the standard errors are those of the
        penalised fit (the Laplace posterior around the MAP estimate).
        """
        check_is_fitted(self)
        theta = np.concatenate([self.intercept_, self.coef_.ravel()]) if self.fit_intercept \
            else self.coef_.ravel()
        names = parameter_names(self, self.n_features_in_)
        table = wald_table(names, theta, self.covariance_, level, self.identified_)
        info = self._fit_info
        table.attrs.update(model=type(self).__name__, n_obs=info["n_obs"],
                           objective=info["objective"], converged=self.converged_,
                           n_iter=self.n_iter_, level=float(level))
        if self.alpha == 0:
            table.attrs["log_likelihood"] = -info["objective"]
        return table

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = False
        return tags
