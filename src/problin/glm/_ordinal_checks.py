"""The ordinal model's checks of its input and of its fit: one clear error or warning each.

* two classes: a warning pointing to the binary models (the ordinal model of two
  classes, fitted all the same: scikit-learn's checks fit two);
* a class listed in ``classes=`` without observations (``encode_classes`` and
  ``check_class_weights`` refuse it where the rows are validated: its cut-points would be
  infinite);
* a user start whose cut-points do not increase;
* separated categories, completely (every row on each side of a cut-point fitted with
  certainty) or quasi-completely (tied rows on the boundary, or a level of a column seen
  in one end category only): the maximum-likelihood estimates do not exist (the slopes
  or the gap run off to infinity), a :class:`~problin.exceptions.SeparationWarning`,
  certified by a linear program where the fit looks divergent.
"""
from typing import Any

import numpy as np

from .._core.model.contract import Objective
from .._core.model.family_ordinal import CumulativeLink, log_interval
from .._core.model.objective_ordinal import OrdinalObjective
from .._core.model.separation import LP_MAX_SIZE
from .._core.model.separation_ordinal import ordinal_separation
from .._core.types import FloatArray
from ..exceptions import ProblinWarning, SeparationWarning, warn_at_caller

__all__ = ["check_start", "check_three_classes", "separated_cuts"]

#: The probability of the other side of a cut-point below which a row is fitted with
#: certainty (a finite maximum-likelihood fit leaves every row of an overlapping
#: category well above it).
CERTAIN = 1e-8


def check_three_classes(classes: np.ndarray) -> None:
    """Warn where there are two classes only (one class is refused where the labels are
    encoded): the model is then binary regression with the cut-point as minus its
    intercept, which the binary models fit with their own diagnostics."""
    if classes.size < 3:
        warn_at_caller(
            f"OrdinalRegression got two classes ({classes.tolist()}): an ordinal model needs "
            "three or more; with two the cumulative-link model is binary regression "
            "(cut-point = -intercept): use LogisticRegression (link='logit') or "
            "ProbitRegression (link='probit')", ProblinWarning)


def check_start(start: Any, n_features: int, classes: np.ndarray) -> FloatArray:
    """A user start ``[coef, cutpoints]``: its length, finite, cut-points increasing."""
    start = np.asarray(start, dtype=np.float64).ravel()
    expected = n_features + classes.size - 1
    if start.size != expected:
        raise ValueError(f"start must hold {n_features} slopes and {classes.size - 1} "
                         f"cut-points ({expected} values), got {start.size}")
    if not np.all(np.isfinite(start)):
        raise ValueError("start must be finite")
    cuts = start[n_features:]
    bad = np.flatnonzero(np.diff(cuts) <= 0)
    if bad.size:
        labels = [str(c) for c in classes]
        pairs = ", ".join(f"{labels[j]}|{labels[j + 1]} = {cuts[j]:g} >= "
                          f"{labels[j + 1]}|{labels[j + 2]} = {cuts[j + 1]:g}" for j in bad)
        raise ValueError(f"the start's cut-points must increase strictly: {pairs}")
    return start


def separated_cuts(objective: Objective[Any], theta: FloatArray, classes: np.ndarray,
                   converged: bool = True) -> list[str]:
    """Warn (SeparationWarning) for the cut-points at which the categories are (quasi-)
    completely separated; rows in memory only (Dask's rows are never in one place: not
    checked). Where the fit looks divergent (not converged, or a row fitted with
    certainty) the linear program of :mod:`~problin._core.model.separation_ordinal`
    decides, tied rows included, up to ``LP_MAX_SIZE`` design entries; beyond, the
    cut-points whose two sides are all fitted with certainty are named."""
    if not isinstance(objective, OrdinalObjective):
        return []
    family, t, design = objective.family, objective.t, objective.design
    p = design.n_params
    eta = objective.linear_predictor(theta)
    a = family.cuts(theta[p:])
    used = np.ones(t.size, dtype=bool) if objective.sample_weight is None \
        else objective.sample_weight > 0
    labels = [str(c) for c in classes]
    bounds = np.concatenate(([-np.inf], a, [np.inf]))
    log_p = log_interval(family.dist, bounds[t + 1] - eta, bounds[t] - eta)
    certain = used & (log_p > np.log1p(-CERTAIN))
    found = _certain_sides(family, eta, a, t, used)
    rows = np.flatnonzero(certain)
    if (not converged or certain.any()) and t.size * p <= LP_MAX_SIZE:
        moved, cuts = ordinal_separation(design.dense_rows(np.arange(t.size))[:, 1:], t,
                                         classes.size, objective.sample_weight)
        found, rows = [j for j in range(a.size) if cuts[j]], np.flatnonzero(moved)
    if found:
        names = ", ".join(f"{labels[j]}|{labels[j + 1]}" for j in found)
        shown = ", ".join(str(r) for r in rows[:10]) + (", ..." if rows.size > 10 else "")
        warn_at_caller(f"the categories are separated at the cut-point(s) {names} "
                       f"({rows.size} row(s) fitted with certainty in the limit: {shown}): "
                       "the maximum-likelihood estimates do not exist (the slopes or "
                       "cut-points run off to infinity); merge the categories, drop the "
                       "separating columns, or use alpha > 0", SeparationWarning)
    return [f"{labels[j]}|{labels[j + 1]}" for j in found]


def _certain_sides(family: CumulativeLink, eta: FloatArray, a: FloatArray, t: np.ndarray,
                   used: np.ndarray) -> list[int]:
    """The cut-points whose two sides are all fitted with certainty (complete separation
    there): from each class's extreme linear predictors, the rows nearest each cut."""
    K = family.n_classes
    highest, lowest = np.full(K, -np.inf), np.full(K, np.inf)
    for k in range(K):
        mine = eta[used & (t == k)]
        if mine.size:
            highest[k], lowest[k] = mine.max(), mine.min()
    found = []
    limit = np.log(CERTAIN)
    for j in range(a.size):
        below = float(np.max(highest[:j + 1]))  # P(y > j) is largest at the largest eta
        above = float(np.min(lowest[j + 1:]))
        if (family.dist.log_sf(np.array([a[j] - below]))[0] < limit
                and family.dist.log_cdf(np.array([a[j] - above]))[0] < limit):
            found.append(j)
    return found
