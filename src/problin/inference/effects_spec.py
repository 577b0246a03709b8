"""What the interpretation methods estimate: the variables, their contrasts, where.

A *variable* is a column of the data a model reads (a formula's ``age``, not its design
columns ``age`` and ``age:children``); it is numeric or categorical (its fitted levels,
the first the reference). Each reported row is an :class:`Estimate`: a function of the
average predictions on counterfactual copies of the data (:mod:`problin.inference.effects`):

- a **slope** of a numeric variable is the central difference
  ``(mu(x + h/2) - mu(x - h/2)) / h`` of the average prediction, through the whole
  encoding (interactions, transforms, splines), with ``h = 1e-4`` times the variable's
  range in the data (``1e-4`` where it is constant), as R's ``marginaleffects``: the
  truncation error is ``O(h^2)`` (about 1e-9 relative), the rounding ``eps / 1e-4``;
- a **comparison** of a numeric variable is ``mu(x + delta/2) - mu(x - delta/2)``
  (``delta`` 1, a number, or ``"sd"`` the variable's standard deviation: a centred change,
  as ``marginaleffects``), or ``mu(max) - mu(min)`` (``"minmax"``); of a categorical one,
  every level set against the reference level, or every pair (``"pairwise"``);
  ``comparison="ratio"`` reports ``mean mu(hi) / mean mu(lo)`` (``marginaleffects``'
  ``"ratioavg"``: the ratio of the average predictions);
- a **prediction** is the average prediction itself.

``at`` chooses the rows: the observed data (average effects), their ``"mean"`` or
``"median"`` profile (numeric variables at their mean or median, categorical ones at their
most frequent level), or a grid (a dict of values per variable, every combination of
them; or a DataFrame, its rows), the others at their means or modes, one result per grid
row; ``by`` averages within groups (of the data's rows, or of the grid's).
"""
import itertools
import re
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from .effects import Variant
from .effects_sparse import Rows, SparseRows

__all__ = ["DataEncoding", "Estimate", "RowContrast", "comparison_estimates", "groups",
           "hypothesis_matrix", "plain_comparisons", "plain_slopes", "profile",
           "slope_estimates", "variant"]

FloatArray = NDArray[np.float64]
STEP = 1e-4  # a slope's step, relative to the variable's range
OBSERVED: Hashable = ("observed",)


@dataclass(frozen=True)
class DataEncoding:
    """The data as the model's variables: the frame, each variable's levels (None for a
    numeric one), the encoding of a frame into the model's design columns, and the
    numeric variables that are one design column as they are (``linear``: name ->
    column; their changes are shifts of the linear predictor, no encoding needed)."""

    frame: Rows
    variables: dict[str, list[Any] | None]
    design: Any  # Callable[[pd.DataFrame], FloatArray]
    linear: dict[str, int] = field(default_factory=dict)

    def shifts(self, keys: Iterable[Hashable]) -> dict[Hashable, tuple[int, float, bool]]:
        """The variants among ``keys`` that add to one of the ``linear`` columns:
        ``(column, delta, whether it is a slope's step)``."""
        return {key: (self.linear[key[1]], float(key[2]), key[0] == "nudge") for key in keys
                if isinstance(key, tuple) and key[0] in ("add", "nudge") and
                key[1] in self.linear}


SLOPES = {"dydx": "dY/dX", "eyex": "eY/eX", "dyex": "dY/eX", "eydx": "eY/dX"}


