"""50-digit references for ``slopes`` and ``comparisons``, computed without problin.

A model is its design written out by hand in mpmath (one function of a data row per
design column: a formula's transforms, interactions and category indicators), its fitted
parameters (converted exactly from float64) and its inverse link: logistic, probit
(``mp.ncdf``), softmax over the classes (the reference class's logit 0) or the identity.
At ``mp.dps = 50``:

- an average slope is the central difference ``(A(x + h) - A(x - h)) / 2h`` of the
  average prediction ``A`` with ``h = 2^-50 ~ 1e-15``: truncation ``O(h^2)`` ~ 1e-30, rounding
  1e-50 / 1e-15 = 1e-35 (relative);
- a comparison is the average prediction on the changed rows minus that on the others;
- its delta-method standard error is ``sqrt(g^T V g)``, ``V`` the fitted model's
  covariance and ``g`` the gradient of the estimate in the parameters, by the chain rule
  through each row's linear predictors (which are linear in the parameters): each row's
  effect differentiated in each of its designs' linear predictors by forward differences
  of step 1e-20 at 50 digits (truncation ~1e-20; the slope's rounding 1e-35 / 1e-20),
  times that design row.

Rows are dicts of variable -> value; a category is its level's string.
"""
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import mpmath as mp
import numpy as np

DPS = 50
STEP = mp.mpf(2.0 ** -50)  # ~8.9e-16, exact in binary
Row = dict[str, Any]
Column = Callable[[Row], Any]


@dataclass(frozen=True)
class MpModel:
    """``columns``: the design columns (no intercept) in the fitted order; ``mean``:
    ``"logit"``, ``"probit"``, ``"softmax"`` or ``"identity"``; ``free``: the number of
    linear predictors (softmax: the classes but the reference)."""

    columns: Sequence[Column]
    mean: str
    free: int = 1

    def design(self, row: Row) -> list[Any]:
        return [mp.mpf(1)] + [mp.mpf(c(row)) for c in self.columns]

    def eta(self, theta: Sequence[Any], x: Sequence[Any]) -> list[Any]:
        """The linear predictors at design row ``x``."""
        p = len(x)
        return [mp.fdot(theta[k * p:(k + 1) * p], x) for k in range(self.free)]

    def means(self, eta: Sequence[Any]) -> list[Any]:
        """The means at linear predictors ``eta`` (softmax: every class's probability,
        the reference first)."""
        if self.mean == "logit":
            return [1 / (1 + mp.exp(-eta[0]))]
        if self.mean == "probit":
            return [mp.ncdf(eta[0])]
        if self.mean == "identity":
            return list(eta)
        logits = [mp.mpf(0)] + list(eta)
        top = max(logits)
        e = [mp.exp(a - top) for a in logits]
        total = mp.fsum(e)
        return [v / total for v in e]


class Effect:
    """An effect per output averaged over rows: each row's ``(mu(hi) - mu(lo)) /
    divisor`` (times ``x`` for ``kind`` ``*ex``, over ``mu`` at the row for ``ey*``),
    ``hi`` and ``lo`` functions of the row's value of ``name``. Its gradient in the
    parameters follows by the chain rule through each design's linear predictors:
    ``d r / d eta`` by forward differences of step 1e-20 at 50 digits (error ~1e-20),
    times the design row."""

    def __init__(self, model: MpModel, rows: Sequence[Row], name: str,
                 hi: Callable[[Any], Any], lo: Callable[[Any], Any],
                 divisor: Callable[[], Any] = lambda: 1, kind: str = "dydx") -> None:
        self.model, self.rows, self.name = model, rows, name
        self.hi, self.lo, self.divisor, self.kind = hi, lo, divisor, kind

    def _row(self, etas: Sequence[Sequence[Any]], x: Any) -> list[Any]:
        m = self.model
        up, down = m.means(etas[0]), m.means(etas[1])
        r = [(a - b) / self.divisor() for a, b in zip(up, down)]
        if self.kind.endswith("ex"):
            r = [v * x for v in r]
        if self.kind.startswith("ey"):
            r = [v / mu for v, mu in zip(r, m.means(etas[2]))]
        return r

    def value_and_gradient(self, theta: Sequence[Any]) -> tuple[list[Any], list[list[Any]]]:
        """The effect (K,) and its gradient (K, P), at the caller's precision."""
        m, name, h = self.model, self.name, mp.mpf("1e-20")
        value: list[Any] = []
        grad: list[list[Any]] = []
        for row in self.rows:
            designs = [m.design(dict(row, **{name: self.hi(row[name])})),
                       m.design(dict(row, **{name: self.lo(row[name])}))]
            if self.kind.startswith("ey"):  # (the row's own prediction divides)
                designs.append(m.design(row))
            etas = [m.eta(theta, x) for x in designs]
            r = self._row(etas, row[name])
            if not value:
                value = [mp.mpf(0)] * len(r)
                grad = [[mp.mpf(0)] * len(theta) for _ in r]
            value = [a + b for a, b in zip(value, r)]
            p = len(designs[0])
            for d, x in enumerate(designs):
                for l in range(m.free):
                    moved = [list(e) for e in etas]
                    moved[d][l] += h
                    dr = [(a - b) / h for a, b in zip(self._row(moved, row[name]), r)]
                    for k, dk in enumerate(dr):
                        for j, xj in enumerate(x):
                            grad[k][l * p + j] += dk * xj
        n = len(self.rows)
        return [v / n for v in value], [[g / n for g in gk] for gk in grad]


def slope(model: MpModel, rows: Sequence[Row], name: str, kind: str = "dydx") -> Effect:
    """The average of ``d mu / d name`` over ``rows`` (``kind``: or Stata's elasticity
    of one row, ``eyex``, ``dyex``, ``eydx``: times ``x``, over ``mu``, averaged)."""
    return Effect(model, rows, name, lambda v: v + STEP, lambda v: v - STEP,
                  lambda: 2 * STEP, kind)


def comparison(model: MpModel, rows: Sequence[Row], name: str, hi: Callable[[Any], Any],
               lo: Callable[[Any], Any]) -> Effect:
    """The average prediction with ``name`` changed by ``hi`` minus that by ``lo``."""
    return Effect(model, rows, name, hi, lo)


def estimate_and_se(effect: Effect, theta: np.ndarray, covariance: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The effect per output and its delta-method standard error ``sqrt(g^T V g)``."""
    with mp.workdps(DPS):
        value, grads = effect.value_and_gradient([mp.mpf(float(t)) for t in theta])
        V = mp.matrix([[mp.mpf(float(v)) for v in r] for r in np.asarray(covariance)])
        se = [mp.sqrt(max((mp.matrix(g).T * V * mp.matrix(g))[0, 0], mp.mpf(0)))
              for g in grads]
        return np.array([float(v) for v in value]), np.array([float(s) for s in se])
