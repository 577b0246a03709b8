"""The data a plot is drawn over: its numeric columns, which of them are discrete, the
default features, the grid over them and the jitter of discrete values."""
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

__all__ = ["Columns", "columns_of", "resolve_features", "default_features", "importance",
           "plotted_features", "grid", "jitter", "final_step", "subsample"]

# A column with at most this many distinct values is discrete: held at its mode in a
# grid, jittered in a scatter, and chosen as a default feature only after the continuous
# ones. Two values (an indicator) are never chosen by default.
DISCRETE_LEVELS = 10
_LEVEL_SAMPLE = 20_000  # rows read to count a column's levels (evenly spaced)


def final_step(model: Any) -> Any:
    """The last step of a Pipeline, or the model itself."""
    return model[-1] if hasattr(model, "steps") else model


class Columns:
    """The numeric values of ``X`` with its column names (``names``, else a DataFrame's
    columns, else ``x0, x1, ...``) and each column's number of distinct values (up to
    ``DISCRETE_LEVELS + 1``), and a way back to ``X``'s form (:meth:`as_input`)."""

    def __init__(self, X: Any, names: Sequence[str] | None = None) -> None:
        if sp.issparse(X):
            raise TypeError("plots need dense X: a sparse matrix has no grid to draw over; "
                            "pass X.toarray() for a few columns")
        frame = isinstance(X, pd.DataFrame)
        if frame:
            bad = [str(c) for c, t in X.dtypes.items() if not pd.api.types.is_numeric_dtype(t)]
            if bad:
                raise ValueError(f"plots need numeric columns; {bad[:5]} are not: encode them "
                                 "first (the model's indicators)")
        values = np.asarray(X, dtype=np.float64)
        if values.ndim != 2 or values.shape[0] == 0 or values.shape[1] == 0:
            raise ValueError(f"X must be a non-empty 2-D array, got shape {values.shape}")
        if not np.isfinite(values).all():
            row, col = np.argwhere(~np.isfinite(values))[0]
            raise ValueError(f"X holds a value that is not finite (row {row}, column {col})")
        self.values = values
        if names is not None and len(names) != values.shape[1]:
            raise ValueError(f"{len(names)} names for {values.shape[1]} columns")
        self.names = [str(c) for c in (names if names is not None else X.columns if frame
                                       else (f"x{j}" for j in range(values.shape[1])))]
        self._columns = list(X.columns) if frame else None
        sample = values[np.linspace(0, len(values) - 1, min(len(values), _LEVEL_SAMPLE))
                        .astype(int)]
        self.levels = np.array([_levels(sample[:, j]) for j in range(values.shape[1])])

    @property
    def discrete(self) -> np.ndarray:
        """Whether each column has at most ``DISCRETE_LEVELS`` distinct values."""
        return self.levels <= DISCRETE_LEVELS

    def reference(self) -> np.ndarray:
        """Where features not plotted are held: the mode of a discrete column (a real
        level, never 0.47 of an indicator), the mean of a continuous one."""
        ref = self.values.mean(axis=0)
        for j in np.flatnonzero(self.discrete):
            levels, counts = np.unique(self.values[:, j], return_counts=True)
            ref[j] = levels[np.argmax(counts)]
        return ref

    def as_input(self, G: np.ndarray) -> Any:
        """Rows ``G`` in the form of ``X`` (a DataFrame with its columns, or an array)."""
        return G if self._columns is None else pd.DataFrame(G, columns=self._columns)


def columns_of(X: Any) -> Columns:
    """``Columns(X)``: checks X and counts each column's distinct values."""
    return X if isinstance(X, Columns) else Columns(X)


def _levels(x: np.ndarray) -> int:
    return min(np.unique(x).size, DISCRETE_LEVELS + 1)


def resolve_features(features: Sequence[int | str] | int | str, names: Sequence[str],
                     most: int) -> list[int]:
    """Column indices of ``features`` (names or indices); a ``ValueError`` for an unknown
    one, a repeated one, or more than ``most``."""
    wanted = [features] if isinstance(features, (int, str, np.integer)) else list(features)
    if not 1 <= len(wanted) <= most:
        raise ValueError(f"give 1 to {most} features to plot, got {len(wanted)}")
    out = []
    for f in wanted:
        if isinstance(f, (int, np.integer)) and not isinstance(f, bool):
            if not -len(names) <= f < len(names):
                raise ValueError(f"feature index {f} is out of range for {len(names)} features")
            out.append(int(f) % len(names))
        elif str(f) in names:
            out.append(list(names).index(str(f)))
        else:
            raise ValueError(f"unknown feature {f!r}; the features are {list(names)[:20]}")
    if len(set(out)) != len(out):
        raise ValueError(f"features repeat: {wanted}")
    return out


