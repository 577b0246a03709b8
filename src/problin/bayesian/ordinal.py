"""Bayesian cumulative-link (ordinal) regression: Laplace and MCMC.

The likelihood is :class:`~problin.OrdinalRegression`'s, ``P(y <= k | x) = F(theta_k -
x^T beta)``, fitted in the same parameters as the engine: ``[b, w, gamma]`` with
``beta = w``, ``theta_0 = -b`` and ``theta_k = theta_{k-1} + exp(gamma_k)`` (the cut-points
increasing by construction). The prior is Gaussian in these parameters, so the MAP is the
one Newton engine's fit of the ordinal objective with a :class:`GaussianPenalty`
(``_core/model/objective_ordinal.py``), and the posterior's sampler is the one of
:class:`~problin.BayesianLogisticRegression` (``_core/bayes/mcmc.py``: adaptive
independence Metropolis-Hastings with a t proposal built on the Laplace fit, Hamiltonian
Monte Carlo where that proposal is rarely accepted).
"""
from numbers import Integral, Real
from typing import Any, Self

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy import special, stats
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .._core.bayes.hmc import hmc_sampler
from .._core.bayes.logistic import upper_factor
from .._core.blocks import iter_blocks
from .._core.bayes.mcmc import ess_bulk, independence_sampler, rhat
from .._core.linalg import cholesky
from .._core.model.contract import Objective
from .._core.model.design import Design
from .._core.model.family_ordinal import CumulativeLink, log_interval
from .._core.model.objective_ordinal import OrdinalObjective
from .._core.model.penalty import GaussianPenalty
from .._core.model.prior import PriorPrecision
from .._core.solvers.newton import newton
from .._core.solvers.steps import SolverResult
from .._frames import encode_frame
from .._params import validate_params
from .._source import data_source
from .._source.classifier_data import check_classifier_data
from .._effects_methods import EffectsMethods
from .._state import AllOrNothingFit
from ..exceptions import ConvergenceWarning, ProblinWarning, warn_at_caller
from ..glm._ordinal_effects import cumulative_effects_model, cut_blocks
from ..glm.inference import parameter_names
from ..inference.effects import EffectsModel, Sampling
from ..inference.effects_draws import check_n_draws, thinned
from ..inference.summaries import posterior_summary_text
from ..inference.text import SummaryText
from ._ordinal_fit import OrdinalPosteriorFit, log_gap_cuts
from . import _fit

__all__ = ["BayesianOrdinalRegression"]

FloatArray = NDArray[np.float64]

#: the elements of a block of linear predictors (rows x draws) in the batched log posterior
_BLOCK_ELEMENTS = 1 << 17
#: at most this many posterior draws enter a predictive average (thinned evenly)
_PREDICTIVE_DRAWS = 1000