@dataclass(frozen=True)
class RowContrast:
    """A row's ``(mu[hi] - mu[lo]) / divisor`` (``mu[hi]`` where ``lo`` is None), as an
    elasticity where ``slope`` says (Stata's ``margins, eyex()``...; statsmodels'
    ``get_margeff(method=)``): times the row's ``x`` (``ex``), over its prediction on
    the observed data (``ey``). A :class:`~problin.inference.effects.RowFunction`."""

    hi: Hashable
    lo: Hashable | None = None
    divisor: float = 1.0
    slope: str = "dydx"
    variable: str = ""

    @property
    def keys(self) -> tuple[Hashable, ...]:
        read = (self.hi,) if self.lo is None else (self.hi, self.lo)
        return read + ((OBSERVED,) if self.slope.startswith("ey") else ())

    def __call__(self, mu: dict[Hashable, FloatArray], block: Rows
                 ) -> tuple[FloatArray, dict[Hashable, FloatArray]]:
        if self.lo is None:
            return mu[self.hi], {self.hi: np.ones_like(mu[self.hi])}
        r = (mu[self.hi] - mu[self.lo]) / self.divisor
        scale = np.ones_like(r)
        if self.slope.endswith("ex"):
            scale = scale * _numeric(block, self.variable)[:, None]
        mu0 = mu[OBSERVED] if self.slope.startswith("ey") else None
        if mu0 is not None:
            scale = scale / mu0
        c_hi = scale / self.divisor
        cotangents: dict[Hashable, FloatArray] = {self.hi: c_hi, self.lo: -c_hi}
        r = r * scale
        if mu0 is not None:  # d r / d mu0 = -r / mu0 (the observed prediction may be hi)
            cotangents[OBSERVED] = cotangents.get(OBSERVED, 0.0) - r / mu0
        return r, cotangents


@dataclass(frozen=True)
class Estimate:
    """One reported row: its one row function's average, or the ratio of the averages
    of two (``ratio``: ``mean mu[hi] / mean mu[lo]``)."""

    term: str
    contrast: str
    parts: tuple[RowContrast, ...]
    ratio: bool = False

    def value(self, A: FloatArray, J: FloatArray) -> tuple[FloatArray, FloatArray]:
        """The estimate per output (K,) and its Jacobian (K, P), from its parts'
        averages ``A`` (parts, K) and Jacobians ``J`` (parts, K, P)."""
        if not self.ratio:
            return A[0], J[0]
        r = self.point(A)
        return r, J[0] / A[1][:, None] - (r / A[1])[:, None] * J[1]

    def point(self, A: FloatArray) -> FloatArray:
        """The estimate from its parts' averages ``A`` (..., parts, K): shape (..., K)."""
        return A[..., 0, :] / A[..., 1, :] if self.ratio else A[..., 0, :]


def _contrast(term: str, label: str, hi: Hashable, lo: Hashable, ratio: bool,
              divisor: float = 1.0, slope: str = "dydx") -> Estimate:
    if ratio:
        return Estimate(term, label, (RowContrast(hi), RowContrast(lo)), True)
    return Estimate(term, label, (RowContrast(hi, lo, divisor, slope, term),))


def plain_slopes(functions: Sequence[Any], shifts: dict[Hashable, tuple[int, float, bool]],
                 kinds: Sequence[str] = ("dydx",)) -> dict[int, tuple[int, str]]:
    """The functions that are a slope (of a kind in ``kinds``) along one design column
    as it is (index -> ``(column, kind)``): the central difference of two nudges of that
    column, which :func:`~problin.inference.effects.average_rows` sums for every
    variable at once."""
    out: dict[int, tuple[int, str]] = {}
    for f, part in enumerate(functions):
        if not isinstance(part, RowContrast) or part.slope not in kinds or part.lo is None:
            continue
        hi, lo = shifts.get(part.hi), shifts.get(part.lo)
        if hi is not None and lo is not None and hi[2] and lo[2] and hi[0] == lo[0] \
                and hi[1] - lo[1] == part.divisor:
            out[f] = (hi[0], part.slope)
    return out


def plain_comparisons(functions: Sequence[Any],
                      shifts: dict[Hashable, tuple[int, float, bool]]
                      ) -> dict[int, tuple[int, float]]:
    """The functions that are a centred difference ``mu(x_j + a) - mu(x_j - a)`` along one
    design column as it is (index -> ``(column, a)``; not a slope's nudges), which
    :func:`~problin.inference.effects.average_rows` may take from one evaluation per row
    for every variable (:mod:`~problin.inference.effects_centred`)."""
    out: dict[int, tuple[int, float]] = {}
    for f, part in enumerate(functions):
        if not isinstance(part, RowContrast) or part.slope != "dydx" or part.lo is None \
                or part.divisor != 1.0:
            continue
        hi, lo = shifts.get(part.hi), shifts.get(part.lo)
        if hi is not None and lo is not None and not hi[2] and not lo[2] and \
                hi[0] == lo[0] and hi[1] == -lo[1]:
            out[f] = (hi[0], hi[1])
    return out


