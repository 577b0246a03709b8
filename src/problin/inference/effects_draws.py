"""The interpretation methods on a Bayesian model: each effect computed per posterior draw.

A Bayesian model's :class:`~problin.inference.effects.EffectsModel` carries draws
``theta^(1..D)`` of its parameters (an MCMC fit's stored samples, or draws of a Gaussian
posterior). Every reported quantity, an average prediction or a function of several, is
then computed for each draw, which gives its posterior distribution; the table reports
its **median** (``estimate``, the default of R's ``marginaleffects`` for ``brms``
models), its posterior standard deviation (``std_err``) and the equal-tailed credible
interval at ``level`` (``ci_low, ci_high``: the ``(1 - level) / 2`` and
``(1 + level) / 2`` quantiles of the draws). There is no test statistic or p-value: the
table has no ``z``/``t`` and ``p_value`` columns.

The averages are those of :func:`~problin.inference.effects.average_rows`, every draw at
once: a block's linear predictors for all draws are one product ``X (W^(1..D))^T``, the
mean map reads them as ``n D`` rows, and the row functions (element-wise in the means)
read the means of a row for all draws side by side.
"""
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from sklearn.utils import check_random_state

from .._core.bayes.logistic import draw_gaussian
from .._core.blocks import one_blas_thread
from .effects import EffectsModel, RowFunction, Sampling, Variant, encode_variants

__all__ = ["as_blocks", "average_draws", "check_n_draws", "draws_frame", "gaussian_draws", "thinned"]

FloatArray = NDArray[np.float64]
# Values per block: n rows x D draws x K outputs x L predictors, per variant.
_BLOCK_VALUES = 1 << 21


def average_draws(model: EffectsModel, design: Callable[[pd.DataFrame], FloatArray],
                  frame: pd.DataFrame, weights: FloatArray,
                  variants: dict[Hashable, Variant], functions: Sequence[RowFunction],
                  shifts: dict[Hashable, tuple[int, float, bool]],
                  derivatives: dict[int, int]) -> FloatArray:
    """The weighted averages over the rows of ``frame`` of each function, per draw
    of ``model.draws``: shape (D, F, K). ``shifts`` and ``derivatives`` as for
    :func:`~problin.inference.effects.average_rows`: a plain ``dy/dx`` slope along
    design column ``j`` is ``avg(s D^(d)) w_j^(d)`` per draw, exactly (no difference)."""
    assert model.draws is not None
    with one_blas_thread():
        return _average_draws(model, model.draws, design, frame, weights, variants,
                              functions, shifts, derivatives)


