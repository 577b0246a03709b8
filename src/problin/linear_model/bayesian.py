"""Bayesian linear regression: conjugate Gaussian posterior, sequential updates, evidence."""
from numbers import Integral, Real
from typing import Any, Self

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import linalg
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core.bayes.linear import general_prior_posterior, linear_gaussian_posterior
from .._core.blocks import iter_blocks
from .._core.extreme import row_scale
from .._core.moments.least_squares import Moments
from .._core.types import MatrixLike
from .._source import data_source
from .._effects_methods import EffectsMethods
from .._frames import encode_frame
from ..exceptions import ConvergenceWarning, warn_at_caller
from ..inference.effects import EffectsModel, IdentityMap, Sampling
from ..inference.effects_draws import as_blocks, check_n_draws
from ..inference.summaries import SummaryText, posterior_summary_text
from ._base import LinearRegressorBase
from ._inference import posterior_table

__all__ = ["BayesianLinearRegression"]


class BayesianLinearRegression(EffectsMethods, LinearRegressorBase):
    r"""Bayesian linear regression with the evidence approximation.

    ``t_k = w_k^T x + b_k + eps, eps ~ N(0, beta^-1)``, ``w_k ~ N(m_0, S_0)`` with
    ``S_0^-1 = alpha P`` (by default ``m_0 = 0``, ``P = I``: ``N(0, alpha^-1 I)``);
    posterior ``N(m_N, S_N)`` with ``S_N^-1 = S_0^-1 + beta Phi^T Phi`` and
    ``m_N = S_N (S_0^-1 m_0 + beta Phi^T t)``; predictive
    ``N(m_N^T x, 1/beta + x^T S_N x)``.

    The intercept has a flat prior: it is centred out (as in scikit-learn) and
    adds ``1 / (beta N)`` to the predictive variance. ``alpha=None`` and/or
    ``beta=None`` are estimated by maximising the evidence ``ln p(t | alpha,
    beta)`` (type-II maximum likelihood, from one singular value
    decomposition of the data's triangular factor ``R``, ``R^T R = Phi^T Phi``,
    accurate where an eigendecomposition of ``Phi^T Phi`` would lose the small
    eigenvalues to rounding); all outputs share alpha and beta. ``partial_fit`` is the
    sequential update, the posterior becoming the prior for the next batch:
    with fixed alpha and beta, ``S_{N+1}^-1 = S_N^-1 + beta Phi_new^T Phi_new``,
    ``m_{N+1} = S_{N+1} (S_N^-1 m_N + beta Phi_new^T t_new)``, carried out on
    merged sufficient statistics (otherwise alpha and beta are re-estimated
    from all rows seen); ``sample_weight`` multiplies a row's noise precision.

    The prior is on ``coef_``, the weights of the features as given: centring
    moves only the intercept (``t - b = w^T (x - x_bar) + (t_bar - b - w^T
    x_bar)``), so a flat prior on the intercept leaves the posterior of ``w``
    that of the centred data under the same ``N(m_0, S_0)``. With
    ``prior_precision``, ``alpha`` scales it: ``alpha=1.0`` uses ``P`` as it
    is, and ``alpha=None`` estimates the scale by the evidence (the fixed point
    ``alpha = K gamma / sum_k (m_k - m_0)^T P (m_k - m_0)``, the isotropic one in
    the coordinates ``L^T (w - m_0)``, ``P = L L^T``); ``beta=None`` is estimated
    as always (``gamma = beta tr(S_N Phi^T Phi)``).

    Parameters
    ----------
    alpha : float or None, default=None
        Prior precision of the weights (with ``prior_precision``: its scale,
        ``S_0^-1 = alpha P``); ``None``: estimated from the evidence.
    beta : float or None, default=None
        Noise precision; ``None``: estimated from the evidence.
    fit_intercept : bool, default=True
    tol : float, default=1e-10
        Stop re-estimating when alpha and beta change by less than this (relative).
    max_iter : int, default=1000
    prior_mean : array-like of shape (n_features,) or (n_outputs, n_features), default=None
        Prior mean ``m_0`` of the weights (one row per output, or one for all);
        ``None``: zero.
    prior_precision : array-like of shape (n_features, n_features) or (n_features,), default=None
        Shape ``P`` of the prior precision ``S_0^-1 = alpha P``: a symmetric
        positive definite matrix, or the positive diagonal of one (shared by
        the outputs); ``None``: the identity. Give ``alpha=1.0`` to use it as
        the precision itself.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_outputs, n_features)
        Posterior mean ``m_N`` of the weights.
    intercept_ : float or ndarray of shape (n_outputs,)
    alpha_, beta_ : float
        Prior precision (scale of ``prior_precision`` when given) and noise
        precision used (estimated or given).
    gamma_ : float
        Effective number of parameters ``sum_i beta lambda_i / (alpha + beta lambda_i)``.
    log_evidence_ : float
        ``ln p(t | alpha_, beta_)`` (summed over outputs; with an intercept, of the
        centred data, as scikit-learn's ``BayesianRidge.scores_``).
    posterior_mean_ : ndarray of shape (n_params,) or (n_outputs, n_params)
        ``[intercept, coef...]``.
    posterior_cov_ : ndarray of shape (n_params, n_params)
        Joint posterior covariance of ``[intercept, coef...]`` (shared by the outputs).
    n_iter_ : int
    moments_ : Moments
        Sufficient statistics; ``partial_fit`` merges new data into them.
    log_likelihood_ : float
        ``ln p(t | m_N, beta_)``, the Gaussian log-likelihood at the posterior mean and
        the noise precision used (weights count as duplicated rows, as in the
        evidence), summed over outputs. Model comparison should use
        ``log_evidence_``; AIC, BIC and frequentist tables are not defined for
        this model and are not set (see :meth:`summary` for the posterior table).
    n_obs_ : float
        The total sample weight (the number of rows when unweighted).

    Examples
    --------
    >>> import numpy as np
    >>> from problin import BayesianLinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2))
    >>> t = X @ [1.0, -2.0] + 0.5 + rng.normal(scale=0.1, size=200)
    >>> model = BayesianLinearRegression().fit(X, t)
    >>> print(model.coef_.round(2), round(1 / np.sqrt(model.beta_), 2))
    [ 0.99 -1.99] 0.1
    >>> mean, std = model.predict(X[:2], return_std=True)
    >>> print(std.round(3))
    [0.1 0.1]
    """

    _parameter_constraints = {
        "alpha": [Interval(Real, 0, None, closed="neither"), None],
        "beta": [Interval(Real, 0, None, closed="neither"), None],
        "fit_intercept": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "prior_mean": ["array-like", None],
        "prior_precision": ["array-like", None],
    }

    def __init__(self, alpha: float | None = None, beta: float | None = None,
                 fit_intercept: bool = True, tol: float = 1e-10, max_iter: int = 1000,
                 prior_mean: ArrayLike | None = None,
                 prior_precision: ArrayLike | None = None) -> None:
        self.alpha = alpha
        self.beta = beta
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.prior_mean = prior_mean
        self.prior_precision = prior_precision

    def _from_statistics(self, stats: Moments) -> Self:
        F = self._factors(stats)
        d = F.xx.shape[0]
        options: dict[str, Any] = {"alpha": self.alpha, "beta": self.beta, "tol": self.tol,
                   "max_iter": self.max_iter, "spreads": F.spreads}
        data = (F.xx, F.xt, float(np.sum(F.tt ** 2)), stats.weight)
        if self.prior_mean is None and self.prior_precision is None:
            post = linear_gaussian_posterior(*data, **options)
        else:
            M0 = _check_prior_mean(self.prior_mean, F.xt.shape[0], F.xt.shape[1],
                                   self._single_output)
            L = _prior_precision_factor(self.prior_precision, d)
            post = general_prior_posterior(*data, M0, L, **options)
        if not post.converged:
            warn_at_caller(f"the evidence approximation did not converge in {self.max_iter} "
                           "iterations", ConvergenceWarning)
        self.alpha_, self.beta_, self.gamma_ = post.alpha, post.beta, post.gamma
        self.log_evidence_, self.n_iter_ = post.log_evidence, max(post.n_iter, 1)
        self._set_coef(stats, post.mean)
        self._cov_factor = post.cov_factor()
        # Flat prior on the intercept: b | w ~ N(t_bar - x_bar^T w, 1 / (beta N)).
        self._intercept_var = 1.0 / (post.beta * stats.weight) if self.fit_intercept else 0.0
        self._x_mean = stats.x_mean if self.fit_intercept else np.zeros(d)
        S = post.covariance()
        W = post.mean.T
        if self.fit_intercept:
            Sx = S @ self._x_mean
            S = np.block([[np.array([[self._intercept_var + self._x_mean @ Sx]]), -Sx[None, :]],
                          [-Sx[:, None], S]])
            W = np.column_stack([np.atleast_1d(self.intercept_), W])
        self.posterior_cov_ = S
        self.posterior_mean_ = W[0] if self._single_output else W
        n, k = stats.weight, F.xt.shape[1]
        self.n_obs_ = float(n)
        self.log_likelihood_ = float(0.5 * n * k * np.log(post.beta / (2.0 * np.pi))
                                     - 0.5 * post.beta * F.residual_sum_of_squares(post.mean))
        return self

    def summary(self, level: float = 0.95) -> pd.DataFrame:
        """Posterior table ``mean, sd, z, p_opposite, ci_low, ci_high`` per parameter
        (rows ``intercept`` then the features; ``(output, parameter)`` for several
        outputs): the exact Gaussian posterior given ``alpha_`` and ``beta_`` (Bishop
        2006, eq. 3.53-3.54), equal-tailed credible intervals, ``p_opposite`` the
        posterior probability of the sign opposite to the mean (the columns of
        ``BayesianLogisticRegression.summary``). ``alpha``/``beta`` estimated by the
        evidence are plugged in (their uncertainty is not integrated over).

        Parameters
        ----------
        level : float, default=0.95
            Probability of the credible intervals.

        Returns
        -------
        pandas.DataFrame
        """
        check_is_fitted(self)
        return posterior_table(self, level)

    def summary_text(self, level: float = 0.95) -> SummaryText:
        """``summary()`` under the prior precision and log evidence (HTML in notebooks)."""
        return posterior_summary_text(self, self.summary(level))

    def predict(self, X: MatrixLike, return_std: bool = False) -> Any:
        """Predictive mean, and with ``return_std`` its standard deviation.

        ``sigma_N^2(x) = 1/beta + (x - x_bar)^T S_N (x - x_bar) + 1/(beta N)``
        (the last term, the intercept's uncertainty, only with ``fit_intercept``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        return_std : bool, default=False

        Returns
        -------
        mean : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        std : ndarray of the same shape, only with ``return_std``
        """
        check_is_fitted(self)
        source = data_source(X)  # (Dask: lazy, chunk by chunk)
        cols = None if self._single_output else self.coef_.shape[0]
        if not return_std:
            return source.map_rows(self, "predict", cols,
                                   super(BayesianLinearRegression, self).predict)
        return source.map_rows(self, "predict", cols, self._mean_std, outputs=2,
                               kwargs={"return_std": True})

    def _mean_std(self, X: MatrixLike) -> tuple[Any, Any]:
        """The predictive mean and standard deviation of rows in memory."""
        mean = super().predict(X)
        X = validate_data(self, encode_frame(self, X, False), reset=False,
                          dtype=[np.float64, np.float32])
        std = np.empty(X.shape[0])
        noise = 1.0 / self.beta_ + self._intercept_var
        for start, stop, Xb in iter_blocks(X):
            # On rows scaled by a power of two, multiplied back after the root: at a
            # row of 1e200 the variance (1e397) overflows, the deviation (1e198) not.
            D = np.asarray(Xb - self._x_mean, dtype=np.float64)
            s = row_scale(D)
            U = (D / s[:, None]) @ self._cov_factor
            std[start:stop] = s * np.sqrt(np.einsum("ij,ij->i", U, U) + noise / s / s)
        return mean, (std if mean.ndim == 1 else np.repeat(std[:, None], mean.shape[1], 1))

    def _effects_model(self, type: str) -> EffectsModel:
        """The identity on both scales at the posterior mean, one block per output
        (``K`` outputs share ``posterior_cov_``); the tables read the draws."""
        check_is_fitted(self)
        W = np.atleast_2d(self.posterior_mean_)
        K = W.shape[0]
        blocks = as_blocks(W.reshape(1, -1), K, self.fit_intercept)[0]
        return EffectsModel(blocks, bool(self.fit_intercept), IdentityMap(),
                            None if self._single_output else list(range(K)),
                            np.kron(np.eye(K), self.posterior_cov_))

    def _effects_draws(self, sampling: Sampling) -> np.ndarray:
        """Draws of the Gaussian posterior (:meth:`sample_posterior`; 1,000 unless
        ``sampling`` says)."""
        n = check_n_draws(1000 if sampling.n_draws is None else sampling.n_draws)
        theta = self.sample_posterior(n, sampling.random_state)
        K = 1 if theta.ndim == 2 else theta.shape[1]
        return as_blocks(theta.reshape(n, -1), K, self.fit_intercept)

    def sample_posterior(self, n_samples: int = 1, random_state: Any = None) -> np.ndarray:
        """Draws of ``[intercept, coef...]`` from the posterior (for plotting functions).

        Parameters
        ----------
        n_samples : int, default=1
        random_state : int, RandomState instance or None

        Returns
        -------
        ndarray of shape (n_samples, n_params) or (n_samples, n_outputs, n_params)
        """
        check_is_fitted(self)
        rng = check_random_state(random_state)
        coef = np.atleast_2d(self.coef_)  # K x D
        K, D = coef.shape
        Z = rng.standard_normal((n_samples, K, D))
        W = coef[None] + Z @ self._cov_factor.T
        draws = W
        if self.fit_intercept:
            b = np.atleast_1d(self.intercept_) + coef @ self._x_mean
            b = b[None] - W @ self._x_mean
            b += np.sqrt(self._intercept_var) * rng.standard_normal((n_samples, K))
            draws = np.concatenate([b[..., None], W], axis=2)
        return draws[:, 0] if self._single_output else draws