def variant(key: Hashable) -> Variant:
    """The counterfactual copy of a block a key names: ``("observed",)``,
    ``("add", variable, delta)`` (``"nudge"``: the same, a slope's small step) or
    ``("set", variable, value)``."""
    assert isinstance(key, tuple)
    if key[0] == "observed":
        return lambda block: block
    kind, name, amount = key

    def change(block: Rows) -> Rows:
        out = block.copy(deep=False)
        column = block[name]
        if kind in ("add", "nudge"):
            out[name] = column.to_numpy(dtype=np.float64) + amount
        elif isinstance(column.dtype, pd.CategoricalDtype):
            out[name] = pd.Categorical([amount] * len(block),
                                       categories=column.cat.categories)
        else:
            out[name] = pd.Series([amount] * len(block), index=block.index)
        return out
    return change


def check_variables(encoding: DataEncoding, variables: Any) -> list[str]:
    """The variables asked for (all of the model's where None), each checked."""
    known = list(encoding.variables)
    if variables is None:
        return known
    asked: list[Any] = ([variables] if isinstance(variables, (str, int, np.integer))
                        else list(variables))
    # (an integer: the variable at that position, as a sparse matrix's columns are named
    # x0, x1, ... or by the model's feature_names_in_)
    names: list[str] = [known[v] if isinstance(v, (int, np.integer)) and
                        not isinstance(v, bool) and 0 <= v < len(known) else v for v in asked]
    unknown = [v for v in names if v not in encoding.variables]
    if unknown:
        raise ValueError(f"variables {unknown} are not variables of the model; its "
                         f"variables are {known}")
    return names


def _numeric(frame: Rows, name: str) -> FloatArray:
    try:
        return frame[name].to_numpy(dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"variable {name!r} is not numeric") from None


def _spreads(frame: Rows, names: Sequence[str]) -> dict[str, float]:
    """Each numeric variable's range, all columns in one reduction (a frame of one
    float block is read as it lies in memory, not column by column)."""
    if not names or len(frame) == 0:
        return dict.fromkeys(names, 0.0)
    if isinstance(frame, SparseRows):
        return frame.spreads(names)
    try:
        x = frame[list(names)].to_numpy(dtype=np.float64)
    except (TypeError, ValueError):  # (names the column that is not numeric)
        for name in names:
            _numeric(frame, name)
        raise  # pragma: no cover - one of them raised
    return dict(zip(names, (np.max(x, axis=0) - np.min(x, axis=0)).tolist()))


def slope_estimates(encoding: DataEncoding, names: Sequence[str], slope: str = "dydx"
                    ) -> list[Estimate]:
    """Central differences for numeric variables (as elasticities where ``slope`` says),
    reference contrasts for categorical ones."""
    if slope not in SLOPES:
        raise ValueError(f"slope must be one of {list(SLOPES)}, got {slope!r}")
    out: list[Estimate] = []
    spreads = _spreads(encoding.frame, [n for n in names if encoding.variables[n] is None])
    for name in names:
        levels = encoding.variables[name]
        if levels is not None:
            out.extend(_level_contrasts(name, levels, "reference", False))
            continue
        spread = spreads[name]
        h = STEP * spread if spread > 0 else STEP
        out.append(_contrast(name, SLOPES[slope], ("nudge", name, h / 2),
                             ("nudge", name, -h / 2), False, h, slope))
    return out


def _level_contrasts(name: str, levels: list[Any], how: str, ratio: bool
                     ) -> list[Estimate]:
    if how not in ("reference", "pairwise"):
        raise ValueError(f"levels must be 'reference' or 'pairwise', got {how!r}")
    pairs = ([(levels[0], b) for b in levels[1:]] if how == "reference"
             else list(itertools.combinations(levels, 2)))
    sign = " / " if ratio else " - "
    return [_contrast(name, f"{b}{sign}{a}", ("set", name, b), ("set", name, a), ratio)
            for a, b in pairs]


DIRECTIONS = ("center", "forward")


