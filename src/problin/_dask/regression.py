"""Dask input for the GLM regressors: targets, weights and offsets carried in the chunks.

A regressor's per-row arguments (``y``, ``sample_weight``, ``var_weights``, ``offset``,
``exposure``, ``trials``) are row-aligned with X's chunks and turned, chunk by chunk, into
one float array of four columns (:data:`TARGETS`: the family's ``y``, the offset with
``log(exposure)``, the frequency and the variance weights) by the estimator's own
in-memory validation (``validate``: its errors name the chunk and its rows). Every pass
then builds the chunk's in-memory :class:`~problin._core.model.objective.GLMObjective`
(the regressor's family, its offset and weights) and sums its small results, as the
classifiers' passes do (:mod:`problin._dask.objective`): the fit is one pass per Newton
step; the statistics (deviance, Pearson's chi², log-likelihoods, the null model) are sums
over chunks of the same per-row functions as in memory, at the global dispersion.

What needs all rows in one place is not done here: the boundary linear program (rows
fitted at an end of the mean's range), per-row leverages (HC2, HC3) and cluster sums; the
estimators refuse them for Dask input. Firth's penalty needs only sums of the leverages'
terms: each chunk's (``fisher_rows.DaskFisherRows``).
"""
import functools
from collections.abc import Callable
from typing import Any, NoReturn, Protocol

import numpy as np
from numpy.typing import NDArray

from .._core.model.design import Design
from .._core.model.exponential_family import ExponentialFamily
from .._core.model.fitted_rows import FittedRows, RowSum
from .._core.model.objective import GLMObjective
from .._core.model.penalty import GaussianPenalty, Penalty
from .._core.model.penalty_firth import Jeffreys, MemoryFisherRows
from .chunks import align_rows, dask_features, reduce_chunks
from .design import DaskDesign, Sums, _ChunkReader, _chunk_task
from .fisher_rows import dask_jeffreys
from .objective import DaskGLMObjective, LazyEta
from .._core.model.exponential_family import Family

__all__ = ["DaskRegressionRows", "NullAt", "TARGETS", "dask_regression_rows"]

#: The columns of a chunk's targets: y, offset (with log exposure), frequency, variance.
TARGETS = ("y", "offset", "frequency", "variance")
_ARGUMENTS = ("sample_weight", "offset", "exposure", "var_weights", "trials")


class ChunkData(Protocol):
    """What the estimator's validation returns for a chunk (its ``RegressionData``)."""

    @property
    def y(self) -> NDArray[np.float64]: ...
    @property
    def frequency(self) -> NDArray[np.float64] | None: ...
    @property
    def variance(self) -> NDArray[np.float64] | None: ...
    @property
    def offset(self) -> NDArray[np.float64] | None: ...


#: ``validate(y, n_rows, sample_weight, offset, exposure, var_weights, trials)``.
Validate = Callable[..., ChunkData]


def _targets_block(*blocks: Any, names: tuple[str, ...], validate: Validate,
                   block_info: Any = None) -> NDArray[np.float64]:
    yb = np.asarray(blocks[0])
    n = yb.shape[0]
    given = dict(zip(names, (np.asarray(b) for b in blocks[1:])))
    try:
        data = validate(yb, n, *(given.get(a) for a in _ARGUMENTS))
    except (ValueError, TypeError) as e:
        where = (block_info or {}).get(0, {})
        k = where.get("chunk-location", ("?",))[0]
        lo = where.get("array-location", [(0, n)])[0][0]
        raise type(e)(f"In chunk {k} (rows {lo} to {lo + n - 1}; the row numbers below "
                      f"count from {lo}): {e}") from None
    out = np.empty((n, 4))
    out[:, 0] = data.y
    for j, v, default in ((1, data.offset, 0.0), (2, data.frequency, 1.0),
                          (3, data.variance, 1.0)):
        out[:, j] = default if v is None else v
    return out


class _Columns:
    """Which of a chunk's target columns were given (the rest: 0 or 1, left out so
    that each chunk's objective is the in-memory one's, weights None where all are 1)."""

    def __init__(self, offset: bool, frequency: bool, variance: bool) -> None:
        self.offset, self.frequency, self.variance = offset, frequency, variance

    def weights(self, T: NDArray[np.float64]) -> NDArray[np.float64] | None:
        if self.frequency and self.variance:
            return T[:, 2] * T[:, 3]
        if self.frequency or self.variance:
            return np.ascontiguousarray(T[:, 2 if self.frequency else 3])
        return None

    def offsets(self, T: NDArray[np.float64]) -> NDArray[np.float64] | None:
        return np.ascontiguousarray(T[:, 1]) if self.offset else None


