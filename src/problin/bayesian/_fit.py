"""The three posterior approximations of Bayesian logistic regression, as plain functions.

Each takes the validated rows (:class:`~problin._source.ClassifierRows`: in memory,
or in Dask chunks whose passes are distributed)
and returns a :class:`Posterior` in the design's basis, from which the estimator
builds its :class:`~problin.bayesian.result.PosteriorFit`. The MAP comes from the
one Newton engine on the GLMs' own objective
(:func:`problin.glm.problem.classifier_objective`), with a proper prior on the
intercepts too.
"""
import dataclasses
import time
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.utils._param_validation import InvalidParameterError

from .._core.bayes.hmc import hmc_sampler
from .._core.bayes.logistic import (
    JJTerms,
    gaussian_from_precision,
    general_jaakkola_jordan,
    jaakkola_jordan,
    laplace_log_evidence,
    mackay_alpha,
    upper_factor,
)
from .._core.bayes.mcmc import LogitLogPosterior, ess_bulk, independence_sampler, rhat
from .._core.model.contract import Objective
from .._core.model.families import BernoulliLogit
from .._core.model.penalty import GaussianPenalty
from .._core.model.prior import GaussianPrior, PriorPrecision
from .._core.solvers.newton import newton, sketch_rows
from .._optional import optional_module
from .._params import validate_params
from ..exceptions import ConvergenceWarning, warn_at_caller
from .._source import ClassifierDesign, ClassifierRows
from ..glm._gaussian_prior import bayes_prior, has_prior
from ..glm.problem import classifier_family, classifier_problem

__all__ = [
    "Posterior",
    "check_mixing",
    "check_parameters",
    "laplace",
    "laplace_evidence_alpha",
    "mcmc",
    "variational",
]

FloatArray = NDArray[np.float64]

_LOGIT = BernoulliLogit()
# Progress bars appear only for samplers expected to run longer than this.
_PROGRESS_AFTER_S = 1.0
# Below this acceptance rate of the adapted proposal the independence sampler gives way
# to HMC (its draws would repeat for long stretches: ESS per draw ~ rate / (2 - rate));
# so it does where its draws fail the convergence check (R-hat above _RHAT_LIMIT: a
# posterior whose shape the proposal misses though it accepts often enough).
_MIN_ACCEPTANCE = 0.3
# The range searched for alpha=None.
_ALPHA_BOUNDS = (1e-8, 1e8)
#: The default precision of the intercept's broad proper prior (sd 1e5 on the log-odds).
INTERCEPT_ALPHA = 1e-10
# Chains whose split R-hat exceeds this may not have mixed (Vehtari et al. 2021).
_RHAT_LIMIT = 1.01


@dataclass(frozen=True, eq=False)
class Posterior:
    """A posterior approximation in the design's basis (what the three methods return).

    ``mean``, ``cov``, ``theta_map`` and ``samples`` are in the coordinates of the
    design's :class:`~problin._core.model.basis.ColumnBasis` (raw without one);
    ``rhat`` and ``ess`` are those of the raw parameters. ``objective``: the
    Laplace fit's negative log-posterior (its prior is MCMC's).
    """

    alpha: float
    mean: FloatArray
    cov: FloatArray
    theta_map: FloatArray
    log_evidence: float
    n_iter: int
    converged: bool
    history: FloatArray
    message: str
    n_blocks: int = 1
    samples: FloatArray | None = None
    objective: Objective | None = None
    evidence_converged: bool | None = None
    alpha_posterior: tuple[float, float] | None = None
    rhat: FloatArray | None = None
    ess: FloatArray | None = None
    acceptance: float | None = None
    sampler: str | None = None


def gaussian_of(objective: Any) -> GaussianPenalty:
    """The Gaussian prior the Bayesian objective's penalty is (precision and mean)."""
    gaussian = objective.penalty.gaussian
    assert gaussian is not None, "a Bayesian fit's penalty is its Gaussian prior"
    return gaussian


def prior_of(objective: Any) -> PriorPrecision:
    """The precision of the Gaussian prior the Bayesian objective's penalty is."""
    return gaussian_of(objective).precision


