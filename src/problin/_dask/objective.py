"""GLM objectives on Dask input: every method the solvers call, one distributed pass each.

The linear predictor ``eta = [1, X] theta`` is linear in ``theta``; on Dask
it is never formed (it is an n-vector, and its chunks would have to live
somewhere between passes). It is represented by the parameter vector that
generates it, a :class:`LazyEta`, which supports exactly the arithmetic the
solvers do on ``eta`` (``eta + t * Xd``, ``eta_new - eta``). So
``linear_predictor`` is free, and every quantity at a point is one pass in
which each chunk forms its own ``eta`` and runs the in-memory objective's own
code on it (``GLMObjective``/``SoftmaxObjective`` on an in-memory ``Design``
of the chunk), the p-sized results summed in Dask's tree: ``advance`` gives
the loss, gradient and Hessian of a Newton step in ONE pass per iteration
(softmax too: its exact block Hessian, not Hessian-vector products, each of
which would be a pass). The penalty is added on the client, as in memory.

The few things the engine otherwise reads off n-vectors have distributed
equivalents: :meth:`DaskGLMObjective.hessian_change` (the bound of
``newton_exact._hessian_change``, so that the engine keeps the same Hessian for
the covariance as it does in memory; for the logit without a pass where the
columns' ranges bound the step's move), :meth:`_DaskObjective.count_rows`
(separation diagnostics), :meth:`_DaskObjective.subsample` (the sketch
rows, gathered: ~20k rows, into an in-memory objective).

The Dask objectives are :class:`~problin._core.model.contract.DistributedObjective`
s: the type tells the diagnostics that rows are reached by passes only.
"""
import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.linalg import cho_factor, solve_triangular

from .._core.model.contract import (CurvatureChange, DistributedObjective, FitPoint, Gram, RowCount,
                                   RowMask, Trial)
from .._core.model.design import Design
from .._core.model.families import largest_change, uniform_curvature_change
from .._core.model.family_softmax import CategoricalSoftmax
from .._core.model.exponential_family import Family
from .._core.model.objective import CurvatureBound, GLMObjective, bound_row_limit, range_basis
from .._core.model.objective_softmax import SoftmaxObjective
from .._core.model.penalty import Information, Penalty, add_penalty, objective_penalty
from .._core.model.prior import PriorPrecision
from .._core.model.start_curvature import SharedStartCurvature
from .chunks import in_task
from .design import DaskDesign, Sums

# A chunk's question: (in-memory chunk objective, its eta) -> a count or a flag.
RowFunc = RowCount

__all__ = ["DaskGLMObjective", "DaskSoftmaxObjective", "LazyEta"]

# Rows per sub-block of the passes that form n-vectors: 32 KB per vector
# (measured on 500,000-row chunks: loss passes 2.3x faster than whole chunks).
_SUB_ROWS = 4096
# How far from a point of a double-Hessian pass the last Newton step may move a linear
# predictor and still be judged without a pass (DaskGLMObjective.hessian_change): above
# the move at which the logit's curvature bound reaches the engine's cut (~2.5e-7).
_NEAR = 1e-6
# The quadratic model's remainder allowed in a loss so found: below its rounding.
_F_ROUNDING = 1e-15


class LazyEta:
    """``eta = [1, X] v`` on Dask, held as ``v`` (and the data loss there, once known)."""

    __array_ufunc__ = None  # numpy scalars defer to __rmul__: t * eta stays a LazyEta

    def __init__(self, v: npt.ArrayLike, loss: float | None = None) -> None:
        self.v = np.asarray(v, dtype=np.float64)
        self.loss = loss
        self.counts: dict[RowFunc, int] = {}  # count_rows results found by a pass here
        # The data's gradient and double Hessian here, and the watched rows counted
        # within _NEAR of here (see DaskGLMObjective.hessian_change), where a pass found them
        self.derivatives: tuple[np.ndarray, np.ndarray] | None = None
        self.near: dict[RowFunc, int] = {}

    def __mul__(self, t: float) -> "LazyEta":
        return LazyEta(float(t) * self.v)

    __rmul__ = __mul__

    def __add__(self, other: "LazyEta") -> "LazyEta":
        return LazyEta(self.v + other.v)

    def __sub__(self, other: "LazyEta") -> "LazyEta":
        return LazyEta(self.v - other.v)