class _TargetsReader(_ChunkReader):
    """A chunk as ``(Design, its targets (n, 4), its weights)``."""

    def __init__(self, intercept: bool, basis: Any, columns: _Columns) -> None:
        self.intercept, self.basis, self.columns = intercept, basis, columns

    def __call__(self, k: int, lo: int, Xb: Any, yb: Any, wb: Any,
                 check: bool) -> tuple[Design, np.ndarray, np.ndarray | None]:
        T = np.asarray(yb, dtype=np.float64)
        return self.design(k, lo, Xb, check), T, self.columns.weights(T)


def _regression_model(design: Design, T: np.ndarray, w: np.ndarray | None, *,
                      family: Family, information: str,
                      columns: _Columns) -> GLMObjective[Family]:
    return GLMObjective(design, family, np.ascontiguousarray(T[:, 0]), w,
                        information=information, offset=columns.offsets(T))


def _fisher_rows(design: Design, T: np.ndarray, w: np.ndarray | None, *,
                 family: ExponentialFamily, columns: _Columns) -> MemoryFisherRows:
    return MemoryFisherRows(design, family, np.ascontiguousarray(T[:, 0]), w,
                            columns.offsets(T))


class DaskRegressionDesign(DaskDesign):
    """``[1, X]`` of a row-chunked Dask array with the regression targets of its rows
    (``y``: the Dask array of :data:`TARGETS`; no ``sample_weight`` of its own: the
    weights are columns of the targets)."""

    def __init__(self, X: Any, targets: Any, columns: _Columns, total_weight: float,
                 intercept: bool) -> None:
        self.columns = columns
        super().__init__(X, targets, None, np.zeros(1), np.array([total_weight]), intercept,
                         basis_rule="auto")

    def _make_reader(self, basis: Any) -> _ChunkReader:
        return _TargetsReader(self.intercept, basis, self.columns)

    def gather(self, rows: Any) -> tuple[Design, np.ndarray, np.ndarray | None]:
        """``(X[rows], targets[rows], weights[rows])`` in memory (a few rows: the basis's
        sample, a sketch)."""
        design, T, _ = super().gather(rows)
        return design, T, self.columns.weights(T)

    def _gathered(self, t: np.ndarray) -> np.ndarray:
        return t


class DaskRegressionObjective(DaskGLMObjective):
    """The regressor's :class:`~problin._core.model.objective.GLMObjective` on Dask
    chunks (its family, the chunk's offset and weights), one pass per question."""

    design: DaskRegressionDesign

    def __init__(self, design: DaskRegressionDesign, family: ExponentialFamily,
                 prior: Penalty | None, information: str) -> None:
        super().__init__(design, family, information=information, penalty=prior)
        self._model = functools.partial(_regression_model, family=family,
                                        information=information, columns=design.columns)

    def _in_memory(self, design: Design, t: np.ndarray, w: np.ndarray, penalty: Penalty
                   ) -> GLMObjective[Family]:
        return GLMObjective(design, self.family, np.ascontiguousarray(t[:, 0]), w,
                            information=self.information, penalty=penalty,
                            offset=self.design.columns.offsets(t))


class NullAt:
    """The intercept-only model on Dask: its intercept ``b`` and, without an offset, its
    one mean (with one, each chunk's means are ``g^-1(b + o)``)."""

    def __init__(self, intercept: float, mean: float | None) -> None:
        self.intercept, self.mean = intercept, mean

    def means(self, family: ExponentialFamily, offset: NDArray[np.float64] | None,
              n: int) -> NDArray[np.float64]:
        if self.mean is not None:
            return np.full(n, self.mean)
        assert offset is not None
        return family.link_function.inverse(self.intercept + offset)


class _Chunk:
    """A chunk's rows for the statistics: its objective, targets and weights."""

    def __init__(self, obj: GLMObjective[Family], T: NDArray[np.float64], columns: _Columns,
                 family: ExponentialFamily) -> None:
        self.obj, self.y, self.w, self.offset = obj, obj.y, obj.sample_weight, obj.offset
        self.family = family
        self.frequency = np.ascontiguousarray(T[:, 2]) if columns.frequency else None
        self.variance = np.ascontiguousarray(T[:, 3]) if columns.variance else None

    def mean(self, v: np.ndarray) -> NDArray[np.float64]:
        eta = self.obj.linear_predictor(v)
        return self.family.mean(eta if self.offset is None else eta + self.offset)


def _statistics_task(design: Design, T: np.ndarray, w: np.ndarray | None, *,
                     model: Callable[..., GLMObjective[Family]], family: ExponentialFamily,
                     columns: _Columns, op: Callable[..., Sums], **kwargs: Any) -> Sums:
    chunk = _Chunk(model(design, T, w), T, columns, family)
    return op(chunk, family, **kwargs)