def comparison_estimates(encoding: DataEncoding, names: Sequence[str], change: Any,
                         levels: str, ratio: bool, direction: str = "center"
                         ) -> list[Estimate]:
    """Discrete changes: numeric variables by ``change`` (a number, ``"sd"`` or
    ``"minmax"``; centred on each row's value, or from it, ``direction="forward"``),
    categorical ones by ``levels`` (``"reference"``, ``"pairwise"``)."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'center' or 'forward', got {direction!r}")
    out: list[Estimate] = []
    for name in names:
        var_levels = encoding.variables[name]
        if var_levels is not None:
            out.extend(_level_contrasts(name, var_levels, levels, ratio))
            continue
        if isinstance(change, str) and change == "minmax":
            x = _numeric(encoding.frame, name)
            lo, hi = float(np.min(x)), float(np.max(x))
            out.append(_contrast(name, f"max{' / ' if ratio else ' - '}min", ("set", name, hi),
                                 ("set", name, lo), ratio))
            continue
        if isinstance(change, str) and change == "sd":
            x = _numeric(encoding.frame, name)
            delta, label = float(np.std(x, ddof=1)) if x.size > 1 else 0.0, "+sd"
        elif isinstance(change, (int, float)) and not isinstance(change, bool) and \
                np.isfinite(change) and change != 0:
            delta, label = float(change), f"+{change:g}"
        else:
            raise ValueError(f"change must be a nonzero number, 'sd' or 'minmax', got "
                             f"{change!r}")
        if direction == "forward":  # (x + delta against x itself: Stata's margeff, count)
            out.append(_contrast(name, f"x{label} - x" if not ratio else f"x{label} / x",
                                 ("add", name, delta), OBSERVED, ratio))
            continue
        out.append(_contrast(name, label, ("add", name, delta / 2), ("add", name, -delta / 2),
                             ratio))
    return out


def _typical(frame: Rows, name: str, levels: list[Any] | None, how: str) -> Any:
    """A variable's representative value: its mean or median, or its most frequent level."""
    if isinstance(frame, SparseRows):  # (a sparse column's, with its implicit zeros)
        return frame.typical(name, how)
    series = frame[name]
    if levels is None:
        x = series.to_numpy(dtype=np.float64)
        return float(np.mean(x) if how == "mean" else np.median(x))
    counts = series.value_counts(sort=False)
    return max(levels, key=lambda v: (counts.get(v, 0), -levels.index(v)))


def profile(encoding: DataEncoding, at: Any) -> tuple[pd.DataFrame, list[str]]:
    """The rows of ``at`` (``"mean"``, ``"median"``, a dict grid, every combination of
    its values, or a DataFrame grid, its rows as they are) and the names of the grid's
    columns (none for a profile); the variables the grid does not set are at their means
    (numeric) or modes (categorical)."""
    frame = encoding.frame
    how = "mean"
    named: list[str] = []
    settings: list[dict[str, Any]] = [{}]
    if isinstance(at, str):
        if at not in ("mean", "median"):
            raise ValueError(f"at must be None, 'mean', 'median', a dict or a DataFrame, "
                             f"got {at!r}")
        how = at
    elif isinstance(at, (dict, pd.DataFrame)):
        named = [str(k) for k in at]
        unknown = [k for k in named if k not in encoding.variables]
        if unknown:
            raise ValueError(f"at names {unknown}, which are not variables of the model "
                             f"({list(encoding.variables)})")
        if isinstance(at, pd.DataFrame):
            if len(at) == 0 or len(set(named)) < len(named):
                raise ValueError("an at= DataFrame needs at least one row and distinct "
                                 f"column names, got {len(at)} rows of {named}")
            settings = [dict(zip(named, values)) for values in
                        at.itertuples(index=False, name=None)]
        else:
            grid = [list(v) if isinstance(v, (list, tuple, np.ndarray, pd.Series)) else [v]
                    for v in at.values()]
            settings = [dict(zip(named, values, strict=True))
                        for values in itertools.product(*grid)]
    else:
        raise TypeError(f"at must be None, 'mean', 'median', a dict or a DataFrame, got "
                        f"{type(at).__name__}")
    base = {name: _typical(frame, name, levels, how)
            for name, levels in encoding.variables.items() if name not in named}
    rows = [dict(base, **setting) for setting in settings]
    out = pd.DataFrame(rows, columns=list(frame.columns.intersection(
        list(encoding.variables))) or None)
    for name in out.columns:  # (keep category dtypes: their fitted categories)
        dtype = frame.dtypes[name]
        if isinstance(dtype, pd.CategoricalDtype):
            out[name] = pd.Categorical(out[name], categories=dtype.categories)
    return out, named


