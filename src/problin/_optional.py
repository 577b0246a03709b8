"""Optional dependencies, imported where they are used.

``pip install problin`` installs what fitting and predicting need (numpy, SciPy,
scikit-learn, pandas, threadpoolctl). The rest comes with an extra::

    extra     package(s)            what needs it
    cli       click, tqdm           the ``problin`` command; tqdm: MCMC's progress bar
    formula   formulaic             problin.Formula, model files holding a formula
    report    matplotlib            problin.report, problin.plot, ``problin report``
    parquet   pyarrow               reading and writing Parquet files
    dask      dask, distributed     problin.io.read_dask, ``--engine dask``

Code that needs one of them imports it through :func:`import_optional`, so that a missing
one is one :class:`~problin.exceptions.MissingDependencyError` naming the extra to install
(``problin.Formula needs formulaic: pip install 'problin[formula]'``), never a bare
``ModuleNotFoundError`` from deep inside problin. Nothing here is imported by
``import problin``. Where a package only adds a convenience (tqdm's bar), callers use
:func:`optional_module`, which returns ``None`` instead of raising.
"""
import importlib
from types import ModuleType

from .exceptions import MissingDependencyError

__all__ = ["import_optional", "missing_dependency", "optional_module"]


def missing_dependency(package: str, extra: str, what: str) -> MissingDependencyError:
    """The error for ``what`` needing ``package``, which the ``extra`` installs."""
    return MissingDependencyError(f"{what} needs {package}: pip install 'problin[{extra}]'",
                                  package=package, extra=extra)


def import_optional(module: str, extra: str, what: str) -> ModuleType:
    """``module`` (e.g. ``"pyarrow.parquet"``), imported; if it cannot be imported, a
    :class:`~problin.exceptions.MissingDependencyError` saying that ``what`` needs its
    package and that ``pip install 'problin[<extra>]'`` installs it.

    The original ``ImportError`` is chained (``__cause__``): a package that is installed
    but fails to import (a broken or too old install) keeps its own reason there.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise missing_dependency(module.partition(".")[0], extra, what) from exc


def optional_module(module: str) -> ModuleType | None:
    """``module``, imported, or ``None`` when it cannot be (for optional conveniences)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None
