"""The Tweedie density's series, summed over row blocks in numpy (Dunn & Smyth 2005).

For ``1 < p < 2`` the compound Poisson-Gamma density at ``y > 0`` is
``f = exp((y theta - kappa) / phi) W / y`` with the series
``W = sum_{j >= 1} W_j``, ``log W_j = j log x - log j! - log Gamma(rho j)``,
``rho = (2 - p) / (p - 1)`` and ``x = ((p - 1) phi / y)^(-rho) / ((2 - p) phi)``: Wright's
function ``Phi(rho, 0; x)``, whose derivative is ``Phi(rho, rho; x)``, so that
``x W' / W = E[j]`` and ``x² W'' / W = E[j (j - 1)]`` under the normalised terms
``W_j / W``. The log-likelihood needs ``log W``; the maximum-likelihood dispersion's score
and curvature in ``log scale`` need ``E[j]`` and ``Var[j]`` (``x`` goes as
``scale^-(rho + 1)``): one sum gives all three.

The terms are log-concave in ``j`` with their maximum near ``j_max = y^(2-p) / ((2 - p)
phi)`` (Dunn & Smyth's eq. 8; in ``x``: ``(1 + rho) log j_max = log x - rho log rho``),
and they fall by a factor ``exp(-37)`` within about ``sqrt(74 j_max / (1 + rho))`` terms of
it, which is where the sum stops (Dunn & Smyth's criterion: what is left out is below
1e-16 of the sum). Each row gets a window of ``K`` terms around its maximum, ``K`` one of
:data:`_WIDTHS`; rows of one width are summed together, ``K x rows`` at a time (a block of at most
:data:`_BLOCK` values: never an ``n x J`` temporary), ``log j! + log Gamma(rho j)`` taken
from a table over the block's range of ``j`` (scipy's ``gammaln`` costs ~30 ns a value, the
table's look-up a few). A row whose window's edge is still within ``exp(-37)`` of its
largest term is summed again in the next width.

scipy's ``log_wright_bessel`` (which statsmodels uses) costs ~13 µs a row and, for
``j_max`` in the thousands and ``rho`` away from 1, loses digits (3e-7 of ``log W`` at
``p = 1.2``, ``x = 1.7e5``; ``-inf`` where ``x`` underflows at ``p`` near 1 while ``log x``
is finite); the series here costs ~0.1 µs a row where ``j_max`` is of order 10 (data with
many zeros) and a few ns a term beyond, to the terms' rounding everywhere. Rows that would
need more than :data:`_LONGEST` terms (``j_max`` beyond ~2e5 (1 + rho): a dispersion
small against ``y^(2-p)``) are summed by Laplace's method with its next-order terms,
where its errors, O(1 / j_max²), are below the terms' rounding (the series would cost
~50 µs a row there).
"""
import functools
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray
from scipy import special

from ..types import FloatArray

BoolArray = NDArray[np.bool_]
IntArray = NDArray[np.intp]

__all__ = ["SeriesSums", "wright_series", "tweedie_log_x", "tweedie_series",
           "tweedie_log_likelihood", "tweedie_scale_derivatives"]

_DROP = 37.0        # terms below exp(-37) of the largest are left out (Dunn & Smyth)
_BLOCK = 1 << 16    # values in a block's (rows x terms) temporaries (512 KiB each)
_FLOOR = 700.0      # terms below exp(-700) of the largest count as exp(-700): nothing
_LONGEST = 1 << 13  # terms: wider rows by Laplace's method (see _laplace_rows)
# The windows' widths, steps of 1.5 and 4/3 (powers of two alone cost a third more terms,
# on average, than the rows need)
_WIDTHS = tuple(sorted({w for k in range(3, 14) for w in (1 << k, 3 << (k - 1))
                        if w <= _LONGEST}))


class SeriesSums(NamedTuple):
    """``log W`` per row and, where asked for, the mean and variance of ``j`` under the
    normalised terms ``W_j / W`` (None otherwise)."""

    log_sum: FloatArray
    mean: FloatArray | None
    variance: FloatArray | None


def tweedie_log_x(power: float, y: FloatArray, phi: FloatArray) -> FloatArray:
    """``log x`` of the rows' series (``y > 0``), in logarithms: ``x`` itself leaves the
    floating-point range where ``p`` is near 1 (``x ~ (y / phi)^rho``, ``rho = 99`` at
    ``p = 1.01``) while its logarithm and the sum do not."""
    p = power
    rho = (2.0 - p) / (p - 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):  # (phi = inf: a row of weight 0)
        return rho * (np.log(y) - np.log((p - 1.0) * phi)) - np.log((2.0 - p) * phi)


