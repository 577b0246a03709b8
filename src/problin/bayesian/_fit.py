"""The three posterior approximations of Bayesian logistic regression, as plain functions.

Each takes the validated data (a :class:`~problin._core.model.design.Design`, class
indices ``t``, sample weights) and returns a :class:`Posterior`; the estimator
only stores it. The MAP comes from the one Newton engine on the GLMs' own
objective (``glm._base.classifier_objective``), with a proper prior on the
intercepts too.
"""
import time
from dataclasses import dataclass

import numpy as np

from .._core.bayes.hmc import hmc_sampler
from .._core.bayes.logistic import (
    JJTerms,
    gaussian_from_precision,
    jaakkola_jordan,
    laplace_log_evidence,
    mackay_alpha,
    upper_factor,
)
from .._core.bayes.mcmc import LogitLogPosterior, ess_bulk, independence_sampler, rhat
from .._core.model.families import BernoulliLogit
from .._core.solvers.newton import newton, sketch_rows
from .._dask.bayes import DaskJJTerms, DaskLogitLogPosterior
from .._dask.design import DaskDesign
from ..glm._base import classifier_objective

__all__ = ["Posterior", "laplace", "laplace_evidence_alpha", "variational", "mcmc"]

_LOGIT = BernoulliLogit()
# Progress bars appear only for samplers expected to run longer than this.
_PROGRESS_AFTER_S = 1.0
# Below this warm-up acceptance rate the independence sampler gives way to HMC
# (its draws would repeat for long stretches: ESS per draw ~ rate / (2 - rate)).
_MIN_ACCEPTANCE = 0.3
# The range searched for alpha=None.
_ALPHA_BOUNDS = (1e-8, 1e8)


@dataclass
class Posterior:
    """A fitted posterior: its moments, the MAP, and how the fit went."""

    alpha: float
    mean: np.ndarray
    cov: np.ndarray
    theta_map: np.ndarray
    log_evidence: float
    n_iter: int
    converged: bool
    history: np.ndarray
    n_blocks: int = 1
    samples: np.ndarray | None = None
    extra: dict | None = None


def laplace(design, t, sw, n_classes, alpha, intercept_alpha, *, tol, max_iter, theta0=None):
    """MAP by Newton, ``S_N = H^-1`` and the Laplace evidence at a fixed ``alpha``.

    For softmax (all K blocks free) the intercepts' common shift is seen by
    no likelihood, only by their broad prior: the MAP has them summing to
    zero, and like ``LogisticRegression.covariance_`` the covariance is
    reported on that constraint (the GLMs' rank-one pin removed again); the
    evidence uses the true prior, whose Hessian is the pinned one minus the pin.
    """
    objective, start = classifier_objective(design, _LOGIT, t, sw, n_classes, alpha,
                                            intercept_alpha=intercept_alpha)
    # Many rows: Newton's warm start and first steps on a row sketch, as the GLMs.
    sketch = sketch_rows(design.n_samples, objective.n_params)
    result = newton(objective, start if theta0 is None else theta0, max_iter=max_iter, tol=tol,
                    sketch=sketch)
    theta = result.theta
    # The engine's Hessian may be one built a step earlier (within 1e-6 of the
    # final one in its own metric); the posterior gets the one at the MAP.
    f, _, H = objective.value_grad_hess(theta, result.eta)
    cov, logdet = gaussian_from_precision(H)
    for v, c in objective.P.rank_one:
        # v is an eigenvector of the data Hessian (eigenvalue 0) and of the prior
        # (eigenvalue e): removing the pin changes the eigenvalue e + c|v|^2 to e.
        vv = float(v @ v)
        e = float((v * objective.P.diag) @ v) / vv
        if e > 0:  # (a flat prior leaves the shift out of the evidence)
            logdet += np.log(e) - np.log(e + c * vv)
        cov -= np.outer(v, v) / (c * vv ** 2)
        f -= 0.5 * c * float(v @ theta) ** 2
    evidence = laplace_log_evidence(f, objective.P.diag, logdet)
    return Posterior(alpha=float(alpha), mean=theta, cov=cov, theta_map=theta,
                     log_evidence=evidence, n_iter=int(result.n_iter),
                     converged=bool(result.converged),
                     history=np.asarray(result.history, dtype=np.float64),
                     n_blocks=getattr(objective, "n_blocks", 1),
                     extra={"objective": objective, "message": result.message})


