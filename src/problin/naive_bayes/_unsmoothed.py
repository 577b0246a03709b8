"""Unsmoothed count models (``alpha=0``): the texts' maximum-likelihood estimates.

A relative frequency ``p = c / n`` may be exactly 0: a feature never present in a
class (or always present, for the Bernoulli's ``1 - p``). Its logarithm is ``-inf``,
and a row holding such an event has probability 0 in that class. Where a row has
probability 0 in *every* class the posterior is ``0 / 0``; it is defined here as its
limit under vanishing smoothing: with ``p(alpha) = (c + alpha) / (n + m alpha)``
(``m`` outcomes), ``log p(alpha) = z log alpha + f + O(alpha)`` with

    c > 0:         z = 0,  f = log c - log n
    c = 0 < n:     z = 1,  f = -log n
    n = 0:         z = 0,  f = -log m        (a class with no data yet: p = 1/m)

so that a class's score is ``Z_k log alpha + F_k`` (``Z_k`` the row's number of
zero-probability events in class ``k``, weighted by the counts, ``F_k`` the rest).
As ``alpha -> 0`` the posterior concentrates on the classes with the fewest
(``min_k Z_k``), in proportion to ``exp F_k`` among them: the classes in which the
row has positive probability, by their plain posterior, wherever there is one; else
those it contradicts least. Never NaN, and no ``log(0)`` is evaluated.
"""
import numpy as np

__all__ = ["limit_log", "limit_log_likelihood", "limit_posterior_scores"]


def limit_log(numer: np.ndarray, denom: np.ndarray,
              outcomes: float) -> tuple[np.ndarray, np.ndarray]:
    """``(f, z)`` with ``log((numer + a) / (denom + outcomes a)) = z log a + f + O(a)``
    as ``a -> 0`` (the module's table), elementwise; ``denom`` broadcasts."""
    numer, denom = np.broadcast_arrays(np.asarray(numer, dtype=np.float64),
                                       np.asarray(denom, dtype=np.float64))
    empty, seen = ~(denom > 0), numer > 0
    f = np.log(np.where(seen, numer, 1.0)) - np.log(np.where(empty, 1.0, denom))
    f = np.where(empty, -np.log(outcomes), f)
    return f, (~seen & ~empty).astype(np.float64)


def limit_log_likelihood(F: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """``a_k(x)``: ``F_k`` where the row has positive probability in class ``k``, else
    ``-inf`` (the maximum-likelihood model's log-probability, exactly)."""
    return np.where(Z > 0, -np.inf, F)


def limit_posterior_scores(F: np.ndarray, Z: np.ndarray, log_prior: np.ndarray) -> np.ndarray:
    """Scores whose softmax is the ``alpha -> 0`` posterior: ``F_k`` for the classes with
    the fewest zero-probability events (among those of positive prior), ``-inf``
    elsewhere; every row keeps at least one finite score."""
    Z = np.where(np.isfinite(log_prior), Z, np.inf)
    fewest = Z.min(axis=1, keepdims=True)
    return np.where(Z == fewest, F, -np.inf)
