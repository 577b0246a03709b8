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
which would be a pass). The prior is added on the client, as in memory.

The few things the engine otherwise reads off n-vectors have distributed
equivalents: :meth:`DaskGLMObjective.hessian_change` (the bound of
``newton._hessian_change``, so that the engine keeps the same Hessian for
the covariance as it does in memory), :meth:`_DaskObjective.count_rows`
(separation diagnostics), :meth:`_DaskObjective.subsample` (the sketch
rows, gathered: ~20k rows, into an in-memory objective).
"""
import functools

import numpy as np
from scipy.linalg import cho_factor, solve_triangular

from .._core.model.objective import (
    GLMObjective,
    SoftmaxObjective,
    _GaussianPrior,
    range_basis,
)
from .._core.solvers.steps import evaluate
from .design import Sums

__all__ = ["DaskGLMObjective", "DaskSoftmaxObjective", "LazyEta"]


class LazyEta:
    """``eta = [1, X] v`` on Dask, held as ``v`` (and the data loss there, once known)."""

    __array_ufunc__ = None  # numpy scalars defer to __rmul__: t * eta stays a LazyEta

    def __init__(self, v, loss=None):
        self.v = np.asarray(v, dtype=np.float64)
        self.loss = loss
        self.counts = {}  # count_rows results found by a pass at this point

    def __mul__(self, t):
        return LazyEta(float(t) * self.v)

    __rmul__ = __mul__

    def __add__(self, other):
        return LazyEta(self.v + other.v)

    def __sub__(self, other):
        return LazyEta(self.v - other.v)


# ------------------------------------------------------------- chunk operations
def _glm_model(design, t, w, *, family, information):
    return GLMObjective(design, family, t.astype(np.float64), w, information=information)


def _softmax_model(design, t, w, *, family):
    return SoftmaxObjective(design, family, t, w)


def _loss_op(obj, *, v, watched=()):
    eta = obj.linear_predictor(v)
    return Sums(obj.value(v, eta), *(int(func(obj, eta)) for func in watched))


def _evaluate_op(obj, *, v, gram):
    # the chunk's fused pass (no prior on chunks), keeping no n-vector where it can
    if hasattr(obj, "summed_derivatives"):
        return Sums(*obj.summed_derivatives(v, gram))
    _, loss, grad, H = evaluate(obj, v, gram)
    return Sums(loss, grad, H)


def _observed_op(obj, *, v):
    return Sums(obj.observed_hessian(v, obj.linear_predictor(v)))


def _count_op(obj, *, v, func):
    return Sums(int(func(obj, obj.linear_predictor(v))))


def _change_op(obj, *, v_old, v_new, cut, factor, limit, watched=()):
    """The chunk's share of ``newton._hessian_change``'s bound (same formula),
    with the watched row counts at ``v_new`` (the diagnostics' next question)."""
    h_old = obj.row_derivatives(obj.linear_predictor(v_old))[2]
    eta_new = obj.linear_predictor(v_new)
    loss, _, h_new = obj.row_derivatives(eta_new)
    counts = [int(func(obj, eta_new)) for func in watched]
    change = np.abs(h_new - h_old)
    above = np.flatnonzero(~(change <= cut * h_old))
    if above.size == 0 or above.size > limit or factor is None:
        return Sums(loss, above.size, 0.0, *counts)
    Z = solve_triangular(factor, obj.design.dense_rows(above).T, lower=True,
                         check_finite=False)
    return Sums(loss, above.size, float(change[above] @ np.einsum("ij,ij->j", Z, Z)),
                *counts)


def _signed_margins(obj, v):
    """``(2 y - 1) [1, X] v`` over the rows of positive weight (certificates)."""
    signed = (2.0 * obj.y - 1.0) * obj.linear_predictor(v)
    return signed if obj.sample_weight is None else signed[obj.sample_weight > 0]


def _margin_range_op(obj, *, v):
    signed = _signed_margins(obj, v)
    return Sums(float(np.max(np.abs(signed), initial=0.0)), float(np.min(signed, initial=np.inf)),
                signed.size, ops=("max", "min", "sum"))


def _margin_count_op(obj, *, v, level):
    return Sums(int(np.count_nonzero(_signed_margins(obj, v) > level)))


def _margin_mask(Xb, yb, wb=None, *, reader, model, v, level):
    """The lazy ``separated_`` of one chunk: rows with margin above ``level``."""
    if Xb.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    obj = model(*reader(0, 0, Xb, yb, wb, False))
    mask = (2.0 * obj.y - 1.0) * obj.linear_predictor(v) > level
    return mask if wb is None else mask & (obj.sample_weight > 0)


class _DaskObjective(_GaussianPrior):
    """What the Dask objectives share: passes, the prior, the engine's helpers."""

    def __init__(self, design, model, n_blocks, prior_precision, prior_mean):
        self.design, self._model, self.n_blocks = design, model, n_blocks
        self.sample_weight = design.sample_weight
        self.n_params = n_blocks * design.n_params
        self._watched = ()
        self._init_prior(prior_precision, prior_mean)

    @property
    def total_weight(self):
        return self.design.total_weight

    def _pass(self, op, **kwargs):
        return self.design.reduce(functools.partial(op, **kwargs), self._model)

    def linear_predictor(self, theta):
        """``[1, X] theta`` as a :class:`LazyEta` (no pass)."""
        return LazyEta(theta)

    def value(self, theta, eta):
        """``f(theta)``: one pass, unless an earlier pass found the loss at ``eta``."""
        if eta.loss is None:  # (the watched counts come with it: see watch_rows)
            eta.loss, *counts = self._pass(_loss_op, v=eta.v, watched=self._watched)
            eta.counts.update(zip(self._watched, counts))
        return eta.loss + self.penalty(theta)

    def value_grad(self, theta, eta):
        eta.loss, grad, _ = self._pass(_evaluate_op, v=eta.v, gram=None)
        f, grad, _ = self._add_prior(theta, eta.loss, grad)
        return f, grad

    def value_grad_hess(self, theta, eta, single=False):
        eta.loss, grad, H = self._pass(_evaluate_op, v=eta.v,
                                       gram="single" if single else "double")
        return self._add_prior(theta, eta.loss, grad, H)

    def advance(self, theta, eta, d, gram=None):
        """``theta + d`` in one pass: ``(eta_new, f, gradient, Hessian)`` (see
        ``GLMObjective.advance``)."""
        v = np.array(d, dtype=np.float64) if eta is None else eta.v + d
        loss, grad, H = self._pass(_evaluate_op, v=v, gram=gram)
        f, grad, H = self._add_prior(theta + d, loss, grad, H)
        return LazyEta(v, loss), f, grad, H

    def observed_hessian(self, theta, eta):
        (H,) = self._pass(_observed_op, v=eta.v)
        return H if self.P is None else self.P.add_to(H)

    def data_range_basis(self):
        """As ``GLMObjective.data_range_basis`` (its Gram matrix in one pass)."""
        basis = range_basis(self.design.used_gram())
        return basis if self.n_blocks == 1 else np.kron(np.eye(self.n_blocks), basis)

    def recentre(self, theta):
        return theta

    def subsample(self, rows):
        """The in-memory objective of ``rows`` (gathered), weights scaled to the full total."""
        design, t, w = self.design.gather(rows)
        w = np.ones(t.size) if w is None else w
        w = w * (self.total_weight / max(float(w.sum()), 1e-300))
        return self._in_memory(design, t, w)

    def count_rows(self, func, eta):
        """``sum_k func(chunk objective k, its eta)`` (``func`` picklable): e.g. how
        many chunks have a row fitted with certainty (separation diagnostics).
        No pass when a pass at ``eta`` already counted it (see :meth:`watch_rows`)."""
        if func not in eta.counts:
            eta.counts[func] = self._pass(_count_op, v=eta.v, func=func)[0]
        return eta.counts[func]

    def watch_rows(self, func):
        """Count ``func`` (as :meth:`count_rows`) in the final pass of the solver
        too, so that asking at the answer costs no pass of its own."""
        if func not in self._watched:
            self._watched += (func,)


class DaskGLMObjective(_DaskObjective):
    """:class:`~problin._core.model.objective.GLMObjective` of a
    :class:`~problin._dask.design.DaskDesign` (binary targets)."""

    def __init__(self, design, family, prior_precision=None, prior_mean=None,
                 information="observed"):
        model = functools.partial(_glm_model, family=family, information=information)
        super().__init__(design, model, 1, prior_precision, prior_mean)
        self.family, self.information = family, information
        self.exact_hessian = information == "observed" or getattr(family, "canonical", False)

    def _in_memory(self, design, t, w):
        return GLMObjective(design, self.family, t.astype(np.float64), w, self.P, self.m,
                            self.information)

    def hessian_change(self, eta_old, eta_new, H, cut):
        """``newton._hessian_change``'s bound in one pass (which also finds the loss
        at ``eta_new``, the engine's next question)."""
        try:
            factor = cho_factor(H, lower=True, check_finite=False)[0]
        except np.linalg.LinAlgError:
            factor = None
        limit = max(1000, self.design.n_samples // 16)
        eta_new.loss, count, total, *counts = self._pass(
            _change_op, v_old=eta_old.v, v_new=eta_new.v, cut=cut, factor=factor, limit=limit,
            watched=self._watched)
        eta_new.counts.update(zip(self._watched, counts))
        if count == 0:
            return cut
        if count > limit or factor is None:
            return np.inf
        return cut + total

    def separation(self, result, rtol=1e-6):
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
            scale, low, n_used = self._pass(_margin_range_op, v=margins.v)
            if scale == 0.0 or low < -rtol * scale:
                continue
            (n_sep,) = self._pass(_margin_count_op, v=margins.v, level=rtol * scale)
            if n_sep == 0:
                continue
            design = self.design
            fn = functools.partial(_margin_mask, reader=design._reader, model=self._model,
                                   v=margins.v, level=rtol * scale)
            args = [design.X, "ij", design.y, "i"]
            if design.sample_weight is not None:
                args += [design.sample_weight, "i"]
            rows = da.blockwise(fn, "i", *args, dtype=bool, concatenate=True)
            return rows, int(n_sep), int(n_used)
        return None


class DaskSoftmaxObjective(_DaskObjective):
    """:class:`~problin._core.model.objective.SoftmaxObjective` of a
    :class:`~problin._dask.design.DaskDesign`."""

    exact_hessian = True

    def __init__(self, design, family, prior_precision=None, prior_mean=None):
        model = functools.partial(_softmax_model, family=family)
        super().__init__(design, model, family.n_free, prior_precision, prior_mean)
        self.family = family

    def _in_memory(self, design, t, w):
        return SoftmaxObjective(design, self.family, t, w, self.P, self.m)

    def separation(self, result):
        """None: softmax separation is found by the LP only, which needs all rows."""
        return
