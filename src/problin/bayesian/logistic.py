"""Bayesian logistic (and softmax) regression: Laplace, variational Bayes and MCMC."""
from collections.abc import Callable
from numbers import Integral, Real
from typing import Any, NamedTuple, Self

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core.bayes.far_rows import moderated_predict, sampled_predict
from .._core.bayes.logistic import activation_moments, draw_gaussian
from .._core.model.families import BernoulliLogit, ClassFamily, class_family
from .._core.model.links import make_link
from .._core.model.layout import class_layout
from .._dask.lazy import lazy_on_dask
from .._effects_methods import EffectsMethods
from .._frames import encode_frame
from .._source import data_source
from .._state import AllOrNothingFit
from ..exceptions import ConvergenceWarning, warn_at_caller
from ..glm._gaussian_prior import PRIOR_CONSTRAINTS
from ..inference.effects import (
    EffectsModel,
    IdentityMap,
    LinkMap,
    MeanMap,
    Sampling,
    SoftmaxMap,
)
from ..inference.effects_draws import as_blocks, gaussian_draws, thinned
from ..inference.summaries import SummaryText, posterior_summary_text
from . import _fit
from ._summary import posterior_table
from .result import PosteriorFit

__all__ = ["BayesianLogisticRegression"]

_METHODS = ("moderated", "map", "sample")


class _Predictive(NamedTuple):
    """The posterior in the parameters the predictive functions read, and the map
    ``block`` applied to each block of rows first (None: the rows as they are)."""

    mean: Any
    cov: Any
    theta_map: Any
    samples: Any
    block: Callable[[Any], Any] | None


_LOGIT = BernoulliLogit()