def _check_prior_mean(prior_mean: ArrayLike | None, n_features: int, n_outputs: int,
                      single_output: bool) -> np.ndarray:
    """``m_0`` as an ``n_features x n_outputs`` array (zeros when ``None``)."""
    if prior_mean is None:
        return np.zeros((n_features, n_outputs))
    try:
        M0 = np.asarray(prior_mean, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("prior_mean must be numeric") from None
    if M0.shape == (n_features,):
        M0 = np.repeat(M0[:, None], n_outputs, axis=1)
    elif M0.shape == (n_outputs, n_features) and not single_output:
        M0 = M0.T
    else:
        per_output = "" if single_output else f" or ({n_outputs}, {n_features})"
        raise ValueError(f"prior_mean has shape {M0.shape}; expected ({n_features},)"
                         f"{per_output} for {n_features} features")
    if not np.all(np.isfinite(M0)):
        raise ValueError("prior_mean contains NaN or infinity")
    return M0


def _prior_precision_factor(prior_precision: ArrayLike | None, n_features: int) -> np.ndarray:
    """Lower Cholesky factor ``L`` of ``P`` (a vector of square roots for a diagonal)."""
    if prior_precision is None:
        return np.ones(n_features)
    try:
        P = np.asarray(prior_precision, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError("prior_precision must be numeric") from None
    if P.shape not in ((n_features,), (n_features, n_features)):
        raise ValueError(f"prior_precision has shape {P.shape}; expected ({n_features}, "
                         f"{n_features}) or a diagonal of shape ({n_features},)")
    if not np.all(np.isfinite(P)):
        raise ValueError("prior_precision contains NaN or infinity")
    if P.ndim == 1:
        if np.any(P <= 0):
            raise ValueError("prior_precision must be positive: the diagonal of a positive "
                             f"definite precision (got min {P.min():.3g})")
        return np.sqrt(P)
    scale = max(float(np.max(np.abs(P))), np.finfo(np.float64).tiny)
    if np.max(np.abs(P - P.T)) > 1e-10 * scale:
        raise ValueError("prior_precision must be symmetric")
    P = 0.5 * (P + P.T)
    lam = linalg.eigvalsh(P, check_finite=False)
    if lam[0] <= n_features * np.finfo(np.float64).eps * lam[-1]:
        raise ValueError("prior_precision must be positive definite (a proper prior); its "
                         f"smallest eigenvalue is {lam[0]:.3g} (largest {lam[-1]:.3g})")
    return linalg.cholesky(P, lower=True, check_finite=False)
