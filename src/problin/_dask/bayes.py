"""Bayesian logistic regression's row sums on Dask: variational sweeps and MCMC targets.

The Laplace posterior needs nothing beyond the GLM objective
(:mod:`~problin._dask.objective`). The two other approximations read the rows
through small interfaces that here become distributed passes, each chunk
running the in-memory code on itself:

* variational (:func:`~problin._core.bayes.logistic.jaakkola_jordan`): at each
  ``q(w) = N(m, S)`` the chunk forms its ``xi_n`` and returns both the bound's
  data term and the curvature ``2 Phi^T diag(s lambda(xi)) Phi`` of the next
  sweep: ONE pass per sweep (in memory these are two);
* MCMC (:class:`~problin._core.bayes.mcmc.LogitLogPosterior`): the log posterior
  (and gradient) at a batch of parameter vectors is one pass; the independence
  sampler needs ~20 such passes for 4 chains of 1000 draws, Hamiltonian Monte
  Carlo (the fallback for posteriors far from Gaussian) one per leapfrog step.
"""
import functools
from typing import Any

import numpy as np

from .._core.bayes.logistic import JJTerms
from .._core.bayes.mcmc import LogitLogPosterior, softplus_terms
from .design import Sums

__all__ = ["DaskJJTerms", "DaskLogitLogPosterior"]


def _jj_linear(design: Any, t: np.ndarray, w: np.ndarray | None) -> Sums:
    return Sums(JJTerms(design, t, w).linear())


def _jj_at(design: Any, t: np.ndarray, w: np.ndarray | None, *, mean: np.ndarray,
           cov: np.ndarray) -> Sums:
    terms = JJTerms(design, t, w)
    xi = terms.at(mean, cov)
    return Sums(terms.bound(xi), terms.curvature(xi))


class DaskJJTerms:
    """:class:`~problin._core.bayes.logistic.JJTerms` of a Dask design (binary labels):
    the "``xi``" it hands around is the pair (bound's data term, next curvature)."""

    def __init__(self, design: Any) -> None:
        self.design = design

    def linear(self) -> np.ndarray:
        return self.design.reduce(_jj_linear)[0]

    def at(self, mean: np.ndarray, cov: np.ndarray) -> tuple[Any, ...]:
        return tuple(self.design.reduce(functools.partial(_jj_at, mean=mean, cov=cov)))

    def curvature(self, state: tuple[Any, ...]) -> np.ndarray:
        return state[1]

    def bound(self, state: tuple[Any, ...]) -> float:
        return float(state[0])


def _logpost_linear(design: Any, t: np.ndarray, w: np.ndarray | None) -> Sums:
    sw = np.ones(t.size) if w is None else w
    return Sums(design.rmatvec(sw * t))


def _logpost_terms(design: Any, t: np.ndarray, w: np.ndarray | None, *, W: np.ndarray,
                   grad: bool) -> Sums:
    out = softplus_terms(design, np.ones(t.size) if w is None else w, W, grad)
    return Sums(*out) if grad else Sums(out)


class DaskLogitLogPosterior(LogitLogPosterior):
    """:class:`~problin._core.bayes.mcmc.LogitLogPosterior` of a Dask design: the data
    terms at a batch of parameter vectors ``W`` are one distributed pass."""

    def __init__(self, design: Any, prior: Any, prior_mean: np.ndarray | None = None) -> None:
        self.design, self.prior, self.prior_mean = design, prior, prior_mean
        self.linear = design.reduce(_logpost_linear)[0]

    def _data_terms(self, W: np.ndarray, grad: bool) -> Any:
        parts = self.design.reduce(functools.partial(_logpost_terms, W=W, grad=grad))
        return tuple(parts) if grad else parts[0]