def laplace(rows: ClassifierRows, n_classes: int, alpha: float, intercept_alpha: float, *,
            tol: float, max_iter: int, theta0: FloatArray | None = None,
            prior: GaussianPrior | None = None) -> Posterior:
    """MAP by Newton, ``S_N = H^-1`` and the Laplace evidence at a fixed ``alpha``
    (``prior``: a prior ``N(m_0, P^-1)`` on the raw parameters, its precision scaled
    by ``alpha``, instead of ``alpha``'s and ``intercept_alpha``'s; binary only).

    For softmax (all K blocks free) the intercepts' common shift is seen by
    no likelihood, only by their broad prior: the MAP has them summing to
    zero, and like ``LogisticRegression.covariance_`` the covariance is
    reported on that constraint (the GLMs' rank-one pin removed again); the
    evidence uses the true prior, whose Hessian is the pinned one minus the pin.
    """
    design = rows.design
    problem = classifier_problem(rows, classifier_family(_LOGIT, n_classes, alpha), alpha,
                                 intercept_alpha=intercept_alpha,
                                 prior=None if prior is None else prior.scaled(alpha))
    objective, start = problem.objective, problem.theta0
    # Many rows: Newton's warm start and first steps on a row sketch, as the GLMs.
    sketch = sketch_rows(design.n_samples, objective.n_params)
    result = newton(objective, start if theta0 is None else theta0, max_iter=max_iter, tol=tol,
                    sketch=sketch)
    theta = result.theta
    # The engine's Hessian may be one built a step earlier (within 1e-6 of the
    # final one in its own metric); the posterior gets the one at the MAP.
    f, _, H = objective.value_grad_hess(theta, result.eta)
    cov, logdet = gaussian_from_precision(H)
    precision = prior_of(objective)
    diag = precision.diag if precision.dense_matrix is None else precision.dense_matrix
    assert diag is not None, "the Bayesian prior is diagonal plus rank one, or dense"
    for v, c in precision.rank_one:
        # v is an eigenvector of the data Hessian (eigenvalue 0) and of the prior
        # (eigenvalue e): removing the pin changes the eigenvalue e + c|v|^2 to e.
        vv = float(v @ v)
        e = float((v * diag) @ v) / vv
        if e > 0:  # (a flat prior leaves the shift out of the evidence)
            logdet += np.log(e) - np.log(e + c * vv)
        cov -= np.outer(v, v) / (c * vv ** 2)
        f -= 0.5 * c * float(v @ theta) ** 2
    evidence = laplace_log_evidence(f, diag, logdet)
    return Posterior(alpha=float(alpha), mean=theta, cov=cov, theta_map=theta,
                     log_evidence=evidence, n_iter=int(result.n_iter),
                     converged=bool(result.converged),
                     history=np.asarray(result.history, dtype=np.float64),
                     n_blocks=objective.n_blocks, objective=objective,
                     message=result.message)


def laplace_evidence_alpha(rows: ClassifierRows, n_classes: int, intercept_alpha: float, *,
                           tol: float, max_iter: int,
                           prior: GaussianPrior | None = None) -> Posterior:
    """The Laplace posterior at the evidence framework's ``alpha``.

    MacKay's re-estimation ``alpha = gamma / |w_MAP|^2``, ``gamma = D -
    alpha tr(S_ww)`` over the ``D`` weights (intercepts excluded; for softmax
    all ``K`` blocks, whose common shift the data cannot see and which so
    adds nothing to ``gamma``), solved by :func:`~problin._core.bayes.logistic.mackay_alpha`;
    each fit is warm-started at the previous MAP.

    Not the exact maximiser of ``log_evidence_``: that one also follows the
    data Hessian ``Phi^T V Phi`` as ``w_MAP`` moves, and where the classes are
    (nearly) separable ``V`` decays as ``|w_MAP|`` grows, so the Laplace
    evidence keeps rising as ``alpha -> 0`` (scikit-learn's wine data: from
    -50.8 at ``alpha = 1`` to -38 at ``1e-9``). There the posterior is
    far from Gaussian and the Laplace covariance, ``~1 / alpha`` along the
    directions no training point constrains, makes every prediction
    near-uniform. The re-estimation neglects exactly that term; it has an
    interior fixed point on such data (wine: 1.32).

    ``prior``: a prior ``N(m_0, P^-1)`` on the raw parameters whose precision ``alpha``
    scales; the same re-estimation over all ``p`` parameters in its metric,
    ``alpha = gamma / (m_N - m_0)^T P (m_N - m_0)``, ``gamma = p - alpha tr(P S_N)``
    (both invariant under the solver's change of basis), from ``alpha = 1``.
    """
    if prior is not None:
        return _evidence_scale(rows, n_classes, prior, tol=tol, max_iter=max_iter)
    design = rows.design
    weights = np.ones(design.n_params, dtype=bool)
    weights[0] = not design.intercept
    raw = _raw_multipliers(design)  # w = m w_z on the weights (any basis)
    state: dict[str, Posterior] = {}  # the last fit, each warm-starting the next

    def reestimate(alpha: float) -> float:
        prev = state.get("post")
        post = laplace(rows, n_classes, alpha, intercept_alpha, tol=tol,
                       max_iter=max_iter, theta0=None if prev is None else prev.theta_map)
        state["post"] = post
        mask = np.tile(weights, post.n_blocks)
        m = np.tile(raw, post.n_blocks)[mask]
        w = post.mean[mask] * m
        gamma = float(mask.sum()) - alpha * float(np.diag(post.cov)[mask] @ m ** 2)
        w2 = float(w @ w)
        return gamma / w2 if w2 > 0 else np.inf

    # The search (its start, bounds and steps) runs on alpha as the precision
    # of weights on unit-spread columns, alpha * unit with unit the geometric
    # mean of 1 / s^2: scaling every column by a then scales alpha_ by a^2
    # exactly, as the model does (the weights scale by 1 / a).
    unit = float(np.exp(np.mean(np.log(raw[weights] ** 2)))) if weights.any() else 1.0
    alpha, converged = mackay_alpha(lambda a: reestimate(a / unit) * unit,
                                    bounds=_ALPHA_BOUNDS)
    alpha /= unit
    post = state["post"]
    if post.alpha != alpha:  # (the search ended on a point it had not fitted)
        post = laplace(rows, n_classes, alpha, intercept_alpha, tol=tol,
                       max_iter=max_iter, theta0=post.theta_map)
    return dataclasses.replace(post, evidence_converged=converged)


