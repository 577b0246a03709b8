"""Logistic regression fitted by Newton/IRLS with full Wald inference."""
from .._core.families import BernoulliLogit
from ._base import BinaryGLMClassifier

__all__ = ["LogisticRegression"]


class LogisticRegression(BinaryGLMClassifier):
    """Binary logistic regression.

    .. math::

        p(y = 1 | x) = \\sigma(b + x^T w), \\quad y \\sim \\mathrm{Bernoulli},
        \\quad w \\sim N(0, \\alpha^{-1} I)

    Fitted by the Newton/IRLS engine (the seeds' update
    ``w <- (Phi^T R Phi)^-1 Phi^T R z``); ``alpha = 0`` is maximum likelihood.

    Parameters
    ----------
    alpha : float, default=0.0
        Precision of the Gaussian prior on the weights (L2 penalty
        ``alpha/2 |w|^2``); the intercept is not penalised. scikit-learn's
        ``C`` is ``1 / alpha``.
    fit_intercept : bool, default=True
    solver : {"newton", "gradient", "coordinate"}, default="newton"
        Newton/IRLS; gradient ascent with line search; or one coefficient at
        a time. All three reach the same optimum.
    max_iter : int or None, default=None
        Iterations (sweeps for ``"coordinate"``); None means 100, 10000 and
        1000 for the three solvers.
    tol : float, default=1e-8
        Newton: stop when half the squared Newton decrement is below ``tol``.
        Gradient and coordinate: stop when the largest gradient component in
        standardised coordinates is below ``tol * sqrt(sum of weights)``.
        Both rules put the answer within a few ``tol`` standard errors of the
        optimum.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    classes_ : ndarray of shape (2,)
    covariance_ : ndarray of shape (p, p)
        Inverse observed information (of the penalised objective when
        ``alpha > 0``), parameters ordered ``[intercept, coef...]``.
    n_iter_, converged_, history_ :
        Iterations used, whether the tolerance was met, objective per iterate.
    identified_ : ndarray of bool, shape (p,)
        False for parameters that collinear or constant columns leave undetermined.

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

    def __init__(self, alpha=0.0, *, fit_intercept=True, solver="newton", max_iter=None,
                 tol=1e-8):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