def _average_draws(model: EffectsModel, draws: FloatArray,
                   design: Callable[[pd.DataFrame], FloatArray], frame: pd.DataFrame,
                   weights: FloatArray, variants: dict[Hashable, Variant],
                   functions: Sequence[RowFunction],
                   shifts: dict[Hashable, tuple[int, float, bool]],
                   derivatives: dict[int, int]) -> FloatArray:
    D, L, p1 = draws.shape
    K = len(model.outputs) if model.outputs is not None else 1
    total = float(weights.sum())
    rest = [f for f in range(len(functions)) if f not in derivatives]
    read = {key for f in rest for key in functions[f].keys}
    variants = {key: change for key, change in variants.items() if key in read}
    out = np.zeros((D, len(functions), K))
    d_sum = np.zeros((D, K, L))  # sum s D per draw
    # (a block's designs are encoded once, a formula's per variant; the draws then go
    # through them in chunks that keep n x draws x K x L values per variant small)
    rows = max(256, min(8192, _BLOCK_VALUES // (p1 * (1 + len(variants)))))
    for lo in range(0, len(frame), rows):
        block = frame.iloc[lo:lo + rows]
        s = weights[lo:lo + rows] / total
        base = (np.asarray(design(block), dtype=np.float64)
                if derivatives or any(key in shifts for key in variants) else None)
        designs = encode_variants(design, block, {key: change for key, change in
                                                  variants.items() if key not in shifts},
                                  p1 - 1)
        chunk = max(1, _BLOCK_VALUES // (len(block) * K * L * (1 + len(variants))))
        for d0 in range(0, D, chunk):
            part = slice(d0, min(D, d0 + chunk))
            values, d_part = _block_draws(model, draws[part], K, block, s, base, designs,
                                          variants, functions, rest, shifts,
                                          bool(derivatives))
            out[part] += values
            d_sum[part] += d_part
    W = draws[:, :, 1:]
    for f, j in derivatives.items():  # (an exact derivative per draw: avg(s D) w_j)
        out[:, f] = np.einsum("dkl,dl->dk", d_sum, W[:, :, j])
    return out


def _block_draws(model: EffectsModel, draws: FloatArray, K: int, block: pd.DataFrame,
                 s: FloatArray, base: FloatArray | None, designs: dict[Hashable, FloatArray],
                 variants: dict[Hashable, Variant], functions: Sequence[RowFunction],
                 rest: list[int], shifts: dict[Hashable, tuple[int, float, bool]],
                 derivatives: bool) -> tuple[FloatArray, FloatArray]:
    """One block of rows and a chunk of draws: the functions' weighted sums (D, F, K)
    and ``sum s D`` (D, K, L)."""
    D, L, p1 = draws.shape
    n = len(block)
    W = draws[:, :, 1:]  # (D, L, d)
    Wt = W.reshape(D * L, p1 - 1).T  # (d, D L): every draw's predictors in one product
    intercepts = draws[:, :, 0].ravel()
    d_sum = np.zeros((D, K, L))
    eta0: FloatArray | None = None
    mu0: FloatArray | None = None
    d0: FloatArray | None = None
    if base is not None:
        eta0 = (base @ Wt + intercepts).reshape(n, D, L)
        mu0, d = model.mean(eta0.reshape(n * D, L))
        d0 = d.reshape(n, D, K, L)
        if derivatives:
            d_sum = np.einsum("n,ndkl->dkl", s, d0)
    means: dict[Hashable, FloatArray] = {}
    for key in variants:
        if key in shifts:
            assert eta0 is not None and mu0 is not None and d0 is not None
            j, delta, nudge = shifts[key]
            if nudge:  # (the expansion mu + delta D w_j: a central difference is D w_j)
                mu = mu0.reshape(n, D, K) + delta * np.einsum("ndkl,dl->ndk", d0, W[:, :, j])
                means[key] = mu.reshape(n, D * K)
                continue
            eta = eta0 + delta * W[None, :, :, j]
        else:
            eta = (designs[key] @ Wt + intercepts).reshape(n, D, L)
        means[key] = model.mean(eta.reshape(n * D, L))[0].reshape(n, D * K)
    values = np.zeros((D, len(functions), K))
    for f in rest:  # (row functions are element-wise: all draws of a row side by side)
        r, _ = functions[f](means, block)
        values[:, f] = (s @ r).reshape(D, K)
    return values, d_sum


def draws_frame(index: pd.Index, samples: FloatArray, level: float) -> pd.DataFrame:
    """``estimate`` (the posterior median), ``std_err`` (the posterior standard
    deviation), ``ci_low, ci_high`` (equal-tailed at ``level``) of each row's draws
    (``samples``: rows x D)."""
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    tail = (1.0 - float(level)) / 2.0
    low, median, high = np.quantile(samples, [tail, 0.5, 1.0 - tail], axis=1)
    sd = samples.std(axis=1, ddof=1) if samples.shape[1] > 1 else np.full(len(samples),
                                                                           np.nan)
    table = pd.DataFrame({"estimate": median, "std_err": sd, "ci_low": low,
                          "ci_high": high}, index=index)
    table.attrs.update(level=float(level), statistic=None, center="median",
                       n_draws=int(samples.shape[1]))
    return table


def check_n_draws(n_draws: Any) -> int:
    if isinstance(n_draws, bool) or not isinstance(n_draws, (int, np.integer)) or n_draws < 2:
        raise ValueError(f"n_draws must be an integer >= 2, got {n_draws!r}")
    return int(n_draws)


def thinned(samples: FloatArray, sampling: Sampling) -> FloatArray:
    """A sampler's stored draws (chains x draws x P, or draws x P) as rows: all of them,
    or ``sampling.n_draws`` evenly spaced ones (``random_state`` has nothing to draw)."""
    flat = samples.reshape(-1, samples.shape[-1])
    if sampling.n_draws is None or check_n_draws(sampling.n_draws) >= len(flat):
        return flat
    return flat[np.linspace(0, len(flat) - 1, sampling.n_draws).round().astype(np.intp)]


def gaussian_draws(mean: FloatArray, cov: FloatArray, sampling: Sampling,
                   n_default: int, random_state: Any) -> FloatArray:
    """``n_draws`` (else ``n_default``) draws of ``N(mean, cov)`` as rows, seeded by
    ``sampling.random_state`` (else ``random_state``) as a model's own sampled
    predictions are (one 32-bit seed drawn from it)."""
    n = check_n_draws(n_default if sampling.n_draws is None else sampling.n_draws)
    seed_from = random_state if sampling.random_state is None else sampling.random_state
    seed = check_random_state(seed_from).randint(np.iinfo(np.int32).max)
    return draw_gaussian(mean, cov, n, np.random.default_rng(seed))


def as_blocks(theta: FloatArray, n_blocks: int, fit_intercept: bool) -> FloatArray:
    """Draws of ``[b_l?, w_l]`` block after block (D, P) as ``blocks`` (D, L, 1 + d),
    ``b_l = 0`` without intercept."""
    D = theta.shape[0]
    out = np.asarray(theta, dtype=np.float64).reshape(D, n_blocks, -1)
    if not fit_intercept:
        out = np.concatenate([np.zeros((D, n_blocks, 1)), out], axis=2)
    return out
