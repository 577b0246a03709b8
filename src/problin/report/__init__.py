"""The HTML report: a self-contained page of tables and matplotlib plots of a fitted model.

``build_report`` and ``write_report`` are imported on first use, so that importing
:mod:`problin.report.tables` (the CLI's parameter tables) does not load matplotlib.
"""
from typing import Any

__all__ = ["build_report", "write_report", "choose_features", "parameter_table"]


def __getattr__(name: str) -> Any:
    if name in ("build_report", "write_report", "choose_features"):
        from . import builder
        return getattr(builder, name)
    if name == "parameter_table":
        from .tables import parameter_table
        return parameter_table
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
