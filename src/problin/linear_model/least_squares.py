"""Least squares with an optional q-norm regulariser (Bishop 2006, §3.1.4 eq. 3.29)."""
import warnings
from numbers import Integral, Real
from typing import Self

import numpy as np
from sklearn.utils._param_validation import Interval

from .._core.moments.least_squares import Moments
from .._core.moments.lstsq import solve_factors
from .._core.solvers.penalized import lasso_gram, lq_gram
from ..exceptions import ConvergenceWarning
from ._base import LinearRegressorBase, warn_least_squares

__all__ = ["LinearRegression"]


class LinearRegression(LinearRegressorBase):
    r"""Least squares, plain or with a q-norm penalty, from sufficient statistics.

    ``t = W^T phi(x) + b + eps, eps ~ N(0, beta^-1 I)``; the weights minimise

        1/2 sum_n |t_n - W^T phi_n - b|^2 + alpha/2 sum_j |w_j|^q

    (the intercept ``b`` is never penalised). ``alpha = 0``: maximum likelihood,
    ``W = Phi^+ T``; ``q = 2``: ridge, ``(Phi^T Phi + alpha I) W = Phi^T T``.

    Both are solved from the triangular factor ``R`` of the (centred) data,
    read in one pass (see :mod:`problin._core.moments.tsqr`), by back substitution, an
    SVD of ``R`` (minimum norm, rank-deficient data) or the factor of ``[R;
    sqrt(alpha) I]`` (ridge): as accurate as QR of the rows
    (``numpy.linalg.lstsq``), not the normal equations, which square the
    condition number. A ``NumericalWarning`` gives the estimated condition
    number when fewer than 6 significant digits can be guaranteed.

    Parameters
    ----------
    alpha : float, default=0.0
        Regularisation strength (``lambda`` of Bishop 2006, eq. 3.29). For ``q = 2`` it is the
        precision of a Gaussian prior: scikit-learn's ``Ridge(alpha=alpha)``;
        for ``q = 1`` it is scikit-learn's ``Lasso(alpha=alpha / (2 n))``.
    q : float, default=2.0
        Exponent of the regulariser, ``q > 0``. ``q = 2`` is solved in closed
        form, ``q = 1`` (lasso) by coordinate descent on the Gram matrix,
        ``q < 2`` otherwise by majorise-minimise (iteratively reweighted ridge),
        ``q > 2`` by damped Newton; see :mod:`problin._core.solvers.penalized`.
    fit_intercept : bool, default=True
        Fit an unpenalised intercept (the data are centred through the
        sufficient statistics; X itself is never copied).
    tol : float, default=1e-10
        Relative tolerance of the iterative solvers (``q != 2``).
    max_iter : int, default=10000
        Iteration limit of the iterative solvers.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_outputs, n_features)
    intercept_ : float or ndarray of shape (n_outputs,)
    noise_precision_ : float
        Maximum-likelihood noise precision ``beta = N K / sum |t - y|^2``.
    rank_ : int
        Numerical rank of the (penalised) normal equations (``q = 2``).
    n_iter_ : int
        Iterations of the iterative solver (1 in closed form).
    moments_ : Moments
        Sufficient statistics (weight, means, centred scatter of ``[x, t]``);
        ``partial_fit`` merges new data into them.

    Examples
    --------
    >>> import numpy as np
    >>> from problin import LinearRegression
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> model = LinearRegression().fit(X, 1.0 + 2.0 * X[:, 0])
    >>> print(round(model.intercept_, 6), model.coef_.round(6))
    1.0 [2.]
    """

    _parameter_constraints = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "q": [Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, alpha: float = 0.0, q: float = 2.0, fit_intercept: bool = True,
                 tol: float = 1e-10, max_iter: int = 10000) -> None:
        self.alpha = alpha
        self.q = q
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter

    def _from_statistics(self, stats: Moments) -> Self:
        F = self._factors(stats)
        alpha, q = float(self.alpha), float(self.q)
        d, k = F.xt.shape
        self.n_iter_, converged = 1, True
        if alpha == 0.0 or q == 2.0:  # from the R factor: as accurate as QR of the rows
            solution = solve_factors(F, alpha)
            W, self.rank_ = solution.coef, solution.rank
            warn_least_squares(solution, d, "Phi^T Phi is singular (rank {rank} < {d} "
                               "features: collinear or constant columns, or fewer rows than "
                               "features); returning the minimum-norm least-squares solution",
                               stacklevel=5)
        else:  # the iterative solvers work on the Gram matrix R^T R (formed accurately)
            G, C = F.gram()
            solver = (lambda c: lasso_gram(G, c, alpha, tol=self.tol, max_iter=self.max_iter)) \
                if q == 1.0 else \
                (lambda c: lq_gram(G, c, alpha, q, tol=self.tol, max_iter=self.max_iter))
            W = np.empty_like(C)
            for j in range(k):
                W[:, j], n_iter, ok = solver(C[:, j])
                self.n_iter_, converged = max(self.n_iter_, n_iter), converged and ok
            self.rank_ = int(np.sum(np.diag(G) > 0))
        if not converged:
            warnings.warn(f"the q={q:g} solver did not converge in {self.max_iter} "
                          "iterations; increase max_iter or tol", ConvergenceWarning,
                          stacklevel=4)
        self._set_coef(stats, W)
        # A perfect fit leaves only rounding: keep beta finite (at most 1 / tiny).
        sse = max(F.residual_sum_of_squares(W), np.finfo(np.float64).eps
                  * F.total_sum_of_squares, np.finfo(np.float64).tiny * max(stats.weight * k, 1.0))
        self.noise_precision_ = stats.weight * k / sse
        return self
