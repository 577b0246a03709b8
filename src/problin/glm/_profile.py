"""Profile-likelihood intervals for ``summary(ci="profile")`` of the GLM estimators.

Each estimator gives what a refit with one parameter fixed needs: the objective the fit
minimised (the negative (penalised) log-likelihood at unit dispersion) rebuilt on the
training rows, the estimate in that objective's coordinates and the linear map from them
to the reported parameters (the fit's column basis). The bounds are the roots of the
signed root deviance (:mod:`problin._core.solvers.profile`), the same for every model.

The cut-off is R's (``MASS``/``stats`` ``confint.glm`` over ``profile.glm``): the
profile deviance divided by the fitted dispersion, ``(D_p(b) - D) / phi``, against the
normal quantile ``z²`` at ``level``, also where the dispersion is estimated (Gamma,
Gaussian, inverse Gaussian: R profiles ``tau = sqrt((D_p - D) / phi)`` with ``phi``
the fit's dispersion held fixed and cuts it at ``qnorm``); ``2 (l_hat - l_p)`` for the
classifiers and for the families whose dispersion is 1. Firth fits profile the
penalised log-likelihood, as R's ``logistf`` does by default.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._core.model.basis import ColumnBasis
from .._core.solvers.profile import ProfiledObjective, profile_intervals
from ..exceptions import ConvergenceWarning

__all__ = ["CI_KINDS", "Refit", "check_ci", "profile_table", "raw_map"]

#: The intervals ``summary(ci=...)`` shows.
CI_KINDS = ("wald", "profile")


def check_ci(ci: str, X: Any, y: Any) -> None:
    """One clear error for an unknown ``ci`` or a profile asked for without the rows."""
    if ci not in CI_KINDS:
        raise ValueError(f"ci must be one of {CI_KINDS}; got {ci!r}")
    if ci == "profile" and (X is None or y is None):
        raise ValueError("ci='profile' refits the model with each parameter held fixed: "
                         "pass the training rows, summary(ci='profile', X=X, y=y) (the "
                         "estimator keeps no copy of its training data)")


def raw_map(basis: ColumnBasis | None, p: int) -> np.ndarray:
    """The matrix ``T`` with ``theta_raw = T theta`` (the basis' map is linear)."""
    if basis is None:
        return np.eye(p)
    return np.column_stack([basis.to_raw(e) for e in np.eye(p)])


@dataclass(frozen=True)
class Refit:
    """What the refits of a fitted model on its training rows (profile intervals,
    likelihood-ratio tests) need: the objective it minimised (the negative (penalised)
    log-likelihood at unit dispersion) as ``theta -> (f, grad, Hessian)``, the estimate
    in its coordinates, the map ``T`` to the reported parameters (``T @ theta``), the
    dispersion ``phi`` that scales the deviance and whether the objective is penalised."""

    function: ProfiledObjective
    theta: np.ndarray
    T: np.ndarray
    phi: float
    penalised: bool

    @classmethod
    def of(cls, objective: Any, theta: np.ndarray, T: np.ndarray, phi: float,
           penalised: bool) -> "Refit":
        """The refit of an engine objective (``value_grad_hess``)."""
        return cls(_vgh(objective), np.asarray(theta, dtype=np.float64), T, float(phi),
                   bool(penalised))


def _vgh(objective: Any) -> ProfiledObjective:
    # (the penalty's reported curvature, Firth's held-leverage one, at every call: its
    # steps switch to the exact Hessian once a step shows the held one off, so the
    # Hessian at a point depended on the calls before it, and a start nudged by 1e-13
    # took another path; the solver's secant correction restores the convergence)
    def call(theta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        try:
            with np.errstate(all="ignore"), objective.penalty.reported_curvature():
                f, g, H = objective.value_grad_hess(theta,
                                                    objective.linear_predictor(theta))[:3]
        except np.linalg.LinAlgError:  # (a penalty's information singular out there)
            return np.inf, theta * np.nan, np.full((theta.size, theta.size), np.nan)
        f = float(f)
        if not (np.isfinite(f) and np.all(np.isfinite(g)) and np.all(np.isfinite(H))):
            f = np.inf
        return f, g, H
    return call


def profile_table(table: pd.DataFrame, refit: Refit, level: float) -> pd.DataFrame:
    """``table`` (a Wald ``summary()``) with ``ci_low, ci_high`` the profile bounds of
    its parameters (``refit.T @ theta``); parameters not identified keep NaN.
    ``attrs["ci"]`` says which intervals are shown."""
    q = float(stats.chi2.ppf(level, 1))
    phi = refit.phi
    keep = np.isfinite(table["std_err"].to_numpy(dtype=np.float64))
    bounds = profile_intervals(refit.function, refit.theta, refit.T[keep], q, phi)
    out = table.copy()
    low = np.full(len(table), np.nan)
    high = np.full(len(table), np.nan)
    low[keep] = [lo.value for lo, _ in bounds]
    high[keep] = [hi.value for _, hi in bounds]
    out["ci_low"], out["ci_high"] = low, high
    names = [str(name) for name in table.index[keep]]
    flat = [n for n, pair in zip(names, bounds, strict=True)
            if any(not b.converged and np.isinf(b.value) for b in pair)]
    stuck = [n for n, pair in zip(names, bounds, strict=True)
             if any(not b.converged and np.isfinite(b.value) for b in pair)]
    if stuck:
        warnings.warn(f"profile intervals: the bounds of {', '.join(stuck)} did not converge "
                      "(shown as last iterated)", ConvergenceWarning, stacklevel=3)
    out.attrs.update(table.attrs)
    out.attrs["ci"] = "profile"
    note = (f"Profile-likelihood {100 * level:g}% intervals"
            + (" (of the penalised likelihood)" if refit.penalised else "")
            + ("" if phi == 1.0 else f", the deviance scaled by the dispersion {phi:.6g}")
            + ".")
    if flat:
        note += (" No bound found for " + ", ".join(flat) + " (shown as inf): the profile "
                 "stays below the cut-off as far as it was followed, as under separation "
                 "(penalty='firth' gives finite ones).")
    out.attrs["ci_note"] = note
    return out