def _totals_op(c: _Chunk, family: ExponentialFamily) -> Sums:
    o = np.zeros(c.y.size) if c.offset is None else c.offset
    n_obs = float(c.y.size if c.frequency is None else c.frequency.sum())
    if c.w is None:
        return Sums(float(c.y.size), float(c.y.sum()), float(o.sum()), n_obs)
    return Sums(float(c.w.sum()), float(c.w @ c.y), float(c.w @ o), n_obs)


def _fitted_op(c: _Chunk, family: ExponentialFamily, *, v: np.ndarray) -> Sums:
    mu = c.mean(v)
    return Sums(family.deviance(c.y, mu, c.w), family.pearson_chi2(c.y, mu, c.w))


def _null_op(c: _Chunk, family: ExponentialFamily, *, b: float) -> Sums:
    assert c.offset is not None
    # (Newton's observed curvature where it is never negative: Fisher scoring converged
    # linearly: 25 passes for a negative binomial's intercept, now 9)
    information = "observed" if family.observed_convex else "expected"
    loss, g, h = family.derivatives(c.y, c.offset + b, c.w, information)
    return Sums(float(loss), float(np.sum(g)), float(np.sum(h)))


def _likelihood_op(c: _Chunk, family: ExponentialFamily, *, v: np.ndarray, null: NullAt,
                   ll_scale: float, phi: float) -> Sums:
    mu, mu0 = c.mean(v), null.means(family, c.offset, c.y.size)
    return Sums(family.log_likelihood(c.y, mu, c.variance, c.frequency, ll_scale),
                family.log_likelihood(c.y, mu0, c.variance, c.frequency, phi),
                family.deviance(c.y, mu0, c.w))


def _row_sum_op(c: _Chunk, family: ExponentialFamily, *, v: np.ndarray,
                row_sum: RowSum) -> Sums:
    eta = c.obj.linear_predictor(v)
    eta = eta if c.offset is None else eta + c.offset
    return Sums(*row_sum(FittedRows.at(c.obj.design, family.link_function, c.y, c.w, eta,
                                       c.frequency, c.variance)))