def importance(model: Any, cols: Columns) -> np.ndarray | None:
    """How much each feature moves the model's output: ``|coef|`` summed over classes or
    outputs, per standard deviation of the raw feature (a Pipeline's coefficients are
    already per unit of its transformed, usually standardised, features); None without
    ``coef_`` over the columns."""
    coef = getattr(final_step(model), "coef_", None)
    d = cols.values.shape[1]
    if coef is None or np.shape(coef)[-1] != d:
        return None
    weight = np.abs(np.atleast_2d(np.asarray(coef, dtype=np.float64))).sum(axis=0)
    if not hasattr(model, "steps"):
        weight = weight * cols.values.std(axis=0)
    return np.nan_to_num(weight, nan=0.0)


def default_features(cols: Columns, weight: np.ndarray | None, n: int = 2) -> list[int]:
    """The ``n`` features to plot when none is named: continuous ones first, then those
    with 3 to ``DISCRETE_LEVELS`` levels, never an indicator (two values) or a constant;
    by ``weight`` (largest first) within each group, else in column order. A feature
    correlated beyond ``|r| = 0.9`` with one already chosen comes last (the pair would
    draw a thin diagonal, and holding one while moving the other leaves the data).
    Returned in column order; fewer than ``n`` when there are not enough."""
    order = np.arange(len(cols.names)) if weight is None else \
        np.argsort(-np.asarray(weight), kind="stable")
    continuous = [int(j) for j in order if not cols.discrete[j]]
    ordinal = [int(j) for j in order if cols.discrete[j] and cols.levels[j] > 2]
    chosen: list[int] = []
    for j in continuous + ordinal:
        if len(chosen) < n and not any(_correlated(cols.values, j, k) for k in chosen):
            chosen.append(j)
    spare = [j for j in continuous + ordinal if j not in chosen]
    return sorted(chosen + spare[:n - len(chosen)])


def _correlated(values: np.ndarray, j: int, k: int, most: float = 0.9) -> bool:
    rows = values[:: max(1, len(values) // _LEVEL_SAMPLE)]
    with np.errstate(invalid="ignore", divide="ignore"):  # a constant stretch: r is NaN
        r = np.corrcoef(rows[:, j], rows[:, k])[0, 1]
    return bool(abs(r) > most)


def plotted_features(estimator: Any, cols: Columns,
                     features: Sequence[int | str] | int | str | None, most: int = 2) -> list[int]:
    """``features`` resolved, or the default ones for ``estimator``; a ``ValueError``
    when none is named and no column qualifies."""
    if features is not None:
        return resolve_features(features, cols.names, most)
    chosen = default_features(cols, importance(estimator, cols), most)
    if not chosen:
        raise ValueError("X has no continuous feature to plot by default (only indicators or "
                         "constants): name the features")
    return chosen


def grid(cols: Columns, features: Sequence[int], n: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """Rows over an ``n``-point (per feature) grid spanning the data of ``features`` (5 %
    margin), the other features at :meth:`Columns.reference`; and the grid's axes."""
    axes = []
    for j in features:
        lo, hi = float(cols.values[:, j].min()), float(cols.values[:, j].max())
        pad = 0.05 * (hi - lo) if hi > lo else max(abs(lo), 1.0) * 0.5
        axes.append(np.linspace(lo - pad, hi + pad, n))
    G = np.tile(cols.reference(), (n ** len(features), 1))
    for j, m in zip(features, np.meshgrid(*axes)):
        G[:, j] = m.ravel()
    return G, axes


def jitter(x: np.ndarray, discrete: bool, rng: np.random.Generator,
           width: float = 0.15) -> np.ndarray:
    """``x`` moved by up to ``width`` of the smallest gap between its distinct values when
    ``discrete``, so that points on the same level do not hide each other."""
    levels = np.unique(x)
    if not discrete or levels.size < 2:
        return x
    gap = float(np.min(np.diff(levels)))
    return x + rng.uniform(-width * gap, width * gap, size=x.shape)


def subsample(n: int, most: int, seed: int = 0) -> np.ndarray:
    """At most ``most`` row indices of ``n`` (all of them when ``n <= most``), sorted."""
    if n <= most:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, most, replace=False))
