"""The report's figures, each on its own Figure on the Agg canvas (no pyplot, no global
backend change), returned as base64-encoded PNG ``data:`` URIs.

The model plots are :mod:`problin.plot`'s displays drawn on the report's Axes
(:func:`drawn`); the confusion matrix, the regression diagnostics and the stacked MCMC
traces are drawn here.
"""
import base64
import io
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._optional import missing_dependency

try:  # matplotlib is the ``report`` extra: without it, one error naming the extra
    from matplotlib.axes import Axes
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
except ImportError as exc:
    raise missing_dependency("matplotlib", "report", "problin.report") from exc

from ..plot import McmcTraceDisplay

__all__ = ["drawn", "confusion_plot", "regression_plot", "mcmc_traces", "to_data_uri"]

_MAX_POINTS = 2000


def _subsample(n: int, most: int) -> np.ndarray:
    if n <= most:
        return np.arange(n)
    return np.sort(np.random.default_rng(0).choice(n, most, replace=False))


def _figure(width: float = 5.2, height: float = 4.0) -> Figure:
    fig = Figure(figsize=(width, height), dpi=96, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def to_data_uri(fig: Figure) -> str:
    """A PNG ``data:`` URI of a matplotlib Figure."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def drawn(draw: Callable[[Axes], Any], subtitle: str | None = None, width: float = 5.2,
          height: float = 4.0) -> str:
    """The URI of ``draw(ax)`` on a new Figure; ``subtitle`` (how the data drawn were
    predicted) goes under the Axes' title."""
    fig = _figure(width, height)
    ax = fig.add_subplot()
    draw(ax)
    if subtitle:
        ax.set_title(f"{ax.get_title()}\n{subtitle}")
    ax.title.set_fontsize("medium")  # the same size on every figure of the page
    return to_data_uri(fig)


def confusion_plot(classes: Sequence[Any], y: np.ndarray, pred: np.ndarray,
                   subtitle: str | None = None) -> str:
    """Confusion matrix: counts of true (rows) against predicted (columns) classes."""
    k = len(classes)
    index = {c: i for i, c in enumerate(classes)}
    counts = np.zeros((k, k), dtype=np.int64)
    np.add.at(counts, ([index[v] for v in y], [index[v] for v in pred]), 1)

    def draw(ax: Axes) -> None:
        ax.imshow(counts, cmap="Blues")
        for i in range(k):
            for j in range(k):
                dark = counts[i, j] > counts.max() / 2
                ax.text(j, i, str(counts[i, j]), ha="center", va="center",
                        color="white" if dark else "black")
        labels = [str(c) for c in classes]
        ax.set_xticks(range(k), labels, rotation=45 if k > 4 else 0)
        ax.set_yticks(range(k), labels)
        ax.set_xlabel("predicted class")
        ax.set_ylabel("true class")
        ax.set_title("Confusion matrix")
    return drawn(draw, subtitle)


def regression_plot(y: np.ndarray, pred: np.ndarray, kind: str,
                    subtitle: str | None = None, residuals: np.ndarray | None = None) -> str:
    """``kind="actual"``: predicted against actual values; ``"residuals"``: residuals
    against predicted values; ``"deviance residuals"``: ``residuals`` (a GLM's) against
    the fitted means. Translucent points, so that dense regions show."""
    y, pred = np.asarray(y, dtype=np.float64), np.asarray(pred, dtype=np.float64)
    idx = _subsample(len(y), _MAX_POINTS)
    shown = y - pred if residuals is None else np.asarray(residuals, dtype=np.float64)

    def draw(ax: Axes) -> None:
        if kind == "actual":
            ax.scatter(y[idx], pred[idx], s=10, alpha=0.5, linewidths=0)
            lo, hi = min(y.min(), pred.min()), max(y.max(), pred.max())
            ax.plot([lo, hi], [lo, hi], color="grey", linestyle=":")
            ax.set_xlabel("actual")
            ax.set_ylabel("predicted")
            ax.set_title("Predicted against actual")
        else:
            ax.scatter(pred[idx], shown[idx], s=10, alpha=0.5, linewidths=0)
            ax.axhline(0.0, color="grey", linestyle=":")
            ax.set_xlabel("predicted" if residuals is None else "fitted mean μ")
            ax.set_ylabel("residual (actual − predicted)" if residuals is None
                          else "deviance residual")
            ax.set_title("Residuals" if residuals is None else "Deviance residuals")
    return drawn(draw, subtitle)


def mcmc_traces(model: Any, parameters: Sequence[str | int]) -> str:
    """The MCMC traces of ``parameters``, one panel each, stacked."""
    fig = _figure(5.2, 1.2 + 1.9 * len(parameters))
    axes = fig.subplots(len(parameters), 1, sharex=True, squeeze=False)[:, 0]
    for ax, parameter in zip(axes, parameters):
        McmcTraceDisplay.from_estimator(model, parameter, ax=ax)
        ax.set_title(ax.get_title().removeprefix("MCMC trace: "), fontsize="small")
        ax.set_ylabel("value")
        if ax is not axes[-1]:
            ax.set_xlabel("")
            legend = ax.get_legend()
            if legend is not None:
                legend.remove()
    return to_data_uri(fig)