def _first_terms(rho: float, log_x: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Per row the first index ``j`` of its window and the terms the window needs, from
    the maximum's estimate and the distance at which the terms, curving by
    ``-(1 + rho) / j``, have fallen by ``exp(-37)`` (a Gaussian's, plus a margin that
    covers the small ``j_max`` where the curve is not quadratic; the terms at the window's
    edges are checked afterwards)."""
    with np.errstate(over="ignore"):
        j_max = np.exp(np.minimum((log_x - rho * np.log(rho)) / (1.0 + rho), 700.0))
    centre = np.maximum(1.0, np.rint(j_max))
    half = np.sqrt(2.0 * _DROP / (1.0 + rho) * j_max) + (0.3 * _DROP / (1.0 + rho) + 2.0)
    first = np.maximum(1.0, np.rint(centre - half))
    return first, centre + np.ceil(half) - first + 1.0


@functools.lru_cache(maxsize=64)
def _width_bounds(rho: float) -> FloatArray:
    """The ``log x`` up to which a row's window fits in each of :data:`_WIDTHS`:
    ``searchsorted`` of a row's ``log x`` is its width's index (the terms needed grow with
    ``log x``; read off a fine grid of ``j_max``, a row between two points of which may
    need a term more: the edge check widens it)."""
    log_j = np.linspace(-40.0, 25.0, 13001)
    log_x = (1.0 + rho) * log_j + rho * np.log(rho)
    need = np.maximum.accumulate(_first_terms(rho, log_x)[1])
    fits = np.searchsorted(need, _WIDTHS, side="right") - 1
    return np.where(fits >= 0, log_x[np.maximum(fits, 0)], -np.inf)


def _sum_block(rho: float, log_x: FloatArray, first: FloatArray, width: int,
               moments: bool) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray,
                                       BoolArray]:
    """One block of rows sharing a window width: ``(log W, E[j], Var[j], first, done)``,
    ``done`` False where an edge of the window is within ``exp(-37)`` of the largest term
    (``first`` moved back by half the width where it was the left edge). The terms are
    laid out ``width x rows`` so that the sums over a row's terms are sums of whole
    rows of the array (numpy's reductions along a short last axis cost per row)."""
    steps = np.arange(width, dtype=np.float64)
    low = int(first.min())
    span = int(first.max()) - low + width
    if span <= first.size * width:  # (a table of the block's range of j)
        j = low + np.arange(span, dtype=np.float64)
        table = -special.gammaln(j + 1.0) - special.gammaln(rho * j)
        terms = table[(first - low).astype(np.intp) + np.arange(width)[:, None]]
    else:  # (rows far apart in j: the gamma functions of each term)
        j = first + steps[:, None]
        terms = -special.gammaln(j + 1.0) - special.gammaln(rho * j)
    terms += np.multiply.outer(steps, log_x)
    terms += first * log_x
    top = terms.max(axis=0)
    left, right = terms[0] - top, terms[-1] - top
    done = (right < -_DROP) & ((first == 1.0) | (left < -_DROP))
    terms -= top
    np.maximum(terms, -_FLOOR, out=terms)  # (exp is ~10x slower where it underflows)
    np.exp(terms, out=terms)
    total = terms.sum(axis=0)
    log_sum = top + np.log(total)
    mean = var = log_sum
    if moments:  # (the variance about the mean: no cancellation of E[j²] - E[j]²)
        offset = steps @ terms / total
        mean = first + offset
        spread = np.subtract.outer(steps, offset)
        np.square(spread, out=spread)
        spread *= terms
        var = spread.sum(axis=0) / total
    moved = np.where((first > 1.0) & ~(left < -_DROP), np.maximum(1.0, first - width // 2),
                     first)
    return log_sum, mean, var, moved, done


def _scaled_polygamma(n: int, z: FloatArray) -> FloatArray:
    """``|psi_n(z)| z^n / (n - 1)!``, which tends to 1: directly up to 1e8, beyond by its
    asymptotic series ``1 + n / (2 z) + n (n + 1) / (12 z²)`` (the next term ~1e-24)."""
    direct = np.abs(special.polygamma(n, np.minimum(z, 1e8))) * np.minimum(z, 1e8) ** n \
        / special.factorial(n - 1)
    return np.where(z < 1e8, direct, 1.0 + n / (2.0 * z) + n * (n + 1) / (12.0 * z * z))


def _laplace_rows(rho: float, log_x: FloatArray, moments: bool
                  ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``(log W, E[j], Var[j])`` of rows whose windows would hold more than
    :data:`_LONGEST` terms, by Laplace's method on the terms as a function of a real
    ``j`` (the sum and the integral differ by terms exponentially small in the peak's
    width, Euler-Maclaurin). With ``f(j) = j log x - log Gamma(j + 1) - log Gamma(rho j)``,
    its maximum ``j*`` (``psi(j + 1) + rho psi(rho j) = log x``, Newton from the
    estimate) and there ``f2 = -c``, ``f3``, ``f4`` (its 2nd to 4th derivatives):
    ``log W = f(j*) + log(2 pi / c) / 2 + log(1 + f4 / (8 c^2) + 5 f3^2 / (24 c^3))``,
    ``E[j] = j* + f3 / (2 c^2)``, ``Var[j] = 1 / c``, to O(1 / j*^2) in ``log W`` and
    ``E[j] / j*``, O(1 / j*) in ``Var[j]``."""
    with np.errstate(over="ignore", invalid="ignore"):  # (j beyond the doubles: x ~ e^700)
        j = np.exp((log_x - rho * np.log(rho)) / (1.0 + rho))
        for _ in range(3):  # (the estimate's error is O(1) in j: quadratic steps)
            slope = log_x - special.digamma(j + 1.0) - rho * special.digamma(rho * j)
            j = j + slope / (special.polygamma(1, j + 1.0)
                             + rho * rho * special.polygamma(1, rho * j))
        # the derivatives times j, j², j³, each O(1) (as products, j³ overflows first)
        r = j / (j + 1.0)
        c = r * _scaled_polygamma(1, j + 1.0) + rho * _scaled_polygamma(1, rho * j)
        f3 = r * r * _scaled_polygamma(2, j + 1.0) + rho * _scaled_polygamma(2, rho * j)
        f4 = -2.0 * (r ** 3 * _scaled_polygamma(3, j + 1.0)
                     + rho * _scaled_polygamma(3, rho * j))
        log_w = (j * log_x - special.gammaln(j + 1.0) - special.gammaln(rho * j)
                 + 0.5 * np.log(2.0 * np.pi * j / c)
                 + np.log1p((f4 / (8.0 * c * c) + 5.0 * f3 * f3 / (24.0 * c ** 3)) / j))
        return log_w, j + f3 / (2.0 * c * c), j / c


def wright_series(rho: float, log_x: FloatArray, moments: bool = False) -> SeriesSums:
    """``log W`` of ``W = sum_{j >= 1} x^j / (j! Gamma(rho j))`` for each row's ``log x``
    (a 1-d array), with ``E[j]`` and ``Var[j]`` under ``W_j / W`` where ``moments``.
    ``log x = -inf`` gives ``log W = -inf`` (and the limit ``E[j] = 1``, ``Var[j] = 0``);
    NaN gives NaN.

    Rows are grouped by the width of their window (a stable sort of small integers),
    each group summed a block at a time; a row whose window proves too narrow joins the
    next width's group."""
    log_x = np.asarray(log_x, dtype=np.float64)
    n = log_x.size
    log_sum = np.empty(n)
    mean = np.empty(n) if moments else None
    var = np.empty(n) if moments else None
    finite = np.isfinite(np.add.reduce(log_x))
    if not finite:
        inside = np.isfinite(log_x)
        log_sum[~inside] = np.where(log_x[~inside] == -np.inf, -np.inf, np.nan)
        if mean is not None and var is not None:
            mean[~inside] = np.where(log_x[~inside] == -np.inf, 1.0, np.nan)
            var[~inside] = np.where(log_x[~inside] == -np.inf, 0.0, np.nan)
        if inside.any():
            got = wright_series(rho, log_x[inside], moments)
            _store(np.flatnonzero(inside), got, log_sum, mean, var)
        return SeriesSums(log_sum, mean, var)
    bounds = _width_bounds(rho)
    level = np.searchsorted(bounds, log_x).astype(np.uint8)
    order = np.argsort(level, kind="stable")  # (a radix sort of one byte)
    ends = np.cumsum(np.bincount(level, minlength=bounds.size + 1))
    rows, first = order[:ends[0]], None
    for k in range(bounds.size + 1):
        if k > 0:
            fresh = order[ends[k - 1]:ends[k]]
            rows = np.concatenate([rows, fresh])
            first = None if first is None else np.concatenate(
                [first, _first_terms(rho, log_x[fresh])[0]])
        if not rows.size:
            continue
        if k == bounds.size:
            _store(rows, _laplace_rows(rho, log_x[rows], moments), log_sum, mean, var)
            break
        rows, first = _sum_rows(rho, log_x, rows, first, _WIDTHS[k], moments,
                                log_sum, mean, var)
    return SeriesSums(log_sum, mean, var)


def _sum_rows(rho: float, log_x: FloatArray, rows: IntArray, first: FloatArray | None,
              width: int, moments: bool, log_sum: FloatArray, mean: FloatArray | None,
              var: FloatArray | None) -> tuple[IntArray, FloatArray | None]:
    """Sum ``rows`` in windows of ``width`` terms a block at a time, storing the rows
    whose windows were wide enough; the others and their windows' first terms back."""
    block = max(1, _BLOCK // width)
    again: list[IntArray] = []
    firsts: list[FloatArray] = []
    for i in range(0, rows.size, block):
        r = rows[i:i + block]
        lx = log_x[r]
        f = _first_terms(rho, lx)[0] if first is None else first[i:i + block]
        lw, m, v, moved, done = _sum_block(rho, lx, f, width, moments)
        if done.all():
            _store(r, (lw, m, v), log_sum, mean, var)
            continue
        _store(r[done], (lw[done], m[done], v[done]), log_sum, mean, var)
        again.append(r[~done])
        firsts.append(moved[~done])
    if not again:
        return rows[:0], None
    return np.concatenate(again), np.concatenate(firsts)


def _store(rows: IntArray, got: tuple[FloatArray, FloatArray | None, FloatArray | None],
           log_sum: FloatArray, mean: FloatArray | None, var: FloatArray | None) -> None:
    log_sum[rows] = got[0]
    if mean is not None and var is not None and got[1] is not None and got[2] is not None:
        mean[rows], var[rows] = got[1], got[2]


def tweedie_series(power: float, y: FloatArray, phi: FloatArray, moments: bool = False
                   ) -> SeriesSums:
    """:func:`wright_series` of the Tweedie rows ``y > 0`` with dispersions ``phi``."""
    rho = (2.0 - power) / (power - 1.0)
    return wright_series(rho, tweedie_log_x(power, y, phi), moments)


def _exponent(power: float, y: FloatArray, mu: FloatArray, phi: FloatArray) -> FloatArray:
    """``(y theta - kappa) / phi`` per row (``theta = mu^(1-p) / (1-p)``, ``kappa =
    mu^(2-p) / (2-p)``; ``-kappa / phi`` at ``y = 0``, where ``mu = 0`` gives 0)."""
    p = power
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        theta = mu ** (1.0 - p) / (1.0 - p)
        kappa = mu ** (2.0 - p) / (2.0 - p)
        return (np.where(y > 0, y * theta, 0.0) - kappa) / phi


def tweedie_log_likelihood(power: float, y: FloatArray, mu: FloatArray, phi: FloatArray
                           ) -> FloatArray:
    """Per row ``log f(y; mu, phi)``: ``(y theta - kappa) / phi`` at ``y = 0`` (the mass
    ``P(y = 0) = exp(-kappa / phi)``), plus ``log W - log y`` at ``y > 0``. ``y``, ``mu``
    and ``phi`` are arrays of one shape."""
    out = _exponent(power, y, mu, phi)
    pos = y > 0
    if pos.any():
        yp = y[pos]
        out[pos] += tweedie_series(power, yp, phi[pos]).log_sum - np.log(yp)
    return out


def tweedie_scale_derivatives(power: float, y: FloatArray, mu: FloatArray,
                              var_weights: FloatArray | float, scale: float
                              ) -> tuple[FloatArray, FloatArray]:
    """The Tweedie's per-row ``(s, s')``, the derivatives of the log-likelihood in
    ``t = log scale``. With ``phi_i = scale / v_i``, ``l = (y theta - kappa) / phi_i +
    log W(x) - log y`` and ``x`` proportional to ``phi_i^-(rho + 1)``, so that ``d log W /
    dt = -(rho + 1) x W' / W = -(rho + 1) E[j]`` and its derivative is ``(rho + 1)²
    Var[j]`` (:func:`wright_series`'s moments: ``x W' / W = E[j]``, ``x² W'' / W =
    E[j (j - 1)]``). Rows of variance weight 0 add nothing."""
    p, y = power, np.asarray(y, dtype=np.float64)
    v = np.broadcast_to(np.asarray(var_weights, dtype=np.float64), y.shape)
    mu = np.broadcast_to(np.asarray(mu, dtype=np.float64), y.shape)
    used = v > 0
    phi = np.where(used, scale / np.where(used, v, 1.0), 1.0)
    exponent = _exponent(p, y, mu, phi)
    s, ds = -exponent, exponent.copy()
    pos = (y > 0) & used
    if pos.any():
        c = -1.0 / (p - 1.0)  # (-(rho + 1): dx / dt = c x)
        sums = tweedie_series(p, y[pos], phi[pos], moments=True)
        assert sums.mean is not None and sums.variance is not None
        s[pos] += c * sums.mean
        ds[pos] += c * c * sums.variance
    s[~used], ds[~used] = 0.0, 0.0
    return s, ds
