"""Hamiltonian Monte Carlo, preconditioned by a Gaussian approximation of the posterior.

The fallback exact sampler for posteriors far from Gaussian (many parameters
for the data, near-separable classes), where an independence proposal built
on the Laplace fit is rarely accepted. HMC (Duane et al. 1987; Neal 2011)
runs in whitened coordinates ``z``, ``theta = loc + z U`` with ``U^T U`` the
Laplace covariance, where the posterior is close to ``N(0, I)``: a trajectory
of length ~1.5 (a quarter period of a standard Gaussian is ``pi / 2``) then
gives nearly independent draws. The step size is adapted during warm-up by a
Robbins-Monro recursion on ``ln eps`` towards an acceptance rate of 0.8
(then fixed at its mean over the second half of the warm-up) and jittered by
+-20 % per iteration; all chains advance together (each gradient is one
``X W`` and one ``X^T R`` product for the chains' columns).
"""
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["hmc_sampler"]

_TARGET_ACCEPTANCE = 0.8
_LENGTH = 1.5


def _leapfrog(value_and_grad: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], z: np.ndarray,
              g: np.ndarray, momentum: np.ndarray, eps: Any,
              n_steps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``n_steps`` leapfrog steps from ``(z, momentum)``; returns the end point, its
    log density and gradient and the final momentum."""
    m = momentum + 0.5 * eps * g
    for step in range(n_steps):
        z = z + eps * m
        v, g = value_and_grad(z)
        if step < n_steps - 1:
            m = m + eps * g
    return z, v, g, m + 0.5 * eps * g


def hmc_sampler(value_and_grad: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
                loc: np.ndarray, cov_factor: np.ndarray, *, n_chains: int, n_draws: int,
                n_warmup: int, rng: np.random.Generator,
                progress: Callable[..., Any] | None = None) -> tuple[np.ndarray, float]:
    """Draws of the density whose log and gradient ``value_and_grad(W)`` gives (rows).

    ``loc`` and ``cov_factor`` (``U``, covariance ``U^T U``) whiten the
    parameters; chains start at overdispersed draws ``N(loc, 1.5^2 U^T U)``.
    ``progress(k)`` is called after each iteration with ``k = n_chains``.
    Returns ``(samples, acceptance_rate)``, samples ``(n_chains, n_draws, p)``.
    """
    p = loc.size

    def whitened(Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with np.errstate(over="ignore", invalid="ignore"):
            v, g = value_and_grad(loc + Z @ cov_factor)
        return v, g @ cov_factor.T

    z = 1.5 * rng.standard_normal((n_chains, p))
    v, g = whitened(z)
    log_eps = np.log(p ** -0.25)
    trace = []
    samples = np.empty((n_chains, n_draws, p))
    accepted = 0
    for it in range(n_warmup + n_draws):
        eps = float(np.exp(log_eps) * rng.uniform(0.8, 1.2))
        momentum = rng.standard_normal((n_chains, p))
        zn, vn, gn, mn = _leapfrog(whitened, z, g, momentum, eps,
                                   max(1, int(np.ceil(_LENGTH / eps))))
        with np.errstate(over="ignore", invalid="ignore"):
            log_acc = (vn - 0.5 * np.einsum("ij,ij->i", mn, mn)) \
                - (v - 0.5 * np.einsum("ij,ij->i", momentum, momentum))
        log_acc = np.where(np.isfinite(log_acc), np.minimum(log_acc, 0.0), -np.inf)
        take = np.log(rng.random(n_chains)) < log_acc
        z = np.where(take[:, None], zn, z)
        v = np.where(take, vn, v)
        g = np.where(take[:, None], gn, g)
        if it < n_warmup:
            rate = float(np.mean(np.exp(log_acc)))
            log_eps += (rate - _TARGET_ACCEPTANCE) / (it + 1) ** 0.6
            trace.append(log_eps)
            if it == n_warmup - 1:
                log_eps = float(np.mean(trace[len(trace) // 2:]))
        else:
            samples[:, it - n_warmup] = loc + z @ cov_factor
            accepted += int(take.sum())
        if progress is not None:
            progress(n_chains)
    return samples, accepted / max(1, n_chains * n_draws)