def _evidence_scale(rows: ClassifierRows, n_classes: int, prior: GaussianPrior, *,
                    tol: float, max_iter: int) -> Posterior:
    """:func:`laplace_evidence_alpha` for a prior of the estimator's own (its scale)."""
    state: dict[str, Posterior] = {}

    def reestimate(alpha: float) -> float:
        prev = state.get("post")
        post = laplace(rows, n_classes, alpha, 0.0, tol=tol, max_iter=max_iter,
                       theta0=None if prev is None else prev.theta_map, prior=prior)
        state["post"] = post
        gaussian = gaussian_of(post.objective)  # alpha P in the solver's basis
        r = post.mean - gaussian.mean
        Pr = gaussian.precision.matvec(r)
        trace = float(np.sum(_dense(gaussian.precision) * post.cov))
        quad = float(r @ Pr)  # alpha (m - m0)^T P (m - m0)
        return alpha * (r.size - trace) / quad if quad > 0 else np.inf

    alpha, converged = mackay_alpha(reestimate, bounds=_ALPHA_BOUNDS)
    post = state["post"]
    if post.alpha != alpha:
        post = laplace(rows, n_classes, alpha, 0.0, tol=tol, max_iter=max_iter,
                       theta0=post.theta_map, prior=prior)
    return dataclasses.replace(post, evidence_converged=converged)


def _dense(P: PriorPrecision) -> FloatArray:
    """A raw prior's precision in the solver's basis, as a matrix (diagonal or dense)."""
    assert not P.rank_one, "a raw prior is diagonal or dense"
    if P.dense_matrix is not None:
        return P.dense_matrix
    assert P.diag is not None
    return np.diag(P.diag)


def variational(rows: ClassifierRows, start: Posterior, alpha: float | None,
                intercept_alpha: float, alpha_prior: Any, *, tol: float,
                max_iter: int, prior: GaussianPrior | None = None) -> Posterior:
    """Jaakkola-Jordan variational posterior started from a Laplace fit ``start``.

    ``alpha=None``: ``alpha`` maximises the bound; ``alpha_prior=(a0, b0)``:
    Gamma hyperprior with ``q(alpha)``, started at ``E[alpha] = start.alpha``.
    ``prior``: a prior ``N(m_0, P^-1)`` on the raw parameters whose precision ``alpha``
    scales (``start``'s), the scale estimated over all parameters as ``alpha`` is.
    """
    if prior is not None:
        precision, mean = prior.standardised(rows.design.basis)
        vb = general_jaakkola_jordan(rows.jj_terms(), _dense(precision), mean,
                                     float(start.alpha), mean0=start.mean, cov0=start.cov,
                                     estimate_alpha=alpha is None, hyperprior=alpha_prior,
                                     tol=tol, max_iter=max_iter)
        assert vb.alpha is not None, "a general prior's fit reports its scale"
        return _variational_posterior(vb, vb.alpha, start)
    design = rows.design
    p = design.n_params
    mask = np.ones(p, dtype=bool)
    shape = _raw_multipliers(design) ** 2  # alpha on raw weights: alpha m^2 on w_z
    diag = float(start.alpha) * shape
    if design.intercept:
        mask[0] = False
        diag[0] = intercept_alpha
    terms = rows.jj_terms()
    vb = jaakkola_jordan(terms, diag, mask, mean0=start.mean, cov0=start.cov,
                         estimate_alpha=alpha is None, hyperprior=alpha_prior, tol=tol,
                         max_iter=max_iter, prior_shape=shape)
    alpha_used = float(vb.prior_diag[mask][0] / shape[mask][0]) if mask.any() \
        else float(start.alpha)
    return _variational_posterior(vb, alpha_used, start)