# ------------------------------------------------------------- chunk operations
ChunkObjective = GLMObjective[Family] | SoftmaxObjective


def _glm_model(design: Design, t: np.ndarray, w: np.ndarray | None, *, family: Family,
               information: str) -> GLMObjective[Family]:
    return GLMObjective(design, family, np.asarray(t, dtype=np.float64), w,
                        information=information)


def _softmax_model(design: Design, t: np.ndarray, w: np.ndarray | None, *,
                   family: CategoricalSoftmax) -> SoftmaxObjective:
    return SoftmaxObjective(design, family, np.asarray(t, dtype=np.intp), w)


def _loss_op(obj: ChunkObjective, *, v: np.ndarray, watched: tuple[RowFunc, ...] = ()) -> Sums:
    eta = obj.linear_predictor(v)
    return Sums(obj.value(v, eta), *(int(func(obj, eta)) for func in watched))


def _evaluate_op(obj: ChunkObjective, *, v: np.ndarray, gram: Gram) -> Sums:
    # the chunk's fused pass (no prior on chunks), keeping no n-vector where it can
    return Sums(*obj.summed_derivatives(v, gram))


def _evaluate_near_op(obj: ChunkObjective, *, v: np.ndarray, gram: Gram,
                      watched: tuple[RowFunc, ...]) -> Sums:
    """:func:`_evaluate_op` with the watched rows counted at ``eta - _NEAR`` and
    ``eta + _NEAR``: each row's certainty is monotone in its linear predictor (a binary
    GLM's loss is convex in it), so where neither finds a row, none is found within
    ``_NEAR`` of ``eta``."""
    eta = obj.linear_predictor(v)
    counts = [int(func(obj, eta - _NEAR)) + int(func(obj, eta + _NEAR)) for func in watched]
    return Sums(*obj.summed_derivatives(v, gram), *counts)


def _observed_op(obj: ChunkObjective, *, v: np.ndarray) -> Sums:
    return Sums(obj.observed_hessian(v, obj.linear_predictor(v)))


def _count_op(obj: ChunkObjective, *, v: np.ndarray, func: RowFunc) -> Sums:
    return Sums(int(func(obj, obj.linear_predictor(v))))


def _change_op(obj: ChunkObjective, *, v_old: np.ndarray, v_new: np.ndarray, cut: float,
               factor: np.ndarray | None, limit: int | None,
               watched: tuple[RowFunc, ...] = ()) -> Sums:
    """The chunk's share of ``newton_exact._hessian_change``'s bounds (same formulas): the
    loss at ``v_new``, the largest change of a linear predictor and (``limit``: binary
    models with the row-wise bound) the rows changed above ``cut`` and their
    leverage-weighted change; with the watched row counts at ``v_new`` (the
    diagnostics' next question)."""
    eta_old, eta_new = obj.linear_predictor(v_old), obj.linear_predictor(v_new)
    moved = largest_change(eta_old, eta_new)
    loss = obj.row_derivatives(eta_new)[0]
    counts = [int(func(obj, eta_new)) for func in watched]
    ops = ("sum", "max", "sum", "sum") + ("sum",) * len(counts)
    if limit is None:
        return Sums(loss, moved, 0, 0.0, *counts, ops=ops)
    assert isinstance(obj, GLMObjective)
    h_old = obj.row_derivatives(eta_old)[2]
    h_new = obj.row_derivatives(eta_new)[2]
    change = np.abs(h_new - h_old)
    above = np.flatnonzero(~(change <= cut * h_old))
    if above.size == 0 or above.size > limit or factor is None:
        return Sums(loss, moved, above.size, 0.0, *counts, ops=ops)
    Z = solve_triangular(factor, obj.design.dense_rows(above).T, lower=True,
                         check_finite=False)
    return Sums(loss, moved, above.size, float(change[above] @ np.einsum("ij,ij->j", Z, Z)),
                *counts, ops=ops)