class _LogPosterior:
    """``ln p(theta | y) + const = -f(theta)`` of the penalised ordinal objective, for the
    rows of a batch ``W``: the log-likelihood of all of them in one pass over row blocks
    (an ``X W`` product and the family's log interval probabilities per block)."""

    def __init__(self, objective: OrdinalObjective, t: NDArray[np.intp],
                 sample_weight: FloatArray | None) -> None:
        self.objective, self.t, self.sample_weight = objective, t, sample_weight

    def __call__(self, W: FloatArray) -> FloatArray:
        W = np.atleast_2d(W)
        obj = self.objective
        design, family = obj.design, obj.family
        p = design.n_params
        block, params = design.kernel()  # W in the design's (standardised) coordinates
        bounds = _bounds(log_gap_cuts(W[:, p:]))  # B x (K + 1)
        V = params(W[:, :p])
        slopes, shift = np.ascontiguousarray(V[:, 1:].T), V[:, 0]
        total = np.zeros(W.shape[0])
        rows = max(64, _BLOCK_ELEMENTS // W.shape[0])
        for _, _, Xb, tb, sb in iter_blocks(design.X, self.t, self.sample_weight, rows=rows):
            eta = np.asarray(block(Xb) @ slopes) + shift  # n_b x B
            upper, lower = bounds[:, tb + 1].T - eta, bounds[:, tb].T - eta
            logp = log_interval(family.dist, upper, lower)
            total += logp.sum(axis=0) if sb is None else sb @ logp
        return total - np.array([obj.penalty.value(w) for w in W])

    def value_and_grad(self, W: FloatArray) -> tuple[FloatArray, FloatArray]:
        obj = self.objective
        values, grads = [], []
        for w in np.atleast_2d(W):
            f, g = obj.value_grad(w, obj.linear_predictor(w))
            values.append(-f)
            grads.append(-g)
        return np.array(values), np.array(grads)


class BayesianOrdinalRegression(AllOrNothingFit, EffectsMethods, ClassifierMixin,
                                BaseEstimator):
    """Bayesian cumulative-link regression of ordered classes, by Laplace or MCMC.

    .. math::

        P(y \\le k | x) = F(\\theta_k - x^T \\beta), \\quad
        \\beta \\sim N(0, \\alpha^{-1} I), \\quad
        \\theta_0 - \\bar x^T \\beta \\sim N(0, \\sigma_\\theta^2), \\quad
        \\log(\\theta_k - \\theta_{k-1}) \\sim N(0, \\sigma_\\gamma^2)

    The prior on the cut-points is on the unconstrained parameters of the fit: the
    first cut-point *at the centre of the data* (``theta_0 - xbar^T beta``, ``xbar`` the
    weighted column means, so that shifting a column moves only the cut-points, as
    :class:`~problin.BayesianLogisticRegression` places its intercept's prior) is normal
    with sd ``cutpoint_sd``, and each log gap between consecutive cut-points is
    independently normal with sd ``gap_sd`` (a log-normal prior on the gaps, median 1 on
    the latent scale; it keeps them positive and the posterior proper for any data).
    ``inference="laplace"`` approximates the posterior of ``[b, w, gamma]`` by
    ``N(MAP, H^-1)`` (``H`` the observed Hessian of the negative log posterior);
    ``"mcmc"`` samples it exactly. Reported parameters are ``[beta, theta]``: for
    MCMC the mean and covariance of the transformed draws; for Laplace ``theta`` at the
    MAP and its covariance by the delta method. ``predict_proba`` averages the class
    probabilities over the posterior (the MCMC draws, or draws of the Laplace Gaussian),
    at most 1,000 draws, thinned evenly.

    Parameters
    ----------
    link : {"logit", "probit", "cloglog", "loglog", "cauchit"}, default="logit"
        The latent distribution ``F`` (R ``ordinal::clm``'s links).
    alpha : float, default=1.0
        Precision of the slopes' Gaussian prior.
    cutpoint_sd : float, default=10.0
        Prior sd of the first cut-point at the centre of the data (latent scale).
    gap_sd : float, default=2.0
        Prior sd of the log gaps between consecutive cut-points.
    classes : array-like or None, default=None
        The ordered classes, lowest first (default: the sorted labels).
    inference : {"laplace", "mcmc"}, default="laplace"
    n_samples, n_chains : int, default=1000, 4
        ``"mcmc"``: kept draws per chain (after ``max(100, n_samples // 4)`` warm-up
        steps) and chains; ``"laplace"``: ``n_samples`` Gaussian draws for predictions.
    tol, max_iter : float, int
        The MAP's Newton tolerance and iterations.
    random_state : int, RandomState or None, default=None
    progress : bool, default=True
        A progress bar while sampling takes over a second.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Posterior mean of the slopes ``beta``.
    cutpoints_ : ndarray of shape (K - 1,)
        Posterior mean of the cut-points ``theta`` (increasing).
    posterior_mean_, posterior_cov_ : ndarrays
        ``[beta, theta]`` and their covariance.
    theta_map_ : ndarray of shape (n_features + K - 1,)
        The MAP in ``[beta, theta]``.
    samples_ : ndarray of shape (n_chains, n_samples, n_features + K - 1)
        ``"mcmc"``: the draws of ``[beta, theta]``, with ``rhat_``, ``ess_``,
        ``acceptance_rate_`` and ``sampler_``.
    classes_ : ndarray of shape (K,)
    n_iter_, converged_ : int, bool
    """

    _parameter_constraints = {
        "link": [StrOptions({"logit", "probit", "cloglog", "loglog", "cauchit"})],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "cutpoint_sd": [Interval(Real, 0, None, closed="neither")],
        "gap_sd": [Interval(Real, 0, None, closed="neither")],
        "classes": ["array-like", None],
        "inference": [StrOptions({"laplace", "mcmc"})],
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_chains": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "progress": ["boolean"],
    }

    def __init__(self, link: str = "logit", *, alpha: float = 1.0, cutpoint_sd: float = 10.0,
                 gap_sd: float = 2.0, classes: Any = None, inference: str = "laplace",
                 n_samples: int = 1000, n_chains: int = 4, tol: float = 1e-8,
                 max_iter: int = 100, random_state: Any = None, progress: bool = True) -> None:
        self.link = link
        self.alpha = alpha
        self.cutpoint_sd = cutpoint_sd
        self.gap_sd = gap_sd
        self.classes = classes
        self.inference = inference
        self.n_samples = n_samples
        self.n_chains = n_chains
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.progress = progress

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> Self:
        """Fit the posterior of the slopes and cut-points.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Ordered labels (three or more classes; two warn: binary regression).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights multiplying each row's log-likelihood.

        Returns
        -------
        self
        """
        validate_params(self)
        data_source(X).require_in_memory(f"{type(self).__name__} fits rows in memory: "
                                         "compute the Dask arrays first")
        X, t, s = check_classifier_data(self, X, y, sample_weight, multiclass=True)
        if not sp.issparse(X):
            X = np.asarray(X, dtype=np.float64)
        classes = self.classes_
        K = classes.size
        if K < 3:
            warn_at_caller(f"{type(self).__name__} got two classes ({classes.tolist()}): an "
                           "ordinal model needs three or more; with two it is binary "
                           "regression (cut-point = -intercept): use "
                           "BayesianLogisticRegression", ProblinWarning)
        family = CumulativeLink(self.link, K)
        # solved in the equilibrated basis, centred where dense (the Laplace draws are then
        # the same for data in other units and offsets, as BayesianLogisticRegression): R maps its
        # [b_z, w_z] rows to raw [b, w] rows, and the prior is carried over exactly
        design = Design.standardised(X, True, sample_weight=s, centre="always")
        p = design.n_params
        R = np.eye(p) if design.basis is None else design.basis.to_raw(np.eye(p))
        w = np.ones(X.shape[0]) if s is None else s
        xbar = np.asarray(X.T @ w, dtype=np.float64).ravel() / w.sum()  # the data's centre
        objective = OrdinalObjective(design, family, t, s,
                                     penalty=self._prior(xbar, family.n_gaps, R))
        counts = np.bincount(t, weights=s, minlength=K).astype(np.float64)
        b0, gaps0 = family.start(counts)  # (at w = 0, b_z = b)
        engine: Objective[Any] = objective
        fit: SolverResult[Any] = newton(
            engine, np.concatenate(([b0], np.zeros(X.shape[1]), gaps0)), tol=self.tol,
            max_iter=self.max_iter)
        if not fit.converged:
            warn_at_caller(f"{type(self).__name__}: the MAP (Newton) did not converge in "
                           f"{fit.n_iter} iterations ({fit.message}); increase max_iter.",
                           ConvergenceWarning)
        H = objective.observed_hessian(fit.theta, objective.linear_predictor(fit.theta))
        cov = cholesky(H).inverse()
        rng = np.random.default_rng(check_random_state(self.random_state)
                                    .randint(np.iinfo(np.int32).max))
        for stale in ("samples_", "rhat_", "ess_", "acceptance_rate_", "sampler_"):
            self.__dict__.pop(stale, None)
        record = OrdinalPosteriorFit(
            self.link, K, self.inference, float(self.alpha), float(self.cutpoint_sd),
            float(self.gap_sd), np.empty(0), np.empty((0, 0)), np.empty(0), fit.theta, cov,
            R, xbar, np.empty((0, 0)), fit.n_iter, bool(fit.converged), fit.message,
            int(X.shape[0]))
        theta_map = record.reported(fit.theta)[0]
        if self.inference == "mcmc":
            draws, diagnostics = self._sample(objective, t, s, fit.theta, cov, rng)
            samples = record.reported(draws.reshape(-1, draws.shape[2])).reshape(
                draws.shape[0], draws.shape[1], -1)
            flat = samples.reshape(-1, samples.shape[2])
            record = record.replace(mean=flat.mean(axis=0),
                                    cov=np.atleast_2d(np.cov(flat, rowvar=False)),
                                    samples=samples, **diagnostics)
            predictive = flat
        else:
            J = self._jacobian(family, fit.theta, R)
            record = record.replace(mean=theta_map, cov=J @ cov @ J.T)
            predictive = record.laplace_draws(self.n_samples, rng)
        step = max(1, predictive.shape[0] // _PREDICTIVE_DRAWS)
        record = record.replace(theta_map=theta_map,
                                predictive=predictive[::step][:_PREDICTIVE_DRAWS])
        self.__dict__.update(record.attributes())
        self._result = record
        return self

    def _prior(self, xbar: FloatArray, n_gaps: int, R: FloatArray) -> GaussianPenalty:
        """``N(0, P^-1)``: in raw ``[b, w, gamma]`` ``alpha`` on ``w``, ``1 / cutpoint_sd^2``
        on ``b + xbar^T w`` (minus the first cut-point at the centre of the data),
        ``1 / gap_sd^2`` on each log gap; carried to the solver's ``[b_z, w_z]`` by
        ``[b, w] = R^T [b_z, w_z]`` (``P_z = R P R^T``)."""
        D = xbar.size
        dense = np.zeros((D + 1 + n_gaps,) * 2)
        dense[:D + 1, :D + 1] = (R[:, 1:] * float(self.alpha)) @ R[:, 1:].T
        dense[D + 1:, D + 1:] = np.eye(n_gaps) / self.gap_sd ** 2
        centre = np.concatenate((R @ np.concatenate(([1.0], xbar)), np.zeros(n_gaps)))
        precision = PriorPrecision(dense, [(centre, 1.0 / self.cutpoint_sd ** 2)])
        return GaussianPenalty(precision, np.zeros(dense.shape[0]))

    def _jacobian(self, family: CumulativeLink, theta: FloatArray, R: FloatArray
                  ) -> FloatArray:
        """``d[beta, theta] / d[b_z, w_z, gamma]`` at ``theta`` (the delta method's)."""
        D, M = self.n_features_in_, family.n_classes - 1
        J = np.zeros((D + M, theta.size))
        J[:D, :D + 1] = R[:, 1:].T
        J[D:, :D + 1] = -R[:, 0]
        J[D:, 1 + D:] = family.gaps_jacobian(theta[1 + D:])
        return J

    def _sample(self, objective: OrdinalObjective, t: NDArray[np.intp],
                s: FloatArray | None, mode: FloatArray, cov: FloatArray,
                rng: np.random.Generator) -> tuple[FloatArray, dict[str, Any]]:
        """Posterior draws of ``[b_z, w_z, gamma]`` (chains x draws x p), as
        :func:`problin.bayesian._fit.mcmc` draws the logistic posterior, and the record's
        fields of the sampler's diagnostics."""
        target = _LogPosterior(objective, t, s)
        n_warmup = max(100, self.n_samples // 4)
        U = upper_factor(cov)
        bar = _fit.LazyProgress(self.n_chains * (self.n_samples + n_warmup + 1),
                                self.progress, "MCMC")
        sampler = "independence-mh"
        try:
            samples, acceptance = independence_sampler(
                target, mode, U, n_chains=self.n_chains, n_draws=self.n_samples,
                n_warmup=n_warmup, rng=rng, min_acceptance=_fit._MIN_ACCEPTANCE, progress=bar)
            if samples is None or (samples.shape[1] >= 4
                                   and np.max(rhat(samples)) > _fit._RHAT_LIMIT):
                sampler = "hmc"
                samples, acceptance = hmc_sampler(target.value_and_grad, mode, U,
                                                  n_chains=self.n_chains, n_draws=self.n_samples,
                                                  n_warmup=n_warmup, rng=rng)
        finally:
            bar.close()
        assert samples is not None, "HMC always returns its draws"
        diagnostics: dict[str, Any] = {"acceptance_rate": float(acceptance),
                                       "sampler": sampler}
        if samples.shape[1] >= 4:
            diagnostics.update(rhat=np.asarray(rhat(samples)), ess=np.asarray(ess_bulk(samples)))
            _fit.check_mixing(diagnostics["rhat"], diagnostics["ess"])
        return samples, diagnostics

    # -------------------------------------------------------------- predict
    def _check_X(self, X: Any) -> Any:
        check_is_fitted(self)
        return validate_data(self, encode_frame(self, X, False), accept_sparse=["csr", "csc"],
                             dtype=np.float64, reset=False)

    def predict_log_proba(self, X: Any) -> FloatArray:
        """Log posterior predictive class probabilities, ``log mean_s P(y = k | x, draw_s)``
        over the kept draws, by ``logsumexp`` of each row's log probabilities (never the
        log of a rounded mean); columns follow ``classes_``. One ``X B`` product per block
        of rows for all the draws' slopes ``B``."""
        X = self._check_X(X)
        dist = CumulativeLink(self.link, self.classes_.size).dist
        D, draws = self.n_features_in_, self._result.predictive
        slopes, bounds = np.ascontiguousarray(draws[:, :D].T), _bounds(draws[:, D:])
        out = np.empty((X.shape[0], self.classes_.size))
        rows = max(64, _BLOCK_ELEMENTS // draws.shape[0])
        for lo, hi, Xb in iter_blocks(X, rows=rows):
            eta = np.asarray(Xb @ slopes, dtype=np.float64)  # rows x draws
            for k in range(self.classes_.size):
                log_p = log_interval(dist, bounds[:, k + 1] - eta, bounds[:, k] - eta)
                out[lo:hi, k] = special.logsumexp(log_p, axis=1)
        return out - np.log(draws.shape[0])

    def predict_proba(self, X: Any) -> FloatArray:
        """Posterior predictive class probabilities ``E[P(y = k | x, beta, theta) | data]``
        (columns follow ``classes_``)."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X: Any) -> NDArray[Any]:
        """The class of highest posterior predictive probability."""
        proba = self.predict_proba(X)  # (checks that the model is fitted)
        return self.classes_[np.argmax(proba, axis=1)]

    # ----------------------------------------------------------- inference
    def parameter_names(self) -> list[str]:
        """``[features..., "a|b", ...]``: the order of ``posterior_mean_``."""
        check_is_fitted(self)
        names = [n for n in parameter_names(self, self.n_features_in_) if n != "intercept"]
        return names + [f"{a}|{b}" for a, b in zip(self.classes_[:-1], self.classes_[1:])]

    def summary(self, level: float = 0.95) -> pd.DataFrame:
        """Posterior table ``mean, sd, p_opposite, ci_low, ci_high`` of the slopes and
        cut-points (the cut-points named ``"a|b"`` as R's ``polr``): central credible
        intervals of probability ``level`` and the posterior probability of the sign
        opposite to the mean, from the draws (MCMC) or the normal approximation
        (Laplace: the MAP and the delta method's sd)."""
        check_is_fitted(self)
        if not 0.0 < float(level) < 1.0:
            raise ValueError(f"level must be in (0, 1), got {level!r}")
        fit = self._result
        mean, sd = fit.mean, np.sqrt(np.clip(np.diag(fit.cov), 0.0, None))
        tail = (1.0 - level) / 2.0
        if fit.samples is not None:
            flat = fit.samples.reshape(-1, fit.samples.shape[2])
            low, high = np.quantile(flat, [tail, 1.0 - tail], axis=0)
            opposite = np.mean(np.sign(flat) == -np.sign(mean), axis=0)
        else:
            z = stats.norm.ppf(1.0 - tail)
            low, high = mean - z * sd, mean + z * sd
            with np.errstate(divide="ignore", invalid="ignore"):
                opposite = stats.norm.sf(np.abs(mean / sd))
        table = pd.DataFrame({"mean": mean, "sd": sd, "p_opposite": opposite, "ci_low": low,
                              "ci_high": high},
                             index=pd.Index(self.parameter_names(), name="parameter"))
        table.attrs.update(model=type(self).__name__, inference=fit.inference,
                           n_obs=fit.n_obs, alpha=fit.alpha, level=float(level))
        return table

    def summary_text(self, level: float = 0.95) -> SummaryText:
        """:meth:`summary` under the inference method and the prior."""
        return posterior_summary_text(self, self.summary(level))

    # ----------------------------------------------- slopes, comparisons, predictions
    def _effects_model(self, type: str) -> EffectsModel:
        """The cumulative predictors ``theta_j - x^T beta`` at the posterior mean and the
        category probabilities' map (the tables read :meth:`_effects_draws`)."""
        check_is_fitted(self)
        fit = self._result
        index = np.tile(np.arange(fit.n_features), (fit.n_classes - 1, 1))
        return cumulative_effects_model(fit.mean, fit.cov, index,
                                        CumulativeLink(fit.link, fit.n_classes).dist, type,
                                        list(self.classes_),
                                        self.parameter_names()[fit.n_features:])

    def _effects_draws(self, sampling: Sampling) -> FloatArray:
        """The posterior draws of the blocks ``[theta_j, -beta]``: MCMC's stored samples
        (thinned to ``n_draws``), or ``n_draws`` (default ``n_samples``) draws of the
        Laplace Gaussian in the solver's parameters mapped to ``[beta, theta]`` (seeded
        by ``random_state``, else the estimator's)."""
        check_is_fitted(self)
        fit = self._result
        if fit.samples is not None:
            theta = thinned(fit.samples, sampling)
        else:
            n = check_n_draws(self.n_samples if sampling.n_draws is None else sampling.n_draws)
            seed_from = self.random_state if sampling.random_state is None \
                else sampling.random_state
            seed = check_random_state(seed_from).randint(np.iinfo(np.int32).max)
            theta = fit.laplace_draws(n, np.random.default_rng(seed))
        index = np.tile(np.arange(fit.n_features), (fit.n_classes - 1, 1))
        return cut_blocks(theta, index, fit.n_features)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = True
        # scikit-learn's training check scores three blobs that lie in no order on any
        # line: a model of ordered classes cannot reach its accuracy there
        tags.classifier_tags.poor_score = True
        tags.non_deterministic = self.random_state is None
        return tags

    @property
    def fit_intercept(self) -> bool:
        """The cut-points take the intercept's place (``parameter_names`` reads this)."""
        return False


def _bounds(cutpoints: FloatArray) -> FloatArray:
    """Rows of cut-points with ``-inf`` and ``+inf`` at their ends."""
    ends = np.full((cutpoints.shape[0], 1), np.inf)
    return np.hstack((-ends, cutpoints, ends))