def _variational_posterior(vb: Any, alpha_used: float, start: Posterior) -> Posterior:
    """The :class:`Posterior` of a variational fit ``vb`` from the Laplace fit ``start``."""
    return Posterior(alpha=alpha_used, mean=vb.mean, cov=vb.cov, theta_map=start.theta_map,
                     log_evidence=vb.elbo, n_iter=vb.n_iter, converged=vb.converged,
                     history=np.asarray(vb.history),
                     message="converged" if vb.converged else
                     "maximum number of iterations reached",
                     alpha_posterior=None if vb.gamma_shape is None or vb.gamma_rate is None
                     else (float(vb.gamma_shape), float(vb.gamma_rate)))


def _raw_multipliers(design: ClassifierDesign) -> FloatArray:
    """``m`` with raw parameters ``m * theta_z`` on the weights: ``1 / s`` in a
    standardised basis (the intercept's entry is 1 and not used)."""
    basis = design.basis
    return np.ones(design.n_params) if basis is None else basis.multipliers()


class LazyProgress:
    """A tqdm bar that appears only once the work is expected to last over a second.

    tqdm comes with the ``cli`` extra; without it there is no bar (and no message)."""

    def __init__(self, total: int, enabled: bool, desc: str) -> None:
        self.total, self.enabled, self.desc = total, enabled, desc
        self.done, self.bar, self.start = 0, None, time.perf_counter()

    def __call__(self, k: int) -> None:
        self.done += k
        if self.bar is not None:
            self.bar.update(k)
            return
        elapsed = time.perf_counter() - self.start
        # decided once a quarter second has passed: then the rate is known
        if self.enabled and self.done < self.total and elapsed > _PROGRESS_AFTER_S / 4 and \
                elapsed * self.total / self.done > _PROGRESS_AFTER_S:
            tqdm = optional_module("tqdm.auto")
            self.enabled = tqdm is not None  # decided once: no tqdm, no bar
            if tqdm is not None:
                self.bar = tqdm.tqdm(total=self.total, initial=self.done, desc=self.desc,
                                     unit="draw", leave=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def mcmc(rows: ClassifierRows, start: Posterior, *, n_chains: int, n_samples: int,
         rng: np.random.Generator, progress: bool) -> Posterior:
    """Exact posterior draws, with R-hat and bulk ESS.

    Adaptive independence Metropolis-Hastings (``_core.mcmc``), the proposal
    built on the Laplace fit ``start``; where its adapted proposal is accepted less
    than ``_MIN_ACCEPTANCE`` of the time or its draws fail R-hat (a posterior far
    from Gaussian: many
    parameters for the data, near-separable classes), Hamiltonian Monte Carlo
    preconditioned by the Laplace covariance (``_core.hmc``) instead.
    """
    objective = start.objective
    assert objective is not None, "the Laplace fit keeps its objective"
    design = rows.design
    log_target = rows.log_posterior(gaussian_of(objective))  # (on Dask: a distributed pass a batch)
    n_warmup = max(100, n_samples // 4)
    U = upper_factor(start.cov)
    bar = LazyProgress(n_chains * (n_samples + n_warmup + 1), progress, "MCMC")
    sampler = "independence-mh"
    try:
        samples, acceptance = independence_sampler(
            log_target, start.mean, U, n_chains=n_chains, n_draws=n_samples,
            n_warmup=n_warmup, rng=rng, min_acceptance=_MIN_ACCEPTANCE, progress=bar)
        # Decided on the draws in the solver's coordinates, which transform with the
        # data: on the raw parameters (an intercept mixed with the slopes by the
        # centring) the choice, and so the draws, would depend on the columns' units.
        if samples is None or (samples.shape[1] >= 4 and
                               np.max(rhat(samples)) > _RHAT_LIMIT):
            bar.close()
            sampler = "hmc"
            bar = LazyProgress(n_chains * (n_samples + n_warmup), progress, "MCMC (HMC)")
            samples, acceptance = hmc_sampler(log_target.value_and_grad, start.mean, U,
                                              n_chains=n_chains, n_draws=n_samples,
                                              n_warmup=n_warmup, rng=rng, progress=bar)
    finally:
        bar.close()
    assert samples is not None, "HMC always returns its draws"
    r_hat = _rhat(design, samples)
    flat = samples.reshape(-1, samples.shape[2])
    cov = np.atleast_2d(np.cov(flat, rowvar=False)) if flat.shape[0] > 1 else \
        np.zeros((flat.shape[1],) * 2)
    ess = ess_bulk(_raw(design, samples)) if n_samples >= 4 else np.full(flat.shape[1], np.nan)
    return Posterior(alpha=start.alpha, mean=flat.mean(axis=0), cov=cov,
                     theta_map=start.theta_map, log_evidence=start.log_evidence,
                     n_iter=start.n_iter, converged=start.converged, history=start.history,
                     message="sampled", n_blocks=start.n_blocks, samples=samples,
                     evidence_converged=start.evidence_converged, rhat=r_hat, ess=ess,
                     acceptance=acceptance, sampler=sampler)


def _raw(design: ClassifierDesign, samples: FloatArray) -> FloatArray:
    """Draws of the reported (raw-unit) parameters."""
    return samples if design.basis is None else design.basis.to_raw(samples)


def _rhat(design: ClassifierDesign, samples: FloatArray) -> FloatArray:
    """R-hat of the reported parameters (NaN with fewer than 4 draws per chain), as the
    mixing warning reads it."""
    if samples.shape[1] < 4:
        return np.full(samples.shape[2], np.nan)
    return np.asarray(rhat(_raw(design, samples)), dtype=np.float64)


def check_mixing(rhat: FloatArray | None, ess: FloatArray | None) -> None:
    """Warn (for the caller's caller: ``fit``'s user) where MCMC chains may not have
    mixed: a rank-normalised split R-hat above ``_RHAT_LIMIT`` (Vehtari et al. 2021).
    Nothing to check without draws (None)."""
    if rhat is None or ess is None:
        return
    worst = np.nanmax(rhat) if np.any(np.isfinite(rhat)) else np.nan
    if worst > _RHAT_LIMIT:
        warn_at_caller(f"R-hat is {worst:.3f} > {_RHAT_LIMIT} (minimum bulk ESS "
                       f"{np.nanmin(ess):.0f}): the chains may not have converged; "
                       "increase n_samples.", ConvergenceWarning)


def raw_prior(est: Any, n_features: int) -> GaussianPrior | None:
    """``est``'s prior on the raw parameters (``prior_mean``/``prior_precision``) at
    unit scale (``alpha`` multiplies its precision), or None for its own prior on the
    intercept at the data's centre."""
    if not has_prior(est):
        return None
    return bayes_prior(est, n_features, est.alpha, float(est.intercept_alpha),
                       INTERCEPT_ALPHA)


def check_parameters(est: Any) -> None:
    """Validate ``est``'s parameters (a BayesianLogisticRegression): scikit-learn's
    constraints, with clearer messages for ``alpha = 0`` and ``alpha_prior``, and the
    combinations that no single constraint sees."""
    if isinstance(est.alpha, Real) and not isinstance(est.alpha, bool) and not float(est.alpha) > 0:
        raise InvalidParameterError(
            f"The 'alpha' parameter of {type(est).__name__} must be > 0 (the precision "
            f"of the prior on the weights), or None to choose it by maximising the "
            f"evidence; got {est.alpha!r}. alpha = 0 would be an improper flat prior: "
            "use LogisticRegression(alpha=0) for maximum likelihood.")
    validate_params(est)
    if est.alpha_prior is not None:
        a = np.asarray(est.alpha_prior, dtype=np.float64) \
            if np.ndim(est.alpha_prior) == 1 else np.array([])
        if a.shape != (2,) or not np.all(np.isfinite(a)) or not np.all(a > 0):
            raise InvalidParameterError("alpha_prior must be a pair (shape, rate) of "
                                        f"positive numbers, got {est.alpha_prior!r}")
        if est.inference != "variational":
            raise ValueError("alpha_prior (a Gamma hyperprior on alpha) needs "
                             f"inference='variational', not {est.inference!r}")
    if est.inference == "mcmc" and est.n_samples < 4:  # (no spread, R-hat or ESS)
        raise ValueError(f"inference='mcmc' needs n_samples >= 4 draws per chain (R-hat "
                         f"compares the halves of each chain), got {est.n_samples}")