def _signed_margins(obj: GLMObjective[Family], v: np.ndarray) -> np.ndarray:
    """``(2 y - 1) [1, X] v`` over the rows of positive weight (certificates)."""
    signed = (2.0 * obj.y - 1.0) * obj.linear_predictor(v)
    return signed if obj.sample_weight is None else signed[obj.sample_weight > 0]


def _margin_range_op(obj: GLMObjective[Family], *, v: np.ndarray) -> Sums:
    signed = _signed_margins(obj, v)
    return Sums(float(np.max(np.abs(signed), initial=0.0)), float(np.min(signed, initial=np.inf)),
                signed.size, ops=("max", "min", "sum"))


def _margin_count_op(obj: GLMObjective[Family], *, v: np.ndarray, level: float) -> Sums:
    return Sums(int(np.count_nonzero(_signed_margins(obj, v) > level)))


def _margin_mask(Xb: np.ndarray, yb: np.ndarray, wb: np.ndarray | None = None, *,
                 reader: Callable[..., tuple[Design, np.ndarray, np.ndarray | None]],
                 model: Callable[..., ChunkObjective], v: np.ndarray,
                 level: float) -> np.ndarray:
    """The lazy ``separated_`` of one chunk: rows with margin above ``level``."""
    if Xb.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    obj = model(*reader(0, 0, Xb, yb, wb, False))
    assert isinstance(obj, GLMObjective)  # (binary models only: DaskGLMObjective's)
    mask = (2.0 * obj.y - 1.0) * obj.linear_predictor(v) > level
    sw = obj.sample_weight  # (None exactly where wb is)
    return mask if sw is None else mask & (sw > 0)


