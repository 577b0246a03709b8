"""Probit regression fitted by Newton/IRLS with full Wald inference."""
from numpy.typing import ArrayLike
from sklearn.utils._param_validation import StrOptions

from .._core.model.families import BernoulliProbit
from .._linear_boundary import LinearBoundaryMixin
from ._base import GLMClassifier
from ._stochastic import StochasticGradientMixin

__all__ = ["ProbitRegression"]


class ProbitRegression(StochasticGradientMixin, LinearBoundaryMixin, GLMClassifier):
    """Binary probit regression.

    .. math::

        p(y = 1 | x) = \\Phi(b + x^T w), \\quad y \\sim \\mathrm{Bernoulli},
        \\quad w \\sim N(0, \\alpha^{-1} I)

    where ``Phi`` is the standard normal CDF (the probit function, Bishop 2006, §4.3.5 eq. 4.114).

    Parameters
    ----------
    alpha, penalty, fit_intercept, solver, max_iter, tol, prior_mean, prior_precision :
        As in :class:`problin.LogisticRegression` (``penalty="firth"``: the Jeffreys
        prior of the probit's Fisher information ``phi^2 / (Phi (1 - Phi))``, the
        adjusted score of Kosmidis & Firth 2009).
    information : {"observed", "expected"}, default="observed"
        Curvature used by Newton's method: the observed information (true
        Newton, as statsmodels ``Probit``) or the expected information
        (Fisher scoring, classic IRLS). Both converge to the same optimum;
        ``covariance_`` is the inverse *observed* information (the expected one
        for ``penalty="firth"``, which scores with it).
    classes : array-like of two labels or None, default=None
        The class labels in order; the second is the "success" class whose
        probability is ``Phi(b + x^T w)``. Default: the sorted labels of y.
    cov_type : {"nonrobust", "HC0", "HC1", "HC2", "HC3", "cluster"}, default="nonrobust"
        The covariance of ``covariance_``, ``summary()`` and ``predict_interval``:
        the inverse observed information, or a sandwich (White 1980; MacKinnon &
        White 1985; Cameron & Miller 2015) with statsmodels' small-sample factors:
        HC0 none, HC1 ``n / (n - k)``, HC2/HC3 the GLM leverages ``h_i``,
        cluster ``G / (G - 1) (n - 1) / (n - k)`` over the clusters of
        ``fit(..., groups=...)`` (:mod:`problin.glm.robust`; statsmodels itself
        returns HC0 for HC1-HC3 of these models).

    Attributes
    ----------
    coef_, intercept_, classes_, covariance_, n_iter_, converged_, history_, identified_ :
        As in :class:`problin.LogisticRegression`.
    log_likelihood_, null_log_likelihood_, aic_, bic_, deviance_, df_model_, df_resid_, \
n_obs_, pseudo_r2_, lr_statistic_, lr_pvalue_ :
        Model statistics, as in :class:`problin.LogisticRegression` (statsmodels
        ``Probit``'s ``llf``, ``llnull``, ``aic``, ...).

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from problin import ProbitRegression
    >>> X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    >>> model = ProbitRegression().fit(X[["mean radius", "mean texture"]], y)
    >>> model.predict_proba(X[["mean radius", "mean texture"]].iloc[:2]).round(3)
    array([[0.775, 0.225],
           [0.999, 0.001]])
    """

    _family = BernoulliProbit()

    _parameter_constraints = {
        **GLMClassifier._parameter_constraints,
        "information": [StrOptions({"observed", "expected"})],
    }

    def __init__(self, alpha: float = 0.0, *, penalty: str = "l2", fit_intercept: bool = True,
                 solver: str = "auto",
                 max_iter: int | None = None, tol: float = 1e-8, information: str = "observed",
                 classes: ArrayLike | None = None, cov_type: str = "nonrobust",
                 prior_mean: ArrayLike | None = None,
                 prior_precision: ArrayLike | None = None) -> None:
        self.alpha = alpha
        self.penalty = penalty
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.classes = classes
        self.cov_type = cov_type
        self.information = information
        self.prior_mean = prior_mean
        self.prior_precision = prior_precision