def laplace_evidence_alpha(design, t, sw, n_classes, intercept_alpha, *, tol, max_iter):
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
    """
    weights = np.ones(design.n_params, dtype=bool)
    weights[0] = not design.intercept
    raw = _raw_multipliers(design)  # w = m w_z on the weights (any basis)
    state = {"post": None}

    def reestimate(alpha):
        prev = state["post"]
        post = laplace(design, t, sw, n_classes, alpha, intercept_alpha, tol=tol,
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
        post = laplace(design, t, sw, n_classes, alpha, intercept_alpha, tol=tol,
                       max_iter=max_iter, theta0=post.theta_map)
    post.extra["evidence_converged"] = converged
    return post


def variational(design, t, sw, start, alpha, intercept_alpha, alpha_prior, *, tol, max_iter):
    """Jaakkola-Jordan variational posterior started from a Laplace fit ``start``.

    ``alpha=None``: ``alpha`` maximises the bound; ``alpha_prior=(a0, b0)``:
    Gamma hyperprior with ``q(alpha)``, started at ``E[alpha] = start.alpha``.
    """
    p = design.n_params
    mask = np.ones(p, dtype=bool)
    shape = _raw_multipliers(design) ** 2  # alpha on raw weights: alpha m^2 on w_z
    diag = float(start.alpha) * shape
    if design.intercept:
        mask[0] = False
        diag[0] = intercept_alpha
    terms = DaskJJTerms(design) if isinstance(design, DaskDesign) else JJTerms(design, t, sw)
    vb = jaakkola_jordan(terms, diag, mask, mean0=start.mean, cov0=start.cov,
                         estimate_alpha=alpha is None, hyperprior=alpha_prior, tol=tol,
                         max_iter=max_iter, prior_shape=shape)
    alpha_used = float(vb.prior_diag[mask][0] / shape[mask][0]) if mask.any() \
        else float(start.alpha)
    extra = {"message": "converged" if vb.converged else "maximum number of iterations reached"}
    if vb.gamma_shape is not None:
        extra.update(gamma_shape=vb.gamma_shape, gamma_rate=vb.gamma_rate)
    return Posterior(alpha=alpha_used, mean=vb.mean, cov=vb.cov, theta_map=start.theta_map,
                     log_evidence=vb.elbo, n_iter=vb.n_iter, converged=vb.converged,
                     history=np.asarray(vb.history), extra=extra)


def _raw_multipliers(design):
    """``m`` with raw parameters ``m * theta_z`` on the weights: ``1 / s`` in a
    standardised basis (the intercept's entry is 1 and not used)."""
    basis = getattr(design, "basis", None)
    return np.ones(design.n_params) if basis is None else basis.multipliers()


class LazyProgress:
    """A tqdm bar that appears only once the work is expected to last over a second."""

    def __init__(self, total, enabled, desc):
        self.total, self.enabled, self.desc = total, enabled, desc
        self.done, self.bar, self.start = 0, None, time.perf_counter()

    def __call__(self, k):
        self.done += k
        if self.bar is not None:
            self.bar.update(k)
            return
        elapsed = time.perf_counter() - self.start
        # decided once a quarter second has passed: then the rate is known
        if self.enabled and self.done < self.total and elapsed > _PROGRESS_AFTER_S / 4 and \
                elapsed * self.total / self.done > _PROGRESS_AFTER_S:
            from tqdm.auto import tqdm
            self.bar = tqdm(total=self.total, initial=self.done, desc=self.desc,
                            unit="draw", leave=False)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def mcmc(design, t, sw, start, *, n_chains, n_samples, rng, progress):
    """Exact posterior draws, with R-hat and bulk ESS.

    Adaptive independence Metropolis-Hastings (``_core.mcmc``), the proposal
    built on the Laplace fit ``start``; where its warm-up accepts fewer than
    ``_MIN_ACCEPTANCE`` of the proposals (a posterior far from Gaussian: many
    parameters for the data, near-separable classes), Hamiltonian Monte Carlo
    preconditioned by the Laplace covariance (``_core.hmc``) instead.
    """
    objective = start.extra["objective"]
    if isinstance(design, DaskDesign):  # each batch of log posteriors is a distributed pass
        log_target = DaskLogitLogPosterior(design, objective.P)
    else:
        log_target = LogitLogPosterior(design, t, sw, objective.P)
    n_warmup = max(100, n_samples // 4)
    U = upper_factor(start.cov)
    bar = LazyProgress(n_chains * (n_samples + n_warmup + 1), progress, "MCMC")
    sampler = "independence-mh"
    try:
        samples, acceptance = independence_sampler(
            log_target, start.mean, U, n_chains=n_chains, n_draws=n_samples,
            n_warmup=n_warmup, rng=rng, min_acceptance=_MIN_ACCEPTANCE, progress=bar)
        if samples is None:
            bar.close()
            sampler = "hmc"
            bar = LazyProgress(n_chains * (n_samples + n_warmup), progress, "MCMC (HMC)")
            samples, acceptance = hmc_sampler(log_target.value_and_grad, start.mean, U,
                                              n_chains=n_chains, n_draws=n_samples,
                                              n_warmup=n_warmup, rng=rng, progress=bar)
    finally:
        bar.close()
    flat = samples.reshape(-1, samples.shape[2])
    cov = np.atleast_2d(np.cov(flat, rowvar=False)) if flat.shape[0] > 1 else \
        np.zeros((flat.shape[1],) * 2)
    if n_samples >= 4:
        raw = samples if design.basis is None else design.basis.to_raw(samples)
        r_hat, ess = rhat(raw), ess_bulk(raw)  # of the reported (raw) parameters
    else:
        r_hat = ess = np.full(flat.shape[1], np.nan)
    extra = {"rhat": r_hat, "ess": ess, "acceptance": acceptance, "message": "sampled",
             "sampler": sampler, "basis": design.basis}
    return Posterior(alpha=start.alpha, mean=flat.mean(axis=0), cov=cov,
                     theta_map=start.theta_map, log_evidence=start.log_evidence,
                     n_iter=start.n_iter, converged=start.converged, history=start.history,
                     samples=samples, extra=extra)
