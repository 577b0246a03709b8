"""The result of a Bayesian logistic regression fit, in one frozen record.

Every fit of :class:`~problin.BayesianLogisticRegression` (Laplace, variational
or MCMC; binary or softmax; in memory or on Dask) produces one
:class:`PosteriorFit`; the estimator's fitted attributes (``posterior_mean_``,
``coef_``, ``alpha_``, ``samples_``, ...), its predictions and ``summary()``
are all read from it.
"""
import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..glm.problem import ClassifierDesign
from ._fit import Posterior

__all__ = ["PosteriorFit"]


@dataclass(frozen=True, eq=False)
class PosteriorFit:
    """A fitted posterior over the parameters, its hyperparameters, and how the fit went.

    Parameters are ordered ``[intercept, coef...]`` per class block (one
    block for binary targets, K for softmax), in raw units unless said.

    Attributes
    ----------
    inference : str
        ``"laplace"``, ``"variational"`` or ``"mcmc"``.
    alpha : float
        The prior precision of the weights: given, chosen by the evidence
        framework (MacKay 1992; Bishop 2006, sections 3.5.2 and 5.7.3) or the posterior mean
        ``E[alpha]`` under a Gamma hyperprior (Bishop 2006, section 10.6.3).
    mean, cov : ndarrays of shape (p,) and (p, p)
        The posterior mean and covariance: the MAP and inverse Hessian of the
        Laplace approximation (Bishop 2006, eqs. 4.143-4.144), the Gaussian of the
        Jaakkola & Jordan (2000) bound, or the moments of the MCMC draws.
    theta_map : ndarray of shape (p,)
        The MAP estimate (Newton on the penalised GLM objective).
    log_evidence : float
        Laplace approximation of ``ln p(t | alpha)`` (Bishop 2006, eq. 4.137;
        ``"laplace"`` and ``"mcmc"``), or the variational lower bound.
    n_iter, converged, message, history :
        Newton iterations (variational sweeps), whether the tolerance was met,
        the stopping message, the objective (variational bound) per iteration.
    n_blocks : int
        Parameter blocks (1, or K for softmax).
    fit_intercept : bool
        Whether each block starts with an intercept.
    n_obs : int
        Rows of the training data.
    evidence_converged : bool or None
        ``alpha=None`` with Laplace or MCMC: whether MacKay's re-estimation
        found its fixed point (None where it did not run).
    alpha_posterior : (float, float) or None
        Shape and rate of the Gamma posterior ``q(alpha)`` (with ``alpha_prior``).
    samples : ndarray of shape (n_chains, n_samples, p) or None
        MCMC draws; ``rhat`` (rank-normalised split R-hat, Vehtari et al. 2021),
        ``ess`` (bulk effective sample size), ``acceptance_rate`` and
        ``sampler`` (``"independence-mh"`` or ``"hmc"``) with them, else None.
    centre : ndarray of shape (n_features,) or None
        Where the fit was centred (dense data): the column centres ``c``. Then
        ``centred_mean``, ``centred_cov``, ``centred_map`` and ``centred_samples``
        are the posterior in the parameters ``[b + c^T w, w]`` (the intercept at
        the centre), which predictions read so that no digits cancel far from
        the origin; else these are None.
    """

    inference: str
    alpha: float
    mean: NDArray[np.float64]
    cov: NDArray[np.float64]
    theta_map: NDArray[np.float64]
    log_evidence: float
    n_iter: int
    converged: bool
    message: str
    history: NDArray[np.float64]
    n_blocks: int
    fit_intercept: bool
    n_obs: int
    evidence_converged: bool | None = None
    alpha_posterior: tuple[float, float] | None = None
    samples: NDArray[np.float64] | None = None
    rhat: NDArray[np.float64] | None = None
    ess: NDArray[np.float64] | None = None
    acceptance_rate: float | None = None
    sampler: str | None = None
    centre: NDArray[np.float64] | None = None
    centred_mean: NDArray[np.float64] | None = None
    centred_cov: NDArray[np.float64] | None = None
    centred_map: NDArray[np.float64] | None = None
    centred_samples: NDArray[np.float64] | None = None

    @classmethod
    def from_posterior(cls, post: Posterior, design: ClassifierDesign,
                       inference: str) -> "PosteriorFit":
        """The fit in raw units from a posterior in ``design``'s basis (exact: linear maps)."""
        basis = design.basis
        raw: dict[str, Any] = {"mean": post.mean, "cov": post.cov,
                               "theta_map": post.theta_map, "samples": post.samples}
        if basis is not None and basis.center is not None:
            m = np.tile(basis.multipliers(), post.n_blocks)
            raw.update(centre=basis.center, centred_mean=post.mean * m,
                       centred_cov=post.cov * m[:, None] * m[None, :],
                       centred_map=post.theta_map * m,  # (draws: standardised)
                       centred_samples=None if post.samples is None else post.samples * m)
        if basis is not None:
            raw.update(mean=basis.to_raw(post.mean), theta_map=basis.to_raw(post.theta_map),
                       samples=None if post.samples is None else basis.to_raw(post.samples),
                       # (Softmax with a flat intercept prior: the common shift of the
                       # intercepts is seen by nothing, and the covariance is reported on
                       # the constraint that the intercepts at the centre sum to zero, a
                       # convention that moves with the data, unlike one on raw intercepts.)
                       cov=basis.covariance_to_raw(post.cov, post.n_blocks))
        return cls(inference=inference, alpha=post.alpha, log_evidence=post.log_evidence,
                   n_iter=post.n_iter, converged=post.converged, message=post.message,
                   history=post.history, n_blocks=post.n_blocks,
                   fit_intercept=bool(design.intercept), n_obs=design.n_samples,
                   evidence_converged=post.evidence_converged,
                   alpha_posterior=post.alpha_posterior, rhat=post.rhat, ess=post.ess,
                   acceptance_rate=None if post.acceptance is None else float(post.acceptance),
                   sampler=post.sampler, **raw)

    def replace(self, **changes: Any) -> "PosteriorFit":
        """A copy with ``changes``."""
        return dataclasses.replace(self, **changes)

    def attributes(self) -> dict[str, Any]:
        """The estimator's fitted attributes, in the order they are set."""
        attrs: dict[str, Any] = {}
        if self.samples is not None:
            attrs.update(samples_=self.samples, rhat_=self.rhat, ess_=self.ess,
                         acceptance_rate_=self.acceptance_rate, sampler_=self.sampler)
        Theta = self.mean.reshape(self.n_blocks, -1)
        off = int(self.fit_intercept)
        attrs.update(posterior_mean_=self.mean, posterior_cov_=self.cov,
                     coef_=np.ascontiguousarray(Theta[:, off:]),
                     intercept_=Theta[:, 0].copy() if off else np.zeros(Theta.shape[0]),
                     alpha_=self.alpha, log_evidence_=self.log_evidence,
                     history_=self.history, n_iter_=self.n_iter, converged_=self.converged)
        if self.alpha_posterior is not None:
            attrs["alpha_posterior_"] = self.alpha_posterior
        return attrs
