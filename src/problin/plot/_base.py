"""What the displays share: the ``Display`` base and the Axes to draw on.

matplotlib is imported here and in the display modules only: ``problin.plot`` needs the
``report`` extra, ``import problin`` does not.
"""
from collections.abc import Callable
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, ScalarFormatter

__all__ = ["Display", "new_axes", "MARKERS", "plain_numbers", "integer_ticks"]

# One marker per class, so that a class stays recognisable where colours overlap.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")


def new_axes(ax: Axes | None, width: float = 6.0, height: float = 4.5) -> Axes:
    """``ax``, or the Axes of a new pyplot figure (so that it shows in a notebook);
    pyplot is imported only then: code that passes its own Axes never touches it."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt
    _, new = plt.subplots(figsize=(width, height), layout="constrained")
    return new


def plain_numbers(axis: Any) -> None:
    """Tick labels without matplotlib's offset text (``1e2 + 1.0568e2``): full numbers."""
    fmt = ScalarFormatter(useOffset=False)
    fmt.set_scientific(True)
    fmt.set_powerlimits((-4, 6))
    axis.set_major_formatter(fmt)


def integer_ticks(axis: Any) -> None:
    """Ticks at integers only (iterations, counts)."""
    axis.set_major_locator(MaxNLocator(integer=True))


class Display:
    """A drawn plot: ``ax_`` and ``figure_`` after :meth:`plot`, as scikit-learn's
    ``*Display`` objects. Subclasses hold the plotted data as attributes and draw it in
    ``_draw``."""

    ax_: Axes
    figure_: Figure
    _size: tuple[float, float] = (6.0, 4.5)
    # ``_draw(ax, **options)`` draws the held data; each display takes its own options
    _draw: Callable[..., None]

    def plot(self, ax: Axes | None = None, **kwargs: Any) -> "Display":
        """Draw on ``ax`` (a new figure if None) and return ``self``.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        **kwargs
            Options of the display's drawing (see its class).

        Returns
        -------
        self
        """
        self.ax_ = new_axes(ax, *self._size)
        figure = self.ax_.get_figure(root=True)
        assert figure is not None  # an Axes always belongs to a figure
        self.figure_ = figure
        self._draw(self.ax_, **kwargs)
        return self


def check_1d(values: Any, what: str) -> np.ndarray:
    """``values`` as a 1-D array, or a ``ValueError`` naming ``what``."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {arr.shape}")
    return arr
