"""Logistic (binary) and softmax (multinomial) regression with full Wald inference."""
from numpy.typing import ArrayLike

from .._core.model.families import BernoulliLogit
from .._linear_boundary import LinearBoundaryMixin
from ._base import GLMClassifier
from ._stochastic import StochasticGradientMixin

__all__ = ["LogisticRegression"]


class LogisticRegression(StochasticGradientMixin, LinearBoundaryMixin, GLMClassifier):
    """Logistic regression; softmax (multinomial) regression for K > 2 classes.

    .. math::

        p(y = 1 | x) = \\sigma(b + x^T w), \\quad
        p(y = k | x) = \\frac{e^{a_k}}{\\sum_j e^{a_j}}, \\; a_k = b_k + x^T w_k, \\quad
        w \\sim N(0, \\alpha^{-1} I)

    Fitted by the Newton/IRLS engine (IRLS, Bishop 2006, §4.3.3 eq. 4.100:
    ``w <- (Phi^T R Phi)^-1 Phi^T R z``; for softmax the block Hessian of eq. 4.110
    ``H_kj = sum_n y_nk (I_kj - y_nj) phi_n phi_n^T``); ``alpha = 0`` is maximum
    likelihood. For K > 2 and ``alpha = 0`` the K logits are identified only
    up to a common shift, so the model is fitted and reported as the K-1
    contrasts against the first class (as statsmodels ``MNLogit``); with
    ``alpha > 0`` all K blocks are estimated (as scikit-learn), the intercepts
    summing to zero.

    Parameters
    ----------
    alpha : float, default=0.0
        Precision of the Gaussian prior on the weights (L2 penalty
        ``alpha/2 |w|^2``); the intercept is not penalised. scikit-learn's
        ``C`` is ``1 / alpha``.
    penalty : {"l2", "firth", "flic", "flac"}, default="l2"
        ``"l2"``: the Gaussian prior of ``alpha``. ``"firth"``: Firth's bias-reduced
        likelihood, ``l(theta) + 1/2 log |I(theta)|`` (the Jeffreys prior; Firth 1993,
        Heinze & Schemper 2002, as R's logistf), fitted by Fisher scoring on the
        modified score ``sum (y - p + h (1/2 - p)) x`` (``h`` the leverages): finite
        estimates under separation, standard errors from the inverse Fisher
        information at the estimate. Binary models in memory, Newton, ``alpha = 0``.
        ``"flic"`` and ``"flac"`` (Puhr et al. 2017, as logistf's ``flic``/``flac``):
        Firth's fit calibrated so that the mean predicted probability is the event
        rate; FLIC refits the intercept by maximum likelihood with Firth's slopes
        held, FLAC refits all by maximum likelihood on the data augmented by the
        Firth leverages' pseudo-rows (see ``problin.glm._firth_corrections``).
    fit_intercept : bool, default=True
    solver : {"auto", "newton", "lbfgs", "gradient", "coordinate"}, default="auto"
        Newton/IRLS; L-BFGS (Hessian-free, for wide or sparse data); gradient
        ascent with line search; or one coefficient at a time.
        All reach the same optimum. ``"auto"`` is Newton up to 1000
        parameters (up to 2000 on dense data in memory with rows enough for a row
        sketch, where the engine forms no Hessian of all rows) and L-BFGS beyond,
        where the Hessian would cost more than it saves (or not fit in memory).
    max_iter : int or None, default=None
        Iterations (sweeps for ``"coordinate"``); None means 100, 5000, 10000
        and 1000 for newton, lbfgs, gradient and coordinate.
    tol : float, default=1e-8
        Newton: stop when half the squared Newton decrement is below ``tol``.
        Gradient and coordinate: stop when the largest gradient component in
        standardised coordinates is below ``tol * sqrt(sum of weights)``.
        Both rules put the answer within a few ``tol`` standard errors of the
        optimum.
    classes : array-like or None, default=None
        The class labels, in order (default: the sorted labels of y). The
        first is the reference class of the softmax contrasts; every class
        listed must occur in y.
    cov_type : {"nonrobust", "HC0", "HC1", "HC2", "HC3", "cluster"}, default="nonrobust"
        The covariance of ``covariance_``, ``summary()`` and ``predict_interval``:
        the inverse observed information, or a sandwich (White 1980; MacKinnon &
        White 1985; Cameron & Miller 2015) with statsmodels' small-sample factors:
        HC0 none, HC1 ``n / (n - k)``, HC2/HC3 the GLM leverages ``h_i``,
        cluster ``G / (G - 1) (n - 1) / (n - k)`` over the clusters of
        ``fit(..., groups=...)`` (:mod:`problin.glm.robust`; statsmodels itself
        returns HC0 for HC1-HC3 of these models).
    prior_mean : array-like of shape (p,) or None, default=None
    prior_precision : array-like of shape (p, p) or (p,) or None, default=None
        A Gaussian prior ``N(m_0, S_0^-1)`` on the raw parameters ``[intercept,
        coef...]`` (intercept first where ``fit_intercept``; Bishop 2006, eq. 4.140),
        the penalty ``1/2 (theta - m_0)^T S_0 (theta - m_0)``: ``prior_precision`` is
        ``S_0`` (symmetric positive semidefinite, a zero row unpenalised; a vector: its
        diagonal), and then ``alpha`` must be 0; ``prior_mean`` is ``m_0`` (None: zero;
        alone, it centres ``alpha``'s ridge, the intercept unpenalised). Binary models;
        not with ``penalty="firth"``, ``"flic"`` or ``"flac"``.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (K, n_features)
        For unpenalised softmax, row 0 (the reference class) is zero.
    intercept_ : ndarray of shape (1,) or (K,)
    classes_ : ndarray of shape (K,)
    covariance_ : ndarray of shape (p, p) or None
        Inverse observed information (of the penalised objective when
        ``alpha > 0``), parameters ordered ``[intercept, coef...]`` per free
        class block. None for models with more than 2000 parameters: call
        :meth:`compute_covariance` for it.
    solver_ : str
        The solver used (what ``"auto"`` chose).
    n_iter_, converged_, history_ :
        Iterations used, whether the tolerance was met, objective per iterate.
    identified_ : ndarray of bool, shape (p,)
        False for parameters that collinear or constant columns leave undetermined
        (the later of collinear columns, as R's ``glm``): they are held at 0 and the
        others equal the fit without those columns.
    log_likelihood_, null_log_likelihood_, aic_, bic_, deviance_ : float
        The log-likelihood at the estimate, that of the intercept-only model
        (same weights and offset), ``-2 l + 2 k``, ``-2 l + k log n`` and
        ``-2 l`` (:mod:`problin.glm.statistics`; statsmodels' ``llf``,
        ``llnull``, ``aic``, ``bic``, ``GLM.deviance``). AIC, BIC and the LR test
        assume maximum likelihood: NaN when ``alpha > 0``.
    df_model_, df_resid_, n_obs_ : float
        Estimated parameters less the intercepts, ``n - k``, and ``n``, the
        sum of the sample weights (frequency weights).
    pseudo_r2_, lr_statistic_, lr_pvalue_ : float
        McFadden's ``1 - l / l_0`` and the likelihood-ratio test against the
        intercept-only model (``chi2`` with ``df_model_`` degrees of freedom).

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from problin import LogisticRegression
    >>> X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    >>> model = LogisticRegression().fit(X[["mean radius", "mean texture"]], y)
    >>> model.summary()[["coef", "std_err", "z"]].round(3)
                    coef  std_err       z
    parameter
    intercept     19.849    1.774  11.189
    mean radius   -1.057    0.101 -10.417
    mean texture  -0.218    0.037  -5.885
    """

    _family = BernoulliLogit()
    _multiclass = True

    def __init__(self, alpha: float = 0.0, *, penalty: str = "l2", fit_intercept: bool = True,
                 solver: str = "auto",
                 max_iter: int | None = None, tol: float = 1e-8,
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
        self.prior_mean = prior_mean
        self.prior_precision = prior_precision