class BayesianLogisticRegression(AllOrNothingFit, EffectsMethods, ClassifierMixin,
                                 BaseEstimator):
    """Bayesian logistic regression; softmax regression for K > 2 classes (Laplace only).

    .. math::

        p(t = 1 | x, w) = \\sigma(b + x^T w), \\quad w \\sim N(0, \\alpha^{-1} I), \\quad
        b \\sim N(0, \\alpha_b^{-1}), \\quad
        p(t = 1 | x, D) = \\int \\sigma(b + x^T w) \\, p(b, w | D) \\, db \\, dw

    The posterior ``p(b, w | D)`` has no closed form. ``inference="laplace"``
    approximates it by ``N(w_MAP, S_N)``, ``S_N^-1 = alpha I + Phi^T V Phi`` (the MAP
    found by the same Newton/IRLS engine as :class:`~problin.LogisticRegression`,
    so with ``alpha`` the MAP *is* that model's fit); ``"variational"`` by the
    Jaakkola-Jordan Gaussian bound; ``"mcmc"`` draws from the exact posterior
    (adaptive independence Metropolis-Hastings with a multivariate-t proposal
    built on the Laplace fit: every step costs one row of a batched ``X W``
    product and it needs no gradients; measured over 5x the effective samples
    per second of PyMC's NUTS, see docs/benchmarks.md; Hamiltonian Monte Carlo
    preconditioned by the Laplace covariance where the posterior is too far
    from Gaussian for it to mix). For K > 2 each class has its
    own block ``[b_k, w_k]``; the intercepts, whose common shift no
    likelihood sees, are reported summing to zero (as in ``LogisticRegression``),
    and ``posterior_cov_`` on the intercepts *at the centre of the data* summing to
    zero (which the mean satisfies too: its slopes sum to zero), so that it maps with
    the data's units and offsets; ``LogisticRegression(alpha)``'s ``covariance_``
    holds the raw intercepts' sum fixed instead, and its intercept rows differ.

    Parameters
    ----------
    alpha : float or None, default=1.0
        Precision of the Gaussian prior on the weights (must be > 0). None:
        chosen by the evidence framework -- for ``"laplace"`` and ``"mcmc"``
        MacKay's re-estimation ``alpha = gamma / |w_MAP|^2``, ``gamma = D -
        alpha tr(S_N)`` over the weights (a few warm-started MAP fits; the
        stationary point of the Laplace evidence with the data Hessian's
        change along ``w_MAP`` neglected, which on (nearly) separable classes
        would send ``alpha`` to 0); for ``"variational"`` the maximum of the
        variational lower bound.
    fit_intercept : bool, default=True
    inference : {"laplace", "variational", "mcmc"}, default="laplace"
    intercept_alpha : float, default=1e-10
        Precision of the intercept's prior ``N(0, 1 / intercept_alpha)``: broad
        (sd 1e5 on the log-odds scale) but proper, so that the evidence is a
        true marginal likelihood (the prior adds ``ln(intercept_alpha) / 2``
        per intercept to it, the same for every model with an intercept); it
        moves the MAP intercept from the unpenalised one of
        ``LogisticRegression`` by about ``intercept_alpha * b * var(b)``
        (below 1e-8 unless ``b`` and its posterior variance are huge). 0: a
        flat improper prior (exactly the GLM's intercept); ``log_evidence_``
        then takes it as of unit density. On dense data the prior is on the
        intercept at the centre of the data (``b + c^T w``, ``c`` the weighted
        column means of all rows, as rstanarm centres its predictors: the
        order of the rows does not matter), so that shifting a column moves only the intercept
        and leaves the posterior of the slopes unchanged; on sparse data (which
        is never centred) it is on the raw intercept.
    alpha_prior : (float, float) or None, default=None
        ``"variational"`` only: shape and rate ``(a0, b0)`` of a Gamma
        hyperprior on ``alpha``, which then gets the posterior
        ``q(alpha) = Gamma(a0 + D/2, b0 + E|w|^2 / 2)``; ``alpha`` (1 if None)
        is the starting value and ``alpha_`` the posterior mean.
    n_samples : int, default=1000
        ``"mcmc"``: kept draws per chain (after ``max(100, n_samples // 4)``
        warm-up steps). Gaussian posteriors: draws for ``method="sample"``.
    n_chains : int, default=4
    tol : float, default=1e-8
        Newton's tolerance (see ``LogisticRegression``); the variational
        iteration stops when the bound rises by less than ``tol`` nats over a sweep.
    max_iter : int, default=500
        Newton iterations, or variational sweeps.
    random_state : int, RandomState or None, default=None
        Random seed of MCMC and ``method="sample"``: a fixed seed gives bit-identical results.
    progress : bool, default=True
        Show a progress bar while sampling, when sampling is expected to take
        more than a second.
    prior_mean : array-like of shape (p,) or None, default=None
    prior_precision : array-like of shape (p, p) or (p,) or None, default=None
        The texts' prior ``N(m_0, S_0)`` on the raw parameters ``theta = [b, w]``
        (Bishop 2006, eq. 4.140; ``p = n_features + 1``, the intercept first, or
        ``n_features`` without one), for every inference method and the evidence.
        As in :class:`~problin.BayesianLinearRegression`, ``alpha`` scales the given
        precision, ``S_0^-1 = alpha P`` (the default ``alpha=1`` uses
        ``prior_precision = P`` as it is; a vector is its diagonal; ``alpha=None``
        estimates the scale over all ``p`` parameters: MacKay's
        ``alpha = gamma / (m_N - m_0)^T P (m_N - m_0)``, ``gamma = p - alpha tr(P S_N)``,
        or the variational bound's maximum, or with ``alpha_prior`` its Gamma
        posterior); ``P`` must be symmetric positive definite (a proper prior).
        ``prior_mean`` is ``m_0`` (None: zero); given alone, the precision is
        ``diag(intercept_alpha, alpha, ...)`` (``alpha`` given). Either one puts the
        prior on the *raw* intercept (not at the data's centre), and
        ``intercept_alpha`` other than its default does not combine with
        ``prior_precision`` (its first row and column are the intercept's). Binary
        models.

    Attributes
    ----------
    posterior_mean_ : ndarray of shape (p,)
        ``[intercept, coef...]`` per class block (one block for binary targets).
    posterior_cov_ : ndarray of shape (p, p)
        Same ordering (the inverse Hessian at the MAP for ``"laplace"``).
    coef_, intercept_ : ndarrays of shape (1 or K, n_features) and (1 or K,)
        Posterior means.
    alpha_ : float
        The prior precision used (given, chosen, or ``E[alpha]`` with a hyperprior).
    log_evidence_ : float
        Laplace approximation of ``ln p(t | alpha_)`` (``"laplace"``, ``"mcmc"``);
        the variational lower bound for ``"variational"``.
    history_ : ndarray
        Newton's objective per iteration; for ``"variational"`` the lower bound
        per sweep (never decreasing).
    samples_ : ndarray of shape (n_chains, n_samples, p)
        ``"mcmc"`` only, as ``rhat_`` (rank-normalised split R-hat), ``ess_``
        (bulk effective sample size), ``acceptance_rate_`` and ``sampler_``
        (``"independence-mh"``, or ``"hmc"`` where its adapted proposal was
        accepted < 30 % or its chains' R-hat exceeded 1.01).
    n_iter_, converged_ : int, bool
    classes_ : ndarray of shape (K,)

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from problin import BayesianLogisticRegression
    >>> X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    >>> model = BayesianLogisticRegression(alpha=None).fit(X[["mean radius"]], y)
    >>> mean, var = model.predict_activation(X[["mean radius"]].iloc[:2])
    >>> print(round(model.alpha_, 3), mean.round(2), var.round(3))
    0.944 [-3.32 -5.96] [0.144 0.367]
    >>> print(model.predict_proba(X[["mean radius"]].iloc[:2]).round(3))
    [[0.962 0.038]
     [0.996 0.004]]
    """

    _parameter_constraints = {
        "alpha": [Interval(Real, 0, None, closed="neither"), None],
        "fit_intercept": ["boolean"],
        "inference": [StrOptions({"laplace", "variational", "mcmc"})],
        "intercept_alpha": [Interval(Real, 0, None, closed="left")],
        "alpha_prior": ["array-like", None],
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_chains": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "progress": ["boolean"],
        **PRIOR_CONSTRAINTS,
    }

    def __init__(self, alpha: float | None = 1.0, *, fit_intercept: bool = True,
                 inference: str = "laplace", intercept_alpha: float = _fit.INTERCEPT_ALPHA,
                 alpha_prior: Any = None, n_samples: int = 1000, n_chains: int = 4,
                 tol: float = 1e-8, max_iter: int = 500, random_state: Any = None,
                 progress: bool = True, prior_mean: Any = None,
                 prior_precision: Any = None) -> None:
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.inference = inference
        self.intercept_alpha = intercept_alpha
        self.alpha_prior = alpha_prior
        self.n_samples = n_samples
        self.n_chains = n_chains
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.progress = progress
        self.prior_mean = prior_mean
        self.prior_precision = prior_precision

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> Self:
        """Fit the posterior of the weights (Dask input: by distributed passes, as the GLMs).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights multiplying each row's log-likelihood.

        Returns
        -------
        self
        """
        _fit.check_parameters(self)
        # Solved in the equilibrated basis, centred whenever X is dense: the
        # intercept's prior is then on the intercept at the centre of the data,
        # so that shifting a column changes only the intercept.
        rows = data_source(X).classifier_rows(self, y, sample_weight, True,
                                              self.fit_intercept, standardise="centred")
        K = self.classes_.size
        if K > 2 and self.inference != "laplace":
            raise ValueError(f"Only binary classification is supported with inference="
                             f"{self.inference!r}: y has {K} classes. Use inference='laplace' "
                             "for softmax regression.")
        for stale in ("samples_", "rhat_", "ess_", "acceptance_rate_", "sampler_",
                      "alpha_posterior_"):
            self.__dict__.pop(stale, None)  # from an earlier fit with other settings
        opts: dict[str, Any] = {"tol": self.tol, "max_iter": self.max_iter}
        prior = _fit.raw_prior(self, rows.design.n_features)
        if prior is not None:
            opts["prior"] = prior
        if self.alpha is None and self.inference != "variational":
            post = _fit.laplace_evidence_alpha(rows, K, self.intercept_alpha, **opts)
            if not post.evidence_converged:
                warn_at_caller("the evidence re-estimation of alpha found no fixed point "
                               "within 1e-8 to 1e8 times the precision of weights on "
                               f"unit-spread columns (alpha_ = {post.alpha:.3g}); set alpha "
                               "explicitly.", ConvergenceWarning)
        elif self.alpha is None:
            # The bound's search for alpha starts at the evidence's fixed point: from
            # alpha = 1 in raw units it barely moved where the prior dominates (columns in
            # other units), and stopped there, "converged", or ran out of sweeps.
            post = _fit.laplace_evidence_alpha(rows, K, self.intercept_alpha, **opts)
        else:
            post = _fit.laplace(rows, K, self.alpha, self.intercept_alpha, **opts)
        self._check_converged(post, "the MAP (Newton)")
        if self.inference == "variational":
            post = _fit.variational(rows, post, self.alpha, self.intercept_alpha,
                                    self.alpha_prior, **opts)
            self._check_converged(post, "the variational bound")
        elif self.inference == "mcmc":
            seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
            post = _fit.mcmc(rows, post, n_chains=self.n_chains,
                             n_samples=self.n_samples, rng=np.random.default_rng(seed),
                             progress=self.progress)
        # One PosteriorFit, kept as _result: the fitted attributes, the predictions and
        # summary() are all read from it.
        fit = PosteriorFit.from_posterior(post, rows.design, self.inference)
        _fit.check_mixing(fit.rhat, fit.ess)
        self.__dict__.update(fit.attributes())  # the one place the fitted attributes are set
        self._result = fit
        return self

    def _check_converged(self, post: _fit.Posterior, what: str) -> None:
        if not post.converged:
            warn_at_caller(f"{type(self).__name__}: {what} did not converge in "
                           f"{post.n_iter} iterations ({post.message}); increase "
                           "max_iter or tol.", ConvergenceWarning)

    @property
    def _n_blocks(self) -> int:
        """Parameter blocks of the fit (1, or K for softmax)."""
        return self._result.n_blocks

    # ------------------------------------------------------------- predict
    def _check_X(self, X: Any) -> Any:
        check_is_fitted(self)
        return validate_data(self, encode_frame(self, X, False), accept_sparse=["csr", "csc"],
                             dtype=[np.float64, np.float32], reset=False)

    def predict_activation(self, X: Any) -> tuple[Any, Any]:
        """Posterior mean and variance of the activation ``a = b + x^T w`` per sample.

        The variance ``sigma_a^2 = phi^T S_N phi`` is where the model is unsure:
        it grows away from the data. For K > 2 classes, one column per class
        logit (each with its own variance).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        mean, var : ndarrays of shape (n_samples,), or (n_samples, K)
            Lazy Dask arrays for Dask ``X``.
        """
        check_is_fitted(self)
        family = self._fitted_family()
        moments: tuple[Any, Any] = data_source(X).map_rows(
            self, "predict_activation", family.predictor_columns,
            lambda X: self._activation(X, family), outputs=2)
        return moments

    def _activation(self, X: Any, family: ClassFamily) -> tuple[Any, Any]:
        X = self._check_X(X)
        at = self._at_centre(X)
        mu, var = activation_moments(X, self.fit_intercept, at.mean, at.cov,
                                     self._n_blocks, block=at.block)
        return family.predictors(mu), family.predictors(var)

    def _fitted_family(self) -> ClassFamily:
        """The family of the fitted classes (for softmax all K blocks, which the prior
        identifies), whose layout answers the predictions' shapes."""
        K = self.classes_.size
        return class_family(_LOGIT, K, contrast=self._result.n_blocks < K)

    @lazy_on_dask(columns=lambda self: self._fitted_family().score_columns)
    def decision_function(self, X: Any) -> Any:
        """Log-odds ``kappa(sigma_a^2) mu_a`` of the moderated predictive probability
        (binary, shape (n,)); its log-probabilities for K > 2 (shape (n, K)).

        It ranks samples as ``predict_proba`` does; the posterior mean of the
        activation itself is ``predict_activation(X)[0]``.
        """
        log_p = self.predict_log_proba(X)  # (checks that the model is fitted)
        return class_layout(self.classes_.size).decision(log_p)

    @lazy_on_dask(columns=lambda self: self.classes_.size)
    def predict_log_proba(self, X: Any, method: str = "moderated") -> Any:
        """Log predictive probabilities ``ln p(C_k | x, D)``, computed in log space.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        method : {"moderated", "map", "sample"}, default="moderated"
            ``"moderated"``: the probit approximation ``sigma(kappa(sigma_a^2) mu_a)``
            to the predictive integral; ``"map"``: plug-in ``sigma(w_MAP^T phi)``;
            ``"sample"``: Monte Carlo average over the posterior draws
            (``samples_`` for MCMC, else ``n_samples`` draws of the Gaussian
            posterior seeded by ``random_state``).

        Returns
        -------
        ndarray of shape (n_samples, K)
        """
        if method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
        X = self._check_X(X)
        M, at = self._n_blocks, self._at_centre(X)
        if method == "moderated":  # rows far from the data (1e200) scaled, never NaN
            return moderated_predict(X, self.fit_intercept, at.mean, at.cov, M,
                                     block=at.block)
        if method == "map":
            draws = at.theta_map[None, :]
        elif at.samples is not None:
            draws = at.samples.reshape(-1, at.samples.shape[2])
        else:
            seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
            draws = draw_gaussian(at.mean, at.cov, self.n_samples,
                                  np.random.default_rng(seed))
        return sampled_predict(X, self.fit_intercept, draws, M,  # rows at 1e308 scaled
                               block=at.block)

    def _at_centre(self, X: Any) -> _Predictive:
        """The posterior as the predictive functions read it: with its intercepts at
        the centre ``c`` of the training data (``b + c^T w``) and the row blocks
        centred, where the fit was centred and ``X`` is dense (so that no digits
        cancel in ``b + x^T w`` far from the origin); else the raw posterior."""
        fit = self._result
        c = fit.centre
        if c is None or sp.issparse(X):
            return _Predictive(fit.mean, fit.cov, fit.theta_map, fit.samples, None)
        return _Predictive(fit.centred_mean, fit.centred_cov, fit.centred_map,
                           fit.centred_samples,
                           lambda Xb: np.subtract(Xb, c, dtype=np.float64))

    @lazy_on_dask(columns=lambda self: self.classes_.size)
    def predict_proba(self, X: Any, method: str = "moderated") -> Any:
        """Predictive class probabilities (columns follow ``classes_``); see
        :meth:`predict_log_proba` for ``method``."""
        return np.exp(self.predict_log_proba(X, method=method))

    @lazy_on_dask(dtype=lambda self: self.classes_.dtype)
    def predict(self, X: Any) -> Any:
        """The class of highest moderated predictive probability."""
        log_p = self.predict_log_proba(X)
        return self.classes_[np.argmax(log_p, axis=1)]

    # ----------------------------------------------- slopes, comparisons, predictions
    def _effects_model(self, type: str) -> EffectsModel:
        """The posterior mean's parameters (binary: ``sigma(eta)``; softmax: the K
        class probabilities), the posterior covariance; the tables read the draws."""
        check_is_fitted(self)
        fit, K = self._result, self.classes_.size
        L = fit.n_blocks
        mean: MeanMap
        if K == 2:
            mean, outputs = (LinkMap(make_link("logit")) if type == "response"
                             else IdentityMap()), None
        elif type == "response":
            mean, outputs = SoftmaxMap(L < K), list(self.classes_)
        else:
            mean, outputs = IdentityMap(), list(self.classes_[K - L:])
        blocks = as_blocks(fit.mean[None, :], L, fit.fit_intercept)[0]
        return EffectsModel(blocks, fit.fit_intercept, mean, outputs, fit.cov)

    def _effects_draws(self, sampling: Sampling) -> np.ndarray:
        """MCMC: the stored samples; Laplace and variational: draws of the Gaussian
        posterior (``n_samples`` of them, seeded by ``random_state``, as
        ``predict_proba(method="sample")``, unless ``sampling`` says otherwise)."""
        check_is_fitted(self)
        fit = self._result
        theta = (thinned(fit.samples, sampling) if fit.samples is not None else
                 gaussian_draws(fit.mean, fit.cov, sampling, self.n_samples,
                                self.random_state))
        return as_blocks(theta, fit.n_blocks, fit.fit_intercept)

    # ----------------------------------------------------------- inference
    def summary(self, level: float = 0.95) -> pd.DataFrame:
        """Posterior table: ``mean, sd, z, p_opposite, ci_low, ci_high`` per parameter.

        ``z = mean / sd`` is the relevance of a weight (its magnitude in units
        of posterior standard deviations); ``p_opposite`` the posterior
        probability that the parameter's sign is opposite to its mean's;
        ``[ci_low, ci_high]`` the central credible interval of probability
        ``level``. Gaussian posteriors use their exact normal quantiles; MCMC
        the draws. Indexed as ``LogisticRegression.summary()``: by parameter
        name, or ``(class, parameter)`` for K > 2.
        """
        check_is_fitted(self)
        return posterior_table(self, self._result, level)

    def summary_text(self, level: float = 0.95) -> SummaryText:
        """``summary()`` under the inference method, prior and log evidence (HTML in notebooks)."""
        return posterior_summary_text(self, self.summary(level))

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = self.inference == "laplace"
        tags.non_deterministic = self.inference == "mcmc" and self.random_state is None
        return tags