class DaskRegressionRows:
    """A regressor's validated rows in Dask chunks: the distributed design, the objective
    on it, and the statistics as sums over the chunks (the in-memory
    ``RegressionData``'s questions, each a pass)."""

    def __init__(self, design: DaskRegressionDesign, family: ExponentialFamily) -> None:
        self.design, self.family = design, family
        self._model = functools.partial(_regression_model, family=family,
                                        information="expected", columns=design.columns)
        self.weight_total, self._wy, self._wo, self.n_obs = self._pass(_totals_op)
        if not self.weight_total > 0:
            raise ValueError("the weights sum to zero: there is nothing to fit")

    def _pass(self, op: Callable[..., Sums], family: ExponentialFamily | None = None,
              **kwargs: Any) -> tuple[Any, ...]:
        """``op`` over the chunks, with ``family`` (the rows' own where None: the
        negative binomial's statistics are at its fitted alpha, not the rows')."""
        task = functools.partial(_statistics_task, model=self._model,
                                 family=self.family if family is None else family,
                                 columns=self.design.columns, op=op, **kwargs)
        return self.design.reduce(task, rows=4096)

    def in_memory(self, message: str) -> NoReturn:
        raise ValueError(message)

    def check_solver(self, solver: str) -> None:
        if solver not in ("newton", "lbfgs"):
            raise ValueError(f"solver={solver!r} updates an n-vector per coefficient, which "
                             "Dask input never collects: use solver='newton' or 'lbfgs' (or "
                             "'auto') for Dask arrays and DataFrames")

    def objective(self, design: Any, family: ExponentialFamily, prior: GaussianPenalty | None,
                  information: str, penalty: Jeffreys | None = None
                  ) -> DaskRegressionObjective:
        if penalty is None:
            return DaskRegressionObjective(self.design, family, prior, information)
        # Firth's: the leverages' row sums over the chunks, each chunk's targets,
        # weights and offset as the objective's own
        chunk_rows = functools.partial(_fisher_rows, family=family, columns=self.design.columns)
        return DaskRegressionObjective(self.design, family,
                                       dask_jeffreys(penalty, self.design, family, chunk_rows),
                                       information)

    def exact_final(self, affordable: bool) -> bool:
        # The Hessian is one chunk-parallel pass, where truncated Newton's
        # Hessian-vector products would each be a pass: always exact.
        return True

    def start_intercept(self, family: ExponentialFamily) -> float:
        """As ``family.start_intercept`` in memory, from the weighted sums."""
        b = float(family.link_function(family.distribution.clip_mean(
            self._wy / self.weight_total)))
        return b if not self.design.columns.offset else b - self._wo / self.weight_total

    def fitted_sums(self, family: ExponentialFamily, eta: LazyEta) -> tuple[float, float]:
        """``(deviance, Pearson's chi²)`` at ``eta``: one pass."""
        deviance, pearson = self._pass(_fitted_op, family, v=eta.v)
        return float(deviance), float(pearson)

    def null_model(self, family: ExponentialFamily, max_iter: int = 100) -> NullAt:
        """The intercept-only model: without an offset the weighted mean of ``y``; with
        one, Newton's method in ``b`` (Fisher scoring, step halving), a pass a step, as
        ``family.null_model``'s in memory."""
        mean = self._wy / self.weight_total
        if not self.design.columns.offset:
            with np.errstate(divide="ignore"):
                return NullAt(float(family.link_function(np.array(mean))), mean)
        b = float(family.link_function(family.distribution.clip_mean(mean))) \
            - self._wo / self.weight_total
        loss, g, h = self._pass(_null_op, family, b=b)
        for _ in range(max_iter):
            if not (h > 0 and np.isfinite(h)):
                break
            step = -g / h
            if abs(step) <= 1e-15 * max(1.0, abs(b)):
                break
            for _ in range(60):
                new, g_new, h_new = self._pass(_null_op, family, b=b + step)
                if new <= loss:
                    break
                step *= 0.5
            else:
                break
            b, loss, g, h = b + step, new, g_new, h_new
            if abs(step) <= 1e-11 * max(1.0, abs(b)):
                break
        return NullAt(b, None)

    def likelihoods(self, family: ExponentialFamily, eta: LazyEta, null: NullAt,
                    ll_scale: float, phi: float) -> tuple[float, float, float]:
        """``(log-likelihood at eta and ll_scale, the null model's at phi, its deviance)``:
        one pass."""
        ll, ll0, null_deviance = self._pass(_likelihood_op, family, v=eta.v, null=null,
                                            ll_scale=ll_scale, phi=phi)
        return float(ll), float(ll0), float(null_deviance)

    def boundary(self, est: Any, objective: Any, result: Any) -> None:
        """None: the boundary's linear program needs all rows in one place (not on Dask)."""
        return None

    def row_sums(self, design: object, family: ExponentialFamily, eta: LazyEta, op: RowSum
                 ) -> tuple[Any, ...]:
        """``op`` summed over the chunks at ``eta``, each chunk's rows by its own design
        (``design``, the distributed one, is not read): one pass."""
        return self._pass(_row_sum_op, family, v=eta.v, row_sum=op)


def _per_row(value: Any, n: int) -> Any:
    """One value for every row (a number, as in memory), else ``value`` as given."""
    if not hasattr(value, "__dask_graph__") and np.ndim(value) == 0:
        return np.full(n, value)
    return value


def dask_regression_rows(est: Any, X: Any, y: Any, family: ExponentialFamily,
                         validate: Validate, intercept: bool, **arguments: Any
                         ) -> DaskRegressionRows:
    """A regressor's Dask rows: ``X`` (sets ``n_features_in_`` and the feature names),
    ``y`` and the per-row ``arguments`` (:data:`_ARGUMENTS`, numpy or Dask) aligned with
    its chunks and validated chunk by chunk by ``validate``; one pass for the totals."""
    import dask.array as da
    X = dask_features(est, X, reset=True)
    yd = align_rows(y, X, "y")
    if yd.ndim != 1:
        raise ValueError(f"y must be 1D (one target per sample), got shape {yd.shape}")
    given = {name: align_rows(_per_row(arguments[name], X.shape[0]), X, name)
             for name in _ARGUMENTS if arguments.get(name) is not None}
    for name, a in given.items():
        if a.ndim != 1:
            raise ValueError(f"{name} must be a 1-D array with one value per row: got "
                             f"shape {a.shape}")
    fn = functools.partial(_targets_block, names=tuple(given), validate=validate)
    targets = da.map_blocks(fn, yd, *given.values(), new_axis=1,
                            chunks=(X.chunks[0], (4,)), dtype=np.float64,
                            meta=np.empty((0, 4)))
    columns = _Columns("offset" in given or "exposure" in given, "sample_weight" in given,
                       "var_weights" in given or "trials" in given)
    design = DaskRegressionDesign(X, targets, columns, 1.0, intercept)
    rows = DaskRegressionRows(design, family)
    design.total_weight = rows.weight_total
    return rows
