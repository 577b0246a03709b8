"""Traces: the MCMC draws of one parameter per chain, and the optimiser's objective per
iteration."""
from typing import Any

import numpy as np
from matplotlib.axes import Axes

from ._base import Display, integer_ticks, plain_numbers
from ._data import final_step

__all__ = ["McmcTraceDisplay", "OptimiserTraceDisplay", "plot_mcmc_trace",
           "plot_optimiser_trace"]


class McmcTraceDisplay(Display):
    """The draws of one parameter, one line per chain, from
    ``BayesianLogisticRegression(inference="mcmc")``'s ``samples_`` (shape
    ``(n_chains, n_samples, n_params)``, parameters ordered as ``summary()``). Chains that
    overlap like noise around one level have mixed; the title gives the parameter's
    R-hat (``rhat_``, near 1 when mixed) and bulk effective sample size (``ess_``).

    Attributes: ``draws`` (``(n_chains, n_samples)``), ``parameter``, ``rhat``, ``ess``;
    after :meth:`plot`, ``ax_``, ``figure_``, ``lines_`` (one per chain).

    Examples
    --------
    >>> from problin import BayesianLogisticRegression
    >>> from problin.datasets import load_dataset
    >>> from problin.plot import McmcTraceDisplay
    >>> X, y = load_dataset("breast-cancer")
    >>> model = BayesianLogisticRegression(inference="mcmc", n_samples=300, random_state=0,
    ...                                    progress=False).fit(X.iloc[:, :3], y)
    >>> display = McmcTraceDisplay.from_estimator(model, "mean radius")
    >>> display.draws.shape
    (4, 300)
    """

    def __init__(self, *, draws: np.ndarray, parameter: str, rhat: float | None = None,
                 ess: float | None = None) -> None:
        self.draws, self.parameter, self.rhat, self.ess = draws, parameter, rhat, ess
        self.lines_: list[Any] = []

    @classmethod
    def from_estimator(cls, estimator: Any, parameter: int | str = 0, *,
                       ax: Axes | None = None) -> "McmcTraceDisplay":
        """The trace of ``parameter`` of a model fitted by MCMC.

        Parameters
        ----------
        estimator : fitted ``BayesianLogisticRegression(inference="mcmc")`` or a Pipeline
        parameter : int or str, default=0
            Index into the parameters (0: the intercept when fitted) or a name of
            ``summary()``'s index (``"intercept"``, a feature name).
        ax : matplotlib Axes, optional

        Returns
        -------
        McmcTraceDisplay
        """
        est = final_step(estimator)
        samples = getattr(est, "samples_", None)
        if samples is None:
            raise TypeError(f"{type(est).__name__} has no MCMC draws (samples_): fit "
                            "BayesianLogisticRegression(inference='mcmc')")
        samples = np.asarray(samples, dtype=np.float64)
        names = parameter_names(est, samples.shape[2])
        if isinstance(parameter, str):
            if parameter not in names:
                raise ValueError(f"unknown parameter {parameter!r}; the parameters are "
                                 f"{names[:20]}")
            j = names.index(parameter)
        elif not -len(names) <= parameter < len(names):
            raise ValueError(f"parameter index {parameter} is out of range for "
                             f"{len(names)} parameters")
        else:
            j = int(parameter) % len(names)
        rhat, ess = (getattr(est, a, None) for a in ("rhat_", "ess_"))
        display = cls(draws=samples[:, :, j], parameter=names[j],
                      rhat=None if rhat is None else float(np.asarray(rhat)[j]),
                      ess=None if ess is None else float(np.asarray(ess)[j]))
        display.plot(ax)
        return display

    def _draw(self, ax: Axes) -> None:
        steps = np.arange(self.draws.shape[1])
        for c, chain in enumerate(self.draws):
            self.lines_.extend(ax.plot(steps, chain, linewidth=0.6, alpha=0.7,
                                       label=f"chain {c + 1}"))
        integer_ticks(ax.xaxis)
        plain_numbers(ax.yaxis)
        ax.set_xlabel("draw (after warm-up)")
        ax.set_ylabel(self.parameter)
        stats = [f"R-hat {self.rhat:.3f}" if self.rhat is not None else "",
                 f"ESS {self.ess:.0f}" if self.ess is not None else ""]
        ax.set_title(f"MCMC trace: {self.parameter}"
                     + (f" ({', '.join(s for s in stats if s)})" if any(stats) else ""))
        if len(self.draws) <= 8:
            ax.legend(fontsize="x-small", loc="upper right", ncols=len(self.draws))


def parameter_names(est: Any, p: int) -> list[str]:
    """Names of the ``p`` parameters ``[intercept, coef...]``: ``summary()``'s index where
    it has ``p`` rows, else ``intercept`` and ``x0, x1, ...``."""
    try:
        index = est.summary().index
    except (AttributeError, ValueError):
        index = []
    if len(index) == p:
        return [": ".join(map(str, i)) if isinstance(i, tuple) else str(i) for i in index]
    fitted = bool(getattr(est, "fit_intercept", True))
    return ["intercept"] * fitted + [f"x{j}" for j in range(p - fitted)]


