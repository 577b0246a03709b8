"""The softmax family: per-row loss and derivatives of K-class logistic regression.

Its arrays are n x M (one column per free class) in either memory order: row by
row (C order, the row-chunked designs' products) or class by class (Fortran
order: the small dense design forms ``eta = (Theta Z^T)^T``, whose element-wise
work, row sums and products with X run ~2x faster on M rows of length n than on
n rows of length M). Entries are addressed by their position in memory
(:func:`_positions`), so that each gather is one flat index, in either order.
"""
import math
from typing import TypeAlias

import numpy as np

from ..numerics import log_softmax
from .layout import ClassBlocks

__all__ = ["CategoricalSoftmax", "SoftmaxState"]

# exp(690) ~ 4e299: K of them sum without overflow for any K below ~4e8.
_EXP_SAFE = 690.0


def _class_major(A: np.ndarray) -> bool:
    """Whether the n x M array ``A`` is stored class by class (Fortran order). An
    array that is both (one row or one column) counts as row-major: its positions
    are the same either way."""
    return bool(A.flags.f_contiguous and not A.flags.c_contiguous)


def _flat(A: np.ndarray) -> np.ndarray:
    """The contiguous n x M array ``A`` as a 1-D view in its memory order."""
    return A.reshape(-1, order="F" if _class_major(A) else "C")


def _positions(rows: np.ndarray, cols: np.ndarray, shape: tuple[int, ...],
               class_major: bool) -> np.ndarray:
    """Memory positions of the entries ``(rows, cols)`` of an n x M array."""
    return cols * shape[0] + rows if class_major else rows * shape[1] + cols


def _contiguous(eta: np.ndarray, n_free: int) -> np.ndarray:
    """``eta`` as a float64 n x M array, contiguous in either order (copied only if neither)."""
    eta = np.asarray(eta, dtype=np.float64).reshape(-1, n_free)
    if not (eta.flags.c_contiguous or eta.flags.f_contiguous):
        eta = np.ascontiguousarray(eta)
    return eta


