"""The fit record of :class:`~problin.bayesian.ordinal.BayesianOrdinalRegression`.

One frozen :class:`OrdinalPosteriorFit` per fit (design §5): the posterior in the
reported parameters ``[beta, theta]`` (mean, covariance, MAP, MCMC draws and their
diagnostics), the Laplace Gaussian in the solver's parameters ``[b_z, w_z, gamma]`` with
the maps that carry a draw of it to ``[beta, theta]``, and the thinned draws that
predictions average over. The estimator's fitted attributes, predictions, summary and
effects are all read from it, so a posterior draw is mapped by one function
(:meth:`OrdinalPosteriorFit.reported`) wherever it is drawn.
"""
import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._core.bayes.logistic import draw_gaussian

__all__ = ["OrdinalPosteriorFit", "log_gap_cuts"]

FloatArray = NDArray[np.float64]


def log_gap_cuts(gaps: FloatArray) -> FloatArray:
    """Rows of log gaps -> rows of cuts ``a_0 = 0, a_j = sum_{m<j} exp(gamma_m)``."""
    return np.hstack((np.zeros((gaps.shape[0], 1)), np.cumsum(np.exp(gaps), axis=1)))


@dataclass(frozen=True, eq=False)
class OrdinalPosteriorFit:
    """A fitted posterior of a cumulative-link model.

    Attributes
    ----------
    link : str
    n_classes : int
    inference : str
        ``"laplace"`` or ``"mcmc"``.
    alpha, cutpoint_sd, gap_sd : float
        The prior (the estimator's parameters of the same names).
    mean, cov : ndarrays of shape (P,) and (P, P)
        ``[beta, theta]``: the MAP and its delta-method covariance (Laplace), or the
        moments of the draws (MCMC).
    theta_map : ndarray of shape (P,)
        The MAP in ``[beta, theta]``.
    mode, mode_cov : ndarrays
        The MAP in the solver's ``[b_z, w_z, gamma]`` and the inverse Hessian there (the
        Laplace Gaussian).
    raw_map : ndarray of shape (D + 1, D + 1)
        ``R`` with ``[b, w] = [b_z, w_z] R`` (rows).
    centre : ndarray of shape (D,)
        The data's weighted column means (where the first cut-point's prior sits and
        where the Laplace draws are factored).
    predictive : ndarray of shape (S, P)
        The draws of ``[beta, theta]`` that predictions average over (at most 1,000).
    n_iter, converged, message, n_obs :
        The MAP's Newton iterations and outcome; the training rows.
    samples : ndarray of shape (n_chains, n_samples, P) or None
        MCMC draws of ``[beta, theta]``, with ``rhat``, ``ess``, ``acceptance_rate`` and
        ``sampler``; else None.
    """

    link: str
    n_classes: int
    inference: str
    alpha: float
    cutpoint_sd: float
    gap_sd: float
    mean: FloatArray
    cov: FloatArray
    theta_map: FloatArray
    mode: FloatArray
    mode_cov: FloatArray
    raw_map: FloatArray
    centre: FloatArray
    predictive: FloatArray
    n_iter: int
    converged: bool
    message: str
    n_obs: int
    samples: FloatArray | None = None
    rhat: FloatArray | None = None
    ess: FloatArray | None = None
    acceptance_rate: float | None = None
    sampler: str | None = None

    @property
    def n_features(self) -> int:
        return int(self.centre.size)

    def reported(self, W: FloatArray) -> FloatArray:
        """Rows of ``[b_z, w_z, gamma]`` -> rows of ``[beta, theta]``."""
        W = np.atleast_2d(W)
        p = self.raw_map.shape[0]
        raw = W[:, :p] @ self.raw_map
        theta = log_gap_cuts(W[:, p:]) - raw[:, :1]
        return np.hstack((raw[:, 1:], theta))

    def laplace_draws(self, n: int, rng: np.random.Generator) -> FloatArray:
        """``n`` draws of the Laplace posterior as rows of ``[beta, theta]``.

        Drawn as ``mean + L z`` with ``L`` the Cholesky factor of the covariance of
        ``[w, b + xbar^T w, gamma]`` (the slopes in raw units and the intercept at the
        centre of the data): data in other units or offsets (or sparse, never centred,
        against dense) only rescale the slopes there, which carries ``L`` to the other
        data's factor, so the same seed gives the same draws, mapped (a factor in the
        solver's coordinates would depend on its basis)."""
        M = self._centred_map()
        draws = draw_gaussian(M @ self.mode, M @ self.mode_cov @ M.T, n, rng)
        return self.reported(np.linalg.solve(M, draws.T).T)

    def _centred_map(self) -> FloatArray:
        """``M``: ``[b_z, w_z, gamma] -> [w, b + xbar^T w, gamma]``."""
        R, p = self.raw_map, self.raw_map.shape[0]
        M = np.eye(self.mode.size)
        M[:p - 1, :p] = R[:, 1:].T  # w = ...
        M[p - 1, :p] = R[:, 0] + R[:, 1:] @ self.centre  # b + xbar^T w
        return M

    def replace(self, **changes: Any) -> "OrdinalPosteriorFit":
        return dataclasses.replace(self, **changes)

    def attributes(self) -> dict[str, Any]:
        """The estimator's fitted attributes (the one place they are set)."""
        D = self.n_features
        attrs: dict[str, Any] = {
            "theta_map_": self.theta_map, "posterior_mean_": self.mean,
            "posterior_cov_": self.cov, "coef_": self.mean[:D], "cutpoints_": self.mean[D:],
            "n_iter_": self.n_iter, "converged_": self.converged}
        if self.samples is not None:
            mcmc = {"samples_": self.samples, "rhat_": self.rhat, "ess_": self.ess,
                    "acceptance_rate_": self.acceptance_rate, "sampler_": self.sampler}
            attrs.update({k: v for k, v in mcmc.items() if v is not None})
        return attrs
