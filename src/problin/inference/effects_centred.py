"""Centred comparisons of plain columns, every variable from one evaluation per row.

A single-index model's comparison of a plain column ``j`` by ``delta`` is the average of
``r(eta, a) = mu(eta + a) - mu(eta - a)``, ``a = delta w_j / 2``: two evaluations of the
inverse link per row and variable. For three links ``r`` factorises exactly through
functions of ``eta`` shared by every variable and scalars of ``a``:

- identity: ``r = 2 a``;
- log: ``r = 2 e^eta sinh a``;
- logit: ``sigma(eta + a) - sigma(eta - a) = sinh a / (cosh eta + cosh a)`` (from
  ``sigma(x) = (1 + tanh(x / 2)) / 2`` and ``tanh(u + v) - tanh(u - v) =
  2 sinh 2v / (cosh 2u + cosh 2v)``), written with ``u = e^-|eta|`` so that no term
  overflows: ``r = 2 u sinh a / q``, ``q = 1 + u^2 + 2 u cosh a``; its derivatives
  ``dr/deta = -sign(eta) 2 u (1 - u^2) sinh a / q^2`` and ``dr/da = 2 u (2 u +
  (1 + u^2) cosh a) / q^2`` (``D(eta + a) -+ D(eta - a)``, ``D = sigma (1 - sigma)``).

The last has no cancellation (the difference of two probabilities loses digits when
``a`` is small; the quotient does not). Half-shifts beyond ``|a| <= 30`` (a change of
60 on the link scale) keep the two evaluations.
"""
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

__all__ = ["CentredDifference", "centred_difference", "MAX_HALF_SHIFT"]

FloatArray = NDArray[np.float64]
#: ``(r, dr/deta, dr/da)`` per row and variable (n, m) at ``eta`` (n,) and ``a`` (m,).
CentredDifference = Callable[[FloatArray, FloatArray],
                             tuple[FloatArray, FloatArray, FloatArray]]
MAX_HALF_SHIFT = 30.0


def _identity(eta: FloatArray, a: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    shape = (len(eta), len(a))
    return (np.broadcast_to(2.0 * a, shape), np.zeros(shape), np.full(shape, 2.0))


def _log(eta: FloatArray, a: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    mu = np.exp(eta)[:, None]
    r = mu * (2.0 * np.sinh(a))
    return r, r, mu * (2.0 * np.cosh(a))


def _logit(eta: FloatArray, a: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    u = np.exp(-np.abs(eta))[:, None]
    ca, sa = np.cosh(a), np.sinh(a)
    q = 1.0 + u * u + 2.0 * u * ca
    r = 2.0 * u * sa / q
    q2 = q * q
    d_eta = -np.sign(eta)[:, None] * 2.0 * u * (1.0 - u * u) * sa / q2
    d_a = 2.0 * u * (2.0 * u + (1.0 + u * u) * ca) / q2
    return r, d_eta, d_a


_BY_LINK: dict[str, CentredDifference] = {"identity": _identity, "log": _log,
                                          "logit": _logit}


def centred_difference(link: str) -> CentredDifference | None:
    """The factorised ``mu(eta + a) - mu(eta - a)`` of the inverse of ``link`` (its
    name; ``"identity"`` also for the link scale), or None."""
    return _BY_LINK.get(link)