class CategoricalSoftmax(ClassBlocks):
    """Softmax (multinomial logit): ``p(y = k | x) = exp(a_k) / sum_j exp(a_j)``.

    The linear predictor ``eta`` has one column per *free* class. With
    ``contrast=True`` the first class is the reference (its logit is fixed at
    0, the identifiable parameterisation of maximum likelihood, as statsmodels
    ``MNLogit``) and ``eta`` has K-1 columns; otherwise all K logits are free.
    Targets are class indices ``t in {0, ..., K-1}``.

    The gradient of the loss in ``eta`` is ``P - T`` (probabilities minus
    one-hot targets) restricted to the free classes; the Hessian weights of
    row n are ``diag(p_n) - p_n p_n^T`` over the free classes, which the design
    operator turns into the block Hessian ``H_kj = sum_n p_nk (I_kj - p_nj) x_n x_n^T``.
    """

    name = "softmax"
    canonical = True
    # Every p_k moves by a factor within exp(+-2 max |delta eta|), and the Hessian
    # weights' quadratic forms are variances under p (solvers.newton_exact._hessian_change).
    curvature_lipschitz = 2.0

    def __init__(self, n_classes: int, contrast: bool = True) -> None:
        self.n_classes = int(n_classes)
        self.contrast = bool(contrast)
        self.n_free = self.n_classes - int(self.contrast)

    def logits(self, eta: np.ndarray) -> np.ndarray:
        """All K logits: a zero column for the reference class, then ``eta``."""
        eta = np.asarray(eta, dtype=np.float64).reshape(-1, self.n_free)
        if not self.contrast:
            return eta
        return np.concatenate([np.zeros((eta.shape[0], 1)), eta], axis=1)

    def log_proba(self, eta: np.ndarray) -> np.ndarray:
        """``(n, K)`` log class probabilities, by log-softmax."""
        return log_softmax(self.logits(eta), axis=1)

    def _normalise(self, eta: np.ndarray,
                   out: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray | float, np.ndarray, np.ndarray]:
        """``(E, top, log_z, total)``: ``E = exp(a - top)`` for the free logits ``a``,
        ``exp(-top)`` being the reference's term (contrast only), ``total`` the
        sum of all K terms and ``log_z`` the log normaliser per row, without
        materialising the zero column. ``E`` is written into ``out`` if given
        (an array of ``eta``'s memory order), else has ``eta``'s order.

        The shift ``top`` only has to keep ``exp`` from overflowing and the
        total from vanishing: with contrasts the reference's term ``exp(0) = 1``
        bounds the total below, so no shift is needed while the totals are
        finite (the exponentials are taken unshifted and the totals checked:
        the row maxima, even a maximum over all logits, cost more; numpy
        reduces short rows slowly); with all K logits free, logits relative to
        the first class's below ``_EXP_SAFE`` do the same. Only rows of huge logits
        take the per-row maximum. The terms are exact exponentials of the
        logits given either way, so the probabilities agree to rounding.
        """
        eta = _contiguous(eta, self.n_free)
        top: np.ndarray | float = 0.0
        ones = np.ones(self.n_free)
        if self.contrast:
            # Unshifted, then checked by the totals (a maximum over eta costs more).
            with np.errstate(over="ignore"):
                E = np.exp(eta, out=out)
            total = E @ ones
            total += 1.0  # the reference's exp(0)
            safe = math.isfinite(total.sum())  # (also false where eta holds NaN)
            if safe:
                return E, top, np.log(total), total
        else:
            top = eta[:, 0].copy()
            E = np.subtract(eta, top[:, None], out=out)
            safe = not eta.size or float(E.max()) < _EXP_SAFE
            if safe:
                np.exp(E, out=E)
        if not safe:
            # A loop over the few columns runs ~5x faster than numpy's row maxima.
            top = np.zeros(eta.shape[0]) if self.contrast else eta[:, 0].copy()
            for k in range(self.n_free):
                np.maximum(top, eta[:, k], out=top)
            E = np.subtract(eta, top[:, None], out=out)
            np.exp(E, out=E)  # in place: one n x M array
        total = E @ ones  # (a gemv: faster than a sum along short rows)
        if self.contrast:
            total += np.exp(-top)
        return E, top, np.log(total) + top, total

    def observed_classes(self, t: np.ndarray, class_major: bool = False
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(free_t, rows, flat)``: the targets among the free classes (-1: the
        reference), the rows whose class is free, and their entries' positions
        in memory of an n x M array stored row by row (or ``class_major``): one
        gather instead of a 2-D fancy index."""
        free_t = t - 1 if self.contrast else np.asarray(t)
        return (free_t, *_observed_positions(free_t, self.n_free, class_major))

    @staticmethod
    def _summed_loss(eta: np.ndarray, log_z: np.ndarray, rows: np.ndarray, flat: np.ndarray,
                     sample_weight: np.ndarray | None) -> float:
        """``-sum_n s_n (a_{t_n} - log z_n)`` (the reference's logit is 0) as two sums,
        without the n-vector of row terms (each row's difference rounds as much)."""
        observed = _flat(eta)[flat]
        if sample_weight is None:
            return float(log_z.sum()) - float(observed.sum())
        return float(sample_weight @ log_z) - float(sample_weight[rows] @ observed)

    def loss(self, t: np.ndarray, eta: np.ndarray,
             sample_weight: np.ndarray | None = None) -> float:
        eta = _contiguous(eta, self.n_free)
        _, _, log_z, _ = self._normalise(eta)
        _, rows, flat = self.observed_classes(t, _class_major(eta))
        return self._summed_loss(eta, log_z, rows, flat, sample_weight)

    def derivatives(self, t: np.ndarray, eta: np.ndarray, sample_weight: np.ndarray | None = None,
                    information: str = "observed", out: np.ndarray | None = None,
                    observed: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
                    ) -> tuple[float, "SoftmaxState"]:
        """Return ``(loss, state)``: the summed loss and a :class:`SoftmaxState`
        holding the free-class probabilities (from which the gradient weights
        ``P - T`` and the Hessian weights follow; written into ``out`` if given).
        ``observed``: ``observed_classes(t)`` for ``eta``'s memory order, where the
        caller keeps it. ``out`` has ``eta``'s memory order."""
        eta = _contiguous(eta, self.n_free)
        if out is not None and _class_major(out) != _class_major(eta):
            out = None  # (positions are those of eta's order)
        E, top, log_z, total = self._normalise(eta, out)
        free_t, rows, flat = (self.observed_classes(t, _class_major(eta)) if observed is None
                              else observed)
        loss = self._summed_loss(eta, log_z, rows, flat, sample_weight)
        inv_total = 1.0 / total
        E *= inv_total[:, None]  # E is now P, in place: no second n x M array
        p0 = None
        if self.contrast:  # the reference's exp(-top) / total
            p0 = inv_total if isinstance(top, float) else np.exp(-top) * inv_total
        return loss, SoftmaxState(E, p0, free_t, sample_weight, observed=flat)


#: ``(rows, cols, 1 - p)``: the entries with ``p > 1/2`` and their exact complements.
Complements: TypeAlias = tuple[np.ndarray, np.ndarray, np.ndarray]


class SoftmaxState:
    """Softmax probabilities at one ``eta``, with exact complements where needed.

    Keeps one n x M array, ``P`` (in ``eta``'s memory order). ``1 - p`` is exact
    for ``p <= 1/2``; at most one class per row has ``p > 1/2``, and for those
    entries the complement is summed from the other classes (``fix``), so that
    rows fitted with probability near 1 keep full relative precision in ``p - 1``
    (the gradient) and ``p (1 - p)`` (the curvature).
    """

    def __init__(self, P: np.ndarray, p0: np.ndarray | None, free_t: np.ndarray,
                 sample_weight: np.ndarray | None, fix: "Complements | None" = None,
                 observed: np.ndarray | None = None) -> None:
        self.P, self.free_t, self.sample_weight = P, free_t, sample_weight
        self.class_major = _class_major(P)
        n, M = P.shape
        if observed is None:
            observed = _observed_positions(free_t, M, self.class_major)[1]
        # The positions in P's memory of the observed classes that are free (one
        # per row at most; row-major: ascending, so rows lo:hi are those in [lo M, hi M)).
        self.observed = observed
        self._p0 = p0
        # (rows, cols, 1 - P[rows, cols]) where P > 1/2; by row where row-major. Formed
        # when first asked for (a gradient alone needs the observed classes' only).
        self._fix = fix

    @property
    def fix(self) -> "Complements":
        """``(rows, cols, q)``: every entry with ``p > 1/2`` and its exact complement."""
        if self._fix is None:
            # At most one entry per row exceeds 1/2: found by one test over the
            # contiguous array (numpy's argmax along short rows is slow).
            self._fix = self._summed_complements(np.flatnonzero(_flat(self.P) > 0.5))
        return self._fix

    def _summed_complements(self, flat: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(rows, cols, 1 - p)`` of the entries at memory positions ``flat``, the
        complements summed from the row's other classes (no cancellation)."""
        n, M = self.P.shape
        if self.class_major:
            cols, rows = np.divmod(flat, n)
        else:
            rows, cols = np.divmod(flat, M)
        others = self.P[rows]
        others[np.arange(rows.size), cols] = 0.0
        q = others @ np.ones(M)  # the other free classes...
        if self._p0 is not None:
            q += self._p0[rows]  # ...and the reference
        return rows, cols, q

    @classmethod
    def concatenate(cls, P: np.ndarray, parts: list[tuple[int, "SoftmaxState"]], free_t: np.ndarray,
                    sample_weight: np.ndarray | None, observed: np.ndarray | None = None
                    ) -> "SoftmaxState":
        """The state of all rows from those of consecutive row chunks, all row-major:
        ``parts`` is ``[(first row, state of the chunk), ...]`` in row order;
        ``observed``: the positions of all rows' observed classes, where the
        caller keeps them (else joined from the parts')."""
        fix = (np.concatenate([st.fix[0] + lo for lo, st in parts]),
               np.concatenate([st.fix[1] for _, st in parts]),
               np.concatenate([st.fix[2] for _, st in parts]))
        if observed is None:
            M = P.shape[1]
            observed = np.concatenate([st.observed + lo * M for lo, st in parts])
        return cls(P, None, free_t, sample_weight, fix, observed)

    def _fixed_in(self, lo: int, hi: int) -> slice | np.ndarray:
        """Which entries of ``fix`` lie in rows ``lo:hi`` (a slice where row-major)."""
        rows = self.fix[0]
        if lo <= 0 and hi >= self.P.shape[0]:
            return slice(None)
        if not self.class_major:
            a, b = np.searchsorted(rows, [lo, hi])
            return slice(a, b)
        return (rows >= lo) & (rows < hi)

    def complements(self, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """``1 - P[lo:hi]``, exact."""
        Q = 1.0 - self.P[lo:hi]
        hi = self.P.shape[0] if hi is None else hi
        at = self._fixed_in(lo, hi)
        rows, cols, q = (part[at] for part in self.fix)
        Q[rows - lo, cols] = q
        return Q

    def observed_complements(self) -> np.ndarray:
        """``1 - p(observed class)`` per row, exactly (n-vector)."""
        n, M = self.P.shape
        q = np.empty(n)
        flat = self.observed
        p = _flat(self.P)[flat]
        q[flat % n if self.class_major else flat // M] = 1.0 - p
        # P > 1/2 on the observed class: its summed complement (those entries' only)
        rows, _, fixed = self._summed_complements(flat[p > 0.5])
        q[rows] = fixed
        reference = self.free_t < 0
        q[reference] = self.P[reference] @ np.ones(M)  # 1 - p0 = the free classes' sum
        return q

    def gradient_weights(self, lo: int = 0, hi: int | None = None,
                         out: np.ndarray | None = None) -> np.ndarray:
        """``s (P - T)`` for rows ``lo:hi`` (all: n x M, in P's memory order; a row
        range: row-major); on the observed class ``p - 1 = -(1 - p)``, exactly.
        ``out``: an array of P's shape and memory order for all rows' weights (a fresh
        n x M array costs a page fault per 4 KB: ~40 % of the copy at 5,000 x 9)."""
        n, M = self.P.shape
        hi = n if hi is None else hi
        flat = self.observed
        if lo <= 0 and hi >= n:
            if out is None:
                G = self.P.copy(order="K")
            else:
                assert out.shape == self.P.shape and _class_major(out) == self.class_major
                G = out
                np.copyto(G, self.P)
            class_major = self.class_major
        else:
            G = self.P[lo:hi].copy(order="C")
            class_major = False
            if not self.class_major:
                a, b = np.searchsorted(flat, [lo * M, hi * M])
                flat = flat[a:b] - lo * M
            else:
                rows, cols = flat % n, flat // n
                keep = (rows >= lo) & (rows < hi)
                flat = (rows[keep] - lo) * M + cols[keep]
        flat_G = _flat(G)
        if self._fix is None and lo <= 0 and hi >= n:  # the observed classes' alone
            observed = flat_G[flat]
            hit = flat[observed > 0.5]
            observed -= 1.0  # exact where p >= 1/2 (Sterbenz)...
            flat_G[flat] = observed
            # ...but p itself was rounded near 1: 1 - p summed from the rest
            flat_G[hit] = -self._summed_complements(hit)[2]
        else:
            flat_G[flat] -= 1.0  # (as above)
            at = self._fixed_in(lo, hi)
            rows, cols, q = (part[at] for part in self.fix)
            hit_rows = self.free_t[rows] == cols
            flat_G[_positions(rows[hit_rows] - lo, cols[hit_rows], G.shape, class_major)] = \
                -q[hit_rows]
        if self.sample_weight is not None:
            G *= self.sample_weight[lo:hi, None]
        return G


def _observed_positions(free_t: np.ndarray, M: int, class_major: bool = False
                        ) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, flat)``: the rows whose observed class is free and that class's
    position in memory of the n x M array of those classes, row by row (ascending)
    or ``class_major``."""
    rows = np.flatnonzero(free_t >= 0)
    return rows, _positions(rows, free_t[rows], (free_t.size, M), class_major)