class OptimiserTraceDisplay(Display):
    """The optimiser's record per iteration (``history_``). An objective converging to
    its optimum is drawn as its distance to the final value on a log scale, which shows
    the rate (linear, quadratic) that the raw values, all close to the final one, hide;
    counts (the perceptron's misclassified samples) are drawn as they are. Iterations
    are integers; the final value is in the title, in full.

    Attributes: ``history``, ``label``, ``step`` (what one entry is: ``"iteration"``,
    numbered from 0, the start; ``"epoch"``, from 1), ``gap`` (True when drawn as the
    distance to the final value); after :meth:`plot`, ``ax_``, ``figure_``, ``line_``.

    Examples
    --------
    >>> from problin import LogisticRegression
    >>> from problin.datasets import load_dataset
    >>> from problin.plot import OptimiserTraceDisplay
    >>> X, y = load_dataset("breast-cancer")
    >>> model = LogisticRegression(alpha=1.0).fit(X, y)
    >>> display = OptimiserTraceDisplay.from_estimator(model)
    >>> display.gap
    True
    """

    def __init__(self, *, history: np.ndarray, label: str = "objective",
                 step: str = "iteration") -> None:
        h = np.asarray(history, dtype=np.float64).ravel()
        self.history, self.label, self.step = h, label, step
        counts = bool(np.all(h == np.round(h)) and np.all(h >= 0))
        self.gap = not counts and _gaps(h).size > 1

    @classmethod
    def from_estimator(cls, estimator: Any, *,
                       ax: Axes | None = None) -> "OptimiserTraceDisplay":
        """From a fitted model's ``history_``.

        Parameters
        ----------
        estimator : fitted model or Pipeline with ``history_``
        ax : matplotlib Axes, optional

        Returns
        -------
        OptimiserTraceDisplay
        """
        est = final_step(estimator)
        history = getattr(est, "history_", None)
        if history is None:
            raise TypeError(f"{type(est).__name__} has no history_: no optimiser trace")
        h = np.asarray(history, dtype=np.float64).ravel()
        if h.size < 2 or not np.isfinite(h).all():
            raise ValueError(f"history_ needs at least two finite values, got {h.size}")
        perceptron = type(est).__name__ == "Perceptron"  # its history_: mistakes per epoch
        display = cls(history=h, label="misclassified samples" if perceptron else "objective",
                      step="epoch" if perceptron else "iteration")
        display.plot(ax)
        return display

    def _draw(self, ax: Axes) -> None:
        h = self.history
        it = np.arange(h.size) + (self.step == "epoch")
        final = f"{h[-1]:.10g}"
        if self.gap:
            # the distance to the final value: 0 at the end, so that point is left out
            gap = np.abs(h - h[-1])
            shown = gap > 0
            (self.line_,) = ax.semilogy(it[shown], gap[shown], marker="o", markersize=3)
            ax.set_ylabel(f"|{self.label} − final value|")
        else:
            (self.line_,) = ax.plot(it, h, marker="o" if h.size <= 60 else None, markersize=3)
            plain_numbers(ax.yaxis)
            if np.all(h == np.round(h)):
                integer_ticks(ax.yaxis)
            ax.set_ylabel(self.label)
        integer_ticks(ax.xaxis)
        ax.set_xlabel(self.step)
        ax.set_title(f"Optimiser trace (final {self.label}: {final})")


def _gaps(h: np.ndarray) -> np.ndarray:
    gap = np.abs(h - h[-1])
    return gap[np.isfinite(gap) & (gap > 0)]


def plot_mcmc_trace(estimator: Any, parameter: int | str = 0, *,
                    ax: Axes | None = None) -> Axes:
    """:meth:`McmcTraceDisplay.from_estimator`, returning its Axes.

    Examples
    --------
    >>> from problin import BayesianLogisticRegression
    >>> from problin.datasets import load_dataset
    >>> from problin.plot import plot_mcmc_trace
    >>> X, y = load_dataset("breast-cancer")
    >>> model = BayesianLogisticRegression(inference="mcmc", n_samples=300, random_state=0,
    ...                                    progress=False).fit(X.iloc[:, :3], y)
    >>> ax = plot_mcmc_trace(model, "intercept")
    """
    return McmcTraceDisplay.from_estimator(estimator, parameter, ax=ax).ax_


def plot_optimiser_trace(estimator: Any, *, ax: Axes | None = None) -> Axes:
    """:meth:`OptimiserTraceDisplay.from_estimator`, returning its Axes.

    Examples
    --------
    >>> from problin import Perceptron
    >>> from problin.datasets import load_dataset
    >>> from problin.plot import plot_optimiser_trace
    >>> X, y = load_dataset("iris")
    >>> ax = plot_optimiser_trace(Perceptron(random_state=0, max_iter=20).fit(X, y))
    """
    return OptimiserTraceDisplay.from_estimator(estimator, ax=ax).ax_
