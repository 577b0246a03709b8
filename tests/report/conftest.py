"""The plots are drawn on matplotlib's Agg canvas: no display is needed, none is opened."""
import matplotlib
import pytest

matplotlib.use("Agg")


@pytest.fixture(autouse=True)
def _close_figures():
    """pyplot keeps every figure it made; close them after each test."""
    yield
    import matplotlib.pyplot as plt
    plt.close("all")