def groups(frame: Rows, by: Any) -> tuple[list[str], list[tuple[Any, NDArray[np.intp]]]]:
    """The ``by`` columns and ``(label, rows)`` of each group (one of all rows for None)."""
    if by is None:
        return [], [((), np.arange(len(frame)))]
    names = [by] if isinstance(by, str) else list(by)
    missing = [b for b in names if b not in frame.columns]
    if missing:
        raise ValueError(f"by names columns the data do not have: {missing}")
    found = frame[names].groupby(names if len(names) > 1 else names[0], sort=True,
                                 observed=True).indices
    return names, [(k if isinstance(k, tuple) else (k,), np.asarray(v)) for k, v in
                   found.items()]


def row_weights(frame: Rows, sample_weight: Any) -> FloatArray:
    """Row weights: ones, an array, or the name of a column of the data."""
    n = len(frame)
    if sample_weight is None:
        return np.ones(n)
    w = frame[sample_weight] if isinstance(sample_weight, str) else sample_weight
    w = np.asarray(w, dtype=np.float64).ravel()
    if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError(f"sample_weight must be {n} finite non-negative weights with a "
                         "positive sum")
    return w


def needed(estimates: Iterable[Estimate]) -> list[Hashable]:
    """The variants the estimates read, each once, in order."""
    keys: dict[Hashable, None] = {}
    for e in estimates:
        for part in e.parts:
            keys.update(dict.fromkeys(part.keys))
    return list(keys)


_TERM = re.compile(r"\s*([+-]?)\s*(?:(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)\s*\*?)?\s*b(\d+)\s*")


def hypothesis_matrix(hypothesis: Any, labels: Sequence[str]
                      ) -> tuple[FloatArray, FloatArray, list[str]]:
    """``(R, q, names)``: the tests of ``R b = q`` on the reported estimates ``b``
    (``b1`` the first row), as R's ``marginaleffects``: ``"pairwise"`` (each row minus
    each earlier one), ``"reference"`` (each row minus the first) or a linear equation
    such as ``"b2 - b1 = 0"`` or ``"b1 + 2 * b3 = 1"``."""
    n = len(labels)
    if hypothesis in ("pairwise", "reference"):
        pairs = ([(0, j) for j in range(1, n)] if hypothesis == "reference"
                 else list(itertools.combinations(range(n), 2)))
        R = np.zeros((len(pairs), n))
        for row, (i, j) in enumerate(pairs):
            R[row, j], R[row, i] = 1.0, -1.0
        return R, np.zeros(len(pairs)), [f"({labels[j]}) - ({labels[i]})" for i, j in pairs]
    if not isinstance(hypothesis, str):
        raise TypeError(f"hypothesis must be 'pairwise', 'reference' or an equation such "
                        f"as 'b2 - b1 = 0', got {type(hypothesis).__name__}")
    lhs, _, rhs = hypothesis.partition("=")
    try:
        q = float(rhs) if rhs.strip() else 0.0
    except ValueError:
        raise ValueError(f"hypothesis {hypothesis!r}: the right-hand side must be a number"
                         ) from None
    R = np.zeros((1, n))
    pos = 0
    for match in _TERM.finditer(lhs):
        if match.start() != pos or (pos > 0 and not match.group(1)):
            break
        pos = match.end()
        index = int(match.group(3)) - 1
        if not 0 <= index < n:
            raise ValueError(f"hypothesis {hypothesis!r} names b{index + 1}; the estimates "
                             f"are b1..b{n}")
        R[0, index] += (-1.0 if match.group(1) == "-" else 1.0) * float(match.group(2) or 1)
    if pos != len(lhs) or not R.any():
        raise ValueError(f"hypothesis {hypothesis!r} is not a linear equation in b1..b{n} "
                         "such as 'b2 - b1 = 0', nor 'pairwise' or 'reference'")
    return R, np.array([q]), [hypothesis.strip()]
