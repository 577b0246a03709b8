"""Profile-likelihood confidence bounds by a constrained Newton iteration.

The bound of a parameter ``b = c^T theta`` (``c`` maps the solver's coordinates to the
reported parameter) is the root of ``r(b) = t``, where ``r(b) = sign(b - b_hat)
sqrt(2 (f_p(b) - f_hat) / phi)`` is the signed root of the (penalised) deviance,
``f_p(b) = min f(theta)`` over ``c^T theta = b``, and ``t = +-sqrt(q)``. Each step takes
one pass over the rows (``f``, its gradient and Hessian at ``theta``): the Newton step of
the constrained minimisation (its KKT system) and the Newton step of the root in ``b``
are taken together (Venzon & Moolgavkar 1988), so the inner refit is never solved to
the end at a ``b`` the outer root moves away from. ``df_p/db = mu``, the multiplier of
the constraint, which is the KKT system's by-product; the profile itself is estimated as
the local quadratic model's minimum, exact at convergence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..linalg import Cholesky, cholesky

__all__ = ["ConstrainedMinimum", "ProfiledObjective", "ProfileBound", "constrained_minimum",
           "profile_bound", "profile_intervals"]


class ProfiledObjective(Protocol):
    """What a profile needs of a fit: the minimised objective (the negative
    (penalised) log-likelihood, unit dispersion) with its gradient and Hessian."""

    def __call__(self, theta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]: ...


@dataclass(frozen=True)
class ProfileBound:
    """One end of a profile interval: ``value`` (``+-inf`` where the profile never
    reaches the cut-off: a direction in which the likelihood stays flat), the
    passes it took, and whether it converged."""

    value: float
    n_iter: int
    converged: bool


class _Secant:
    """The objective's Hessian corrected by the gradients' changes between iterates
    (Powell's symmetric Broyden update of the correction): where the Hessian a model
    gives is approximate (Firth's held-leverage curvature, which on separated data
    leaves Fisher scoring linear at ~0.75 a step) the steps become superlinear again;
    where it is exact the correction stays of the order of the steps. A correction
    that leaves the Hessian indefinite is dropped."""

    def __init__(self, p: int) -> None:
        self.correction = np.zeros((p, p))
        self.hessian = self.correction
        self._last: tuple[np.ndarray, np.ndarray] | None = None
        self.active = False  # (updated only near the profile: far out it misleads)

    def reset(self) -> None:
        self.correction[:] = 0.0
        self._last = None

    def factor(self, theta: np.ndarray, g: np.ndarray, H: np.ndarray) -> Cholesky | None:
        if self._last is not None and self.active:
            s = theta - self._last[0]
            ss = float(s @ s)
            if ss > 0.0:
                r = (g - self._last[1]) - (H + self.correction) @ s
                rs = float(r @ s)
                self.correction += (np.outer(r, s) + np.outer(s, r)) / ss \
                    - rs * np.outer(s, s) / ss ** 2
        self._last = (np.array(theta), np.array(g))
        for E in (self.correction, None):
            self.hessian = H if E is None else H + E
            try:
                factor = cholesky(self.hessian)
            except np.linalg.LinAlgError:
                factor = None
            if factor is not None and factor.jitter == 0.0:
                return factor
            self.correction[:] = 0.0
        return None


#: The largest move of any coordinate of theta in one step (the objectives' coordinates
#: are standardised: a linear predictor moving by ~10 leaves the quadratic model behind).
_RADIUS = 10.0


def _within_radius(d: np.ndarray) -> np.ndarray:
    """``d`` shortened so that no coordinate moves by more than the trust radius."""
    largest = float(np.max(np.abs(d))) if d.size else 0.0
    return d * (_RADIUS / largest) if largest > _RADIUS else d


def _solves(factor: Cholesky | None, c: np.ndarray, g: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray] | None:
    """``(H^-1 c, H^-1 g)``, or None where there is no factor or the solves overflow (a
    Hessian that underflowed far along a flat direction, as under separation)."""
    if factor is None:
        return None
    with np.errstate(all="ignore"):
        Hinv_c, Hinv_g = factor.solve(c), factor.solve(g)
        cHc = float(c @ Hinv_c)
    if not (np.all(np.isfinite(Hinv_c)) and np.all(np.isfinite(Hinv_g))
            and math.isfinite(cHc) and cHc > 0.0):
        return None
    return Hinv_c, Hinv_g


def _side(excess: float, decrement: float, cut: float) -> int:
    """Which side of the cut-off the profile at the current ``b`` is on, where that is
    known: -1 below, +1 above, 0 not yet. ``excess = f - f_hat`` at a ``theta`` on the
    constraint (so ``f_p(b) <= f``) and ``decrement`` the KKT model's promised decrease.

    Below where ``f`` itself is; otherwise only where the model's minimum ``f -
    decrement`` is off the cut-off by ten times the decrement. The quadratic model of a
    flat direction (separation) under-promises several-fold: the profile of a Firth
    intercept, its model minimum 0.29 above the cut-off with a decrement of 0.2, fell
    0.06 below it, and a bracket closed there held the bound 0.07 inside the root.
    """
    margin = excess - decrement - cut
    if excess < cut or margin < -10.0 * decrement:
        return -1
    return 1 if margin > 10.0 * decrement else 0


def _next_u(u: float, u_newton: float, u_in: float, u_out: float, cap: float) -> float:
    """The next distance ``u``: the root's Newton step ``u_newton`` where it stays inside
    the bracket ``(u_in, u_out)``, else its midpoint (``u + cap`` where no point above the
    cut-off is known yet), the move at most ``cap``."""
    target = u_newton if u_in < u_newton < u_out else (
        0.5 * (u_in + u_out) if math.isfinite(u_out) else u + cap)
    return u + math.copysign(min(abs(target - u), cap), target - u)


def _kkt_step(g: np.ndarray, Hinv_c: np.ndarray, Hinv_g: np.ndarray, c: np.ndarray,
              gap: float) -> tuple[np.ndarray, float]:
    """The Newton step ``d`` of ``min f`` with ``c^T (theta + d) = c^T theta + gap``, and
    the multiplier ``mu`` (``grad f = mu c`` at the constrained minimum)."""
    mu = (gap + c @ Hinv_g) / (c @ Hinv_c)
    return mu * Hinv_c - Hinv_g, float(mu)


def profile_intervals(objective: ProfiledObjective, theta_hat: np.ndarray, C: np.ndarray,
                      q: float, phi: float = 1.0, *, max_iter: int = 60, tol: float = 1e-10
                      ) -> list[tuple[ProfileBound, ProfileBound]]:
    """The profile interval ``{b : 2 (f_p(b) - f_hat) / phi <= q}`` of each parameter
    ``C[j] @ theta`` (``C``: rows map the solver's coordinates to the reported ones).

    ``theta_hat`` is first polished by one Newton step, so that ``f_hat`` is the
    minimum to rounding whatever the fit's tolerance; the Hessian there is shared by
    every bound's start. Each bound: :func:`profile_bound`.
    """
    theta = np.array(theta_hat, dtype=np.float64)
    f, g, H = objective(theta)
    step = cholesky(H).solve(g)
    polished = theta - step
    f_new, g_new, H_new = objective(polished)
    if math.isfinite(f_new) and f_new <= f:
        theta, f, H = polished, f_new, H_new
    factor = cholesky(H)
    root = math.sqrt(q)
    out = []
    for c in np.asarray(C, dtype=np.float64):
        Hinv_c = factor.solve(c)
        out.append(tuple(profile_bound(objective, theta, f, c, Hinv_c, t, phi,
                                       max_iter=max_iter, tol=tol) for t in (-root, root)))
    return out  # type: ignore[return-value]


def profile_bound(objective: ProfiledObjective, theta_hat: np.ndarray, f_hat: float,
                  c: np.ndarray, Hinv_c: np.ndarray, t: float, phi: float = 1.0, *,
                  max_iter: int = 60, tol: float = 1e-10) -> ProfileBound:
    """The root ``b`` of ``r(b) = t`` on the side of ``sign(t)`` (see the module);
    ``Hinv_c`` is ``H^-1 c`` at ``theta_hat``.

    Starts at the Wald bound ``b_hat + t se`` with ``theta`` on the profile's tangent
    there. Each iteration takes the constrained Newton step at the current ``b``; once
    its decrement is below ``t² / 10`` (the profile there known to a tenth of the
    cut-off) it also moves ``b`` by the root's Newton step, ``theta`` following on the
    tangent. The distance ``u = |b - b_hat|`` stays inside a bracket (below the cut-off
    at ``u_in``, above at ``u_out``, each set only where the side is known,
    :func:`_side`; a step leaving it bisects, one where no point above is known yet at
    most doubles the move; a bracket that closes where ``r`` is not ``t`` is reopened).
    A step to where the objective is not finite, its Hessian not positive definite, or
    (``b`` unchanged) the objective higher is halved. Converged when the decrement and ``|r - t|`` are below ``tol``; ``+-inf``
    (not converged) where no point above the cut-off was found: a flat profile.
    """
    theta = np.array(theta_hat, dtype=np.float64)
    b_hat = float(c @ theta)
    se = math.sqrt(phi * float(c @ Hinv_c))
    side, target = (1.0 if t > 0 else -1.0), abs(t)
    # (the tangent moves theta by |H^-1 c| / c^T H^-1 c per unit of u: within the trust
    # radius, as where the Wald se is huge, separation's flat direction)
    per_u = float(np.max(np.abs(Hinv_c))) / float(c @ Hinv_c)
    u = min(target * se, _RADIUS / per_u)
    u_in, u_out = 0.0, math.inf
    theta = theta + side * u * Hinv_c / float(c @ Hinv_c)
    last: tuple[np.ndarray, float, float] | None = None  # (theta, u, f) before the step
    cap = u  # the largest move of u, doubled after each move, halved with a step
    secant = _Secant(theta.size)
    for it in range(1, max_iter + 1):
        f, g, H = objective(theta)
        factor = secant.factor(theta, g, H) if math.isfinite(f) else None
        solved = _solves(factor, c, g)
        worse = last is not None and last[1] == u and f > last[2]
        if (solved is None or worse) and last is not None:  # (halve the step)
            theta, u = 0.5 * (theta + last[0]), 0.5 * (u + last[1])
            cap *= 0.5
            secant.reset()
            continue
        if solved is None:  # (the start itself: back towards the estimate)
            theta, u = 0.5 * (theta + theta_hat), 0.5 * u
            cap *= 0.5
            continue
        H = secant.hessian
        Hinv_c, Hinv_g = solved
        gap = b_hat + side * u - float(c @ theta)
        d, mu = _kkt_step(g, Hinv_c, Hinv_g, c, gap)
        decrement = float(-(g @ d) - 0.5 * d @ (H @ d))  # f - model minimum (gap ~ 0)
        if decrement < -1e-8 * (1.0 + abs(f)) and last is not None:  # (H lost its digits)
            theta, u = 0.5 * (theta + last[0]), 0.5 * (u + last[1])
            cap *= 0.5
            secant.reset()
            continue
        # (no step can gain more than f - f_hat, the profile being above f_hat: a model
        # that promises more, its Hessian nearly singular far out, is trusted that far)
        region = max(target ** 2, f - f_hat)
        if decrement > region:
            d = d * math.sqrt(region / decrement)
        d = _within_radius(d)
        root = math.sqrt(max(2.0 * (f - max(decrement, 0.0) - f_hat) / phi, 0.0))  # |r|
        if abs(decrement) < tol and abs(root - target) < tol:
            return ProfileBound(b_hat + side * u, it, True)
        u_new = u
        secant.active = decrement < 0.1 * target ** 2  # (a rounding below 0: known)
        if secant.active:  # (the profile here is roughly known: move b)
            side_known = _side(f - f_hat, decrement, 0.5 * phi * target ** 2)
            if side_known < 0:
                u_in = max(u_in, u)
            elif side_known > 0:
                u_out = min(u_out, u)
            slope = side * mu / (phi * root) if root > 0.0 else 0.0  # d|r|/du
            u_newton = u + (target - root) / slope if slope > 0.0 else math.inf
            newton = u_in < u_newton < u_out and abs(u_newton - u) <= cap
            u_new = _next_u(u, u_newton, u_in, u_out, cap)
            if decrement < 1e-11 and abs(u_new - u) < 1e-10 * se \
                    and abs(root - target) > 1e-6:
                # (the bracket closed where r, known to 1e-11, is not t: an end was read
                # from a model that was not converged after all; reopen it)
                u_in, u_out = (u_in, math.inf) if root < target else (0.0, u_out)
                u_new = _next_u(u, u_newton, u_in, u_out, cap)
            elif decrement < 1e-11 and (abs(u_new - u) < 1e-10 * se or (
                    newton and abs(root - target) < 1e-5)):
                # (the profile known to 1e-11 and r within 1e-5 of t: the root's Newton
                # step leaves an error of order 1e-10 se, no pass needed to confirm it;
                # or b moves by less than 1e-10 se: r's rounding, the objective's sum
                # over rows, is all that is left)
                return ProfileBound(b_hat + side * u_new, it, True)
            cap = max(cap, 2.0 * abs(u_new - u))
        # The constrained step to the new b: the old b's step plus the tangent move.
        last = (theta, u, f)
        tangent = side * Hinv_c / float(c @ Hinv_c)
        step = float(np.max(np.abs(tangent))) * abs(u_new - u)
        if step > _RADIUS:  # (b's move shortened to the trust radius)
            u_new = u + (u_new - u) * _RADIUS / step
        theta, u = theta + d + (u_new - u) * tangent, u_new
    if not math.isfinite(u_out):
        return ProfileBound(side * math.inf, max_iter, False)
    return ProfileBound(b_hat + side * u, max_iter, False)


@dataclass(frozen=True)
class ConstrainedMinimum:
    """The minimum of the objective over ``C theta = v``: ``theta``, ``value``, the
    passes it took and whether the decrement fell below the tolerance."""

    theta: np.ndarray
    value: float
    n_iter: int
    converged: bool


def constrained_minimum(objective: ProfiledObjective, theta_hat: np.ndarray, C: np.ndarray,
                        v: np.ndarray, *, max_iter: int = 200, rtol: float = 1e-13
                        ) -> ConstrainedMinimum:
    """``min f(theta)`` subject to ``C theta = v`` (``C``: k x p of rank k; k = 0 is the
    unconstrained minimum), the restricted fit of a likelihood-ratio test.

    Starts on the constraint at the point of the quadratic model at ``theta_hat``
    (``theta_hat + H^-1 C^T (C H^-1 C^T)^-1 (v - C theta_hat)``), then Newton steps in the
    constraint's null space ``theta = theta_0 + N z`` with Armijo backtracking; the
    Hessian is corrected by the gradients' changes (:class:`_Secant`), so that an
    approximate one (Firth's held leverages) still converges superlinearly. Converged
    when the decrement ``g_z^T H_z^-1 g_z / 2`` (the objective's distance to the
    minimum) is below ``rtol (1 + |f|)``.
    """
    C = np.atleast_2d(np.asarray(C, dtype=np.float64))
    theta = np.array(theta_hat, dtype=np.float64)
    p, k = theta.size, C.shape[0] if C.size else 0
    f, g, H = objective(theta)
    if k:
        Hinv_Ct = cholesky(H).solve(C.T).reshape(p, k)
        gap = np.asarray(v, dtype=np.float64) - C @ theta
        theta = theta + Hinv_Ct @ np.linalg.solve(C @ Hinv_Ct, gap)
        f, g, H = objective(theta)
        if not math.isfinite(f):  # (the model's point outside the family's range: the
            # nearest point on the constraint instead)
            theta = theta_hat + C.T @ np.linalg.solve(C @ C.T, gap)
            f, g, H = objective(theta)
    # (an orthonormal basis of C's null space: the last p - k columns of C^T's QR)
    N = np.linalg.qr(C.T, mode="complete")[0][:, k:] if k else np.eye(p)
    secant = _Secant(N.shape[1])
    secant.active = True
    z = np.zeros(N.shape[1])
    theta_0 = theta
    for it in range(1, max_iter + 1):
        gz = N.T @ g
        factor = secant.factor(z, gz, N.T @ H @ N) if math.isfinite(f) else None
        with np.errstate(all="ignore"):
            d = -factor.solve(gz) if factor is not None else gz * np.nan
        if not np.all(np.isfinite(d)):  # (no Newton step: H singular, as under separation)
            return ConstrainedMinimum(theta, f, it, False)
        decrement = -0.5 * float(gz @ d)
        if decrement <= rtol * (1.0 + abs(f)):
            return ConstrainedMinimum(theta, f, it, True)
        t = 1.0
        for _ in range(40):
            trial = theta_0 + N @ (z + t * d)
            f_t, g_t, H_t = objective(trial)
            if math.isfinite(f_t) and f_t <= f - 1e-4 * t * 2.0 * decrement:
                break
            t *= 0.5
        else:  # (no decrease left above f's rounding)
            return ConstrainedMinimum(theta, f, it, decrement <= 1e-8 * (1.0 + abs(f)))
        if t < 1.0:
            secant.reset()
        z, theta, f, g, H = z + t * d, trial, f_t, g_t, H_t
    return ConstrainedMinimum(theta, f, max_iter, False)