class _DaskObjective(DistributedObjective[LazyEta]):
    """What the Dask objectives share: passes, the penalty, the engine's helpers."""

    design: DaskDesign
    family: CurvatureBound

    def __init__(self, design: DaskDesign, model: Callable[..., ChunkObjective], n_blocks: int,
                 prior_precision: PriorPrecision | np.ndarray | None,
                 prior_mean: np.ndarray | None, penalty: Penalty | None) -> None:
        self.design, self._model, self.n_blocks = design, model, n_blocks
        self.sample_weight = design.sample_weight
        self.n_params = n_blocks * design.n_params
        self._watched: tuple[RowFunc, ...] = ()
        self.penalty = objective_penalty(penalty, prior_precision, prior_mean, self.n_params)

    @property
    def total_weight(self) -> float:
        return self.design.total_weight

    def _pass(self, op: Callable[..., Sums], **kwargs: object) -> tuple[Any, ...]:
        """One pass of ``op`` (a fused one: it keeps no n-vector)."""
        return self.design.reduce(functools.partial(op, **kwargs), self._model)

    def _rows_pass(self, op: Callable[..., Sums], **kwargs: object) -> tuple[Any, ...]:
        """One pass of an ``op`` that forms n-vectors (``eta``, row derivatives):
        by sub-blocks of each chunk, whose n-vectors stay in cache and below
        the allocator's threshold for fresh memory (see ``design._chunk_task``)."""
        return self.design.reduce(functools.partial(op, **kwargs), self._model,
                                  rows=max(_SUB_ROWS // self.n_blocks, 256))

    def _in_memory(self, design: Design, t: np.ndarray, w: np.ndarray, penalty: Penalty
                   ) -> ChunkObjective:
        raise NotImplementedError  # pragma: no cover - each model's own

    def _change_pass(self, eta_old: LazyEta, eta_new: LazyEta, **kwargs: object
                     ) -> tuple[float, int, float]:
        """One pass of :func:`_change_op`: ``(uniform bound, rows above the cut, their
        leverage-weighted change)``; the loss at ``eta_new`` and the watched counts
        are kept on it."""
        eta_new.loss, moved, count, total, *counts = self._rows_pass(
            _change_op, v_old=eta_old.v, v_new=eta_new.v, watched=self._watched, **kwargs)
        eta_new.counts.update(zip(self._watched, counts))
        return uniform_curvature_change(self.family, moved), int(count), float(total)

    def hessian_change(self, eta_old: LazyEta, eta_new: LazyEta, H: np.ndarray,
                       cut: float, rowwise: bool = True) -> CurvatureChange:
        """The family's uniform bound (``GLMObjective.hessian_change``) in one pass,
        which also finds the loss at ``eta_new``, the engine's next question."""
        uniform = self._change_pass(eta_old, eta_new, cut=cut, factor=None, limit=None)[0]
        return CurvatureChange(uniform, uniform)

    def linear_predictor(self, theta: np.ndarray) -> LazyEta:
        """``[1, X] theta`` as a :class:`LazyEta` (no pass)."""
        return LazyEta(theta)

    def value(self, theta: np.ndarray, eta: LazyEta) -> float:
        """``f(theta)``: one pass, unless an earlier pass found the loss at ``eta``."""
        if eta.loss is None:  # (the watched counts come with it: see watch_rows)
            eta.loss, *counts = self._rows_pass(_loss_op, v=eta.v, watched=self._watched)
            eta.counts.update(zip(self._watched, counts))
        return eta.loss + self.penalty.value(theta)

    def value_grad(self, theta: np.ndarray, eta: LazyEta) -> tuple[float, np.ndarray]:
        """``(f, gradient)``: one pass."""
        eta.loss, grad, _ = self._pass(_evaluate_op, v=eta.v, gram=None)
        return self.penalty.add_gradient(theta, eta.loss, grad)

    def value_grad_hess(self, theta: np.ndarray, eta: LazyEta, single: bool = False
                        ) -> tuple[float, np.ndarray, np.ndarray]:
        """``(f, gradient, Hessian)``: one pass."""
        gram: Gram = "single" if single else "double"
        eta.loss, grad, H = self._evaluate(eta, gram)
        f, grad, H = add_penalty(self.penalty, theta, eta.loss, grad, H,
                                 self._information(H, gram))
        assert H is not None
        return f, grad, H

    def advance(self, theta: np.ndarray, eta: LazyEta | None, d: np.ndarray, gram: Gram = None,
                accept_below: float | None = None) -> Trial:
        """``theta + d`` in one pass, its derivatives with it whether accepted or
        not (see ``GLMObjective.advance``)."""
        v = np.array(d, dtype=np.float64) if eta is None else eta.v + d
        found = LazyEta(v)
        found.loss, grad, H = self._evaluate(found, gram)
        f, grad, H = add_penalty(self.penalty, theta + d, found.loss, grad, H,
                                 self._information(H, gram))
        return Trial(found, f, grad, H)

    def _evaluate(self, eta: LazyEta, gram: Gram) -> tuple[float, np.ndarray, Any]:
        """The data's loss, gradient and Hessian (``gram``) at ``eta``: one pass."""
        loss, grad, H = self._pass(_evaluate_op, v=eta.v, gram=gram)
        return loss, grad, H

    def _information(self, H: np.ndarray | None, gram: Gram) -> Information | None:
        """The data term's Hessian where it is the Fisher information (a penalty of it,
        Firth's, reads it as in memory: ``GLMObjective._information``); None here."""
        return None

    def observed_hessian(self, theta: np.ndarray, eta: LazyEta) -> np.ndarray:
        """The observed-information Hessian at ``eta``: one pass."""
        (H,) = self._rows_pass(_observed_op, v=eta.v)
        return self.penalty.add_hessian(theta, H)

    def data_range_basis(self) -> np.ndarray:
        """As ``GLMObjective.data_range_basis`` (its Gram matrix in one pass)."""
        basis = range_basis(self.design.used_gram())
        return basis if self.n_blocks == 1 else np.kron(np.eye(self.n_blocks), basis)

    def recentre(self, theta: np.ndarray) -> np.ndarray:
        """No invariant directions are handled on Dask (first-order solvers only in memory)."""
        return theta

    def subsample(self, rows: np.ndarray) -> ChunkObjective:
        """The in-memory objective of ``rows`` (gathered), weights scaled to the full
        total (the engine runs it with one BLAS thread: ``blocks.OneThreadBLAS``)."""
        design, t, w = self.design.gather(rows)
        w = np.ones(t.size) if w is None else w
        w = w * (self.total_weight / max(float(w.sum()), 1e-300))
        return self._in_memory(design, t, w, self.penalty.subsample(rows, w))

    def count_rows(self, func: RowFunc, eta: LazyEta) -> int:
        """``sum_k func(chunk objective k, its eta)`` (``func`` picklable): e.g. how
        many chunks have a row fitted with certainty (separation diagnostics).
        No pass when a pass at ``eta`` already counted it (see :meth:`watch_rows`)."""
        if func not in eta.counts:
            eta.counts[func] = self._rows_pass(_count_op, v=eta.v, func=func)[0]
        return eta.counts[func]

    def watch_rows(self, func: RowFunc) -> None:
        """Count ``func`` (as :meth:`count_rows`) in the final pass of the solver
        too, so that asking at the answer costs no pass of its own."""
        if func not in self._watched:
            self._watched += (func,)


class DaskGLMObjective(_DaskObjective):
    """:class:`~problin._core.model.objective.GLMObjective` of a
    :class:`~problin._dask.design.DaskDesign` (binary targets)."""

    family: Family

    def __init__(self, design: DaskDesign, family: Family,
                 prior_precision: PriorPrecision | np.ndarray | None = None,
                 prior_mean: np.ndarray | None = None, information: str = "observed", *,
                 penalty: Penalty | None = None) -> None:
        model = functools.partial(_glm_model, family=family, information=information)
        super().__init__(design, model, 1, prior_precision, prior_mean, penalty)
        self.family, self.information = family, information
        self.exact_hessian = (information == "observed" or bool(family.canonical)) \
            and self.penalty.exact_hessian
        self._fisher = information == "expected" or bool(family.canonical)
        # The last step judged without a pass (_judged_without_pass): the logit, whose
        # curvature bound is uniform and whose rows' certainty is monotone in eta
        self._judged = bool(family.canonical) and self.exact_hessian

    def _information(self, H: np.ndarray | None, gram: Gram) -> Information | None:
        return None if H is None or not self._fisher else Information(H, gram == "single")

    def _in_memory(self, design: Design, t: np.ndarray, w: np.ndarray, penalty: Penalty
                   ) -> GLMObjective[Family]:
        return GLMObjective(design, self.family, t.astype(np.float64), w,
                            information=self.information, penalty=penalty)

    def hessian_change(self, eta_old: LazyEta, eta_new: LazyEta, H: np.ndarray,
                       cut: float, rowwise: bool = True) -> CurvatureChange:
        """``GLMObjective.hessian_change``'s bounds in one pass (which also finds the
        loss at ``eta_new``, the engine's next question), or without one where the
        move is known to be small enough (:meth:`_judged_without_pass`)."""
        judged = self._judged_without_pass(eta_old, eta_new, cut)
        if judged is not None:
            return judged
        factor = None
        if rowwise:
            try:
                factor = cho_factor(H, lower=True, check_finite=False)[0]
            except np.linalg.LinAlgError:
                factor = None
        limit = bound_row_limit(self.design.n_samples) if rowwise else None
        uniform, count, total = self._change_pass(eta_old, eta_new, cut=cut, factor=factor,
                                                  limit=limit)
        if uniform <= cut or limit is None or count > limit or factor is None:
            return CurvatureChange(uniform, uniform)
        return CurvatureChange(uniform, min(uniform, cut + (total if count else 0.0)))

    def _evaluate(self, eta: LazyEta, gram: Gram) -> tuple[float, np.ndarray, Any]:
        """As the base's; a double Hessian's pass (the one the engine's last step starts
        from) also keeps the data's derivatives there and counts the watched rows near
        it, so that the last step may be judged without a pass of its own."""
        if gram != "double" or not self._judged:
            return super()._evaluate(eta, gram)
        loss, grad, H, *counts = self._rows_pass(_evaluate_near_op, v=eta.v, gram=gram,
                                                 watched=self._watched)
        eta.derivatives = (grad, H)
        eta.near = dict(zip(self._watched, counts))
        return loss, grad, H

    def _judged_without_pass(self, eta_old: LazyEta, eta_new: LazyEta, cut: float
                             ) -> CurvatureChange | None:
        """The last Newton step judged without a pass over the data (each pass of
        file-backed data reads the files again), where it moves every linear predictor
        by at most ``moved`` (:meth:`DaskDesign.predictor_change_bound`, from the
        columns' ranges) with a uniform curvature bound within ``cut``: the bound the
        pass would give holds then (the pass's own ``moved`` is smaller), the loss
        at ``eta_new`` is the quadratic model's from the derivatives at ``eta_old``
        (the remainder is at most the bound times ``d^T H d / 2``, required below
        f's rounding), and no watched row is found there (none within ``_NEAR``).
        None where any of it is not known: the pass decides."""
        if eta_old.derivatives is None or eta_old.loss is None:
            return None
        d = eta_new.v - eta_old.v
        moved = self.design.predictor_change_bound(d)
        uniform = uniform_curvature_change(self.family, moved)
        if not (moved <= _NEAR and uniform <= cut):
            return None
        if any(eta_old.near.get(func, 1) for func in self._watched):
            return None
        grad, H = eta_old.derivatives
        curvature = float(d @ H @ d)
        loss = eta_old.loss + float(grad @ d) + curvature / 2
        if not uniform * abs(curvature) / 2 <= _F_ROUNDING * abs(loss):
            return None
        eta_new.loss = loss
        eta_new.counts.update((func, 0) for func in self._watched)
        return CurvatureChange(uniform, uniform)

    def separation(self, result: FitPoint[LazyEta], rtol: float = 1e-6
                   ) -> tuple[RowMask, int, int] | None:
        """``(rows, n_separated, n_used)`` from the certificates of
        ``separation.certified_separation`` (the fitted margins, then the last
        Newton step), or None. ``rows`` is a lazy Dask boolean array. The exact
        LP of ``separated_rows`` needs all rows in one place: not on Dask."""
        import dask.array as da
        candidates = [result.eta]
        if result.direction is not None:
            candidates.append(result.direction_eta if result.direction_eta is not None
                              else LazyEta(result.direction))
        for margins in candidates:
            scale, low, n_used = self._rows_pass(_margin_range_op, v=margins.v)
            if scale == 0.0 or low < -rtol * scale:
                continue
            (n_sep,) = self._rows_pass(_margin_count_op, v=margins.v, level=rtol * scale)
            if n_sep == 0:
                continue
            design = self.design
            fn = functools.partial(_margin_mask, reader=design._reader, model=self._model,
                                   v=margins.v, level=rtol * scale)
            args = [design.X, "ij", design.y, "i"]
            if design.sample_weight is not None:
                args += [design.sample_weight, "i"]
            rows = da.blockwise(in_task(fn), "i", *args, dtype=bool, concatenate=True)
            return rows, int(n_sep), int(n_used)
        return None


class DaskSoftmaxObjective(SharedStartCurvature, _DaskObjective):
    """:class:`~problin._core.model.objective_softmax.SoftmaxObjective` of a
    :class:`~problin._dask.design.DaskDesign`."""

    exact_hessian = True

    design: DaskDesign
    family: CategoricalSoftmax

    def __init__(self, design: DaskDesign, family: CategoricalSoftmax,
                 prior_precision: PriorPrecision | np.ndarray | None = None,
                 prior_mean: np.ndarray | None = None, *, penalty: Penalty | None = None
                 ) -> None:
        model = functools.partial(_softmax_model, family=family)
        super().__init__(design, model, family.n_free, prior_precision, prior_mean, penalty)
        self.family = family
        self.exact_hessian = self.penalty.exact_hessian

    def _in_memory(self, design: Design, t: np.ndarray, w: np.ndarray, penalty: Penalty
                   ) -> SoftmaxObjective:
        return SoftmaxObjective(design, self.family, t, w, penalty=penalty)

    def _information(self, H: np.ndarray | None, gram: Gram) -> Information | None:
        # (the softmax's Hessian is its Fisher information, as in memory)
        return None if H is None else Information(H, gram == "single")

    def _weighted_gram(self) -> np.ndarray:
        """``[1,X]^T S [1,X]``: one pass (only where the engine opens by BFGS)."""
        return self.design.weighted_gram()

    def separation(self, result: FitPoint[LazyEta]) -> None:
        """None: softmax separation is found by the LP only, which needs all rows."""
